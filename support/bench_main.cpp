// Google Benchmark main for every suite: exits with one clear line without a CUDA device, records
// the device context in the JSON, and shows progress on stderr while the usual console table goes
// to stdout (./cookbook bench keeps that in the log) and the JSON file reporter is unchanged:
//
//   [gemm 12/84] gemm/tiled_32/4096x4096x4096 ... 9.81 ms  14.01 TFLOP/s
//
// The line is printed when the benchmark starts and completed with its time (the median when
// there are repetitions) and its rate counter when it finishes.
#include <benchmark/benchmark.h>
#include <cuda_runtime.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "bench_util.hpp"
#include "gpu.hpp"

#ifndef SMEM_GIT_COMMIT
#define SMEM_GIT_COMMIT "unknown"
#endif

namespace smem::bench {

void add_device_context() {
  int dev = 0, v = 0;
  cudaDeviceProp p{};
  SMEM_CUDA_CHECK(cudaGetDevice(&dev));
  SMEM_CUDA_CHECK(cudaGetDeviceProperties(&p, dev));
  auto attr = [&](cudaDeviceAttr a) {
    SMEM_CUDA_CHECK(cudaDeviceGetAttribute(&v, a, dev));
    return v;
  };
  benchmark::AddCustomContext("gpu_name", p.name);
  benchmark::AddCustomContext("gpu_cc", std::to_string(p.major) + "." + std::to_string(p.minor));
  benchmark::AddCustomContext("gpu_sm_count", std::to_string(p.multiProcessorCount));
  benchmark::AddCustomContext("gpu_sm_clock_mhz", std::to_string(attr(cudaDevAttrClockRate) / 1000));
  benchmark::AddCustomContext("gpu_mem_clock_mhz",
                              std::to_string(attr(cudaDevAttrMemoryClockRate) / 1000));
  benchmark::AddCustomContext("gpu_mem_bus_bits", std::to_string(attr(cudaDevAttrGlobalMemoryBusWidth)));
  benchmark::AddCustomContext("gpu_l2_bytes", std::to_string(p.l2CacheSize));
  benchmark::AddCustomContext("gpu_smem_per_sm_bytes", std::to_string(p.sharedMemPerMultiprocessor));
  benchmark::AddCustomContext("gpu_regs_per_sm", std::to_string(p.regsPerMultiprocessor));
  SMEM_CUDA_CHECK(cudaDriverGetVersion(&v));
  benchmark::AddCustomContext("cuda_driver", std::to_string(v / 1000) + "." + std::to_string(v % 1000 / 10));
  SMEM_CUDA_CHECK(cudaRuntimeGetVersion(&v));
  benchmark::AddCustomContext("cuda_runtime", std::to_string(v / 1000) + "." + std::to_string(v % 1000 / 10));
  benchmark::AddCustomContext("git_commit", SMEM_GIT_COMMIT);
}

namespace {

std::string json_string(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

}  // namespace

void add_steps_context(const std::string& family, const std::string& reference, const std::vector<StepInfo>& steps) {
  std::string list = "[";
  for (const auto& s : steps) {
    if (list.size() > 1) list += ", ";
    list += "{\"name\": " + json_string(s.name) + ", \"step\": " + (s.step < 0 ? "null" : std::to_string(s.step)) +
            ", \"header\": " + (s.header.empty() ? "null" : json_string(s.header)) +
            ", \"summary\": " + json_string(s.summary) + ", \"kind\": " + (s.step < 0 ? "\"baseline\"" : "\"step\"") +
            "}";
  }
  benchmark::AddCustomContext("smem_family", family);
  benchmark::AddCustomContext("smem_reference", reference);
  benchmark::AddCustomContext("smem_steps", list + "]");
}

namespace {

using Run = benchmark::BenchmarkReporter::Run;

// A run's error, if any. Google Benchmark 1.7 has error_occurred/error_message, 1.8 and later
// skipped/skip_message.
template <class R>
auto run_error(const R& r, int) -> decltype(r.error_occurred, std::string()) {
  return r.error_occurred ? r.error_message : std::string();
}
template <class R>
auto run_error(const R& r, long) -> decltype(r.skipped, std::string()) {
  return r.skipped ? (r.skip_message.empty() ? std::string("skipped") : r.skip_message) : std::string();
}

// The value of `--<flag>=...` (or `-<flag>=...`) if argv has it; the last one wins, as in Google
// Benchmark.
const char* flag_value(int argc, char** argv, const char* flag) {
  const char* found = nullptr;
  for (int i = 1; i < argc; ++i) {
    const char* a = argv[i];
    a += (a[0] == '-') + (a[0] == '-' && a[1] == '-');
    const std::size_t n = std::strlen(flag);
    if (std::strncmp(a, flag, n) == 0 && a[n] == '=') found = a + n + 1;
  }
  return found;
}

// The instance names the filter selects, in run order. Google Benchmark lists them only when its
// list flag is set, so this sets it, lists with the user's filter, and clears it, all before the
// user's flags are parsed (no output file is opened).
std::vector<std::string> selected_benchmarks(int argc, char** argv) {
  char list_on[] = "--benchmark_list_tests=true", list_off[] = "--benchmark_list_tests=false";
  char* on[] = {argv[0], list_on};
  char* off[] = {argv[0], list_off};
  int n = 2;
  benchmark::Initialize(&n, on);
  const char* filter = flag_value(argc, argv, "benchmark_filter");
  std::ostringstream out;
  benchmark::ConsoleReporter lister(benchmark::ConsoleReporter::OO_None);
  lister.SetOutputStream(&out);
  lister.SetErrorStream(&out);
  benchmark::RunSpecifiedBenchmarks(&lister, filter ? filter : benchmark::GetBenchmarkFilter());
  n = 2;
  benchmark::Initialize(&n, off);
  std::vector<std::string> names;
  std::istringstream lines(out.str());
  for (std::string line; std::getline(lines, line);)
    if (!line.empty() && line.find("Failed to match") == std::string::npos) names.push_back(line);
  return names;
}

// "gemm/tiled_32/4096x4096x4096" from "gemm/tiled_32/4096x4096x4096/iterations:20/manual_time".
std::string short_name(const std::string& full) {
  static const char* const kSuffixes[] = {"/iterations:", "/repeats:", "/min_time:", "/min_warmup_time:",
                                          "/threads:", "/manual_time", "/real_time", "/process_time"};
  std::size_t cut = full.size();
  for (const char* s : kSuffixes) cut = std::min(cut, full.find(s));
  return full.substr(0, cut);
}

/// The console reporter (the context and the full table, on stdout) plus one progress line per
/// benchmark on stderr.
class ProgressReporter : public benchmark::ConsoleReporter {
 public:
  /// `names`: the benchmarks in run order; `announce`: print each one's name when it starts (not
  /// with random interleaving, where the order is not known).
  ProgressReporter(OutputOptions opts, std::vector<std::string> names, bool announce)
      : ConsoleReporter(opts), names_(std::move(names)), announce_(announce) {
    SetErrorStream(&std::cout);  // the context header goes with the table, stderr is for progress
  }

  bool ReportContext(const Context& context) override {
    const bool ok = ConsoleReporter::ReportContext(context);
    if (ok) start_next();
    return ok;
  }

  void ReportRuns(const std::vector<Run>& runs) override {
    ConsoleReporter::ReportRuns(runs);
    if (runs.empty()) return;
    const std::string name = runs.front().run_name.str();
    if (has_pending_ && pending_.run_name.str() != name) finish(pending_);  // its aggregates never came
    // With repetitions the aggregates follow the individual runs: wait for them (the median).
    const bool aggregates_follow = runs.front().run_type == Run::RT_Iteration && runs.front().repetitions > 1 &&
                                   run_error(runs.front(), 0).empty();
    if (aggregates_follow && name != done_) {
      pending_ = runs.front();
      has_pending_ = true;
      return;
    }
    if (name == done_) return;
    const Run* pick = &runs.front();
    for (const auto& r : runs)
      if (r.run_type == Run::RT_Aggregate && r.aggregate_name == "median") pick = &r;
    finish(*pick);
  }

  void Finalize() override {
    if (has_pending_) finish(pending_);
    ConsoleReporter::Finalize();
  }

 private:
  void start_next() {
    if (!announce_ || next_ >= names_.size()) return;
    label(names_[next_], next_ + 1);
    started_ = names_[next_];
  }

  void label(const std::string& full, std::size_t index) {
    const std::string shown = short_name(full);
    const std::string family = shown.substr(0, shown.find('/'));
    std::fprintf(stderr, "[%s %zu/%zu] %s ... ", family.c_str(), index, names_.size(), shown.c_str());
    std::fflush(stderr);
  }

  void finish(const Run& r) {
    const std::string name = r.run_name.str();
    has_pending_ = has_pending_ && pending_.run_name.str() != name;
    if (started_ != name) {  // not the one announced (random interleaving, a name not listed)
      if (!started_.empty()) std::fprintf(stderr, "\n");
      label(name, next_ + 1);
    }
    const std::string error = run_error(r, 0);
    if (!error.empty()) {
      std::fprintf(stderr, "error: %s\n", error.c_str());
    } else {
      std::fprintf(stderr, "%.4g %s", r.GetAdjustedRealTime(), benchmark::GetTimeUnitString(r.time_unit));
      for (const auto& [counter, value] : r.counters)
        if (counter.find("/s") != std::string::npos) std::fprintf(stderr, "  %.4g %s", double(value), counter.c_str());
      std::fprintf(stderr, "\n");
    }
    std::fflush(stderr);
    done_ = name;
    started_.clear();
    ++next_;
    start_next();
  }

  std::vector<std::string> names_;
  bool announce_;
  std::size_t next_ = 0;
  std::string started_, done_;
  Run pending_;
  bool has_pending_ = false;
};

}  // namespace
}  // namespace smem::bench

int main(int argc, char** argv) {
  if (!smem::test::gpu_available()) {
    std::fprintf(stderr, "no CUDA device: benchmarks need a GPU\n");
    return 1;
  }
  // Progress only for a run of the console format (not for --benchmark_list_tests or another
  // display format, which are left exactly as Google Benchmark makes them).
  const char* format = smem::bench::flag_value(argc, argv, "benchmark_format");
  const char* list = smem::bench::flag_value(argc, argv, "benchmark_list_tests");
  const bool progress = (!format || std::strcmp(format, "console") == 0) &&
                        !(list && (std::strcmp(list, "true") == 0 || std::strcmp(list, "1") == 0));
  std::vector<std::string> names;
  if (progress) names = smem::bench::selected_benchmarks(argc, argv);
  const char* interleave = smem::bench::flag_value(argc, argv, "benchmark_enable_random_interleaving");
  const bool in_order = !(interleave && (std::strcmp(interleave, "true") == 0 || std::strcmp(interleave, "1") == 0));

  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  smem::bench::add_device_context();
  if (progress) {
    const auto color = isatty(fileno(stdout)) ? benchmark::ConsoleReporter::OO_Color
                                              : benchmark::ConsoleReporter::OO_None;
    if (names.empty()) std::fprintf(stderr, "%s: no benchmark matches the filter\n", argv[0]);
    smem::bench::ProgressReporter reporter(color, std::move(names), in_order);
    benchmark::RunSpecifiedBenchmarks(&reporter);
  } else {
    benchmark::RunSpecifiedBenchmarks();
  }
  benchmark::Shutdown();
  return 0;
}

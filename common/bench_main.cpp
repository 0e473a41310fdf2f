// Google Benchmark main for every suite: exits with one clear line without a CUDA device, and
// records the device context in the JSON.
#include <benchmark/benchmark.h>
#include <cuda_runtime.h>

#include <cstdio>
#include <string>

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

}  // namespace smem::bench

int main(int argc, char** argv) {
  if (!smem::test::gpu_available()) {
    std::fprintf(stderr, "no CUDA device: benchmarks need a GPU\n");
    return 1;
  }
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  smem::bench::add_device_context();
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}

// Benchmarks only: recipes never include support/.
#pragma once
#include <benchmark/benchmark.h>
#include <cuda_runtime.h>

#include <array>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <string>
#include <type_traits>
#include <vector>

#include "cuda_check.hpp"
#include "device_buffer.hpp"
#include "kernel_attributes.hpp"

namespace smem::bench {

/// The element type's name in benchmark names: float, double, int, long_long, uint8.
template <class T>
constexpr const char* type_name() {
  if constexpr (std::is_same_v<T, float>) return "float";
  else if constexpr (std::is_same_v<T, std::uint8_t>) return "uint8";
  else if constexpr (std::is_same_v<T, double>) return "double";
  else if constexpr (std::is_same_v<T, int>) return "int";
  else return "long_long";
}

/// Evicts the L2 cache by writing a buffer twice its size. Runs on the stream before the timed
/// region, so a memory-bound kernel reads from DRAM, not from what the previous iteration left.
class L2Flush {
 public:
  L2Flush() {
    int dev = 0, l2 = 0;
    SMEM_CUDA_CHECK(cudaGetDevice(&dev));
    SMEM_CUDA_CHECK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, dev));
    buf_ = test::DeviceBuffer<unsigned char>(2 * std::size_t(l2));
  }
  void run(cudaStream_t s) { SMEM_CUDA_CHECK(cudaMemsetAsync(buf_.get(), flip_ ^= 1, buf_.bytes(), s)); }

 private:
  test::DeviceBuffer<unsigned char> buf_;
  int flip_ = 0;
};

/// Times `launch()` (which must return cudaError_t) with CUDA events, one launch per benchmark
/// iteration, after one untimed warm-up launch; sets the manual iteration time. With `flush`
/// set, the L2 cache is evicted before every timed launch. With `warm_seconds`, the untimed
/// launches go on for that long first: a kernel that runs the GPU at full power for more than a
/// few milliseconds lowers its clocks to the power cap, and timing it only once it has done so
/// keeps the time from depending on what ran before. Returns the total timed seconds.
/// A failed launch ends the benchmark with an error instead of a time.
template <class Launch>
double time_kernel(benchmark::State& state, Launch&& launch, bool flush, cudaStream_t s = nullptr,
                   double warm_seconds = 0) {
  L2Flush* l2 = nullptr;
  static L2Flush* shared = nullptr;  // one flush buffer per process
  if (flush) l2 = shared ? shared : (shared = new L2Flush());
  cudaEvent_t start, stop;
  SMEM_CUDA_CHECK(cudaEventCreate(&start));
  SMEM_CUDA_CHECK(cudaEventCreate(&stop));
  double total = 0;
  cudaError_t err = launch();
  if (err == cudaSuccess) err = cudaStreamSynchronize(s);
  const auto warm_start = std::chrono::steady_clock::now();
  while (err == cudaSuccess &&
         std::chrono::duration<double>(std::chrono::steady_clock::now() - warm_start).count() < warm_seconds) {
    err = launch();
    if (err == cudaSuccess) err = cudaStreamSynchronize(s);
  }
  for (auto _ : state) {
    if (err != cudaSuccess) break;
    if (l2) l2->run(s);
    SMEM_CUDA_CHECK(cudaEventRecord(start, s));
    err = launch();
    SMEM_CUDA_CHECK(cudaEventRecord(stop, s));
    SMEM_CUDA_CHECK(cudaEventSynchronize(stop));
    float ms = 0;
    SMEM_CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
    state.SetIterationTime(ms * 1e-3);
    total += ms * 1e-3;
  }
  if (err == cudaSuccess) err = cudaGetLastError();
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  if (err != cudaSuccess) state.SkipWithError((std::string("CUDA: ") + cudaGetErrorString(err)).c_str());
  return total;
}

/// time_kernel's untimed seconds before each repetition of a GEMM benchmark: a GEMM at full speed
/// draws the GPU to its power limit within milliseconds, and the clocks then drop, so every
/// variant, the baseline included, is timed at the clocks the GPU holds under a sustained GEMM.
inline constexpr double kGemmWarmSeconds = 0.1;

/// The inputs of GEMM shape M x N x K, filled by `fill(inputs)` on first use and kept: `./cookbook
/// bench` runs the GEMM repetitions in random order, so the shapes alternate, and drawing
/// 8192 x 8192 inputs again at every switch would dominate the run.
template <class Inputs, class Fill>
Inputs& kept_inputs(int M, int N, int K, Fill&& fill) {
  static std::map<std::array<int, 3>, Inputs> made;
  auto [it, fresh] = made.try_emplace({M, N, K});
  if (fresh) fill(it->second);
  return it->second;
}

/// Whether this run times the tuning candidates too: `./cookbook tune <family>` sets SMEM_TUNE=1, and
/// the benchmark of a family with a tuned table registers its candidates, `<family>/tune_<shape>/...`, only then.
inline bool tuning() {
  const char* t = std::getenv("SMEM_TUNE");
  return t && *t == '1';
}

/// Sets the rate counter `name` to `amount_per_iteration * iterations / seconds * scale`
/// (e.g. "GB/s" with scale 1e-9). A plain value, so it is the same whatever Google Benchmark
/// takes as the time base, and its median across repetitions is the median rate.
inline void set_rate(benchmark::State& state, const char* name, double amount_per_iteration,
                     double seconds, double scale) {
  if (seconds > 0)
    state.counters[name] = amount_per_iteration * double(state.iterations()) / seconds * scale;
}

/// Adds the device context (GPU name, SMs, clocks, driver, CUDA version, commit) to the JSON.
void add_device_context();

/// One line of the JSON step list: a step of the ladder or a vendor baseline.
struct StepInfo {
  std::string name;
  int step;  ///< -1 for a baseline
  std::string header, summary;
};

/// Writes the family's metadata into the JSON context, so that reports read JSON and never C++:
/// smem_family, smem_reference (the variant every ratio divides by) and smem_steps, a JSON array
/// of {"name", "step", "header", "summary", "kind"} in ladder order, baselines first.
void add_steps_context(const std::string& family, const std::string& reference, const std::vector<StepInfo>& steps);

/// The family's step list (any family's kSteps) followed by its baselines.
template <class Steps>
std::vector<StepInfo> step_infos(const std::vector<StepInfo>& baselines, const Steps& steps) {
  std::vector<StepInfo> out = baselines;
  for (const auto& s : steps) out.push_back({s.name, s.step, s.header, s.summary});
  return out;
}

/// Records a plan's kernel attributes as counters (registers, smem_static_bytes,
/// smem_dynamic_bytes, threads_per_block, blocks_per_sm, grid_blocks); nothing for a null plan.
template <class Plan>
void set_kernel_counters(benchmark::State& state, const Plan& plan) {
  test::KernelAttributes a;
  if (test::kernel_attributes(plan, &a) != cudaSuccess) {
    cudaGetLastError();
    return;
  }
  state.counters["registers"] = a.registers;
  state.counters["smem_static_bytes"] = a.static_smem;
  state.counters["smem_dynamic_bytes"] = a.dynamic_smem;
  state.counters["threads_per_block"] = a.threads;
  state.counters["blocks_per_sm"] = a.blocks_per_sm;
  state.counters["grid_blocks"] = double(a.grid_blocks);
}

}  // namespace smem::bench

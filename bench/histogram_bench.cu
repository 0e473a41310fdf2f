// Histogram benchmarks: every variant and the baseline cub::DeviceHistogram::HistogramEven in one
// process. Names: histogram/<variant>/<uint8|float>/<bins>/<uniform|skewed>/<n>; uint8 samples in
// 256 bins over [0, 256), float samples in 1024 and 65536 bins over [0, 1). Skewed: 90% of the
// samples in one bin, the rest uniform. GB/s counts the bytes a histogram must read (n x
// sizeof(T)); the L2 is flushed before every timed launch. The time covers everything a caller's
// launch puts on the stream (the zeroing of the counts and the kernel; CUB's workspace is
// allocated once, outside the timed region). A variant that does not hold the bins (steps 2 to 5
// at 65536 float bins) is not registered.
#include <benchmark/benchmark.h>
#include <cub/device/device_histogram.cuh>

#include <histogram/histogram.cuh>

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <memory>

#include "bench_util.hpp"
#include "device_buffer.hpp"

namespace hg = smem::histogram;
using smem::test::DeviceBuffer;

namespace {

/// x[i] from a hash of i: uniform over [0, 256) bytes or [0, 1) floats; skewed, 9 in 10 samples
/// are the value `hot` (a 2^30-sample input is drawn on the device in milliseconds).
template <class T>
__global__ void fill(T* x, long long n, bool skewed, T hot) {
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x) {
    unsigned long long h = (unsigned long long)i * 0x9E3779B97F4A7C15ull;
    h ^= h >> 29;
    h *= 0xBF58476D1CE4E5B9ull;
    h ^= h >> 32;
    if (skewed && h % 10 != 0) x[i] = hot;
    else if constexpr (sizeof(T) == 1) x[i] = T(h >> 24);
    else x[i] = T(double(h >> 40) / double(1ull << 24));
  }
}

template <class T>
const T* input(long long n, bool skewed) {
  static std::map<std::pair<long long, bool>, DeviceBuffer<T>> cache;
  auto it = cache.find({n, skewed});
  if (it == cache.end()) {
    it = cache.emplace(std::make_pair(n, skewed), DeviceBuffer<T>(static_cast<std::size_t>(n))).first;
    fill<<<4096, 256>>>(it->second.get(), n, skewed, sizeof(T) == 1 ? T(77) : T(0.3));
    SMEM_CUDA_CHECK(cudaDeviceSynchronize());
  }
  return it->second.get();
}

/// The shape of a benchmark.
template <class T>
struct Case {
  int bins;
  hg::Level<T> lower, upper;
  bool skewed;
  long long n;
};

// launch(samples, counts, stream): one histogram of the case's samples into counts.
template <class T>
using Launch = std::function<cudaError_t(const T*, hg::Counter*)>;

template <class T>
void register_one(const std::string& variant, const Case<T>& c, Launch<T> launch,
                  std::function<hg::Plan<const void*>()> plan = nullptr) {
  const std::string name = "histogram/" + variant + "/" + smem::bench::type_name<T>() + "/" + std::to_string(c.bins) +
                           (c.skewed ? "/skewed/" : "/uniform/") + std::to_string(c.n);
  benchmark::RegisterBenchmark(name.c_str(), [=](benchmark::State& state) {
    const T* in = input<T>(c.n, c.skewed);
    DeviceBuffer<hg::Counter> counts(static_cast<std::size_t>(c.bins));
    const double secs = smem::bench::time_kernel(state, [&] { return launch(in, counts.get()); }, true);
    smem::bench::set_rate(state, "GB/s", double(c.n) * sizeof(T), secs, 1e-9);
    state.counters["bytes"] = double(c.n) * sizeof(T);
    if (plan) smem::bench::set_kernel_counters(state, plan());
  })->UseManualTime()->Iterations(c.n >= (1LL << 30) ? 5 : c.n >= (1LL << 28) ? 10 : 50)->Unit(benchmark::kMicrosecond);
}

template <class T>
void register_case(const Case<T>& c) {
  auto temp = std::make_shared<DeviceBuffer<unsigned char>>();  // CUB's workspace, sized at the first run
  register_one<T>("cub", c, [c, temp](const T* in, hg::Counter* counts) {
    std::size_t bytes = 0;
    cudaError_t e = cub::DeviceHistogram::HistogramEven(nullptr, bytes, in, counts, c.bins + 1, c.lower, c.upper, c.n);
    if (e != cudaSuccess) return e;
    if (temp->bytes() < bytes) *temp = DeviceBuffer<unsigned char>(bytes);  // the warm-up launch, untimed
    return cub::DeviceHistogram::HistogramEven(temp->get(), bytes, in, counts, c.bins + 1, c.lower, c.upper, c.n);
  });
  for (auto v : hg::kAllVariants)
    if (hg::fits<T>(v, c.bins))
      register_one<T>(hg::name(v), c,
                      [v, c](const T* in, hg::Counter* counts) {
                        return hg::run<T>(v, in, c.n, counts, c.bins, c.lower, c.upper);
                      },
                      [v, c] { return hg::plan<T>(v, c.n, c.bins); });
}

const bool registered = [] {
  smem::bench::add_steps_context(
      "histogram", "cub",
      smem::bench::step_infos(
          {{"cub", -1, "", "cub::DeviceHistogram::HistogramEven: the vendor histogram."}}, hg::kSteps));
  for (bool skewed : {false, true}) {
    for (int e : {20, 24, 28, 30}) register_case<std::uint8_t>({256, 0, 256, skewed, 1LL << e});
    for (int bins : {1024, 65536})
      for (int e : {20, 24, 28}) register_case<float>({bins, 0.f, 1.f, skewed, 1LL << e});
  }
  return true;
}();

}  // namespace

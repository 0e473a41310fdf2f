// Reduction benchmarks: every variant and the baseline cub::DeviceReduce::Sum in one process.
// Names: reduction/<variant>/<type>/<n>. GB/s counts the bytes read (n x sizeof(T)); the L2 is
// flushed before every timed launch, so the input comes from DRAM. The time covers everything a
// caller's launch puts on the stream (for steps 1-7 every pass, for steps 8 and 9 the counter reset).
// With SMEM_REDUCTION_TUNE=1 in the environment, configurations of the single-pass kernel
// (threads per block, vectors in flight per thread, load flavour) are registered as well.
#include <benchmark/benchmark.h>
#include <cub/device/device_reduce.cuh>

#include <reduction/reduction.cuh>

#include <cstdlib>
#include <functional>
#include <map>
#include <string>

#include "bench_util.hpp"
#include "device_buffer.hpp"
#include "random.hpp"

namespace rd = smem::reduction;
using smem::test::DeviceBuffer;

namespace {

// launch(temp, bytes, in, n, out): a size query when temp is null, like every launcher here.
template <class T>
using Launch = std::function<cudaError_t(void*, std::size_t&, const T*, long long, T*)>;

// The random input of each (type, n), made once per process and shared by every benchmark of
// that shape (a 2^28-element vector takes seconds to draw on the host).
template <class T>
const T* input(long long n) {
  static std::map<long long, DeviceBuffer<T>> cache;
  auto it = cache.find(n);
  if (it == cache.end()) {
    auto g = smem::test::rng(std::uint64_t(n));
    it = cache.emplace(n, DeviceBuffer<T>(smem::test::random_vector<T>(std::size_t(n), g))).first;
  }
  return it->second.get();
}

// A step's counters also record its (first) kernel's attributes, from the launcher's own plan.
template <class T>
void register_one(const std::string& variant, long long n, Launch<T> launch,
                  std::function<rd::Plan<const void*>(long long)> plan = nullptr) {
  const std::string name =
      "reduction/" + variant + "/" + smem::bench::type_name<T>() + "/" + std::to_string(n);
  benchmark::RegisterBenchmark(name.c_str(), [=](benchmark::State& state) {
    const T* in = input<T>(n);
    DeviceBuffer<T> out(1);
    std::size_t bytes = 0;
    if (launch(nullptr, bytes, in, n, out.get()) != cudaSuccess) {
      state.SkipWithError("size query failed");
      return;
    }
    DeviceBuffer<unsigned char> temp(bytes);
    const double secs = smem::bench::time_kernel(
        state, [&] { return launch(temp.get(), bytes, in, n, out.get()); }, true);
    smem::bench::set_rate(state, "GB/s", double(n) * sizeof(T), secs, 1e-9);
    state.counters["bytes"] = double(n) * sizeof(T);
    if (plan) smem::bench::set_kernel_counters(state, plan(n));
  })->UseManualTime()->Iterations(100)->Unit(benchmark::kMicrosecond);
}

template <int kThreads, int kUnroll, rd::Load kLoad, int kWaves>
void register_tune(long long n) {
  const std::string v = "tune_t" + std::to_string(kThreads) + "_u" + std::to_string(kUnroll) +
                        (kLoad == rd::Load::ldg ? "_ldg" : "_cs") + "_w" + std::to_string(kWaves);
  register_one<float>(v, n, [](void* t, std::size_t& b, const float* in, long long m, float* out) {
    return rd::single_pass<kThreads, kUnroll, kLoad, kWaves>(t, b, in, m, out, rd::Sum{}, 0.f);
  }, [](long long m) { return rd::single_pass_plan<float, rd::Sum, kThreads, kUnroll, kLoad, kWaves>(m).erased(); });
}

template <class T>
void register_n(long long n) {
  register_one<T>("cub", n, [](void* t, std::size_t& b, const T* in, long long m, T* out) {
    return cub::DeviceReduce::Sum(t, b, in, out, m);
  });
  for (auto v : rd::kAllVariants)
    register_one<T>(rd::name(v), n, [v](void* t, std::size_t& b, const T* in, long long m, T* out) {
      return rd::run(v, t, b, in, m, out, rd::Sum{}, T(0));
    }, [v](long long m) { return rd::plan<T, rd::Sum>(v, m); });
}

const bool registered = [] {
  smem::bench::add_steps_context(
      "reduction", "cub",
      smem::bench::step_infos({{"cub", -1, "", "cub::DeviceReduce::Sum: the vendor reduction."}}, rd::kSteps));
  for (int e : {16, 20, 24, 28}) register_n<float>(1LL << e);
  register_n<int>(1LL << 28);
  if (const char* t = std::getenv("SMEM_REDUCTION_TUNE"); t && *t == '1') {
    for (int e : {20, 24, 28}) {
      const long long n = 1LL << e;
      using L = rd::Load;
      register_tune<256, 4, L::ldg, 1>(n);
      register_tune<256, 2, L::ldg, 1>(n);
      register_tune<256, 8, L::ldg, 1>(n);
      register_tune<512, 4, L::ldg, 1>(n);
      register_tune<1024, 2, L::ldg, 1>(n);
      register_tune<256, 4, L::streaming, 1>(n);
      register_tune<256, 4, L::ldg, 2>(n);
      register_tune<256, 4, L::ldg, 3>(n);
      register_tune<256, 4, L::ldg, 5>(n);
      register_tune<256, 2, L::ldg, 3>(n);
      register_tune<256, 2, L::ldg, 5>(n);
      register_tune<256, 8, L::ldg, 2>(n);
      register_tune<512, 4, L::ldg, 3>(n);
      register_tune<256, 4, L::streaming, 3>(n);
    }
  }
  return true;
}();

}  // namespace

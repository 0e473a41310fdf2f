// Scan benchmarks: every variant and the baseline cub::DeviceScan in one process, for sums.
// Names: scan/<variant>/<inclusive|exclusive>/<type>/<n>. GB/s counts the bytes a scan must move
// at least (n x sizeof(T) read and n x sizeof(T) written); the L2 is flushed before every timed
// launch. The time covers everything a caller's launch puts on the stream (every kernel of steps
// 1 to 5, step 6's flag reset).
#include <benchmark/benchmark.h>
#include <cub/device/device_scan.cuh>

#include <scan/scan.cuh>

#include <functional>
#include <map>
#include <string>

#include "bench_util.hpp"
#include "device_buffer.hpp"

namespace sc = smem::scan;
using smem::test::DeviceBuffer;

namespace {

/// x[i]: small integers in [-100, 100] from a hash of i (a 2^28-element input is drawn on the
/// device in milliseconds; the values do not change the kernels' speed).
template <class T>
__global__ void fill(T* x, long long n) {
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x) {
    unsigned long long h = (unsigned long long)i * 0x9E3779B97F4A7C15ull;
    h ^= h >> 29;
    x[i] = T(int(h % 201) - 100);
  }
}

template <class T>
const T* input(long long n) {
  static std::map<long long, DeviceBuffer<T>> cache;
  auto it = cache.find(n);
  if (it == cache.end()) {
    it = cache.emplace(n, DeviceBuffer<T>(static_cast<std::size_t>(n))).first;
    fill<<<4096, 256>>>(it->second.get(), n);
    SMEM_CUDA_CHECK(cudaDeviceSynchronize());
  }
  return it->second.get();
}

// launch(temp, bytes, in, out, n): a size query when temp is null, like every launcher here.
template <class T>
using Launch = std::function<cudaError_t(void*, std::size_t&, const T*, T*, long long)>;

template <class T>
void register_one(const std::string& variant, sc::Kind kind, long long n, Launch<T> launch,
                  std::function<sc::Plan<const void*>(long long)> plan = nullptr) {
  const std::string name = "scan/" + variant + (kind == sc::Kind::inclusive ? "/inclusive/" : "/exclusive/") +
                           smem::bench::type_name<T>() + "/" + std::to_string(n);
  benchmark::RegisterBenchmark(name.c_str(), [=](benchmark::State& state) {
    const T* in = input<T>(n);
    DeviceBuffer<T> out(static_cast<std::size_t>(n));
    std::size_t bytes = 0;
    if (launch(nullptr, bytes, in, out.get(), n) != cudaSuccess) {
      state.SkipWithError("size query failed");
      return;
    }
    DeviceBuffer<unsigned char> temp(bytes);
    const double secs = smem::bench::time_kernel(
        state, [&] { return launch(temp.get(), bytes, in, out.get(), n); }, true);
    smem::bench::set_rate(state, "GB/s", 2.0 * double(n) * sizeof(T), secs, 1e-9);
    state.counters["bytes"] = 2.0 * double(n) * sizeof(T);
    if (plan) smem::bench::set_kernel_counters(state, plan(n));
  })->UseManualTime()->Iterations(n >= (1LL << 28) ? 20 : 100)->Unit(benchmark::kMicrosecond);
}

template <class T>
void register_n(long long n) {
  using Plus = cuda::std::plus<T>;
  for (sc::Kind kind : {sc::Kind::inclusive, sc::Kind::exclusive}) {
    register_one<T>("cub", kind, n, [kind](void* t, std::size_t& b, const T* in, T* out, long long m) {
      return kind == sc::Kind::inclusive ? cub::DeviceScan::InclusiveSum(t, b, in, out, m)
                                         : cub::DeviceScan::ExclusiveSum(t, b, in, out, m);
    });
    for (auto v : sc::kAllVariants)
      register_one<T>(sc::name(v), kind, n, [v, kind](void* t, std::size_t& b, const T* in, T* out, long long m) {
        return sc::run(v, t, b, in, out, m, Plus{}, T(0), kind);
      }, [v](long long m) { return sc::plan<T, Plus>(v, m); });
  }
}

const bool registered = [] {
  smem::bench::add_steps_context(
      "scan", "cub",
      smem::bench::step_infos({{"cub", -1, "", "cub::DeviceScan::InclusiveSum / ExclusiveSum: the vendor scan."}},
                              sc::kSteps));
  for (int e : {10, 16, 20, 24, 28}) {
    register_n<int>(1LL << e);
    register_n<float>(1LL << e);
  }
  for (int e : {20, 24, 28}) {
    register_n<double>(1LL << e);
    register_n<long long>(1LL << e);
  }
  return true;
}();

}  // namespace

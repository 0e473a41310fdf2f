// Transpose benchmarks: every variant and the two baselines (cudaMemcpy device-to-device and
// cublas<S|D>geam) in one process. Names: transpose/<variant>/<type>/<rows>x<cols>.
// GB/s counts the minimum traffic: every element read once and written once.
#include <benchmark/benchmark.h>
#include <cublas_v2.h>

#include <transpose/transpose.cuh>

#include <string>
#include <vector>

#include "bench_util.hpp"
#include "cublas_handle.hpp"
#include "device_buffer.hpp"
#include "random.hpp"

namespace tr = smem::transpose;
using smem::test::DeviceBuffer;

using smem::test::cublas_handle;

namespace {

// Row-major out (cols x rows) = transpose(in (rows x cols)) is, column-major, C (rows x cols,
// ldc = rows) = A^T with A (cols x rows, lda = cols).
cublasStatus_t geam(int rows, int cols, const float* in, float* out) {
  const float one = 1, zero = 0;
  return cublasSgeam(cublas_handle(), CUBLAS_OP_T, CUBLAS_OP_N, rows, cols, &one, in, cols, &zero, out, rows,
                     out, rows);
}
cublasStatus_t geam(int rows, int cols, const double* in, double* out) {
  const double one = 1, zero = 0;
  return cublasDgeam(cublas_handle(), CUBLAS_OP_T, CUBLAS_OP_N, rows, cols, &one, in, cols, &zero, out, rows,
                     out, rows);
}

// A step's counters also record its kernel's attributes (from the launcher's own plan).
template <class T, class Launch>
void register_one(const std::string& variant, int rows, int cols, Launch launch, const tr::Variant* step = nullptr) {
  const std::string name = "transpose/" + variant + "/" + smem::bench::type_name<T>() + "/" +
                           std::to_string(rows) + "x" + std::to_string(cols);
  benchmark::RegisterBenchmark(name.c_str(), [=](benchmark::State& state) {
    const std::size_t n = std::size_t(rows) * cols;
    auto g = smem::test::rng(n);
    DeviceBuffer<T> in(smem::test::random_vector<T>(n, g)), out(n);
    const double secs = smem::bench::time_kernel(state, [&] { return launch(in.get(), out.get()); }, true);
    smem::bench::set_rate(state, "GB/s", 2.0 * n * sizeof(T), secs, 1e-9);
    state.counters["bytes"] = 2.0 * n * sizeof(T);
    if (step) smem::bench::set_kernel_counters(state, tr::plan(*step, rows, cols, in.get(), out.get()));
  })->UseManualTime()->Iterations(100)->Unit(benchmark::kMicrosecond);
}

template <class T>
void register_shape(int rows, int cols) {
  register_one<T>("memcpy", rows, cols, [=](const T* in, T* out) {
    return cudaMemcpyAsync(out, in, std::size_t(rows) * cols * sizeof(T), cudaMemcpyDeviceToDevice);
  });
  register_one<T>("cublas_geam", rows, cols, [=](const T* in, T* out) {
    return geam(rows, cols, in, out) == CUBLAS_STATUS_SUCCESS ? cudaSuccess : cudaErrorUnknown;
  });
  for (const auto& v : tr::kAllVariants)
    register_one<T>(tr::name(v), rows, cols, [=](const T* in, T* out) { return tr::run(v, rows, cols, in, out); }, &v);
}

const bool registered = [] {
  smem::bench::add_steps_context(
      "transpose", "memcpy",
      smem::bench::step_infos({{"memcpy", -1, "", "cudaMemcpyAsync device to device: the copy roof of any kernel."},
                               {"cublas_geam", -1, "", "cublasSgeam / cublasDgeam with op(A) = A^T: the vendor transpose."}},
                              tr::kSteps));
  for (auto [r, c] : std::vector<std::pair<int, int>>{{1024, 1024}, {4096, 4096}, {8192, 8192}, {16384, 4096}})
    register_shape<float>(r, c);
  register_shape<double>(8192, 8192);
  return true;
}();

}  // namespace

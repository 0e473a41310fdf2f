/// \file sgemm_13_autotuned.cuh
/// \brief Step 13, autotuned: the multistage kernel of step 12 with the block, warp and thread
/// tiles and the stage count that `./cookbook tune gemm` measured fastest on this GPU, per size
/// class of the output.
///
/// The best tile depends on the GPU (SM count, registers, shared memory per SM) and on the
/// problem: a 256 x 128 tile keeps the FFMA pipes busiest on a large C, but a 1000 x 1000 C has
/// only 32 such tiles for 132 SMs. The tuner (bench/gemm_tune.cu, built with
/// -DSMEM_BUILD_TUNER=ON) compiles a set of candidate shapes, checks each against cuBLAS, times
/// them at several sizes, and writes the winners into the table below. This launcher looks up the
/// GPU by name (once per device) and picks the entry of the size class; on a GPU the table does
/// not know, it runs step 12's shape.
#pragma once
#include <cuda_runtime.h>

#include <atomic>
#include <cstring>

#include "sgemm_12_multistage.cuh"

/// The tuned table, written by `./cookbook tune gemm` (bench/gemm_tune.cu) between the markers,
/// one block per GPU. Each X(gpu, max_mn, BM, BN, BK, WM, WN, TM, TN, stages) entry says: on the
/// GPU whose cudaDeviceProp::name is `gpu`, for outputs of at most max_mn elements (M * N), use
/// MultistageShape<BM, BN, BK, WM, WN, TM, TN, stages>. Entries of one GPU are in ascending
/// max_mn; the tuner replaces the block of the GPU it ran on and keeps the others.
// BEGIN TUNED TABLE
#define SMEM_SGEMM_TUNED_TABLE(X) \
  X("NVIDIA H200", 2048000LL, 64, 64, 16, 32, 32, 8, 4, 3) \
  X("NVIDIA H200", 9223372036854775807LL, 128, 128, 32, 64, 32, 8, 8, 3)
// END TUNED TABLE

namespace smem::gemm {

namespace detail {

/// The name of the current device (cudaDeviceProp::name), read once per device; "" on error.
inline const char* device_name() {
  constexpr int kMaxDevices = 64;
  static char names[kMaxDevices][256];
  static std::atomic<int> state[kMaxDevices];  // 0 unread, 1 being read, 2 ready
  int dev = 0;
  if (cudaGetDevice(&dev) != cudaSuccess || dev < 0 || dev >= kMaxDevices) return "";
  int expected = 0;
  if (state[dev].compare_exchange_strong(expected, 1)) {
    cudaDeviceProp p{};
    if (cudaGetDeviceProperties(&p, dev) == cudaSuccess) std::memcpy(names[dev], p.name, sizeof(p.name) - 1);
    state[dev].store(2);
  }
  while (state[dev].load() != 2) {
  }
  return names[dev];
}

}  // namespace detail

//! [autotuned dispatch]
/// Calls f(Shape{}) with the tuned MultistageShape for an M x N output on the current GPU
/// (MultistageDefault where the table has no entry). The table is expanded here only.
template <class F>
auto with_tuned_shape(int M, int N, F&& f) {
  const char* gpu = detail::device_name();
  const long long mn = static_cast<long long>(M) * N;
  (void)gpu, (void)mn;
#define SMEM_SGEMM_TUNED_CASE(name, max_mn, BM, BN, BK, WM, WN, TM, TN, S) \
  if (std::strcmp(gpu, name) == 0 && mn <= (long long)(max_mn)) return f(MultistageShape<BM, BN, BK, WM, WN, TM, TN, S>{});
  SMEM_SGEMM_TUNED_TABLE(SMEM_SGEMM_TUNED_CASE)
#undef SMEM_SGEMM_TUNED_CASE
  return f(MultistageDefault{});
}

inline Plan<WarpGemmKernel> autotuned_plan(int M, int N, int, const float*, int, const float* B, int ldb,
                                           const float*, int) {
  return with_tuned_shape(M, N, [&](auto shape) { return multistage_plan_with<decltype(shape)>(M, N, B, ldb); });
}

/// C = alpha * A * B + beta * C, row-major, with the tuned shape for this GPU and size.
inline cudaError_t autotuned(int M, int N, int K, float alpha, const float* A, int lda, const float* B, int ldb,
                             float beta, float* C, int ldc, cudaStream_t stream = nullptr) {
  // Arguments first: no CUDA call (the device-name lookup) before they are checked.
  if (Args a = check_args(M, N, K, alpha, A, lda, B, ldb, C, ldc); a != Args::launch)
    return finish_without_launch(a, M, N, beta, C, ldc, stream);
  const bool cvec = ldc % 4 == 0 && aligned16(C);
  return launch(autotuned_plan(M, N, K, A, lda, B, ldb, C, ldc), stream, M, N, K, alpha, A, lda, B, ldb, beta, C,
                ldc, cvec);
}
//! [autotuned dispatch]

}  // namespace smem::gemm

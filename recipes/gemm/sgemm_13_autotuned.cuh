/// \file sgemm_13_autotuned.cuh
/// \brief Step 13, autotuned: the multistage kernel of step 12 with the block, warp and thread
/// tiles and the stage count that `./cookbook tune gemm` measured fastest on this GPU, per size
/// class of the output.
///
/// The best tile depends on the GPU (SM count, registers, shared memory per SM) and on the
/// problem: a 256 x 128 tile keeps the FFMA pipes busiest on a large C, but a 1000 x 1000 C has
/// only 32 such tiles for 132 SMs. The tuner (bench/gemm_tune.cu, built with
/// -DSMEM_BUILD_TUNER=ON) compiles a set of candidate shapes, checks each against cuBLAS, times
/// them at several sizes, and writes the winners into sgemm_13_tuned_config.cuh. This launcher
/// looks up the GPU by name (once per device) and picks the entry of the size class; on a GPU the
/// table does not know, it runs step 12's shape.
///
/// Measured on the H200 (results/h200/gemm.json, same-run ratios): 0.96 x cuBLAS fp32 at
/// 1000^3, 0.92 x at 2048^3, 0.94 x at 4096^3, 0.95 x at 8192^3.
#pragma once
#include <cuda_runtime.h>

#include <atomic>
#include <cstring>

#include "gemm_args.cuh"
#include "sgemm_12_multistage.cuh"
#include "sgemm_13_tuned_config.cuh"

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
    if (cudaGetDeviceProperties(&p, dev) == cudaSuccess) std::strncpy(names[dev], p.name, 255);
    state[dev].store(2);
  }
  while (state[dev].load() != 2) {
  }
  return names[dev];
}

}  // namespace detail

//! [autotuned dispatch]
/// C = alpha * A * B + beta * C, row-major, with the tuned shape for this GPU and size.
inline cudaError_t sgemm_autotuned(int M, int N, int K, float alpha, const float* A, int lda,
                                   const float* B, int ldb, float beta, float* C, int ldc,
                                   cudaStream_t stream = nullptr) {
  // Arguments first: no CUDA call (the device-name lookup) before they are checked.
  if (Args a = check_args(M, N, K, alpha, A, lda, B, ldb, C, ldc); a != Args::launch)
    return finish_without_launch(a, M, N, beta, C, ldc, stream);
  const char* gpu = detail::device_name();
  const long long mn = static_cast<long long>(M) * N;
  (void)gpu, (void)mn;
#define SMEM_SGEMM_TUNED_CASE(name, max_mn, BM, BN, BK, WM, WN, TM, TN, S)                   \
  if (std::strcmp(gpu, name) == 0 && mn <= (long long)(max_mn))                            \
    return sgemm_multistage_with<MultistageShape<BM, BN, BK, WM, WN, TM, TN, S>>(            \
        M, N, K, alpha, A, lda, B, ldb, beta, C, ldc, stream);
  SMEM_SGEMM_TUNED_TABLE(SMEM_SGEMM_TUNED_CASE)
#undef SMEM_SGEMM_TUNED_CASE
  return sgemm_multistage_with<MultistageDefault>(M, N, K, alpha, A, lda, B, ldb, beta, C, ldc, stream);
}
//! [autotuned dispatch]

/// The shape sgemm_autotuned runs for an M x N output on the current GPU, as
/// "BMxBNxBK/WMxWN/TMxTN/S" plus " (default)" when the table has no entry for it.
inline const char* sgemm_autotuned_config(int M, int N) {
  const char* gpu = detail::device_name();
  const long long mn = static_cast<long long>(M) * N;
  (void)gpu, (void)mn;
#define SMEM_SGEMM_TUNED_CASE(name, max_mn, BM, BN, BK, WM, WN, TM, TN, S)                   \
  if (std::strcmp(gpu, name) == 0 && mn <= (long long)(max_mn))                            \
    return #BM "x" #BN "x" #BK "/" #WM "x" #WN "/" #TM "x" #TN "/" #S;
  SMEM_SGEMM_TUNED_TABLE(SMEM_SGEMM_TUNED_CASE)
#undef SMEM_SGEMM_TUNED_CASE
  return "128x256x16/64x64/8x16/3 (default)";
}

/// Kernel attributes of the shape sgemm_autotuned runs for an M x N output (by default the
/// largest size class).
inline cudaError_t sgemm_autotuned_attributes(int /*K*/, KernelAttributes* out, int M = 1 << 30,
                                              int N = 1 << 30) {
  const char* gpu = detail::device_name();
  const long long mn = static_cast<long long>(M) * N;
  (void)gpu, (void)mn;
#define SMEM_SGEMM_TUNED_CASE(name, max_mn, BM, BN, BK, WM, WN, TM, TN, S)                   \
  if (std::strcmp(gpu, name) == 0 && mn <= (long long)(max_mn))                            \
    return sgemm_multistage_attributes_with<MultistageShape<BM, BN, BK, WM, WN, TM, TN, S>>(out);
  SMEM_SGEMM_TUNED_TABLE(SMEM_SGEMM_TUNED_CASE)
#undef SMEM_SGEMM_TUNED_CASE
  return sgemm_multistage_attributes_with<MultistageDefault>(out);
}

}  // namespace smem::gemm

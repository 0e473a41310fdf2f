/// \file gemm_sm80.cuh
/// \brief The SGEMM family's sm_80 kit: the `cp.async` copies of steps 12 to 14.
#pragma once
#include <cuda_runtime.h>

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 800
#error "gemm_sm80.cuh needs cp.async: compile for sm_80 or newer (e.g. -arch=sm_80)"
#endif

namespace smem::gemm {

//! [cp.async]
/// 4-byte copy global -> shared; src_bytes 0 writes a zero and reads nothing.
__device__ __forceinline__ void cp_async_4(float* dst, const float* src, int src_bytes) {
  const unsigned s = unsigned(__cvta_generic_to_shared(dst));
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(s), "l"(src), "r"(src_bytes));
}
/// 16-byte copy (both addresses 16-byte aligned); bytes past src_bytes are zero-filled.
__device__ __forceinline__ void cp_async_16(float* dst, const float* src, int src_bytes) {
  const unsigned s = unsigned(__cvta_generic_to_shared(dst));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(s), "l"(src), "r"(src_bytes));
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::); }
template <int kPending>
__device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(kPending));
}
//! [cp.async]

}  // namespace smem::gemm

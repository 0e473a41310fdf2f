// Tests and benchmarks only: recipes never include support/.
#pragma once
#include <cublas_v2.h>

#include <stdexcept>

namespace smem::test {

/// A cuBLAS handle in math mode Mode, created on first use and kept for the process (one per
/// mode). CUBLAS_DEFAULT_MATH and CUBLAS_PEDANTIC_MATH both keep fp32 off the TF32 tensor cores.
template <cublasMath_t Mode = CUBLAS_DEFAULT_MATH>
cublasHandle_t cublas_handle() {
  static cublasHandle_t h = [] {
    cublasHandle_t x;
    if (cublasCreate(&x) != CUBLAS_STATUS_SUCCESS) throw std::runtime_error("cublasCreate failed");
    if (cublasSetMathMode(x, Mode) != CUBLAS_STATUS_SUCCESS) throw std::runtime_error("cublasSetMathMode failed");
    return x;
  }();
  return h;
}

}  // namespace smem::test

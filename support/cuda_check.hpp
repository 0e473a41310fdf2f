// Tests and benchmarks only: recipes never include support/.
#pragma once
#include <cuda_runtime.h>

#include <stdexcept>
#include <string>

namespace smem::test {

/// Thrown by SMEM_CUDA_CHECK: the failing expression, the CUDA error and where it happened.
struct CudaError : std::runtime_error {
  cudaError_t code;
  CudaError(cudaError_t c, const char* expr, const char* file, int line)
      : std::runtime_error(std::string(file) + ":" + std::to_string(line) + ": " + expr + " -> " +
                           cudaGetErrorName(c) + " (" + cudaGetErrorString(c) + ")"),
        code(c) {}
};

inline void cuda_check(cudaError_t c, const char* expr, const char* file, int line) {
  if (c != cudaSuccess) throw CudaError(c, expr, file, line);
}

}  // namespace smem::test

/// Evaluates a CUDA runtime call and throws smem::test::CudaError (with file and line) on failure.
#define SMEM_CUDA_CHECK(expr) ::smem::test::cuda_check((expr), #expr, __FILE__, __LINE__)

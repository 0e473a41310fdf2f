/// \file gemm_args.cuh
/// \brief The launcher contract shared by every SGEMM step: argument checks on the host before
/// any CUDA call, and the `C = beta * C` kernel for the degenerate cases.
///
/// Every step computes, row-major, C = alpha * A * B + beta * C with A M x K (lda >= K),
/// B K x N (ldb >= N), C M x N (ldc >= N).
#pragma once
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

namespace smem::gemm {

/// What a launcher does with its arguments.
enum class Args {
  launch,      ///< run the step's kernel
  empty,       ///< M == 0 or N == 0: nothing to do, return cudaSuccess
  scale_only,  ///< K == 0 or alpha == 0: C = beta * C (launch scale_c)
  invalid      ///< return cudaErrorInvalidValue, touch nothing
};

/// First and one-past-last byte of a rows x cols row-major matrix with leading dimension ld.
struct Span {
  std::uintptr_t lo, hi;
};
inline Span span_of(const float* p, int rows, int cols, int ld) {
  const auto lo = reinterpret_cast<std::uintptr_t>(p);
  return {lo, lo + (std::size_t(rows - 1) * ld + cols) * sizeof(float)};
}
inline bool overlap(Span a, Span b) { return a.lo < b.hi && b.lo < a.hi; }

//! [contract]
/// Checks the arguments of C = alpha * A * B + beta * C: negative sizes, null pointers where a
/// matrix is read or written, leading dimensions below the widths, and C overlapping A or B are
/// invalid.
inline Args check_args(int M, int N, int K, float alpha, const float* A, int lda, const float* B,
                       int ldb, const float* C, int ldc) {
  if (M < 0 || N < 0 || K < 0) return Args::invalid;
  if (ldc < (N > 1 ? N : 1) || lda < (K > 1 ? K : 1) || ldb < (N > 1 ? N : 1)) return Args::invalid;
  if (M == 0 || N == 0) return Args::empty;
  if (C == nullptr) return Args::invalid;
  if (K == 0 || alpha == 0.0f) return Args::scale_only;
  if (A == nullptr || B == nullptr) return Args::invalid;
  const Span c = span_of(C, M, N, ldc);
  if (overlap(c, span_of(A, M, K, lda)) || overlap(c, span_of(B, K, N, ldb))) return Args::invalid;
  return Args::launch;
}
//! [contract]

/// C = beta * C for an M x N matrix; beta == 0 writes zeros without reading C (a NaN in C does
/// not survive, as in BLAS). A template so that the header can be included in many translation
/// units.
template <class T>
__global__ void scale_c_kernel(int M, int N, T beta, T* C, int ldc) {
  const std::size_t total = std::size_t(M) * N;
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < total;
       i += std::size_t(gridDim.x) * blockDim.x) {
    T& c = C[i / N * ldc + i % N];
    c = beta == T(0) ? T(0) : beta * c;
  }
}

/// What a launcher returns for a non-launch Args: success for empty, the scale for scale_only,
/// cudaErrorInvalidValue for invalid.
inline cudaError_t finish_without_launch(Args a, int M, int N, float beta, float* C, int ldc,
                                         cudaStream_t stream) {
  if (a == Args::invalid) return cudaErrorInvalidValue;
  if (a == Args::empty) return cudaSuccess;
  const std::size_t total = std::size_t(M) * N;
  const unsigned blocks = unsigned(total < 4096u * 256u ? (total + 255) / 256 : 4096u);
  scale_c_kernel<float><<<blocks, 256, 0, stream>>>(M, N, beta, C, ldc);
  return cudaGetLastError();
}


/// Largest grid y (and z) extent: the steps put the row tiles of C in gridDim.y (column tiles in
/// gridDim.x, which allows 2^31 - 1), so a launcher rejects an M with more than this many row tiles.
inline constexpr unsigned kMaxGridY = 65535u;

/// Number of `tile`-sized tiles covering `n`.
constexpr unsigned tiles(int n, int tile) { return unsigned((n + tile - 1) / tile); }

/// The C update of every step's epilogue: `alpha * acc + beta * c`, and with beta == 0 C is not
/// read (a NaN in C does not leak into the result).
__device__ __forceinline__ void update_c(float* c, float acc, float alpha, float beta) {
  *c = beta == 0.0f ? alpha * acc : alpha * acc + beta * *c;
}

/// What the bench reports about a step's kernel: registers per thread, static and dynamic shared
/// memory per block, threads per block, and resident blocks per SM as the occupancy calculator
/// gives them.
struct KernelAttributes {
  int registers = 0;
  int static_smem = 0;
  int dynamic_smem = 0;
  int threads = 0;
  int blocks_per_sm = 0;
};

/// Fills `out` for `kernel` launched with `threads` threads and `dynamic_smem` bytes of dynamic
/// shared memory (the kernel must already be allowed that much, see cudaFuncSetAttribute).
template <class... P>
cudaError_t kernel_attributes(void (*kernel)(P...), int threads, int dynamic_smem,
                              KernelAttributes* out) {
  cudaFuncAttributes fa{};
  if (cudaError_t e = cudaFuncGetAttributes(&fa, kernel); e != cudaSuccess) return e;
  int blocks = 0;
  if (cudaError_t e = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, kernel, threads,
                                                                    std::size_t(dynamic_smem));
      e != cudaSuccess)
    return e;
  *out = {fa.numRegs, int(fa.sharedSizeBytes), dynamic_smem, threads, blocks};
  return cudaSuccess;
}

}  // namespace smem::gemm

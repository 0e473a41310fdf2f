/// \file sgemm_05_padded.cuh
/// \brief Step 5, padded 32 x 33 tiles: step 4's 32 x 32 kernel with one unused word per row.
///
/// Padding is the standard cure for column accesses to a shared tile (see the transpose page).
/// Here there is nothing to cure: the bank model gives `As[ty][k]` (a broadcast) and `Bs[k][tx]`
/// (32 consecutive words) one wavefront each with or without the pad (the host tests check both
/// layouts). What the pad does change is alignment: with 33-word rows, As[ty][k..k+3] is no
/// longer 16-byte aligned, so the compiler can no longer fetch four k of the A row with one
/// `LDS.128`. Per 32-k window the SASS has 64 scalar `LDS` instead of 8 `LDS.128` + 32 `LDS`,
/// so the padded kernel issues more shared-load instructions, with no bank conflicts to save in
/// either kernel. The kernel is bound by shared-memory instructions, so the pad can only slow it
/// down (the page has the measurement and the profiler's counts).
#pragma once
#include <cuda_runtime.h>

#include "sgemm_04_tiled.cuh"

namespace smem::gemm {

//! [padded]
inline Plan<GemmKernel> tiled_32_padded_plan(int M, int N, int, const float*, int, const float*, int, const float*,
                                             int) {
  return tiled_plan<32, 1>(M, N);
}

/// C = alpha * A * B + beta * C, row-major, 32 x 33 padded tiles.
inline cudaError_t tiled_32_padded(int M, int N, int K, float alpha, const float* A, int lda, const float* B,
                                   int ldb, float beta, float* C, int ldc, cudaStream_t stream = nullptr) {
  return tiled<32, 1>(M, N, K, alpha, A, lda, B, ldb, beta, C, ldc, stream);
}
//! [padded]

}  // namespace smem::gemm

/// \file sgemm_10_conflict_free.cuh
/// \brief Step 10, bank-conflict-free A tile: the vectorized kernel of step 9 with each row of
/// the transposed A tile padded by 4 floats.
///
/// Step 9 reads A with float4 along K and stores the four values down a column of the
/// transposed tile As[k][m]. With 128-float rows, the 32 lanes of a warp (16 rows m x 2 K-quads)
/// write words k * 128 + m: the two K-quads of a row are 4 * 128 words apart, the same bank, a
/// 2-way conflict on every one of the four stores. Padding each row to 128 + 4 floats moves the
/// second K-quad by 4 * 4 = 16 banks: bank (16 q + 4 c + m) % 32 differs for all 32 lanes. The
/// pad is 4 floats, not 1, so that every row still starts on a 16-byte boundary and the compute
/// loop keeps its float4 reads (a pad of 1 would break them: the trap of a 33-word row). A
/// swizzle would avoid the 128 bytes of padding per buffer; the pad is the smaller change.
/// Everything else is step 9: the same kernel, vectorized_kernel, instantiated with the
/// padded row length (128 x 128 x 8 tile, 8 x 8 per thread, double buffer, one barrier per
/// window). ConflictFree::a_offset() is the function the host bank-model test evaluates.
///
/// The conflict cost 4 extra wavefronts per 512 FMAs of a thread, so removing it cannot buy
/// much: the page shows what the profiler counts and what the benchmark measures, and why a
/// removed conflict is not always a speed-up.
#pragma once
#include <cuda_runtime.h>

#include "sgemm_09_vectorized.cuh"

namespace smem::gemm {

//! [conflict-free layout]
inline constexpr int kAPad = 4;  ///< floats added to each row of the transposed A tile
/// Step 9's layout with rows of 128 + 4 = 132 floats: still 16-byte aligned, conflict-free store.
using ConflictFree = Vectorized<128 + kAPad>;
//! [conflict-free layout]

inline Plan<GemmKernel> conflict_free_plan(int M, int N, int, const float* A, int lda, const float* B, int ldb,
                                           const float* C, int ldc) {
  return vectorized_plan_with<ConflictFree>(M, N, A, lda, B, ldb, C, ldc);
}

/// C = alpha * A * B + beta * C, row-major: step 9's kernel with the padded A tile.
inline cudaError_t conflict_free(int M, int N, int K, float alpha, const float* A, int lda, const float* B, int ldb,
                                 float beta, float* C, int ldc, cudaStream_t stream = nullptr) {
  //! [conflict-free launch]
  return vectorized_with<ConflictFree>(M, N, K, alpha, A, lda, B, ldb, beta, C, ldc, stream);
  //! [conflict-free launch]
}

}  // namespace smem::gemm

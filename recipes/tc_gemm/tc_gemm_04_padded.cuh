/// \file tc_gemm_04_padded.cuh
/// \brief Step 4, padded tiles: step 3's kernel with every row of both tiles 16 bytes longer.
///
/// With 64 + 8 bf16 (144 bytes) per A row, row r starts 4 r banks further along; the 8 rows of
/// an `ldmatrix` matrix then cover all 32 banks once, and so do the 128 + 8 bf16 (272-byte) rows
/// of B: one wavefront per matrix instead of 8. The pad is 16 bytes, not 2, so that every row
/// still starts on the 16-byte boundary `ldmatrix` and the 16-byte copies need. It costs
/// 8 / 64 of the A tile and 8 / 128 of the B tile in unused shared memory.
#pragma once
#include <cuda_runtime.h>

#include "tc_gemm_03_mma_ldmatrix.cuh"

namespace smem::tc_gemm {

//! [padded layouts]
using PaddedA = RowMajorTile<kTileK, 8>;
using PaddedB = RowMajorTile<kTileN, 8>;
//! [padded layouts]

inline Plan<TcKernel> padded_plan(int M, int N, int, const bf16* A, int lda, const bf16* B, int ldb, const bf16*, int,
                                  const bf16*, int) {
  return mma_tiled_plan<PaddedA, PaddedB>(M, N, A, lda, B, ldb);
}

/// D = alpha * A * B + beta * C: step 3's kernel on padded tiles.
inline cudaError_t padded(int M, int N, int K, float alpha, const bf16* A, int lda, const bf16* B, int ldb, float beta,
                          const bf16* C, int ldc, bf16* D, int ldd, cudaStream_t stream = nullptr) {
  return mma_tiled<PaddedA, PaddedB>(M, N, K, alpha, A, lda, B, ldb, beta, C, ldc, D, ldd, stream);
}

}  // namespace smem::tc_gemm

/// \file tc_gemm_05_swizzled.cuh
/// \brief Step 5, XOR-swizzled tiles: conflict-free without padding, in the layout of the
/// hardware's 128-byte swizzle.
///
/// Instead of lengthening the rows, the swizzle permutes the 16-byte chunks inside each row:
/// chunk c of row r is stored at chunk c ^ (r % 8) (SwizzledTile). The 8 rows an `ldmatrix`
/// matrix reads have 8 different values of r % 8, so their chunks land in 8 different 16-byte
/// bank groups: one wavefront per matrix, as with the pad, and the 16-byte copies that fill the
/// tile stay conflict-free too (a row's 8 chunks are permuted, not moved to other rows). No
/// shared memory is wasted, and the layout is the one Hopper's TMA writes with its 128-byte
/// swizzle mode, which part 2 of the family relies on.
#pragma once
#include <cuda_runtime.h>

#include "tc_gemm_03_mma_ldmatrix.cuh"

namespace smem::tc_gemm {

//! [swizzled layouts]
using SwizzledA = SwizzledTile<kTileK>;
using SwizzledB = SwizzledTile<kTileN>;
//! [swizzled layouts]

inline Plan<TcKernel> swizzled_plan(int M, int N, int, const bf16* A, int lda, const bf16* B, int ldb, const bf16*,
                                    int, const bf16*, int) {
  return mma_tiled_plan<SwizzledA, SwizzledB>(M, N, A, lda, B, ldb);
}

/// D = alpha * A * B + beta * C: step 3's kernel on XOR-swizzled tiles.
inline cudaError_t swizzled(int M, int N, int K, float alpha, const bf16* A, int lda, const bf16* B, int ldb,
                            float beta, const bf16* C, int ldc, bf16* D, int ldd, cudaStream_t stream = nullptr) {
  return mma_tiled<SwizzledA, SwizzledB>(M, N, K, alpha, A, lda, B, ldb, beta, C, ldc, D, ldd, stream);
}

}  // namespace smem::tc_gemm

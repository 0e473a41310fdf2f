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
/// Everything else is step 9: the same kernel, sgemm_vectorized_kernel, instantiated with the
/// padded row length (128 x 128 x 8 tile, 8 x 8 per thread, double buffer, one barrier per
/// window). a_offset() is the constexpr function the host bank-model test evaluates.
///
/// Measured on the H200 (results/h200/gemm_ncu_steps10_13.txt, gemm.json): the profiler's shared
/// store bank conflicts fall from 16.8 M to 868 at 4096^3, as the model predicts, but the kernel
/// is slower than step 9 at every benchmarked shape (3-5% from 2048^3 up, 1% at 1000^3 and
/// 1024^3): the conflict cost 4 extra wavefronts per 512 FMAs of a thread, too little to matter,
/// and a removed conflict is not a speed-up.
#pragma once
#include <cuda_runtime.h>

#include "gemm_args.cuh"
#include "sgemm_09_vectorized.cuh"

namespace smem::gemm {

namespace cf {
using vec::BM, vec::BN, vec::BK, vec::TM, vec::TN, vec::kThreads;
using vec::a_row, vec::a_col, vec::b_row, vec::b_col, vec::b_offset, vec::frag;

//! [conflict-free layout]
inline constexpr int kAPad = 4;          ///< floats added to each row of the transposed A tile
inline constexpr int kALd = BM + kAPad;  ///< 132: rows stay 16-byte aligned
/// Word offset of A(m, k) in the padded transposed A tile As[k][m] (step 9: k * BM + m).
__host__ __device__ constexpr int a_offset(int k, int m) { return vec::a_tile_offset<kALd>(k, m); }
//! [conflict-free layout]
}  // namespace cf

/// C = alpha * A * B + beta * C, row-major: step 9's kernel with the padded A tile.
inline cudaError_t sgemm_conflict_free(int M, int N, int K, float alpha, const float* A, int lda,
                                       const float* B, int ldb, float beta, float* C, int ldc,
                                       cudaStream_t stream = nullptr) {
  //! [conflict-free launch]
  return sgemm_vectorized_with<cf::kALd>(M, N, K, alpha, A, lda, B, ldb, beta, C, ldc, stream);
  //! [conflict-free launch]
}

inline cudaError_t sgemm_conflict_free_attributes(int /*K*/, KernelAttributes* out) {
  return kernel_attributes(sgemm_vectorized_kernel<cf::kALd, true>, cf::kThreads, 0, out);
}

}  // namespace smem::gemm

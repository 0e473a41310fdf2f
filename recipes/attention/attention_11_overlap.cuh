/// \file attention_11_overlap.cuh
/// \brief Step 11, intra-warpgroup overlap (sm_90a): a warpgroup's softmax of tile j runs while its
/// own product P_{j-1} V_{j-1} is still on the tensor cores (FlashAttention-3's two-stage pipeline).
///
/// What changes from step 10, and why it is faster: step 10's turn issues S_j and then P_{j-1}
/// V_{j-1}, and waits for both before the softmax of S_j. But the softmax needs only S_j:
/// wgmma completes its groups in order, so waiting until at most one group is in flight
/// (wgmma.wait_group 1) returns as soon as S_j is done, and the softmax runs while P_{j-1} V_{j-1}
/// still does. Only two things must wait for that product: the rescaling of the output (next
/// turn) and the packing of P_j into the registers P_{j-1} still occupies as its A operand, both
/// after wait_group 0. Ping-pong fills the tensor cores with the other warpgroup's turn; this fills
/// them within one warpgroup too. The kernel is step 10's with kOverlap (and its `#error`).
#pragma once
#include <cuda_runtime.h>

#include <cstddef>

#include "attention_10_pingpong.cuh"
#include "attention_common.cuh"
#include "attention_sm90.cuh"

namespace smem::attention {

/// Step 11's plan: step 10's kernel with the overlap.
inline Plan<WgmmaKernel> overlap_plan(const Problem& p, const bf16* Q = nullptr, const bf16* K = nullptr,
                                      const bf16* V = nullptr, const bf16* O = nullptr) {
  return wgmma_grid_plan(pingpong_kernel<WgmmaShape<64>, true>, pingpong_kernel<WgmmaShape<128>, true>, p, Q, K, V,
                         O);
}

inline std::size_t overlap_workspace(const Problem&) { return 0; }

/// O = softmax(scale Q K^T + mask) V and its LSE, each warpgroup's softmax under its own P V (sm_90a).
inline cudaError_t overlap(const Problem& p, const bf16* Q, const bf16* K, const bf16* V, bf16* O, float* lse, void*,
                           std::size_t, cudaStream_t stream = nullptr) {
  return wgmma_launch(overlap_plan, p, Q, K, V, O, lse, stream);
}

}  // namespace smem::attention

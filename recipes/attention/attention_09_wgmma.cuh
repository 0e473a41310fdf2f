/// \file attention_09_wgmma.cuh
/// \brief Step 9, Hopper's attention (sm_90a): TMA loads of Q, K and V into 128-byte-swizzled
/// tiles, `wgmma` for both products, a producer warp that streams K and V through a ring of stages
/// and two consumer warpgroups of 64 query rows each.
///
/// What changes from the `mma.sync` steps, and why it is faster: there, every warp reads its K and
/// V fragments from shared memory with `ldmatrix` (every fragment a shared-memory load) and
/// issues one m16n8k16 `mma.sync` per 4 KFLOP, each waiting on the previous one's registers.
/// Here one `wgmma` m64n128k16 of a warpgroup reads its B operand (K, then V) straight from the
/// swizzled tile by a descriptor, 262 KFLOP per instruction, asynchronously: the tensor cores run
/// from shared memory while the warps wait on one barrier. S = Q K^T takes Q and K from shared
/// memory (both K-major); P never leaves the registers: the accumulator layout of S is, pair by
/// pair, the register layout of wgmma's A operand, so O += P V takes P from registers and V from
/// shared memory as an MN-major operand (rows of keys, head_dim contiguous). One thread of a
/// producer warpgroup issues the TMA loads, each completing on an mbarrier with its byte count,
/// so no consumer thread computes an address or waits on a copy it issued; `setmaxnreg` gives the
/// producer's registers to the consumers, which hold the 64 x 128 scores and output in registers.
/// TMA zero-fills the rows past seq_q and seq_kv (the tensor maps know each tensor's extents and
/// strides), so the tiles need no bounds checks; the mask hides the keys past seq_kv.
///
/// The shape, the tensor maps, the producer, the products and the rows' softmax are the Hopper
/// kit's (attention_sm90.cuh), which steps 10 and 11 share; this step's kernel runs them in order:
/// wait for K_j, S_j = Q K_j^T, softmax, wait for V_j, O += P_j V_j, each product waited for.
///
/// Takes head_dim 64 and 128, tensors whose base is 16-byte aligned and whose strides are multiples
/// of 8 elements below 2^39 (the tensor map's rules); a stride of 0 (a tensor shared across a
/// batch, say) reads coordinate 0 of that dimension. Causal problems walk only the tiles the mask
/// leaves visible; the blocks run in the family's order (QueryTile: the longest first, in groups
/// of heads that share L2).
#pragma once
#include <cuda_runtime.h>

#include <cstddef>

#include "attention_common.cuh"
#include "attention_sm90.cuh"

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 900
#error "attention_09_wgmma.cuh needs TMA, wgmma and setmaxnreg: compile for sm_90a (e.g. -arch=sm_90a)"
#endif

namespace smem::attention {

//! [wgmma kernel]
template <class S>
__global__ void __launch_bounds__(S::kThreads, 1)
    wgmma_kernel(const __grid_constant__ CUtensorMap q_map, const __grid_constant__ CUtensorMap k_map,
                 const __grid_constant__ CUtensorMap v_map, Problem p, bf16* O, float* lse) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  extern __shared__ unsigned char raw[];
  __shared__ typename WgmmaStages<S>::Bars bars;
  const WgmmaStages<S> st(raw, bars);
  const QueryTile blk = QueryTile::nth(p, blockIdx.x, S::kRows);
  const long long n = KeyTiles(p, blk.q0, blk.last, S::kKeys).end;
  if (!start_block<S>(&q_map, &k_map, &v_map, p, blk, n, st)) return;
  const int w = sm90::warpgroup() - 1;  // consumer warpgroup w: query rows q0 + 64 w on
  RowsOf<S> r(blk.q0 + 64 * w);
  for (long long j = 0; j < n; ++j) {
    float sc[S::kKeys / 2];
    unsigned pa[S::kKeys / 16][4];
    st.wait(j, 0);
    issue_scores<S>(sc, st.q, st.tile(j, 0), w);
    sm90::wgmma_wait<0>();
    sm90::fence_acc(sc);
    tile_softmax<S>(r, sc, st.q, st.tile(j, 0), w, p, j * S::kKeys);
    st.release(j, 0, r.t);
    r.rescale_o();
    r.pack(sc, pa);
    st.wait(j, 1);
    issue_pv<S>(r.o, pa, st.tile(j, 1));
    sm90::wgmma_wait<0>();
    sm90::fence_acc(r.o);
    st.release(j, 1, r.t);
  }
  r.store(p, blk, O, lse);
#endif
}
//! [wgmma kernel]

/// Step 9's plan: null for a head_dim other than 64 and 128, a tensor TMA cannot read, or more
/// than 2^31 - 1 blocks.
inline Plan<WgmmaKernel> wgmma_plan(const Problem& p, const bf16* Q = nullptr, const bf16* K = nullptr,
                                    const bf16* V = nullptr, const bf16* O = nullptr) {
  return wgmma_grid_plan(wgmma_kernel<WgmmaShape<64>>, wgmma_kernel<WgmmaShape<128>>, p, Q, K, V, O);
}

inline std::size_t wgmma_workspace(const Problem&) { return 0; }

//! [wgmma launcher]
/// O = softmax(scale Q K^T + mask) V and its LSE on wgmma, the loads by TMA (sm_90a).
inline cudaError_t wgmma(const Problem& p, const bf16* Q, const bf16* K, const bf16* V, bf16* O, float* lse, void*,
                         std::size_t, cudaStream_t stream = nullptr) {
  return wgmma_launch(wgmma_plan, p, Q, K, V, O, lse, stream);
}
//! [wgmma launcher]

}  // namespace smem::attention

/// \file attention_10_pingpong.cuh
/// \brief Step 10, ping-pong (sm_90a): the consumer warpgroups take turns at the tensor cores,
/// so that one's softmax runs while another's products do.
///
/// What changes from step 9, and why it is faster: in step 9 the consumer warpgroups wait on the
/// same K and V stages, so they run in step: all issue S = Q K^T together, all compute their
/// softmax together while the tensor cores have nothing to do, all issue P V together. Here a
/// warpgroup's turn is one block of products, P_{j-1} V_{j-1} of the previous tile and S_j of this
/// one issued back to back, and the turns go round the warpgroups on hardware barriers (Turns):
/// warpgroup 0 issues its turn and hands over; while the tensor cores run it and the other
/// warpgroups' turns (one more at head_dim 128, two at 64), warpgroup 0 computes the softmax of
/// S_j. With the softmax's exponentials and the products about as long, the tensor cores go from
/// one warpgroup's products to the next one's. Moving P_{j-1} V_{j-1} into the next tile's turn
/// costs registers, not time: P stays in registers (32 per thread) while the next scores
/// accumulate; the output is rescaled by the new max just before the product that adds to it. K_j's
/// stage is released once S_j is done, V_{j-1}'s once its product is.
///
/// The kernel takes kOverlap for step 11, which waits for S_j alone and lets P_{j-1} V_{j-1} run
/// under the softmax; here (false) a turn's products are waited for together.
#pragma once
#include <cuda_runtime.h>

#include <cstddef>

#include "attention_common.cuh"
#include "attention_sm90.cuh"

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 900
#error "attention_10_pingpong.cuh needs TMA, wgmma and setmaxnreg: compile for sm_90a (e.g. -arch=sm_90a)"
#endif

namespace smem::attention {

//! [turns]
/// Ping-pong: the consumer warpgroups (`consumers` of them) take turns at the tensor cores, in order.
/// Warpgroup w waits for its turn on hardware barrier 1 + w (its 128 threads and the previous one's
/// 128 arriving) before it issues a turn's products, and hands the turn over (arrives on the next
/// one's barrier) once they are issued; the last warpgroup hands the first turn to warpgroup 0. Of
/// `turns` turns each, the last warpgroup skips its last hand-over, so that every barrier's arrivals
/// and waits match at the end of each query tile.
struct Turns {
  int w, consumers;
  long long turns;
  __device__ Turns(int warpgroup, long long n, int count = 2) : w(warpgroup), consumers(count), turns(n) {
    if (w == consumers - 1 && turns > 0) hand_over(0);
  }
  __device__ __forceinline__ void wait() const { sm90::named_barrier(1 + w, 256); }
  __device__ __forceinline__ void done(long long turn) const {
    if (w + 1 < consumers || turn + 1 < turns) hand_over((w + 1) % consumers);
  }
  __device__ __forceinline__ static void hand_over(int to) {
    asm volatile("bar.arrive %0, 256;\n" ::"r"(1 + to) : "memory");
  }
};
//! [turns]

//! [pingpong rows]
/// A consumer warpgroup's part of one query tile: n > 0 key tiles, the block's tiles g to g + n - 1,
/// their products in turns (Q in Qs), the online softmax in r. Turn j issues S_j (j < n) and
/// P_{j-1} V_{j-1} (j > 0). The ring st is the kit's `WgmmaStages<S>`, or one with its tile, wait
/// and release (step 16's, whose release reaches both blocks of a cluster); r is the kit's
/// `RowsOf<S>`, or one with its own softmax.
template <class S, bool kOverlap, class Stages, class Rows>
__device__ __forceinline__ void pingpong_rows(const Stages& st, const bf16* Qs, Rows& r,
                                              const Problem& p, long long n, int w, long long g) {
  const Turns turns(w, n + 1, S::kConsumers);
  float sc[S::kKeys / 2];
  unsigned pa[S::kKeys / 16][4];
  st.wait(g, 0);
  turns.wait();
  issue_scores<S>(sc, Qs, st.tile(g, 0), w);
  turns.done(0);
  sm90::wgmma_wait<0>();
  sm90::fence_acc(sc);
  tile_softmax<S>(r, sc, Qs, st.tile(g, 0), w, p, 0);
  st.release(g, 0, r.t);
  r.pack(sc, pa);
  for (long long j = 1; j < n; ++j) {
    st.wait(g + j, 0);
    st.wait(g + j - 1, 1);
    turns.wait();
    issue_scores<S>(sc, Qs, st.tile(g + j, 0), w);
    r.rescale_o();
    issue_pv<S>(r.o, pa, st.tile(g + j - 1, 1));
    turns.done(j);
    sm90::wgmma_wait<kOverlap ? 1 : 0>();  // S_j done (and, without the overlap, P_{j-1} V_{j-1})
    sm90::fence_acc(sc);
    tile_softmax<S>(r, sc, Qs, st.tile(g + j, 0), w, p, j * S::kKeys);
    st.release(g + j, 0, r.t);
    sm90::wgmma_wait<0>();
    sm90::fence_acc(r.o);
    st.release(g + j - 1, 1, r.t);
    r.pack(sc, pa);
  }
  st.wait(g + n - 1, 1);
  turns.wait();
  r.rescale_o();
  issue_pv<S>(r.o, pa, st.tile(g + n - 1, 1));
  turns.done(n);
  sm90::wgmma_wait<0>();
  sm90::fence_acc(r.o);
  st.release(g + n - 1, 1, r.t);
}
//! [pingpong rows]

//! [pingpong kernel]
template <class S, bool kOverlap, class Rows = RowsOf<S>>  // Rows: probes/attention_softmax.cu's cuts
__global__ void __launch_bounds__(S::kThreads, 1)
    pingpong_kernel(const __grid_constant__ CUtensorMap q_map, const __grid_constant__ CUtensorMap k_map,
                    const __grid_constant__ CUtensorMap v_map, Problem p, bf16* O, float* lse) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  extern __shared__ unsigned char raw[];
  __shared__ typename WgmmaStages<S>::Bars bars;
  const WgmmaStages<S> st(raw, bars);
  const QueryTile blk = QueryTile::nth(p, blockIdx.x, S::kRows);
  const long long n = KeyTiles(p, blk.q0, blk.last, S::kKeys).end;
  if (!start_block<S>(&q_map, &k_map, &v_map, p, blk, n, st)) return;
  const int w = sm90::warpgroup() - 1;
  Rows r(blk.q0 + 64 * w);
  if (n > 0) pingpong_rows<S, kOverlap>(st, st.q, r, p, n, w, 0);
  r.store(p, blk, O, lse);
#endif
}
//! [pingpong kernel]

/// Step 10's plan: as step 9's.
inline Plan<WgmmaKernel> pingpong_plan(const Problem& p, const bf16* Q = nullptr, const bf16* K = nullptr,
                                       const bf16* V = nullptr, const bf16* O = nullptr) {
  return wgmma_grid_plan(pingpong_kernel<WgmmaShape<64>, false>, pingpong_kernel<WgmmaShape<128>, false>, p, Q, K,
                         V, O);
}

inline std::size_t pingpong_workspace(const Problem&) { return 0; }

/// O = softmax(scale Q K^T + mask) V and its LSE, the consumer warpgroups in turns (sm_90a).
inline cudaError_t pingpong(const Problem& p, const bf16* Q, const bf16* K, const bf16* V, bf16* O, float* lse, void*,
                            std::size_t, cudaStream_t stream = nullptr) {
  return wgmma_launch(pingpong_plan, p, Q, K, V, O, lse, stream);
}

}  // namespace smem::attention

/// \file attention_06_causal.cuh
/// \brief Step 6, causal work skipped: no tile that the mask hides entirely is loaded or computed,
/// only the tiles that cross the diagonal (or the end of K) are masked, and the blocks with the
/// most work start first.
///
/// Change from step 5: with the causal mask, query i sees keys up to i + seq_kv - seq_q, so a block
/// of rows q0 to q1 needs the K/V tiles up to key q1 + seq_kv - seq_q only: for a square problem,
/// about half the tiles of step 5 are never touched. Of those it walks, a tile whose keys all lie
/// at or before q0 + seq_kv - seq_q (and before seq_kv) needs no mask: the compare-and-select per
/// score runs only on the tiles at the diagonal. The work per block now grows with its query
/// tile, so the blocks are numbered from the last query tile down: the longest blocks start
/// first and the short ones fill in at the end, instead of the last wave holding the longest
/// blocks alone. That order runs over groups of heads whose K and V fit in L2 together, so the
/// blocks running at once read the same K and V (as step 5's head-by-head order does). Without
/// the causal mask the step is step 5 with only the last tile masked.
#pragma once
#include <cuda_runtime.h>

#include <cstddef>

#include "attention_sm80.cuh"

namespace smem::attention {

//! [causal kernel]
template <class S>
__global__ void __launch_bounds__(S::kThreads, S::kMinBlocks)
    causal_kernel(Problem p, const bf16* Q, const bf16* K, const bf16* V, bf16* O, float* lse) {
  extern __shared__ __align__(16) unsigned char smem_raw[];
  bf16* Qs = reinterpret_cast<bf16*>(smem_raw);
  bf16* stage0 = Qs + S::QTile::kElems;
  const QueryTile qt = QueryTile::nth(p, blockIdx.x, S::kRows, S::kAcrossHeads);  // longest first
  const long long b = qt.b, h = qt.h, hk = h / (p.heads_q / p.heads_kv), q0 = qt.q0;
  const int row0 = 16 * S::kMt * int(threadIdx.x / 32);
  const KeyTiles kt(p, q0, qt.last, S::kKeys);
  auto issue = [&](long long k0, int s) {
    bf16* Ks = stage0 + 2 * s * S::KvTile::kElems;
    load_tile_async<typename S::KvTile, S::kThreads>(Ks, K + at(p.k, b, k0, hk), p.k.seq, p.seq_kv - k0);
    load_tile_async<typename S::KvTile, S::kThreads>(Ks + S::KvTile::kElems, V + at(p.v, b, k0, hk), p.v.seq,
                                                     p.seq_kv - k0);
    cp_async_commit();
  };

  if (kt.end > 0) {  // one group: Q and the first tiles (rows that see no key need neither)
    load_tile_async<typename S::QTile, S::kThreads>(Qs, Q + at(p.q, b, q0, h), p.q.seq, p.seq_q - q0);
    issue(0, 0);
  }
  typename S::Warp w(q0 + row0);
  for (long long t = 0; t < kt.end; ++t) {
    cp_async_wait<0>();
    __syncthreads();  // tile t landed, and every warp is done with tile t - 1's stage
    if (t + 1 < kt.end) issue((t + 1) * S::kKeys, int((t + 1) % 2));
    if (t == 0) w.load_q(Qs, row0, p.scale < 0);
    const bf16* Ks = stage0 + 2 * (t % 2) * S::KvTile::kElems;
    w.scores(Ks);
    if (t >= kt.masked) w.softmax(p, t * S::kKeys);
    else w.template softmax<false>(p, t * S::kKeys);
    w.add_pv(Ks + S::KvTile::kElems);
  }
  w.store(p, b, h, q0 + row0, O, lse);
}
//! [causal kernel]

/// The plan of step 6: step 5's grid and shared memory.
inline Plan<RowKernel> causal_plan(const Problem& p, const bf16* Q = nullptr, const bf16* K = nullptr,
                                   const bf16* V = nullptr, const bf16* O = nullptr) {
  using S64 = PipelinedShape<64>;
  using S128 = PipelinedShape<128>;
  return shaped_plan<S64, S128>(p, Q, K, V, O, causal_kernel<S64>, causal_kernel<S128>);
}
inline std::size_t causal_workspace(const Problem&) { return 0; }

/// O = softmax(scale Q K^T + mask) V and its LSE: step 5 with the masked tiles skipped.
inline cudaError_t causal(const Problem& p, const bf16* Q, const bf16* K, const bf16* V, bf16* O, float* lse, void*,
                          std::size_t, cudaStream_t stream = nullptr) {
  const Args a = check_args(p, Q, K, V, O, lse);
  if (a == Args::invalid || (p.head_dim != 64 && p.head_dim != 128)) return cudaErrorInvalidValue;
  if (a != Args::launch) return finish_without_launch(a, p, O, lse, stream);
  return launch(causal_plan(p, Q, K, V, O), stream, p, Q, K, V, O, lse);
}

}  // namespace smem::attention

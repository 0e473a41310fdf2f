/// \file attention_12_persistent.cuh
/// \brief Step 12, persistent blocks (sm_90a): one block per SM walks a fixed list of query tiles,
/// and the next tile's Q, K and V load while the current one's last products run.
///
/// What changes from step 11, and why it is faster: a block of step 11 does one query tile and
/// exits; the next block on that SM starts cold (barriers initialized, Q and the first K loaded,
/// nothing to overlap them with) and its first turn has no partner in the other warpgroup. With
/// short rows (N = 1k: 8 key tiles a tile) that start is a large part of the tile, and a causal
/// grid of tiles of different lengths leaves some SMs idle at its end. Here the grid is one block
/// per SM, and block b takes work items b, then 2G - 1 - b, then 2G + b, ... (G blocks; items in the
/// family's order, QueryTile: the longest first, heads grouped so the SMs share K and V in L2):
/// the order snakes, so a block that took one of the longest items of a round takes one of the
/// shortest of the next, and the blocks' sums of work come out nearly equal. The schedule is
/// fixed, so every thread computes it and no block waits on another.
///
/// Across a block's items the stages run on: the producer counts the key tiles it has streamed (g)
/// and the consumers count the same, so a stage's full and empty barriers keep their phases from
/// one item to the next. Q has two buffers: while the consumers finish item i in one, the producer
/// loads item i + 1's Q into the other, and then its first K and V into the stages that item i
/// releases. A Q buffer is free again (q_free, one arrival per consumer warpgroup) when both
/// warpgroups' last products of its item are done. The warpgroups' turns are step 10's, per item.
/// The consumers' loop is step 11's (step 10's kernel with the overlap), called once per item.
/// Walking the schedule takes the producer thread 64-bit divisions: its warpgroup keeps 56
/// registers a thread (the consumers 224) instead of 24.
#pragma once
#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "attention_10_pingpong.cuh"
#include "attention_common.cuh"
#include "attention_sm90.cuh"

namespace smem::attention {

/// Step 12's block: step 11's, with a second Q tile after the stages.
template <int D>
struct PersistentShape : WgmmaShape<D> {
  using Base = WgmmaShape<D>;
  static constexpr unsigned kSmemBytes = Base::Tile::smem_bytes((2 + 2 * Base::kStages) * Base::kTileBytes);
};

//! [schedule]
/// Block `block` of `blocks`: its item of round r (beyond `items` when it has none), the rounds
/// running forward and backward in turn over the blocks.
struct Snake {
  long long block, blocks, items;
  __device__ long long item(long long r) const { return r * blocks + (r % 2 == 0 ? block : blocks - 1 - block); }
  __device__ long long rounds() const { return tiles(items, int(blocks)); }
};
//! [schedule]

//! [persistent kernel]
template <class S>
__global__ void __launch_bounds__(S::kThreads, 1)
    persistent_kernel(const __grid_constant__ CUtensorMap q_map, const __grid_constant__ CUtensorMap k_map,
                      const __grid_constant__ CUtensorMap v_map, Problem p, bf16* O, float* lse) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  extern __shared__ unsigned char raw[];
  __shared__ typename WgmmaStages<S>::Bars bars;
  __shared__ std::uint64_t q_full[2], q_free[2];  // Q buffer c % 2 landed / read by both consumers
  const WgmmaStages<S> st(raw, bars);
  auto q_tile = [&](long long c) { return st.q + (c % 2) * (1 + 2 * S::kStages) * S::Tile::kElems; };  // Q buffer c % 2
  const Snake sched{blockIdx.x, gridDim.x, 1LL * p.batch * p.heads_q * tiles(p.seq_q, S::kRows)};
  if (threadIdx.x == 0)
    for (int i = 0; i < 2; ++i) sm90::mbar_init(&q_full[i], 1), sm90::mbar_init(&q_free[i], 2);
  const bool consumer = split_roles<S, 56>(st, [&] {
    long long g = 0, c = 0;  // key tiles and Q tiles streamed so far
    for (long long r = 0; r < sched.rounds(); ++r) {
      const long long x = sched.item(r);
      if (x >= sched.items) continue;
      const QueryTile blk(p, x, S::kRows);
      const long long n = KeyTiles(p, blk.q0, blk.last, S::kKeys).end;
      if (n == 0) continue;  // rows that see no key: the consumers write them alone
      sm90::mbar_wait(&q_free[c % 2], unsigned(c / 2 & 1) ^ 1);
      produce<S>(&q_map, &k_map, &v_map, p, blk, n, st, q_tile(c), &q_full[c % 2], g);
      g += n, ++c;
    }
  });
  if (!consumer) return;
  const int w = sm90::warpgroup() - 1;
  long long g = 0, c = 0;  // the producer's counts, kept in step
  for (long long r = 0; r < sched.rounds(); ++r) {
    const long long x = sched.item(r);
    if (x >= sched.items) continue;
    const QueryTile blk(p, x, S::kRows);
    const long long n = KeyTiles(p, blk.q0, blk.last, S::kKeys).end;
    WgmmaRows<S::kD> rows(blk.q0 + 64 * w);
    if (n > 0) {
      sm90::mbar_wait(&q_full[c % 2], unsigned(c / 2 & 1));
      pingpong_rows<S, true>(st, q_tile(c), rows, p, n, w, g);
      if (rows.t == 0) sm90::mbar_arrive(&q_free[c % 2]);
      g += n, ++c;
    }
    rows.store(p, blk, O, lse);
  }
#endif
}
//! [persistent kernel]

/// Step 12's plan: one block per SM (at most one per query tile), with two Q tiles' shared memory;
/// null as wgmma_pick (any number of query tiles is taken).
inline Plan<WgmmaKernel> persistent_plan(const Problem& p, const bf16* Q = nullptr, const bf16* K = nullptr,
                                         const bf16* V = nullptr, const bf16* O = nullptr) {
  int dev = 0, sms = 1;
  if (cudaGetDevice(&dev) != cudaSuccess || cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev)) sms = 1;
  const long long items = 1LL * p.batch * p.heads_q * tiles(p.seq_q, 128);
  return {wgmma_pick(persistent_kernel<PersistentShape<64>>, persistent_kernel<PersistentShape<128>>, p, Q, K, V, O),
          dim3(unsigned(std::clamp<long long>(items, 1, sms))), dim3(384),
          p.head_dim == 64 ? PersistentShape<64>::kSmemBytes : PersistentShape<128>::kSmemBytes};
}

inline std::size_t persistent_workspace(const Problem&) { return 0; }

/// O = softmax(scale Q K^T + mask) V and its LSE, one block per SM walking the query tiles (sm_90a).
inline cudaError_t persistent(const Problem& p, const bf16* Q, const bf16* K, const bf16* V, bf16* O, float* lse,
                              void*, std::size_t, cudaStream_t stream = nullptr) {
  return wgmma_launch(persistent_plan, p, Q, K, V, O, lse, stream);
}

}  // namespace smem::attention

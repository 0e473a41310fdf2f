/// \file attention_12_persistent.cuh
/// \brief Step 12, persistent blocks (sm_90a): one block per SM takes query tiles from a counter
/// until none is left, and the next tile's Q, K and V load while the current one's last products
/// run.
///
/// What changes from step 11, and why it is faster: a block of step 11 does one query tile and
/// exits; the next block on that SM starts cold (barriers initialized, Q and the first K loaded
/// with nothing to overlap them), which at short rows (N = 1k: 8 key tiles a tile) is a large part
/// of the tile. Here the grid is one block per SM, and its producer thread takes the next work
/// item with an atomicAdd on a counter in the workspace (zeroed by the launcher before the kernel):
/// items in the family's order (QueryTile: the longest first, heads grouped so the SMs share K and
/// V in L2), each to the first block that is ready for one, so that the blocks finish together
/// even though causal items differ in length. A fixed schedule cannot do that: dealing the
/// longest-first list to the blocks in turn (forward, then backward) left the busiest block with
/// 40% more key tiles than the average at causal N = 1k.
///
/// The producer tells the consumers which item comes next through a slot beside each of two Q
/// buffers: it writes the item, then loads its Q (the load's completion publishes both), or for
/// an item whose rows see no key, or the end, arrives on the slot's barrier without a load.
/// While the consumers finish item i in one buffer, the producer loads item i + 1's Q into the
/// other and then its first K and V into the stages that item i releases; a buffer is free
/// again (q_free, one arrival per consumer warpgroup) when both warpgroups are done with its
/// item. Across items the stages run on: the producer and the consumers count the key tiles
/// streamed (g), so a stage's barriers keep their phases from one item to the next. The
/// consumers' loop is step 11's (step 10's kernel with the overlap), once per item, the turns
/// per item. Taking items and decoding them costs the producer thread 64-bit divisions: its
/// warpgroup keeps 56 registers a thread (the consumers 224) instead of 24.
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

//! [persistent kernel]
template <class S>
__global__ void __launch_bounds__(S::kThreads, 1)
    persistent_kernel(const __grid_constant__ CUtensorMap q_map, const __grid_constant__ CUtensorMap k_map,
                      const __grid_constant__ CUtensorMap v_map, Problem p, bf16* O, float* lse,
                      unsigned long long* next) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  extern __shared__ unsigned char raw[];
  __shared__ typename WgmmaStages<S>::Bars bars;
  __shared__ std::uint64_t q_full[2], q_free[2];  // slot c % 2: its item (and Q) published / done with
  __shared__ long long item[2];
  const WgmmaStages<S> st(raw, bars);
  auto q_tile = [&](long long c) { return st.q + (c % 2) * (1 + 2 * S::kStages) * S::Tile::kElems; };
  const long long items = 1LL * p.batch * p.heads_q * tiles(p.seq_q, S::kRows);
  if (threadIdx.x == 0)
    for (int i = 0; i < 2; ++i) sm90::mbar_init(&q_full[i], 1), sm90::mbar_init(&q_free[i], 2);
  const bool consumer = split_roles<S, 56>(st, [&] {
    long long g = 0;  // key tiles streamed so far
    for (long long c = 0;; ++c) {
      const long long x = (long long)atomicAdd(next, 1ULL);
      sm90::mbar_wait(&q_free[c % 2], unsigned(c / 2 & 1) ^ 1);
      item[c % 2] = x;
      const QueryTile blk(p, x < items ? x : 0, S::kRows);
      const long long n = x < items ? KeyTiles(p, blk.q0, blk.last, S::kKeys).end : 0;
      if (n == 0) {  // the end, or rows that see no key: the consumers need no Q
        sm90::mbar_arrive(&q_full[c % 2]);
        if (x >= items) return;
        continue;
      }
      produce<S>(&q_map, &k_map, &v_map, p, blk, n, st, q_tile(c), &q_full[c % 2], g);
      g += n;
    }
  });
  if (!consumer) return;
  const int w = sm90::warpgroup() - 1;
  long long g = 0;  // the producer's count, kept in step
  for (long long c = 0;; ++c) {
    sm90::mbar_wait(&q_full[c % 2], unsigned(c / 2 & 1));
    const long long x = item[c % 2];
    if (x >= items) return;
    const QueryTile blk(p, x, S::kRows);
    const long long n = KeyTiles(p, blk.q0, blk.last, S::kKeys).end;
    WgmmaRows<S::kD> rows(blk.q0 + 64 * w);
    if (n > 0) pingpong_rows<S, true>(st, q_tile(c), rows, p, n, w, g);
    if (rows.t == 0) sm90::mbar_arrive(&q_free[c % 2]);
    g += n;
    rows.store(p, blk, O, lse);
  }
#endif
}
//! [persistent kernel]

/// The kernel of step 12: step 11's arguments and the item counter.
using PersistentKernel = void (*)(CUtensorMap, CUtensorMap, CUtensorMap, Problem, bf16*, float*,
                                  unsigned long long*);

/// Step 12's plan: one block per SM (at most one per query tile), with two Q tiles' shared memory;
/// null as wgmma_pick (any number of query tiles is taken).
inline Plan<PersistentKernel> persistent_plan(const Problem& p, const bf16* Q = nullptr, const bf16* K = nullptr,
                                              const bf16* V = nullptr, const bf16* O = nullptr) {
  int dev = 0, sms = 1;
  if (cudaGetDevice(&dev) != cudaSuccess || cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev)) sms = 1;
  const long long items = 1LL * p.batch * p.heads_q * tiles(p.seq_q, 128);
  return {wgmma_pick<PersistentKernel>(persistent_kernel<PersistentShape<64>>,
                                       persistent_kernel<PersistentShape<128>>, p, Q, K, V, O),
          dim3(unsigned(std::clamp<long long>(items, 1, sms))), dim3(384),
          p.head_dim == 64 ? PersistentShape<64>::kSmemBytes : PersistentShape<128>::kSmemBytes};
}

/// The workspace of step 12: the item counter (none for a problem that launches no kernel).
inline std::size_t persistent_workspace(const Problem& p) {
  return p.batch > 0 && p.heads_q > 0 && p.seq_q > 0 && p.seq_kv > 0 ? 16 : 0;
}

/// O = softmax(scale Q K^T + mask) V and its LSE, one block per SM taking query tiles (sm_90a;
/// workspace: persistent_workspace(p) bytes, zeroed here on the stream before the kernel).
inline cudaError_t persistent(const Problem& p, const bf16* Q, const bf16* K, const bf16* V, bf16* O, float* lse,
                              void* workspace, std::size_t workspace_bytes, cudaStream_t stream = nullptr) {
  const Args a = check_args(p, Q, K, V, O, lse);
  if (a == Args::invalid || (p.head_dim != 64 && p.head_dim != 128)) return cudaErrorInvalidValue;
  if (a != Args::launch) return finish_without_launch(a, p, O, lse, stream);
  if (!workspace_fits(p, Q, K, V, O, lse, workspace, workspace_bytes, persistent_workspace(p)))
    return cudaErrorInvalidValue;
  const Plan<PersistentKernel> plan = persistent_plan(p, Q, K, V, O);
  CUtensorMap m[3];
  if (plan.kernel == nullptr || !wgmma_maps(p, Q, K, V, m)) return cudaErrorInvalidValue;
  auto* next = static_cast<unsigned long long*>(workspace);
  if (cudaError_t e = cudaMemsetAsync(next, 0, sizeof(*next), stream); e != cudaSuccess) return e;
  return launch(plan, stream, m[0], m[1], m[2], p, O, lse, next);
}

}  // namespace smem::attention

/// \file attention_16_cluster.cuh
/// \brief Step 16, clusters of two blocks with TMA multicast of K and V (sm_90a): the two blocks of
/// a cluster take two query tiles of one head, and each loads half of every K and V tile into both.
///
/// What changes from step 11, and why it is faster: every block of step 11 reads every K and V
/// tile of its head from L2, and the SMs' reads of L2 grow with the rate of the tensor pipe. Here
/// the two query tiles of a head that need the same K and V tiles run as a cluster of two blocks
/// (`__cluster_dims__`), and each block's producer loads 64 of a tile's 128 keys with
/// `.multicast::cluster`: one read from L2 lands in the stages of both blocks and completes on the
/// full barriers of both, so each block reads half of K and V from L2. The gain is small, since L2
/// is not what the tensor pipe waits on (the Hopper limits page); at short sequences, with the
/// causal mask and at head_dim 64 the cluster's costs, below, can outweigh it.
///
/// What the cluster costs: since either producer writes into both blocks, a stage is empty only
/// when both blocks' consumers are done with it: its empty barriers count the consumer warpgroups of
/// both blocks, and a consumer releases a stage in both (`mapa` gives the other block's barrier).
/// The barriers of both blocks are initialized before either block copies (a cluster barrier).
/// With the causal mask the two tiles see different numbers of key tiles: both producers stream
/// the larger count, and the block that needs fewer releases the extra stages unread. A producer
/// waits, before it exits, until both blocks have released its last stages, so no arrival reaches
/// a block that has exited. The consumers run step 11's loop as it is (pingpong_rows, on this ring).
///
/// Cluster c takes query tiles 2k and 2k + 1 of one head: without the mask a head's pairs in turn
/// (its K and V stay in L2 while its clusters run), with it the longest pairs first across all
/// heads (as step 8). The block and the tensor maps are the kit's, K's and V's in boxes of 64 rows.
#pragma once
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "attention_10_pingpong.cuh"
#include "attention_common.cuh"
#include "attention_sm90.cuh"

namespace smem::attention {

//! [cluster ring]
/// The kit's ring in a cluster of two: a stage's empty barriers await both blocks' consumer
/// warpgroups, and a consumer releases a stage in both blocks.
template <class S>
struct ClusterStages : WgmmaStages<S> {
  using WgmmaStages<S>::WgmmaStages;
  __device__ void init() const { WgmmaStages<S>::init(2 * S::kConsumers); }
  __device__ void release(long long j, int kv, int t) const {
    if (t == 0)
      for (unsigned cta = 0; cta < 2; ++cta) sm90::mbar_arrive_cluster(&this->bar.empty[j % S::kStages][kv], cta);
  }
};

/// TMA multicast: the box at (c, s, h, b) of a 4D map into dst in every block of `mask`, completing
/// on the barrier at bar's offset in each.
__device__ __forceinline__ void tma_multicast_4d(void* dst, const CUtensorMap* map, int c, int s, int h, int b,
                                                 std::uint64_t* bar, std::uint16_t mask) {
  asm volatile(
      "cp.async.bulk.tensor.4d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.multicast::cluster"
      " [%0], [%1, {%2, %3, %4, %5}], [%6], %7;\n" ::"r"(sm90::smem_u32(dst)),
      "l"(map), "r"(c), "r"(s), "r"(h), "r"(b), "r"(sm90::smem_u32(bar)), "h"(mask)
      : "memory");
}
//! [cluster ring]

/// Block r's query tile of cluster c: tile 2k + r of one head, the pairs k of a head in turn, or
/// with the causal mask the longest first across all heads.
__host__ __device__ inline QueryTile cluster_tile(const Problem& p, long long c, unsigned r, int rows) {
  const long long heads = 1LL * p.batch * p.heads_q, pairs = (tiles(p.seq_q, rows) + 1) / 2;
  const long long k = p.causal ? pairs - 1 - c / heads : c % pairs;
  return QueryTile(p, p.causal ? c % heads : c / pairs, 2 * k + r, rows);
}
/// The key tiles query tile blk walks (none for a tile past seq_q, the second of an odd count).
__host__ __device__ inline long long walked(const Problem& p, const QueryTile& blk, int keys) {
  return blk.q0 < p.seq_q ? KeyTiles(p, blk.q0, blk.last, keys).end : 0;
}

//! [cluster kernel]
template <class S>
__global__ void __cluster_dims__(2, 1, 1) __launch_bounds__(S::kThreads, 1)
    cluster_kernel(const __grid_constant__ CUtensorMap q_map, const __grid_constant__ CUtensorMap k_map,
                   const __grid_constant__ CUtensorMap v_map, Problem p, bf16* O, float* lse) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  extern __shared__ unsigned char raw[];
  __shared__ typename WgmmaStages<S>::Bars bars;
  const ClusterStages<S> st(raw, bars);
  const unsigned rank = sm90::cluster_rank();
  const QueryTile blk = cluster_tile(p, blockIdx.x / 2, rank, S::kRows);
  const long long n = walked(p, blk, S::kKeys);
  const long long other = walked(p, cluster_tile(p, blockIdx.x / 2, rank ^ 1, S::kRows), S::kKeys);
  const long long both = n > other ? n : other;  // the key tiles both producers stream
  if (!split_roles<S, 24, true>(st, [&] {
        if (n > 0) {
          sm90::mbar_arrive_expect_tx(&st.bar.q, S::kQBytes);
          tma_rows<S::kD, S::QTile::kPanel>(st.q, &q_map, p.q, blk.q0, blk.h, blk.b, &st.bar.q);
        }
        const CUtensorMap* map[2] = {&k_map, &v_map};
        const Strides* t[2] = {&p.k, &p.v};
        const long long h = blk.h / (p.heads_q / p.heads_kv);
        for (long long j = 0; j < both + S::kStages; ++j)
          for (int kv = 0; kv < 2; ++kv) {
            sm90::mbar_wait(&st.bar.empty[j % S::kStages][kv], st.parity(j) ^ 1);
            if (j >= both) continue;  // the last stages, released in both blocks: no arrival is left
            std::uint64_t* bar = &st.bar.full[j % S::kStages][kv];
            sm90::mbar_arrive_expect_tx(bar, S::kTileBytes);  // both blocks' halves land here
            const long long row = j * S::kKeys + 64 * rank;  // this block's 64 rows of each panel
            for (int c = 0; c < S::kD / 64; ++c)
              tma_multicast_4d(st.tile(j, kv) + c * S::Tile::kPanel + S::Tile::offset(64 * int(rank), 0), map[kv],
                               64 * c, t[kv]->seq ? int(row) : 0, t[kv]->head ? int(h) : 0,
                               t[kv]->batch ? int(blk.b) : 0, bar, 0x3);
          }
      }))
    return;
  const int w = sm90::warpgroup() - 1;
  RowsOf<S> r(blk.q0 + 64 * w);
  if (n > 0) {
    sm90::mbar_wait(&st.bar.q, 0);
    pingpong_rows<S, true>(st, st.q, r, p, n, w, 0);
  }
  for (long long j = n; j < both; ++j)  // the other tile's: released unread
    for (int kv = 0; kv < 2; ++kv) st.wait(j, kv), st.release(j, kv, r.t);
  r.store(p, blk, O, lse);
#endif
}
//! [cluster kernel]

/// Step 16's plan: two blocks per pair of query tiles; null as wgmma_pick, or past 2^31 - 1 blocks.
inline Plan<WgmmaKernel> cluster_plan(const Problem& p, const bf16* Q = nullptr, const bf16* K = nullptr,
                                      const bf16* V = nullptr, const bf16* O = nullptr) {
  const WgmmaKernel k = wgmma_pick(cluster_kernel<WgmmaShape<64>>, cluster_kernel<WgmmaShape<128>>, p, Q, K, V, O);
  auto plan = [&](auto shape) {
    using S = decltype(shape);
    const long long pairs = (tiles(p.seq_q, S::kRows) + 1) / 2;
    return grid_plan(k, 2 * pairs * p.batch * p.heads_q, dim3(S::kThreads), S::kSmemBytes);
  };
  return p.head_dim == 64 ? plan(WgmmaShape<64>{}) : plan(WgmmaShape<128>{});
}

inline std::size_t cluster_workspace(const Problem&) { return 0; }

/// O = softmax(scale Q K^T + mask) V and its LSE, two query tiles of a head per cluster, K and V
/// multicast (sm_90a).
inline cudaError_t cluster(const Problem& p, const bf16* Q, const bf16* K, const bf16* V, bf16* O, float* lse, void*,
                           std::size_t, cudaStream_t stream = nullptr) {
  return wgmma_launch(cluster_plan, p, Q, K, V, O, lse, stream, 64);
}

}  // namespace smem::attention

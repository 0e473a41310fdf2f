/// \file attention_12_persistent.cuh
/// \brief Step 12, persistent blocks (sm_90a): one block per SM walks a fixed list of query tiles,
/// paired so that every block gets the same work, and the next tile's Q, K and V load while the
/// current one's last products run.
///
/// What changes from step 11, and why it is faster: a block of step 11 does one query tile and
/// exits; the next block on that SM starts cold (barriers initialized, Q and the first K loaded
/// with nothing to overlap them), which at short rows (N = 1k: 8 key tiles a tile) is a large part
/// of the tile. Here the grid is one block per SM and each block walks work units: a unit is query
/// tiles k and tiles_q - 1 - k of one head (the later one first), so that with the causal mask
/// every unit holds the same number of key tiles (tiles_q + 1), and block b takes units b, b + G,
/// b + 2G, ... of G blocks: the blocks finish together without talking to each other. The units
/// come in the family's order (QueryTile's head groups, whose K and V share L2). The first
/// measurements of this step dealt the longest-first list of tiles to the blocks in turn
/// (forward, then backward): with the causal mask the busiest block got far more key tiles than
/// the average where a group of heads ended inside a round; a run-time counter of tiles needs the
/// producer to pass each tile to the consumers, which pairing makes unnecessary.
///
/// Every thread computes the schedule, so no item is passed between threads. Across a block's items
/// the stages run on: the producer counts the key tiles it has streamed (g) and the consumers
/// count the same, so a stage's full and empty barriers keep their phases from one item to the
/// next. Q has two buffers: while the consumers finish item i in one, the producer loads item
/// i + 1's Q into the other, and then its first K and V into the stages that item i releases. A Q
/// buffer is free again (q_free, one arrival per consumer warpgroup) when every consumer's last
/// products of its item are done. The consumers' loop is step 11's (step 10's kernel with the
/// overlap), called once per item, the turns per item. Walking the schedule costs the producer
/// thread 64-bit divisions: its warpgroup keeps 56 registers a thread instead of 24 (32 beside
/// three consumers).
#pragma once
#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "attention_10_pingpong.cuh"
#include "attention_common.cuh"
#include "attention_sm90.cuh"

namespace smem::attention {

/// Step 12's block: step 11's (C consumers, STAGES stages, tiles of KEYS keys: the kit's by
/// default), with a second Q tile after the stages, and the producer's registers (56, or 32 beside
/// three consumers, which then keep 160 instead of 152 and do not spill).
template <int D, int C = WgmmaShape<D>::kConsumers, int STAGES = 2, int KEYS = 128>
struct PersistentShape : WgmmaShape<D, C, STAGES, KEYS> {
  using Base = WgmmaShape<D, C, STAGES, KEYS>;
  static constexpr int kProducerRegs = C == 3 ? 32 : 56;
  static constexpr unsigned kSmemBytes =
      Base::Tile::smem_bytes(2 * Base::kQBytes + 2 * Base::kStages * Base::kTileBytes);
};

//! [schedule]
/// Step 12's work units: query tiles k and tiles_q - 1 - k of one head (the middle tile alone
/// when tiles_q is odd), in QueryTile's order: groups of G heads, in a group k outer and the heads
/// inner.
struct Units {
  long long tiles_q, pairs, heads, group;
  __host__ __device__ Units(const Problem& p, int rows)
      : tiles_q(tiles(p.seq_q, rows)), pairs((tiles_q + 1) / 2), heads(1LL * p.batch * p.heads_q),
        group(QueryTile::group(p)) {}
  __host__ __device__ long long count() const { return heads * pairs; }
  /// The query tile of item i of unit u (0: tile tiles_q - 1 - k, 1: tile k), or -1 if it has none.
  __host__ __device__ long long tile(long long u, int i, long long& bh) const {
    const long long first = u / (group * pairs) * group, n = heads - first < group ? heads - first : group;
    const long long r = u - first * pairs, k = r / n;
    bh = first + r % n;
    return i == 0 ? tiles_q - 1 - k : k == tiles_q - 1 - k ? -1 : k;
  }
  /// f(tile, n) for each query tile of this block's units (b, b + G, ...), n its key tiles.
  template <class S, class F>
  __device__ __forceinline__ void walk(const Problem& p, F f) const {
    for (unsigned u = blockIdx.x; u < count(); u += gridDim.x)
      for (int i = 0; i < 2; ++i) {
        long long bh;
        const long long t = tile(u, i, bh);
        if (t < 0) continue;
        const QueryTile blk(p, bh, t, S::kRows);
        f(blk, KeyTiles(p, blk.q0, blk.last, S::kKeys).end);
      }
  }
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
  __shared__ std::uint64_t q_full[2], q_free[2];  // Q buffer c % 2 landed / read by every consumer
  const WgmmaStages<S> st(raw, bars);
  auto q_tile = [&](long long c) { return st.q + (c % 2) * (S::QTile::kElems + 2 * S::kStages * S::Tile::kElems); };
  const Units units(p, S::kRows);
  if (threadIdx.x == 0)
    for (int i = 0; i < 2; ++i) sm90::mbar_init(&q_full[i], 1), sm90::mbar_init(&q_free[i], S::kConsumers);
  const bool consumer = split_roles<S, S::kProducerRegs>(st, [&] {
    unsigned g = 0, c = 0;  // key tiles and Q tiles streamed so far (their phases: mod 4 is enough)
    units.walk<S>(p, [&](const QueryTile& blk, long long n) {
      if (n == 0) return;  // rows that see no key: the consumers write them alone
      sm90::mbar_wait(&q_free[c % 2], (c / 2 & 1) ^ 1);
      produce<S>(&q_map, &k_map, &v_map, p, blk, n, st, q_tile(c), &q_full[c % 2], g);
      g += unsigned(n), ++c;
    });
  });
  if (!consumer) return;
  const int w = sm90::warpgroup() - 1;
  unsigned g = 0, c = 0;  // the producer's counts, kept in step
  units.walk<S>(p, [&](const QueryTile& blk, long long n) {
    RowsOf<S> rows(blk.q0 + 64 * w);
    if (n > 0) {
      sm90::mbar_wait(&q_full[c % 2], (c / 2 & 1));
      pingpong_rows<S, true>(st, q_tile(c), rows, p, n, w, g);
      if (rows.t == 0) sm90::mbar_arrive(&q_free[c % 2]);
      g += unsigned(n), ++c;
    }
    rows.store(p, blk, O, lse);
  });
#endif
}
//! [persistent kernel]

/// The plan of kernel k of shape S: one block per SM (at most one per unit), with two Q tiles'
/// shared memory; null for more than 2^31 - 1 units.
template <class S>
Plan<WgmmaKernel> persistent_plan_of(WgmmaKernel k, const Problem& p) {
  const long long units = Units(p, S::kRows).count(), sms = std::max(gpu_key().sms, 1);
  return {units <= 0x7fffffffLL ? k : nullptr, dim3(unsigned(std::clamp<long long>(units, 1, sms))),
          dim3(S::kThreads), S::kSmemBytes};
}

/// Step 12's plan: as persistent_plan_of, the kit's shapes; null as wgmma_pick.
inline Plan<WgmmaKernel> persistent_plan(const Problem& p, const bf16* Q = nullptr, const bf16* K = nullptr,
                                         const bf16* V = nullptr, const bf16* O = nullptr) {
  const WgmmaKernel k =
      wgmma_pick(persistent_kernel<PersistentShape<64>>, persistent_kernel<PersistentShape<128>>, p, Q, K, V, O);
  return p.head_dim == 64 ? persistent_plan_of<PersistentShape<64>>(k, p)
                          : persistent_plan_of<PersistentShape<128>>(k, p);
}

inline std::size_t persistent_workspace(const Problem&) { return 0; }

/// O = softmax(scale Q K^T + mask) V and its LSE, one block per SM walking pairs of query tiles (sm_90a).
inline cudaError_t persistent(const Problem& p, const bf16* Q, const bf16* K, const bf16* V, bf16* O, float* lse,
                              void*, std::size_t, cudaStream_t stream = nullptr) {
  return wgmma_launch(persistent_plan, p, Q, K, V, O, lse, stream);
}

}  // namespace smem::attention

/// \file attention_13_tma_decode.cuh
/// \brief Step 13, Hopper decode: step 7's split-KV decode with K and V streamed by TMA into a
/// ring of stages by one producer thread.
///
/// Change from step 7: the loads. In step 7 every one of the block's 128 threads issues 16-byte
/// cp.async copies for each tile (16 a thread per 64-key tile at head_dim 128), waits for its own,
/// and the block meets at a barrier per tile, with two stages: a warp that finishes its 16 keys
/// early waits for the slowest, and the next tile's loads start only after that barrier. Here a
/// fifth warp's first thread issues each tile as 2 D / 64 TMA boxes into a ring of kStages
/// stages; a stage's mbarrier completes when its bytes have landed (the hardware counts them),
/// and each consumer warp waits on that mbarrier alone and releases the stage with one arrival:
/// no block-wide barrier in the loop, so the producer runs up to kStages tiles ahead of the
/// slowest warp. The tiles land in TMA's 128-byte swizzle, 64-column panels (sm90::TmaTile),
/// which WarpRows reads through its panel lanes; the Q gather, the warps' merge and the chunks'
/// merge are step 7's. A box row is one 128-byte half of a K or V row, and the maps have L2 fill
/// that line alone, not steps 9 to 12's 256 bytes (both halves at the first box): a decode reads
/// every byte once, and the other half comes with the next panel's box.
///
/// The same arguments as step 7 (seq_q <= 16, head_dim 64 or 128), with K and V readable by TMA
/// (tma_readable); Q and O as step 7. The step takes both kits, as tc_gemm's step 8 does: the
/// mma.sync warp tile of the Ampere kit (through step 7) and the TMA loads of the Hopper one.
#pragma once
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "attention_07_decode.cuh"
#include "attention_sm90.cuh"

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 900
#error "attention_13_tma_decode.cuh needs TMA and mbarriers: compile for sm_90a (e.g. -arch=sm_90a)"
#endif

namespace smem::attention {

/// Step 13's block: four consumer warps as step 7's, a producer warp, tiles of 64 keys in
/// kStages stages of K and V, then Q. Q's 16 rows sit in the layout of a 64-row tile, so that one
/// panel stride serves the warps' reads of Q, K and V; only rows 0 to 15 of its panels are used,
/// and its bytes end with the last panel's row 15 (kQBytes). Two blocks fit on an SM.
template <int D>
struct TmaDecodeShape {
  static constexpr int kD = D, kKeys = 64, kStages = 3, kThreads = 160;
  using Tile = sm90::TmaTile<bf16, kKeys, D>;
  static constexpr unsigned kTileBytes = Tile::kElems * sizeof(bf16);
  static constexpr unsigned kQBytes = ((D / 64 - 1) * Tile::kPanel + 16 * 64) * sizeof(bf16);
  static constexpr unsigned kSmemBytes = Tile::smem_bytes(2 * kStages * kTileBytes + kQBytes);
};

//! [tma decode kernel]
template <int D>
__global__ void __launch_bounds__(160, 2)
    tma_decode_kernel(const __grid_constant__ CUtensorMap k_map, const __grid_constant__ CUtensorMap v_map,
                      Problem p, const bf16* Q, float* part_o, float* part_lse) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  using S = TmaDecodeShape<D>;
  using Tile = typename S::Tile;
  extern __shared__ unsigned char raw[];
  __shared__ std::uint64_t full[S::kStages], empty[S::kStages];  // a stage landed; read by the four warps
  bf16* k0_tile = reinterpret_cast<bf16*>(Tile::align(raw));
  auto k_tile = [&](long long j) { return k0_tile + 2 * (j % S::kStages) * Tile::kElems; };  // V after it
  bf16* Qs = k0_tile + 2 * S::kStages * Tile::kElems;  // after the stages
  const DecodeSplit split(p);
  const DecodeBlock blk(p, split, blockIdx.x);
  const long long n = tiles(blk.k_end - blk.k_begin, S::kKeys);
  const int warp = int(threadIdx.x / 32), lane = int(threadIdx.x % 32);
  if (threadIdx.x == 0) {
    for (int s = 0; s < S::kStages; ++s) sm90::mbar_init(&full[s], 1), sm90::mbar_init(&empty[s], 4);
    sm90::fence_barrier_init();
  }
  __syncthreads();
  if (warp == 4) {  // the producer: tile j into its stage once the warps have released tile j - kStages
    if (lane == 0)
      for (long long j = 0; j < n; ++j) {
        std::uint64_t* bar = &full[j % S::kStages];
        sm90::mbar_wait(&empty[j % S::kStages], unsigned(j / S::kStages & 1) ^ 1);
        sm90::mbar_arrive_expect_tx(bar, 2 * S::kTileBytes);
        const long long k0 = blk.k_begin + j * S::kKeys;
        tma_rows<D, Tile::kPanel>(k_tile(j), &k_map, p.k, k0, blk.hk, blk.b, bar);
        tma_rows<D, Tile::kPanel>(k_tile(j) + Tile::kElems, &v_map, p.v, k0, blk.hk, blk.b, bar);
      }
    return;
  }
  blk.gather_q<Tile, D>(Qs, p, split, Q);
  WarpRows<D, 16, 1, true, S::kKeys> w(0);  // this warp: keys 16 warp to 16 warp + 15 of every tile
  for (int hh = 0; hh < 2; ++hh) w.row[0][hh] = int((16 * blk.set + lane / 4 + 8 * hh) % p.seq_q);
  cp_async_wait<0>();
  sm90::named_barrier(1, 128);  // the consumers' Q rows landed
  w.load_q(Qs, 0, p.scale < 0);
  for (long long j = 0; j < n; ++j) {
    sm90::mbar_wait(&full[j % S::kStages], unsigned(j / S::kStages & 1));
    const bf16* Ks = k_tile(j) + 16 * warp * 64;  // its 16 rows of each panel
    const long long k0 = blk.k_begin + j * S::kKeys + 16 * warp;
    if (k0 < blk.k_end) {  // keys past the chunk are past seq_kv: the mask hides them
      w.scores(Ks);
      w.softmax(p, k0);
      w.add_pv(Ks + Tile::kElems);
    }
    __syncwarp();
    if (lane == 0) sm90::mbar_arrive(&empty[j % S::kStages]);
  }
  blk.write<D>(w, reinterpret_cast<float*>(k_tile(0)), [] { sm90::named_barrier(1, 128); }, p, split, part_o,
               part_lse);
#endif
}
//! [tma decode kernel]

/// The kernel of step 13: (k_map, v_map, problem, Q, partial outputs, partial LSEs).
using TmaDecodeKernel = void (*)(CUtensorMap, CUtensorMap, Problem, const bf16*, float*, float*);

/// Step 13's plan: step 7's grid and arguments, K and V readable by TMA (null otherwise).
inline Plan<TmaDecodeKernel> tma_decode_plan(const Problem& p, const bf16* Q = nullptr, const bf16* K = nullptr,
                                             const bf16* V = nullptr, const bf16* O = nullptr) {
  const bool ok = decode_plan(p, Q, K, V, O).kernel != nullptr && tma_readable(K, p.k, p.seq_kv) &&
                  tma_readable(V, p.v, p.seq_kv);
  if (!ok) return {nullptr, dim3(1), dim3(160), 0};
  const DecodeSplit split(p);
  const bool d64 = p.head_dim == 64;
  return grid_plan(d64 ? tma_decode_kernel<64> : tma_decode_kernel<128>,
                   1LL * p.batch * p.heads_kv * split.row_sets * split.chunks, dim3(160),
                   d64 ? TmaDecodeShape<64>::kSmemBytes : TmaDecodeShape<128>::kSmemBytes);
}

inline std::size_t tma_decode_workspace(const Problem& p) { return decode_workspace(p); }

//! [tma decode launcher]
/// O = softmax(scale Q K^T + mask) V and its LSE for few query rows, step 7's split with K and V
/// loaded by TMA (sm_90a; workspace: decode_workspace(p) bytes).
inline cudaError_t tma_decode(const Problem& p, const bf16* Q, const bf16* K, const bf16* V, bf16* O, float* lse,
                              void* workspace, std::size_t workspace_bytes, cudaStream_t stream = nullptr) {
  return split_kv(p, Q, K, V, O, lse, workspace, workspace_bytes, stream, [&](float* part_o, float* part_lse) {
    const Plan<TmaDecodeKernel> plan = tma_decode_plan(p, Q, K, V, O);
    CUtensorMap k_map, v_map;
    constexpr CUtensorMapL2promotion kLine = CU_TENSOR_MAP_L2_PROMOTION_L2_128B;  // a box row's own 128 bytes
    if (plan.kernel == nullptr || !head_map(&k_map, K, p.batch, p.seq_kv, p.heads_kv, p.head_dim, p.k, 64, kLine) ||
        !head_map(&v_map, V, p.batch, p.seq_kv, p.heads_kv, p.head_dim, p.v, 64, kLine))
      return cudaErrorInvalidValue;
    return launch(plan, stream, k_map, v_map, p, Q, part_o, part_lse);
  });
}
//! [tma decode launcher]

}  // namespace smem::attention

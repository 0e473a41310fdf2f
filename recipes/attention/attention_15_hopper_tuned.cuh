/// \file attention_15_hopper_tuned.cuh
/// \brief Step 15, Hopper's block chosen per GPU (sm_90a): step 11's or step 12's kernel with the
/// consumer warpgroups, K/V stages and key tile a tuner measured fastest on GPUs like this one, for
/// this head_dim and mask (`hopper_tuned`), or the kit's block where the table has no entry
/// (`hopper_heuristic`).
///
/// Change from steps 11 and 12: which of the two kernels runs, and their block. Steps 9 to 12 fix
/// the block by head_dim alone. What is best depends on the GPU: how many warpgroups it takes to
/// hide one's softmax under the others' products depends on how fast the tensor pipe runs against
/// the exponential pipe at the clock the GPU holds under load; how many stages keep the products
/// fed depends on the memory's latency and bandwidth per SM; whether tiles of 176 keys instead of
/// 128 pay (FlashAttention-3's choice at head_dim 128 without the mask: a tile's fixed costs, its
/// row maxima, shuffles, barriers and turns, spread over more keys, for 88 score registers a
/// thread instead of 64 and a last tile that reaches further past seq_kv) depends on N and on the
/// GPU; and whether one block per SM walking a list of tiles (step 12) beats a grid of short blocks
/// (step 11) depends on the SM count, the work per tile and the mask. So the step keeps a table, as
/// step 8 does: keyed by what decides the choice (compute capability, SMs, shared memory and
/// registers per SM), one entry per head_dim and mask, written by `./cookbook tune attention` from
/// the benchmark's candidates. On a GPU the table does not know, the heuristic takes the kit's
/// block, step 12's kernel for the causal mask (its pairs of tiles even out the causal work) and
/// step 11's otherwise.
///
/// Both kernels are the earlier steps' own, instantiated with the table's shape: this step adds no
/// device code. It reads the GPU's key at every call (five attribute queries, no synchronization),
/// after the arguments are checked, and gives the launch the block's plan and its key tile (the
/// rows of the K and V tensor maps' boxes).
#pragma once
#include <cuda_runtime.h>

#include <cstddef>

#include "attention_12_persistent.cuh"
#include "attention_common.cuh"
#include "attention_sm90.cuh"

//! [hopper table]
/// X(cc, sms, smem_per_sm, regs_per_sm, head_dim, causal, consumer warpgroups, stages, persistent,
/// keys): the entry of the GPU's key and the problem's head_dim and mask is taken.
// BEGIN TUNED HOPPER TABLE
#define SMEM_ATTENTION_HOPPER_TABLE(X)            \
  X(90, 132, 233472, 65536, 64, 0, 3, 3, 0, 128)  \
  X(90, 132, 233472, 65536, 128, 0, 2, 2, 0, 128) \
  X(90, 132, 233472, 65536, 128, 1, 2, 2, 1, 128)
// END TUNED HOPPER TABLE
//! [hopper table]

namespace smem::attention {

/// The plan of head_dim D's block with C consumer warpgroups, STAGES stages and tiles of KEYS keys:
/// step 12's kernel (PERSISTENT) or step 11's; null at another head_dim, as wgmma_pick, or past the
/// grid's limits.
template <int D, int C, int STAGES, int PERSISTENT, int KEYS>
Plan<WgmmaKernel> hopper_plan_with(const Problem& p, const bf16* Q = nullptr, const bf16* K = nullptr,
                                   const bf16* V = nullptr, const bf16* O = nullptr) {
  if constexpr (PERSISTENT != 0) {
    using S = PersistentShape<D, C, STAGES, KEYS>;
    static_assert(S::kSmemBytes <= 227 * 1024, "past a block's shared memory");
    const WgmmaKernel k =
        p.head_dim == D ? wgmma_pick(persistent_kernel<S>, persistent_kernel<S>, p, Q, K, V, O) : nullptr;
    return persistent_plan_of<S>(k, p);
  } else {
    using S = WgmmaShape<D, C, STAGES, KEYS>;
    static_assert(S::kSmemBytes <= 227 * 1024, "past a block's shared memory");
    const WgmmaKernel k =
        p.head_dim == D ? wgmma_pick(pingpong_kernel<S, true>, pingpong_kernel<S, true>, p, Q, K, V, O) : nullptr;
    return tile_plan<S>(k, p);
  }
}

/// A block of step 15: its plan, and its key tile (the rows of the K and V tensor maps' boxes).
struct HopperBlock {
  Plan<WgmmaKernel> (*plan)(const Problem&, const bf16*, const bf16*, const bf16*, const bf16*);
  unsigned keys;
};

/// The block of hopper_plan_with's parameters.
template <int D, int C, int STAGES, int PERSISTENT, int KEYS>
constexpr HopperBlock hopper_block_with() {
  return {hopper_plan_with<D, C, STAGES, PERSISTENT, KEYS>, KEYS};
}

//! [hopper dispatch]
/// The heuristic: the kit's block; step 12's kernel with the causal mask, step 11's without.
inline HopperBlock hopper_heuristic_block(const Problem& p) {
  auto with = [&](auto shape) {
    using S = decltype(shape);
    return p.causal ? hopper_block_with<S::kD, S::kConsumers, S::kStages, 1, S::kKeys>()
                    : hopper_block_with<S::kD, S::kConsumers, S::kStages, 0, S::kKeys>();
  };
  return p.head_dim == 64 ? with(WgmmaShape<64>{}) : with(WgmmaShape<128>{});
}

/// The table's entry for this GPU, head_dim and mask, or the heuristic's choice.
inline HopperBlock hopper_tuned_block(const Problem& p) {
  const GpuKey key = gpu_key();
#define SMEM_ATTENTION_HOPPER_CASE(CC, SMS, SMEM, REGS, HD, CAUSAL, C, STAGES, PERSISTENT, KEYS)       \
  if (key.cc == (CC) && key.sms == (SMS) && key.smem_per_sm == (SMEM) && key.regs_per_sm == (REGS) && \
      p.head_dim == (HD) && p.causal == ((CAUSAL) != 0))                                               \
    return hopper_block_with<HD, C, STAGES, PERSISTENT, KEYS>();
  SMEM_ATTENTION_HOPPER_TABLE(SMEM_ATTENTION_HOPPER_CASE)
#undef SMEM_ATTENTION_HOPPER_CASE
  return hopper_heuristic_block(p);
}
//! [hopper dispatch]

/// The launch of the block block_of picks, with its key tile: a bad problem, or one without a
/// launch, is answered by the checks without reading the GPU's key.
inline cudaError_t hopper_launch(HopperBlock (*block_of)(const Problem&), const Problem& p, const bf16* Q,
                                 const bf16* K, const bf16* V, bf16* O, float* lse, cudaStream_t stream) {
  const HopperBlock b = check_args(p, Q, K, V, O, lse) == Args::launch ? block_of(p) : hopper_heuristic_block(p);
  return wgmma_launch(b.plan, p, Q, K, V, O, lse, stream, b.keys);
}

/// The plans the two launchers launch (the benchmark reads their kernels' attributes).
inline Plan<WgmmaKernel> hopper_tuned_plan(const Problem& p, const bf16* Q = nullptr, const bf16* K = nullptr,
                                           const bf16* V = nullptr, const bf16* O = nullptr) {
  return hopper_tuned_block(p).plan(p, Q, K, V, O);
}
inline Plan<WgmmaKernel> hopper_heuristic_plan(const Problem& p, const bf16* Q = nullptr, const bf16* K = nullptr,
                                               const bf16* V = nullptr, const bf16* O = nullptr) {
  return hopper_heuristic_block(p).plan(p, Q, K, V, O);
}

inline std::size_t hopper_tuned_workspace(const Problem&) { return 0; }
inline std::size_t hopper_heuristic_workspace(const Problem&) { return 0; }

/// O = softmax(scale Q K^T + mask) V and its LSE, the table's kernel and block for this GPU (sm_90a).
inline cudaError_t hopper_tuned(const Problem& p, const bf16* Q, const bf16* K, const bf16* V, bf16* O, float* lse,
                                void*, std::size_t, cudaStream_t stream = nullptr) {
  return hopper_launch(hopper_tuned_block, p, Q, K, V, O, lse, stream);
}
/// The same with the heuristic's choice, as on a GPU the table does not know.
inline cudaError_t hopper_heuristic(const Problem& p, const bf16* Q, const bf16* K, const bf16* V, bf16* O,
                                    float* lse, void*, std::size_t, cudaStream_t stream = nullptr) {
  return hopper_launch(hopper_heuristic_block, p, Q, K, V, O, lse, stream);
}

}  // namespace smem::attention

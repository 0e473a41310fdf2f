/// \file attention_08_tuned.cuh
/// \brief Step 8, the block shape chosen per GPU: step 6's kernel with the shape a tuner measured
/// fastest on GPUs like this one (`tuned`), or one chosen from the head_dim and the grid where the
/// table has no entry for the GPU (`heuristic`).
///
/// Change from step 6: the shape, and with it the causal blocks' order. Step 6's warp holds 16
/// query rows, so every K or V fragment it reads from shared memory with `ldmatrix` feeds two mma;
/// a warp of two row tiles (32 rows) feeds four from the same fragment, which halves the
/// shared-memory reads per mma and gives each warp twice the independent products to hide a softmax
/// behind. At head_dim 128 the two row tiles' outputs and scores take most of the 255 registers, so
/// Q's fragments are read from shared memory for every key tile instead of held (kQRegs false); at
/// 64 they still fit. The other knobs: keys per tile (the scores' registers), warps per block, and
/// the blocks per SM asked of the compiler (fewer registers a thread for more resident warps). With
/// the causal mask the blocks run longest first across all heads, not within step 6's groups of
/// heads (QueryTile::nth): a block of 128 rows runs twice as long as step 6's 64, so the last
/// group's longest blocks, started late, would run on while other SMs idle; and it reads half the K
/// and V bytes per FLOP, so sharing them in L2 across the blocks running at once matters less.
///
/// The table is keyed by what decides the best shape (compute capability, SMs, shared memory and
/// registers per SM), one entry per head_dim class, written by `./cookbook tune attention` from
/// the benchmark's candidates. The key is read from the device at every call (five attribute
/// queries, no synchronization); the launcher checks its arguments first.
#pragma once
#include <cuda_runtime.h>

#include <cstddef>

#include "attention_06_causal.cuh"

//! [tuned table]
/// X(cc, sms, smem_per_sm, regs_per_sm, head_dim, row tiles per warp, keys per tile, warps,
/// Q in registers, blocks per SM): the entry of the GPU's key and the problem's head_dim is taken.
// BEGIN TUNED TABLE
#define SMEM_ATTENTION_TUNED_TABLE(X)              \
  X(90, 132, 233472, 65536, 64LL, 2, 64, 4, 1, 1)  \
  X(90, 132, 233472, 65536, 128LL, 2, 64, 4, 0, 1)
// END TUNED TABLE
//! [tuned table]

namespace smem::attention {

/// Step 8's shapes: the kit's PipelinedShape, named by the table's fields, the causal blocks in
/// order across all heads.
template <int D, int MT, int KEYS, int WARPS, int QREGS, int MINB>
struct TunedShape : PipelinedShape<D, MT, KEYS, WARPS, QREGS != 0, MINB> {
  static constexpr bool kAcrossHeads = true;
};

/// The plan of step 6's kernel with shape S (at S's head_dim; null at another).
template <class S>
Plan<RowKernel> tuned_plan_with(const Problem& p, const bf16* Q, const bf16* K, const bf16* V, const bf16* O) {
  Plan<RowKernel> plan = shaped_plan<S, S>(p, Q, K, V, O, causal_kernel<S>, causal_kernel<S>);
  if (p.head_dim != S::kD) plan.kernel = nullptr;
  return plan;
}

//! [heuristic]
/// The heuristic: warps of two row tiles (Q held at head_dim 64; at 128 read from shared memory,
/// and 32 keys per tile, which keeps the scores in registers without spills) when the grid of
/// their 128-row blocks still gives every SM two blocks, else step 6's 64-row blocks, which fill
/// the SMs on short or few sequences.
inline Plan<RowKernel> heuristic_plan(const Problem& p, const bf16* Q = nullptr, const bf16* K = nullptr,
                                      const bf16* V = nullptr, const bf16* O = nullptr) {
  const long long blocks = 1LL * p.batch * p.heads_q * tiles(p.seq_q, 128);
  if (blocks < 2LL * gpu_key().sms) return causal_plan(p, Q, K, V, O);
  return p.head_dim == 64 ? tuned_plan_with<TunedShape<64, 2, 64, 4, 1, 1>>(p, Q, K, V, O)
                          : tuned_plan_with<TunedShape<128, 2, 32, 4, 0, 1>>(p, Q, K, V, O);
}
//! [heuristic]

//! [tuned dispatch]
/// The tuned table's entry for this GPU and head_dim, or the heuristic's choice.
inline Plan<RowKernel> tuned_plan(const Problem& p, const bf16* Q = nullptr, const bf16* K = nullptr,
                                  const bf16* V = nullptr, const bf16* O = nullptr) {
  const GpuKey key = gpu_key();
#define SMEM_ATTENTION_TUNED_CASE(CC, SMS, SMEM, REGS, HD, MT, KEYS, WARPS, QREGS, MINB)                \
  if (key.cc == (CC) && key.sms == (SMS) && key.smem_per_sm == (SMEM) && key.regs_per_sm == (REGS) && \
      p.head_dim == (HD))                                                                              \
    return tuned_plan_with<TunedShape<HD, MT, KEYS, WARPS, QREGS, MINB>>(p, Q, K, V, O);
  SMEM_ATTENTION_TUNED_TABLE(SMEM_ATTENTION_TUNED_CASE)
#undef SMEM_ATTENTION_TUNED_CASE
  return heuristic_plan(p, Q, K, V, O);
}
//! [tuned dispatch]

inline std::size_t tuned_workspace(const Problem&) { return 0; }
inline std::size_t heuristic_workspace(const Problem&) { return 0; }

/// Launches plan_of's plan after the arguments are checked (no device query before).
template <class PlanOf>
cudaError_t tuned_launch(PlanOf plan_of, const Problem& p, const bf16* Q, const bf16* K, const bf16* V, bf16* O,
                         float* lse, cudaStream_t stream) {
  const Args a = check_args(p, Q, K, V, O, lse);
  if (a == Args::invalid || (p.head_dim != 64 && p.head_dim != 128)) return cudaErrorInvalidValue;
  if (a != Args::launch) return finish_without_launch(a, p, O, lse, stream);
  return launch(plan_of(p, Q, K, V, O), stream, p, Q, K, V, O, lse);
}

/// O = softmax(scale Q K^T + mask) V and its LSE: step 6's kernel, the table's shape for this GPU.
inline cudaError_t tuned(const Problem& p, const bf16* Q, const bf16* K, const bf16* V, bf16* O, float* lse, void*,
                         std::size_t, cudaStream_t stream = nullptr) {
  return tuned_launch(tuned_plan, p, Q, K, V, O, lse, stream);
}
/// The same with the heuristic's shape, as on a GPU the table does not know.
inline cudaError_t heuristic(const Problem& p, const bf16* Q, const bf16* K, const bf16* V, bf16* O, float* lse,
                             void*, std::size_t, cudaStream_t stream = nullptr) {
  return tuned_launch(heuristic_plan, p, Q, K, V, O, lse, stream);
}

}  // namespace smem::attention

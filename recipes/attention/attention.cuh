/// \file attention.cuh
/// \brief The attention family (bf16 Q, K, V and O, fp32 softmax and accumulation): its one step
/// list (SMEM_ATTENTION_STEPS), and the Variant enum, names, dispatchers and step table generated
/// from it, which the tests and benchmarks iterate over.
///
/// Every launcher computes O = softmax(scale Q K^T + mask) V and the rows' log-sum-exp and follows
/// attention_common.cuh's contract.
#pragma once
#include <cuda_runtime.h>

#include <cstddef>

#include "../smem_steps.cuh"
#include "attention_01_naive.cuh"
#include "attention_02_two_pass.cuh"
#include "attention_03_online.cuh"
#include "attention_04_mma.cuh"
#include "attention_05_pipelined.cuh"
#include "attention_06_causal.cuh"
#include "attention_07_decode.cuh"
#include "attention_08_tuned.cuh"
#include "attention_common.cuh"
#if defined(SMEM_ATTENTION_SM90A)
#include "attention_09_wgmma.cuh"
#include "attention_10_pingpong.cuh"
#include "attention_11_overlap.cuh"
#include "attention_12_persistent.cuh"
#include "attention_13_tma_decode.cuh"
#include "attention_14_fp8.cuh"
#include "attention_15_hopper_tuned.cuh"
#include "attention_16_cluster.cuh"
#endif

/// The ladder, in order: X(step, name, header, summary). `name` is the variant, the launcher
/// (`name(p, Q, K, V, O, lse, workspace, workspace_bytes, stream)`), its plan (`name##_plan(p)`)
/// and its workspace size (`name##_workspace(p)`).
#define SMEM_ATTENTION_STEPS(X)                                                                            \
  X(1, naive, "attention_01_naive.cuh", "Three kernels: S = scale Q K^T in fp32 through global memory, softmax, P V.") \
  X(2, two_pass, "attention_02_two_pass.cuh",                                                              \
    "Fused: K and V tiles through shared memory, two passes over K, S never leaves the SM.")            \
  X(3, online, "attention_03_online.cuh", "The online softmax: one pass, the running output rescaled.")    \
  X(4, mma, "attention_04_mma.cuh",                                                                        \
    "mma.sync m16n8k16 with ldmatrix, Q and P in registers, swizzled K and V tiles.")                 \
  X(5, pipelined, "attention_05_pipelined.cuh", "A cp.async K/V pipeline: the next tiles load during both products.") \
  X(6, causal, "attention_06_causal.cuh",                                                                  \
    "Causal work skipped: masked tiles never loaded, the mask only on diagonal tiles, longest blocks first.") \
  X(7, decode, "attention_07_decode.cuh",                                                                  \
    "Split-KV decode: K and V in chunks over many blocks, the partial (O, LSE) pairs merged.")          \
  X(8, heuristic, "attention_08_tuned.cuh",                                                              \
    "Step 6's kernel, its shape (row tiles per warp, keys per tile, warps) chosen from head_dim and the grid.") \
  X(8, tuned, "attention_08_tuned.cuh",                                                                  \
    "Step 6's kernel, the shape ./cookbook tune attention measured fastest on this GPU.")                \
  SMEM_ATTENTION_HOPPER_STEPS(X)

/// Hopper's steps (sm_90a), as above: in the list where SMEM_ATTENTION_SM90A is defined, which the
/// project's CMake does when it builds for sm_90a only.
#if defined(SMEM_ATTENTION_SM90A)
#define SMEM_ATTENTION_HOPPER_STEPS(X)                                                                  \
  X(9, wgmma, "attention_09_wgmma.cuh",                                                                 \
    "Hopper: TMA loads into swizzled tiles, wgmma for both products (P from registers), a producer warp.") \
  X(10, pingpong, "attention_10_pingpong.cuh",                                                          \
    "Ping-pong: the consumer warpgroups take turns at the tensor cores, one's softmax under the other's products.") \
  X(11, overlap, "attention_11_overlap.cuh",                                                            \
    "Intra-warpgroup overlap: the softmax of tile j runs while the warpgroup's own P V of tile j-1 does.") \
  X(12, persistent, "attention_12_persistent.cuh",                                                      \
    "Persistent blocks: one per SM on pairs of query tiles of equal work, the next tile's loads under this one.") \
  X(13, tma_decode, "attention_13_tma_decode.cuh",                                                      \
    "Hopper decode: step 7's split-KV, K and V by TMA into a ring of stages, one producer thread.")   \
  X(15, hopper_heuristic, "attention_15_hopper_tuned.cuh",                                              \
    "Step 12's kernel for the causal mask, step 11's otherwise, with the kit's block for the head_dim.") \
  X(15, hopper_tuned, "attention_15_hopper_tuned.cuh",                                                  \
    "Step 11's or 12's kernel, its consumers, stages and key tile as ./cookbook tune attention measured fastest here.") \
  X(16, cluster, "attention_16_cluster.cuh",                                                            \
    "Clusters of two: two query tiles of a head, each block loading half of every K and V tile into both (TMA multicast).")
#else
#define SMEM_ATTENTION_HOPPER_STEPS(X)
#endif

namespace smem::attention {

/// Variant, Step, kSteps[], kAllVariants[] and name(v), from the step list.
SMEM_STEP_TABLE(SMEM_ATTENTION_STEPS)

/// Runs one variant.
inline cudaError_t run(Variant v, const Problem& p, const bf16* Q, const bf16* K, const bf16* V, bf16* O, float* lse,
                       void* workspace, std::size_t workspace_bytes, cudaStream_t stream = nullptr) {
  switch (v) {
#define SMEM_RUN(step, name, header, summary) \
  case Variant::name: return name(p, Q, K, V, O, lse, workspace, workspace_bytes, stream);
    SMEM_ATTENTION_STEPS(SMEM_RUN)
#undef SMEM_RUN
  }
  return cudaErrorInvalidValue;
}

/// The bytes of workspace variant v needs for p.
inline std::size_t workspace(Variant v, const Problem& p) {
  switch (v) {
#define SMEM_WORKSPACE(step, name, header, summary) \
  case Variant::name: return name##_workspace(p);
    SMEM_ATTENTION_STEPS(SMEM_WORKSPACE)
#undef SMEM_WORKSPACE
  }
  return 0;
}

/// The launch plan variant v uses for p (its first kernel's), as the benchmark reports it.
inline Plan<const void*> plan(Variant v, const Problem& p) {
  switch (v) {
#define SMEM_PLAN(step, name, header, summary) \
  case Variant::name: return name##_plan(p).erased();
    SMEM_ATTENTION_STEPS(SMEM_PLAN)
#undef SMEM_PLAN
  }
  return {nullptr, dim3(), dim3(), 0};
}

}  // namespace smem::attention

/// \file attention_01_naive.cuh
/// \brief Step 1, the textbook: three kernels, the scores S = scale Q K^T written to global memory
/// in fp32, a softmax over each row of S, then O = P V.
///
/// Nothing is fused: S has batch x heads_q x seq_q x seq_kv elements, which the first kernel
/// writes and the next two read back, so the traffic grows with the square of the sequence (at
/// 8192 x 8192 that is 256 MiB per head, against 4 MiB for Q, K, V and O together). The scores go
/// to `workspace` (naive_workspace() bytes), which the caller provides: a launcher never
/// allocates. Each thread computes one score or one output element with its own loop over
/// head_dim or seq_kv, reading Q, K and V straight from global memory.
#pragma once
#include <cuda_runtime.h>

#include <cmath>
#include <cstddef>

#include "attention_common.cuh"

namespace smem::attention {

/// The workspace of step 1: the fp32 scores, batch x heads_q x seq_q x seq_kv of them.
/// (SIZE_MAX, refused, for more than kMaxTensorBytes).
inline std::size_t naive_workspace(const Problem& p) {
  return workspace_size(1LL * p.batch * p.heads_q * p.seq_q, p.seq_kv, sizeof(float));
}

//! [naive kernels]
/// S[b, h, i, j] = scale q_i . k_j where query i sees key j, else -inf: one thread per score.
static __global__ void naive_scores_kernel(Problem p, const bf16* Q, const bf16* K, float* S) {
  const long long n = 1LL * p.batch * p.heads_q * p.seq_q * p.seq_kv;
  const int group = p.heads_q / p.heads_kv;
  for (long long e = blockIdx.x * 256LL + threadIdx.x; e < n; e += 256LL * gridDim.x) {
    const long long j = e % p.seq_kv, i = e / p.seq_kv % p.seq_q, bh = e / p.seq_kv / p.seq_q;
    const long long b = bh / p.heads_q, h = bh % p.heads_q;
    float s = -INFINITY;
    if (visible(p, i, j)) {
      const bf16* q = Q + at(p.q, b, i, h);
      const bf16* k = K + at(p.k, b, j, h / group);
      float acc = 0.0f;
      for (int c = 0; c < p.head_dim; ++c) acc += float(q[c]) * float(k[c]);
      s = p.scale * acc;
    }
    S[e] = s;
  }
}

/// Each row of S replaced by its softmax P, and the row's log-sum-exp: one warp per row. The row
/// max m is subtracted before exp (exp(s - m) <= 1, finite however large the scores); a row that
/// sees no key (m = -inf) gets P = 0 and LSE = -inf.
static __global__ void naive_softmax_kernel(Problem p, float* S, float* lse) {
  const long long rows = 1LL * p.batch * p.heads_q * p.seq_q;
  const int lane = threadIdx.x % 32;
  for (long long r = (blockIdx.x * 256LL + threadIdx.x) / 32; r < rows; r += 256LL * gridDim.x / 32) {
    float* s = S + r * p.seq_kv;
    float m = -INFINITY, l = 0.0f;
    for (long long j = lane; j < p.seq_kv; j += 32) m = fmaxf(m, s[j]);
    for (int o = 16; o > 0; o /= 2) m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, o));
    const float base = m == -INFINITY ? 0.0f : m;
    for (long long j = lane; j < p.seq_kv; j += 32) l += expf(s[j] - base);
    for (int o = 16; o > 0; o /= 2) l += __shfl_xor_sync(0xffffffffu, l, o);
    const float inv = l == 0.0f ? 0.0f : 1.0f / l;
    for (long long j = lane; j < p.seq_kv; j += 32) s[j] = expf(s[j] - base) * inv;
    if (lse != nullptr && lane == 0) lse[r] = l == 0.0f ? -INFINITY : m + logf(l);
  }
}

/// O[b, i, h, c] = sum_j P[b, h, i, j] v_j[c]: one thread per output element.
static __global__ void naive_pv_kernel(Problem p, const float* P, const bf16* V, bf16* O) {
  const long long n = 1LL * p.batch * p.heads_q * p.seq_q * p.head_dim;
  const int group = p.heads_q / p.heads_kv;
  for (long long e = blockIdx.x * 256LL + threadIdx.x; e < n; e += 256LL * gridDim.x) {
    const long long c = e % p.head_dim, r = e / p.head_dim;
    const long long i = r % p.seq_q, bh = r / p.seq_q, b = bh / p.heads_q, h = bh % p.heads_q;
    const float* pr = P + r * p.seq_kv;
    float acc = 0.0f;
    for (long long j = 0; j < p.seq_kv; ++j) acc += pr[j] * float(V[at(p.v, b, j, h / group) + c]);
    O[at(p.o, b, i, h) + c] = bf16(acc);
  }
}
//! [naive kernels]

/// The grid of a grid-stride loop over n items, 256 threads a block: at most 65536 blocks.
inline long long naive_blocks(long long n) { return std::min<long long>(tiles(n, 256), 65536); }

/// The plan of step 1's first kernel (the scores); the other two take the same block.
/// Null where the scores would pass kMaxTensorBytes.
inline Plan<void (*)(Problem, const bf16*, const bf16*, float*)> naive_plan(const Problem& p) {
  const bool fits = naive_workspace(p) != SIZE_MAX;
  return grid_plan(fits ? naive_scores_kernel : nullptr,
                   fits ? naive_blocks(1LL * p.batch * p.heads_q * p.seq_q * p.seq_kv) : 1, dim3(256));
}

/// O = softmax(scale Q K^T + mask) V and its LSE, through the fp32 scores in `workspace`
/// (naive_workspace(p) bytes, 16-byte aligned, apart from the tensors; cudaErrorInvalidValue
/// otherwise).
inline cudaError_t naive(const Problem& p, const bf16* Q, const bf16* K, const bf16* V, bf16* O, float* lse,
                         void* workspace, std::size_t workspace_bytes, cudaStream_t stream = nullptr) {
  if (Args a = check_args(p, Q, K, V, O, lse); a != Args::launch) return finish_without_launch(a, p, O, lse, stream);
  if (!workspace_fits(p, Q, K, V, O, lse, workspace, workspace_bytes, naive_workspace(p))) return cudaErrorInvalidValue;
  float* S = static_cast<float*>(workspace);
  const long long rows = 1LL * p.batch * p.heads_q * p.seq_q;
  if (cudaError_t e = launch(naive_plan(p), stream, p, Q, K, S); e != cudaSuccess) return e;
  naive_softmax_kernel<<<unsigned(naive_blocks(32 * rows)), 256, 0, stream>>>(p, S, lse);
  naive_pv_kernel<<<unsigned(naive_blocks(rows * p.head_dim)), 256, 0, stream>>>(p, S, V, O);
  return cudaGetLastError();
}

}  // namespace smem::attention

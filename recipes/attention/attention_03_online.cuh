/// \file attention_03_online.cuh
/// \brief Step 3, the online softmax: one pass over K and V (FlashAttention's idea), in
/// FlashAttention-2's loop order.
///
/// Change from step 2: the output is accumulated in the same pass as the max and the sum. After a
/// tile of scores, a row's max may grow from m to m'; everything accumulated so far was weighted by
/// exp(s - m), so the sum and the output are scaled by exp(m - m') and the tile's weights
/// exp(s - m') added: l' = l exp(m - m') + sum_j exp(s_j - m'), o' = o exp(m - m') + sum_j
/// exp(s_j - m') v_j. At the end O = o / l is the exact softmax. Each K tile is read and scored
/// once instead of twice. The loop order is FlashAttention-2's: a block owns its query tile (outer)
/// and walks every K/V tile (inner), so no block ever waits for another and nothing is combined
/// across blocks.
#pragma once
#include <cuda_runtime.h>

#include <cmath>
#include <cstddef>

#include "attention_02_two_pass.cuh"

namespace smem::attention {

//! [online kernel]
template <int kChunks>
__global__ void __launch_bounds__(128) online_kernel(Problem p, const bf16* Q, const bf16* K, const bf16* V, bf16* O,
                                                     float* lse) {
  constexpr int R = RowTiles::kRowsPerWarp;
  extern __shared__ __align__(16) unsigned char smem_raw[];
  bf16* smem = reinterpret_cast<bf16*>(smem_raw);
  const RowBlock blk(p);
  const int r0 = threadIdx.x / 32 * R, d = p.head_dim;
  load_rows(smem + RowTiles::q_offset(d, 0, 0), RowTiles::ld(d), Q + at(p.q, blk.b, blk.q0, blk.h), p.q.seq,
            RowTiles::kRows, p.seq_q - blk.q0, d);
  float m[R], l[R], s[R], o[R][kChunks] = {};
  for (int r = 0; r < R; ++r) m[r] = -INFINITY, l[r] = 0.0f;
  for (long long k0 = 0; k0 < p.seq_kv; k0 += RowTiles::kKeys) {
    __syncthreads();  // the previous tiles are read
    load_kv(smem, p, K, V, blk, k0);
    __syncthreads();
    tile_scores(s, smem, p, blk.q0, r0, k0);
    float w[R];
    for (int r = 0; r < R; ++r) {
      const float m_new = fmaxf(m[r], warp_max(s[r])), base = m_new == -INFINITY ? 0.0f : m_new;
      const float scale_old = expf(m[r] - base);  // 0 while the row has seen no key
      w[r] = expf(s[r] - base);
      l[r] = l[r] * scale_old + warp_sum(w[r]);
      m[r] = m_new;
#pragma unroll
      for (int t = 0; t < kChunks; ++t) o[r][t] *= scale_old;
    }
    add_pv(o, w, smem, d);
  }
  store_rows(p, blk, r0, o, m, l, true, O, lse);
}
//! [online kernel]

/// The plan of step 3.
inline Plan<RowKernel> online_plan(const Problem& p) {
  return row_plan(p, online_kernel<2>, online_kernel<4>, online_kernel<8>);
}
inline std::size_t online_workspace(const Problem&) { return 0; }

/// O = softmax(scale Q K^T + mask) V and its LSE: one pass, the running output rescaled.
inline cudaError_t online(const Problem& p, const bf16* Q, const bf16* K, const bf16* V, bf16* O, float* lse, void*,
                          std::size_t, cudaStream_t stream = nullptr) {
  if (Args a = check_args(p, Q, K, V, O, lse); a != Args::launch) return finish_without_launch(a, p, O, lse, stream);
  return launch(online_plan(p), stream, p, Q, K, V, O, lse);
}

}  // namespace smem::attention

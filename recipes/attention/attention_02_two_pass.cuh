/// \file attention_02_two_pass.cuh
/// \brief Step 2, fused: one block per tile of 16 query rows, K and V tiles through shared memory,
/// two passes over K, and S never leaves the SM.
///
/// Change from step 1: a block keeps its 16 query rows in shared memory and walks K in tiles of 32
/// keys. The first pass computes each row's max m and sum l of exp(s - m) (when a tile raises the
/// max, the sum so far is scaled by exp(m_old - m_new): the online normalizer); the second pass
/// computes the scores again and adds exp(s - m) / l times the V tile to the output. The scores
/// are computed twice, but nothing of size seq_q x seq_kv is written: the traffic is Q and O once
/// and K (twice) and V once per query tile.
///
/// The layout: each warp owns 4 query rows; lane j scores key j of the tile against them, reading
/// its K row from shared memory. K's rows are padded by one 4-byte word (KvTile::kLd), so the 32
/// lanes, which read the same column of 32 rows, hit 32 different banks. For O, lane t holds
/// columns t, t + 32, ... of each of its rows, and the weight of key j reaches every lane by a
/// shuffle.
#pragma once
#include <cuda_runtime.h>

#include <cmath>

#include "attention_common.cuh"

namespace smem::attention {

//! [row tiles]
/// The shared tiles of steps 2 and 3: 16 query rows, 32 keys, rows of up to 256 columns. Q and K
/// rows are padded by 2 bf16 (one bank); V is read along its rows and is not.
struct RowTiles {
  static constexpr int kRows = 16, kKeys = 32, kWarps = 4, kRowsPerWarp = kRows / kWarps;
  /// A padded row's length: (d + 2) / 2 words is odd for d a multiple of 4, so 32 rows read at one
  /// column fall in 32 banks.
  __host__ __device__ static constexpr int ld(int d) { return d + 2; }
  /// Where element (r, c) of the Q, K and V tiles sits, in bf16 from the start of shared memory.
  __host__ __device__ static constexpr int q_offset(int d, int r, int c) { return r * ld(d) + c; }
  __host__ __device__ static constexpr int k_offset(int d, int r, int c) { return (kRows + r) * ld(d) + c; }
  __host__ __device__ static constexpr int v_offset(int d, int r, int c) { return (kRows + kKeys) * ld(d) + r * d + c; }
  /// The dynamic shared memory of one block, in bytes.
  __host__ __device__ static constexpr unsigned bytes(int d) {
    return unsigned((kRows + kKeys) * ld(d) + kKeys * d) * 2u;
  }
};
//! [row tiles]

/// Copies `rows` rows of a tensor (row r at src + r * seq_stride, head_dim d contiguous) into
/// the shared tile at `dst`, row r at dst + r * ld, zeros for rows at or past `valid`; every
/// thread of the block takes a share (consecutive threads, consecutive columns).
__device__ __forceinline__ void load_rows(bf16* dst, int ld, const bf16* src, long long seq_stride, int rows,
                                          long long valid, int d) {
  for (int e = threadIdx.x; e < rows * d; e += blockDim.x) {
    const int r = e / d, c = e % d;
    dst[r * ld + c] = r < valid ? src[r * seq_stride + c] : bf16(0.0f);
  }
}

/// Lane j's scores against key k0 + j of the K tile for the warp's rows r0 to r0 + kRowsPerWarp - 1:
/// scale q . k, or -inf where the key is past seq_kv or masked.
__device__ __forceinline__ void tile_scores(float (&s)[RowTiles::kRowsPerWarp], const bf16* smem, const Problem& p,
                                            long long q0, int r0, long long k0) {
  const int lane = threadIdx.x % 32, d = p.head_dim;
  float acc[RowTiles::kRowsPerWarp] = {};
  for (int c = 0; c < d; c += 2) {
    const auto* kp = reinterpret_cast<const __nv_bfloat162*>(smem + RowTiles::k_offset(d, lane, c));
    const float2 k = __bfloat1622float2(*kp);
#pragma unroll
    for (int r = 0; r < RowTiles::kRowsPerWarp; ++r) {
      const float2 q =
          __bfloat1622float2(*reinterpret_cast<const __nv_bfloat162*>(smem + RowTiles::q_offset(d, r0 + r, c)));
      acc[r] += q.x * k.x + q.y * k.y;
    }
  }
#pragma unroll
  for (int r = 0; r < RowTiles::kRowsPerWarp; ++r)
    s[r] = k0 + lane < p.seq_kv && visible(p, q0 + r0 + r, k0 + lane) ? p.scale * acc[r] : -INFINITY;
}

__device__ __forceinline__ float warp_max(float x) {
  for (int o = 16; o > 0; o /= 2) x = fmaxf(x, __shfl_xor_sync(0xffffffffu, x, o));
  return x;
}
__device__ __forceinline__ float warp_sum(float x) {
  for (int o = 16; o > 0; o /= 2) x += __shfl_xor_sync(0xffffffffu, x, o);
  return x;
}

/// o[r][t] += sum_j w_j v_j[lane + 32 t] for the V tile, w_j held by lane j (s below).
template <int kChunks>
__device__ __forceinline__ void add_pv(float (&o)[RowTiles::kRowsPerWarp][kChunks],
                                       const float (&w)[RowTiles::kRowsPerWarp], const bf16* smem, int d) {
  const int lane = threadIdx.x % 32;
  for (int j = 0; j < RowTiles::kKeys; ++j) {
    float wj[RowTiles::kRowsPerWarp];
#pragma unroll
    for (int r = 0; r < RowTiles::kRowsPerWarp; ++r) wj[r] = __shfl_sync(0xffffffffu, w[r], j);
#pragma unroll
    for (int t = 0; t < kChunks; ++t)
      if (lane + 32 * t < d) {
        const float v = float(smem[RowTiles::v_offset(d, j, lane + 32 * t)]);
#pragma unroll
        for (int r = 0; r < RowTiles::kRowsPerWarp; ++r) o[r][t] += wj[r] * v;
      }
  }
}

/// The block's query tile and heads from its index: tile blockIdx.x % tiles_q of head
/// blockIdx.x / tiles_q (b heads_q + h).
struct RowBlock {
  long long b, h, hk, q0;
  __device__ explicit RowBlock(const Problem& p) {
    const long long tiles_q = tiles(p.seq_q, RowTiles::kRows), bh = blockIdx.x / tiles_q;
    b = bh / p.heads_q, h = bh % p.heads_q, hk = h / (p.heads_q / p.heads_kv);
    q0 = blockIdx.x % tiles_q * RowTiles::kRows;
  }
};

/// The K tile (and, with kWithV, the V tile) of keys k0 to k0 + 31 of the block's key head.
template <bool kWithV = true>
__device__ __forceinline__ void load_kv(bf16* smem, const Problem& p, const bf16* K, const bf16* V,
                                        const RowBlock& blk, long long k0) {
  const int d = p.head_dim;
  load_rows(smem + RowTiles::k_offset(d, 0, 0), RowTiles::ld(d), K + at(p.k, blk.b, k0, blk.hk), p.k.seq,
            RowTiles::kKeys, p.seq_kv - k0, d);
  if (kWithV)
    load_rows(smem + RowTiles::v_offset(d, 0, 0), d, V + at(p.v, blk.b, k0, blk.hk), p.v.seq, RowTiles::kKeys,
              p.seq_kv - k0, d);
}

/// Row r0 + r's output o / l and LSE m + log l; a row that saw no key (l == 0): O = 0, LSE = -inf.
template <int kChunks>
__device__ __forceinline__ void store_rows(const Problem& p, const RowBlock& blk, int r0,
                                           const float (&o)[RowTiles::kRowsPerWarp][kChunks],
                                           const float (&m)[RowTiles::kRowsPerWarp],
                                           const float (&l)[RowTiles::kRowsPerWarp], bool normalize, bf16* O,
                                           float* lse) {
  const int lane = threadIdx.x % 32;
#pragma unroll
  for (int r = 0; r < RowTiles::kRowsPerWarp; ++r) {
    const long long i = blk.q0 + r0 + r;
    if (i >= p.seq_q) break;
    const float inv = !normalize ? 1.0f : l[r] == 0.0f ? 0.0f : 1.0f / l[r];
#pragma unroll
    for (int t = 0; t < kChunks; ++t)
      if (lane + 32 * t < p.head_dim) O[at(p.o, blk.b, i, blk.h) + lane + 32 * t] = bf16(o[r][t] * inv);
    if (lse != nullptr && lane == 0)
      lse[(blk.b * p.heads_q + blk.h) * p.seq_q + i] = l[r] == 0.0f ? -INFINITY : m[r] + logf(l[r]);
  }
}

//! [two pass kernel]
template <int kChunks>
__global__ void __launch_bounds__(128) two_pass_kernel(Problem p, const bf16* Q, const bf16* K, const bf16* V, bf16* O,
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
  for (long long k0 = 0; k0 < p.seq_kv; k0 += RowTiles::kKeys) {  // pass 1: each row's max and sum
    __syncthreads();  // the previous tile is read
    load_kv<false>(smem, p, K, V, blk, k0);
    __syncthreads();
    tile_scores(s, smem, p, blk.q0, r0, k0);
    for (int r = 0; r < R; ++r) {
      const float m_new = fmaxf(m[r], warp_max(s[r])), base = m_new == -INFINITY ? 0.0f : m_new;
      l[r] = l[r] * expf(m[r] - base) + warp_sum(expf(s[r] - base));
      m[r] = m_new;
    }
  }
  float inv[R];  // 1 / l, 0 for a row that sees no key
  for (int r = 0; r < R; ++r) inv[r] = l[r] == 0.0f ? 0.0f : 1.0f / l[r];
  for (long long k0 = 0; k0 < p.seq_kv; k0 += RowTiles::kKeys) {  // pass 2: the output
    __syncthreads();
    load_kv(smem, p, K, V, blk, k0);
    __syncthreads();
    tile_scores(s, smem, p, blk.q0, r0, k0);
    float w[R];
    for (int r = 0; r < R; ++r) w[r] = expf(s[r] - (m[r] == -INFINITY ? 0.0f : m[r])) * inv[r];
    add_pv(o, w, smem, d);
  }
  store_rows(p, blk, r0, o, m, l, false, O, lse);
}
//! [two pass kernel]

/// The plan of a row kernel (steps 2 and 3) for head_dim d, given its instances of 2, 4 and 8
/// columns per lane (d up to 64, 128, 256): one block per 16 query rows of each head.
inline Plan<RowKernel> row_plan(const Problem& p, RowKernel k2, RowKernel k4, RowKernel k8) {
  const int d = p.head_dim;
  return grid_plan(d <= 64 ? k2 : d <= 128 ? k4 : k8, 1LL * p.batch * p.heads_q * tiles(p.seq_q, RowTiles::kRows),
                   dim3(32 * RowTiles::kWarps), RowTiles::bytes(d));
}

/// The plan of step 2.
inline Plan<RowKernel> two_pass_plan(const Problem& p) {
  return row_plan(p, two_pass_kernel<2>, two_pass_kernel<4>, two_pass_kernel<8>);
}
inline std::size_t two_pass_workspace(const Problem&) { return 0; }

/// O = softmax(scale Q K^T + mask) V and its LSE: one block per query tile, two passes over K.
inline cudaError_t two_pass(const Problem& p, const bf16* Q, const bf16* K, const bf16* V, bf16* O, float* lse, void*,
                            std::size_t, cudaStream_t stream = nullptr) {
  if (Args a = check_args(p, Q, K, V, O, lse); a != Args::launch) return finish_without_launch(a, p, O, lse, stream);
  return launch(two_pass_plan(p), stream, p, Q, K, V, O, lse);
}

}  // namespace smem::attention

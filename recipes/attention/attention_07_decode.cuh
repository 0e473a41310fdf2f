/// \file attention_07_decode.cuh
/// \brief Step 7, split-KV decode (flash-decoding): few query rows, a long K and V split over many
/// blocks, the partial results combined by a second small kernel.
///
/// Change from step 5: with seq_q <= 16 (token-by-token generation), step 5 has one block per head
/// and query tile, far too few to fill the GPU, and each walks all of K and V alone. Here the
/// keys are cut into chunks of kChunk and every (batch, key head, chunk) is a block: the work
/// spreads over thousands of blocks, and each reads its chunk of K and V once. The query rows of
/// all the query heads that share a key head (grouped-query attention) are stacked into the 16
/// rows of one mma tile, so K and V are read once per key head, not once per query head. Inside
/// a block the four warps take 16 keys each of every 64-key tile (two cp.async stages, as step
/// 5), then combine their partial max, sum and output through shared memory. Each block writes
/// its chunk's output, normalised, and log-sum-exp to the workspace; decode_combine_kernel then
/// merges a row's chunks: with M the largest chunk LSE, O = sum_c exp(LSE_c - M) O_c /
/// sum_c exp(LSE_c - M) and LSE = M + log sum_c exp(LSE_c - M). A chunk that saw no key has
/// LSE = -inf and weight 0. The kernel is bound by reading K and V: its roof is a copy of them.
///
/// seq_q <= 16, head_dim 64 or 128, 16-byte rows (cudaErrorInvalidValue otherwise; longer queries
/// take step 6).
#pragma once
#include <cuda_runtime.h>

#include <cmath>
#include <cstddef>

#include "attention_sm80.cuh"

namespace smem::attention {

/// Step 7's split: chunks of kChunk keys, the query rows of one key head in sets of 16.
struct DecodeSplit {
  static constexpr int kChunk = 1024, kRows = 16;
  long long rows, row_sets, chunks;  // per key head: group x seq_q rows
  __host__ __device__ explicit DecodeSplit(const Problem& p)
      : rows(1LL * (p.heads_q / p.heads_kv) * p.seq_q), row_sets(tiles(rows, kRows)), chunks(tiles(p.seq_kv, kChunk)) {}
};

/// The workspace of step 7: per query row and chunk, the chunk's output (fp32, head_dim) and LSE.
inline std::size_t decode_workspace(const Problem& p) {
  if (p.batch <= 0 || p.heads_q <= 0 || p.seq_q <= 0 || p.seq_kv <= 0 || p.heads_kv <= 0) return 0;
  return workspace_size(1LL * p.batch * p.heads_q * p.seq_q, DecodeSplit(p).chunks * (p.head_dim + 1), sizeof(float));
}

/// Block `id`'s share: batch b, key head hk, its set of 16 query rows and its chunk, keys k_begin
/// to k_end - 1. Row r of the set is query x % seq_q of query head head(x), x = 16 set + r (the
/// group's query heads one after the other).
struct DecodeBlock {
  long long b, hk, set, chunk, k_begin, k_end, seq_q;
  int group;
  __host__ __device__ DecodeBlock(const Problem& p, const DecodeSplit& split, long long id)
      : chunk(id % split.chunks), seq_q(p.seq_q), group(p.heads_q / p.heads_kv) {
    const long long rest = id / split.chunks, bk = rest / split.row_sets;
    set = rest % split.row_sets, b = bk / p.heads_kv, hk = bk % p.heads_kv;
    k_begin = chunk * DecodeSplit::kChunk;
    k_end = k_begin + DecodeSplit::kChunk < p.seq_kv ? k_begin + DecodeSplit::kChunk : p.seq_kv;
  }
  __host__ __device__ long long head(long long x) const { return hk * group + x / seq_q; }

  /// The set's 16 Q rows gathered into Qs (layout Tile, D columns) by threads 0 to 127 with
  /// cp.async (zeros past the key head's rows), committed, not waited for.
  template <class Tile, int D>
  __device__ void gather_q(bf16* Qs, const Problem& p, const DecodeSplit& split, const bf16* Q) const {
    for (int id = threadIdx.x; id < 16 * D / 8; id += 128) {
      const int r = chunk_row(id, D), c = chunk_col(id, D);
      const long long x = 16 * set + r;
      const bool valid = x < split.rows;
      cp_async16(Qs + Tile::offset(r, c), Q + (valid ? at(p.q, b, x % seq_q, head(x)) + c : 0), valid);
    }
    cp_async_commit();
  }

  /// The chunk's output: the four warps' partial results (warp v holds keys 16 v to 16 v + 15 of
  /// every tile in w) merged through shared memory at `buf` (64 D + 128 floats, free once every
  /// warp is done with the tiles), normalised, and its LSE. Threads 0 to 127 call it; `sync`
  /// synchronizes them.
  template <int D, class Warp, class Sync>
  __device__ void write(const Warp& w, float* buf, Sync sync, const Problem& p, const DecodeSplit& split,
                        float* part_o, float* part_lse) const {
    float* o_s = buf;               // [warp][16][D]
    float* ml = o_s + 4 * 16 * D;  // [warp][16][2]: max, sum
    const int warp = int(threadIdx.x / 32), g = int(threadIdx.x % 32) / 4, t = int(threadIdx.x % 4);
    sync();  // every warp is done with the last tile's stage
    for (int hh = 0; hh < 2; ++hh) {
      const float sum = w.row_sum(0, hh);
      const int r = g + 8 * hh;
      for (int db = 0; db < D / 8; ++db)
        for (int e = 0; e < 2; ++e) o_s[(warp * 16 + r) * D + 8 * db + 2 * t + e] = w.o[0][db][2 * hh + e];
      if (t == 0) ml[(warp * 16 + r) * 2] = w.m[0][hh], ml[(warp * 16 + r) * 2 + 1] = sum;
    }
    sync();
    for (int id = threadIdx.x; id < 16 * D; id += 128) {
      const int r = id / D, c = id % D;
      const long long x = 16 * set + r;
      if (x >= split.rows) continue;
      float m = -INFINITY;  // base 2, as the warps' maxima
      for (int v = 0; v < 4; ++v) m = fmaxf(m, ml[(v * 16 + r) * 2]);
      const float base = m == -INFINITY ? 0.0f : m;
      float l = 0.0f, o = 0.0f;
      for (int v = 0; v < 4; ++v) {
        const float f = exp2_approx(ml[(v * 16 + r) * 2] - base);
        l += f * ml[(v * 16 + r) * 2 + 1];
        o += f * o_s[(v * 16 + r) * D + c];
      }
      const long long row = (b * p.heads_q + head(x)) * p.seq_q + x % p.seq_q;  // as lse's index
      part_o[(row * split.chunks + chunk) * D + c] = l == 0.0f ? 0.0f : o / l;
      if (c == 0) part_lse[row * split.chunks + chunk] = Warp::natural_lse(m, l);
    }
  }
};

//! [decode kernel]
template <int D>
__global__ void __launch_bounds__(128) decode_kernel(Problem p, const bf16* Q, const bf16* K, const bf16* V,
                                                     float* part_o, float* part_lse) {
  using S = PipelinedShape<D>;
  using QTile = SwizzledTile<16, D>;
  constexpr int kKeys = S::kKeys;
  extern __shared__ __align__(16) unsigned char smem_raw[];
  bf16* Qs = reinterpret_cast<bf16*>(smem_raw);
  bf16* stage0 = Qs + QTile::kElems;
  const DecodeSplit split(p);
  const DecodeBlock blk(p, split, blockIdx.x);
  const int warp = int(threadIdx.x / 32), lane = int(threadIdx.x % 32);
  blk.gather_q<QTile, D>(Qs, p, split, Q);
  auto issue = [&](long long k0, int s) {
    bf16* Ks = stage0 + 2 * s * S::KvTile::kElems;
    load_tile_async<typename S::KvTile, 128>(Ks, K + at(p.k, blk.b, k0, blk.hk), p.k.seq, p.seq_kv - k0);
    load_tile_async<typename S::KvTile, 128>(Ks + S::KvTile::kElems, V + at(p.v, blk.b, k0, blk.hk), p.v.seq,
                                             p.seq_kv - k0);
    cp_async_commit();
  };
  issue(blk.k_begin, 0);
  WarpRows<D, 16> w(0);  // this warp: keys 16 warp to 16 warp + 15 of every tile
  for (int hh = 0; hh < 2; ++hh) w.row[0][hh] = int((16 * blk.set + lane / 4 + 8 * hh) % p.seq_q);
  const long long n = tiles(blk.k_end - blk.k_begin, kKeys);
  for (long long t = 0; t < n; ++t) {
    cp_async_wait<0>();
    __syncthreads();  // step 5's one barrier per tile
    if (t + 1 < n) issue(blk.k_begin + (t + 1) * kKeys, int((t + 1) % 2));
    if (t == 0) w.load_q(Qs, 0, p.scale < 0);
    const bf16* Ks = stage0 + 2 * (t % 2) * S::KvTile::kElems + 16 * warp * D;  // 16 whole rows on
    const long long k0 = blk.k_begin + t * kKeys + 16 * warp;
    if (k0 < blk.k_end) {  // keys past the chunk are past seq_kv: the mask hides them
      w.scores(Ks);
      w.softmax(p, k0);
      w.add_pv(Ks + S::KvTile::kElems);
    }
  }
  // The four warps' partial results through shared memory (the stages are free now).
  blk.write<D>(w, reinterpret_cast<float*>(stage0), [] { __syncthreads(); }, p, split, part_o, part_lse);
}
//! [decode kernel]

//! [decode combine]
/// A row's chunks merged: one warp per query row, lanes over head_dim.
static __global__ void decode_combine_kernel(Problem p, long long chunks, const float* part_o, const float* part_lse,
                                             bf16* O, float* lse) {
  const long long rows = 1LL * p.batch * p.heads_q * p.seq_q;
  const int lane = threadIdx.x % 32;
  for (long long row = (blockIdx.x * 256LL + threadIdx.x) / 32; row < rows; row += 256LL * gridDim.x / 32) {
    const float* ls = part_lse + row * chunks;
    float m = -INFINITY;
    for (long long c = lane; c < chunks; c += 32) m = fmaxf(m, ls[c]);
    for (int o = 16; o > 0; o /= 2) m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, o));
    const float base = m == -INFINITY ? 0.0f : m;
    float l = 0.0f;
    for (long long c = lane; c < chunks; c += 32) l += expf(ls[c] - base);
    for (int o = 16; o > 0; o /= 2) l += __shfl_xor_sync(0xffffffffu, l, o);
    const float inv = l == 0.0f ? 0.0f : 1.0f / l;
    const long long i = row % p.seq_q, h = row / p.seq_q % p.heads_q, b = row / p.seq_q / p.heads_q;
    for (int d = lane; d < p.head_dim; d += 32) {
      float o = 0.0f;
      for (long long c = 0; c < chunks; ++c) o += expf(ls[c] - base) * part_o[(row * chunks + c) * p.head_dim + d];
      O[at(p.o, b, i, h) + d] = bf16(o * inv);
    }
    if (lse != nullptr && lane == 0) lse[row] = l == 0.0f ? -INFINITY : m + logf(l);
  }
}
//! [decode combine]

/// The decode kernel's signature: (problem, Q, K, V, partial outputs, partial LSEs).
using DecodeKernel = void (*)(Problem, const bf16*, const bf16*, const bf16*, float*, float*);

/// The plan of step 7's first kernel: seq_q <= 16, head_dim 64 or 128, 16-byte rows (null
/// otherwise); one block per (batch, key head, row set, chunk).
inline Plan<DecodeKernel> decode_plan(const Problem& p, const bf16* Q = nullptr, const bf16* K = nullptr,
                                      const bf16* V = nullptr, const bf16* O = nullptr) {
  const bool ok = p.seq_q <= 16 && rows16(Q, p.q) && rows16(K, p.k) && rows16(V, p.v) && rows16(O, p.o) &&
                  (p.head_dim == 64 || p.head_dim == 128) && p.heads_kv > 0;
  if (!ok) return {nullptr, dim3(1), dim3(128), 0};
  const DecodeSplit split(p);
  const unsigned smem = unsigned(16 + 2 * 2 * 64) * unsigned(p.head_dim) * 2u;  // Q, two stages of K and V
  return grid_plan(p.head_dim == 64 ? decode_kernel<64> : decode_kernel<128>,
                   1LL * p.batch * p.heads_kv * split.row_sets * split.chunks, dim3(128), smem);
}

/// A split-KV decode's launch: the arguments checked before any CUDA call (seq_q <= 16, head_dim
/// 64 or 128, the workspace), then first(part_o, part_lse), the launch of the chunks' kernel, and
/// the merge.
template <class First>
cudaError_t split_kv(const Problem& p, const bf16* Q, const bf16* K, const bf16* V, bf16* O, float* lse,
                     void* workspace, std::size_t workspace_bytes, cudaStream_t stream, First first) {
  const Args a = check_args(p, Q, K, V, O, lse);
  if (a == Args::invalid || (p.head_dim != 64 && p.head_dim != 128) || p.seq_q > 16) return cudaErrorInvalidValue;
  if (a != Args::launch) return finish_without_launch(a, p, O, lse, stream);
  if (!workspace_fits(p, Q, K, V, O, lse, workspace, workspace_bytes, decode_workspace(p)))
    return cudaErrorInvalidValue;
  const DecodeSplit split(p);
  float* part_o = static_cast<float*>(workspace);
  float* part_lse = part_o + 1LL * p.batch * p.heads_q * p.seq_q * split.chunks * p.head_dim;
  if (cudaError_t e = first(part_o, part_lse); e != cudaSuccess) return e;
  const long long rows = 1LL * p.batch * p.heads_q * p.seq_q;
  decode_combine_kernel<<<unsigned(std::min<long long>(tiles(rows, 8), 65536)), 256, 0, stream>>>(p, split.chunks,
                                                                                                  part_o, part_lse, O,
                                                                                                  lse);
  return cudaGetLastError();
}

/// O = softmax(scale Q K^T + mask) V and its LSE for few query rows: K and V split into chunks
/// over many blocks, then merged (workspace: decode_workspace(p) bytes).
inline cudaError_t decode(const Problem& p, const bf16* Q, const bf16* K, const bf16* V, bf16* O, float* lse,
                          void* workspace, std::size_t workspace_bytes, cudaStream_t stream = nullptr) {
  return split_kv(p, Q, K, V, O, lse, workspace, workspace_bytes, stream, [&](float* part_o, float* part_lse) {
    return launch(decode_plan(p, Q, K, V, O), stream, p, Q, K, V, part_o, part_lse);
  });
}

}  // namespace smem::attention

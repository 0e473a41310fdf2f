/// \file attention_04_mma.cuh
/// \brief Step 4, tensor cores: both products on `mma.sync` m16n8k16 with `ldmatrix`, Q's
/// fragments and P kept in registers, K and V in XOR-swizzled tiles.
///
/// Change from step 3: a block takes 64 query rows, 16 per warp, and walks K and V in tiles of 64
/// keys. A warp loads its Q rows' A fragments once (`ldmatrix` from the swizzled Q tile) and keeps
/// them in registers for the whole loop. S = Q K^T is a 16 x 64 tile of fp32 accumulators per
/// warp: K's rows, as stored, are the column-major B operand, so plain `ldmatrix` reads them. The
/// online softmax of step 3 runs on those accumulators: a thread holds two rows, the four threads
/// of a quad share them, two shuffles give the row max. Then the trick that makes FlashAttention-2
/// fast on these instructions: the accumulator layout of two 16 x 8 blocks of S is, element for
/// element, the A-fragment layout of a 16 x 16 block, so P = exp(S - m), rounded to bf16 pairs,
/// is the A operand of O += P V without a trip through shared memory. V (row-major, keys by
/// head_dim) is read with `ldmatrix.trans`. The tiles are XOR-swizzled (SwizzledTile), so every
/// `ldmatrix` is conflict-free with rows of 128 or 256 bytes.
///
/// head_dim 64 and 128 (others: cudaErrorInvalidValue). Q, K, V and O need 16-byte aligned rows
/// (pointers 16-byte aligned, strides multiples of 8): the tiles are copied in 16-byte chunks.
#pragma once
#include <cuda_runtime.h>

#include <cmath>
#include <cstddef>

#include "attention_sm80.cuh"

namespace smem::attention {

/// Step 4's block: 64 query rows (16 per warp, 4 warps), tiles of 64 keys, head_dim D.
template <int D>
struct MmaShape {
  static constexpr int kRows = 64, kKeys = 64, kWarps = 4, kThreads = 32 * kWarps;
  using QTile = SwizzledTile<kRows, D>;
  using KvTile = SwizzledTile<kKeys, D>;
  static constexpr unsigned kSmemBytes = (QTile::kElems + 2 * KvTile::kElems) * sizeof(bf16);
};

//! [mma kernel]
template <int D>
__global__ void __launch_bounds__(MmaShape<D>::kThreads) mma_kernel(Problem p, const bf16* Q, const bf16* K,
                                                                    const bf16* V, bf16* O, float* lse) {
  using S = MmaShape<D>;
  constexpr int kNb = S::kKeys / 8, kDb = D / 8;  // 8-wide blocks of keys (S) and of head_dim (O)
  extern __shared__ __align__(16) unsigned char smem_raw[];
  bf16* Qs = reinterpret_cast<bf16*>(smem_raw);
  bf16* Ks = Qs + S::QTile::kElems;
  bf16* Vs = Ks + S::KvTile::kElems;
  const long long tiles_q = tiles(p.seq_q, S::kRows), bh = blockIdx.x / tiles_q;
  const long long b = bh / p.heads_q, h = bh % p.heads_q, hk = h / (p.heads_q / p.heads_kv);
  const long long q0 = blockIdx.x % tiles_q * S::kRows;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, g = lane / 4, t = lane % 4;

  load_tile16<typename S::QTile, S::kThreads>(Qs, Q + at(p.q, b, q0, h), p.q.seq, p.seq_q - q0);
  __syncthreads();
  unsigned qf[D / 16][4];  // the warp's 16 Q rows as A fragments, k = head_dim
#pragma unroll
  for (int kk = 0; kk < D / 16; ++kk)
    ldmatrix_x4(qf[kk], Qs + S::QTile::offset(16 * warp + lane % 16, 16 * kk + lane / 16 * 8));

  float o[kDb][4] = {}, m[2] = {-INFINITY, -INFINITY}, l[2] = {0.0f, 0.0f};  // rows g and g + 8
  for (long long k0 = 0; k0 < p.seq_kv; k0 += S::kKeys) {
    __syncthreads();  // every warp is done with the previous tiles
    load_tile16<typename S::KvTile, S::kThreads>(Ks, K + at(p.k, b, k0, hk), p.k.seq, p.seq_kv - k0);
    load_tile16<typename S::KvTile, S::kThreads>(Vs, V + at(p.v, b, k0, hk), p.v.seq, p.seq_kv - k0);
    __syncthreads();
    float s[kNb][4] = {};  // S = Q K^T: 16 rows x 64 keys
#pragma unroll
    for (int kk = 0; kk < D / 16; ++kk)
#pragma unroll
      for (int nb = 0; nb < kNb; nb += 2) {
        unsigned r[4];  // b0, b1 of key blocks nb and nb + 1
        ldmatrix_x4(r, Ks + S::KvTile::offset(8 * nb + lane / 16 * 8 + lane % 8, 16 * kk + lane / 8 % 2 * 8));
        mma_16816(s[nb], qf[kk], r[0], r[1]);
        mma_16816(s[nb + 1], qf[kk], r[2], r[3]);
      }
    float scale_old[2];
#pragma unroll
    for (int hh = 0; hh < 2; ++hh) {  // the online softmax of rows g and g + 8
      const long long i = q0 + 16 * warp + g + 8 * hh;
      float mt = -INFINITY;
#pragma unroll
      for (int nb = 0; nb < kNb; ++nb)
#pragma unroll
        for (int e = 0; e < 2; ++e) {
          const long long j = k0 + 8 * nb + 2 * t + e;
          float& x = s[nb][2 * hh + e];
          x = j < p.seq_kv && visible(p, i, j) ? p.scale * x : -INFINITY;
          mt = fmaxf(mt, x);
        }
      mt = fmaxf(mt, __shfl_xor_sync(0xffffffffu, mt, 1));
      mt = fmaxf(mt, __shfl_xor_sync(0xffffffffu, mt, 2));
      const float m_new = fmaxf(m[hh], mt), base = m_new == -INFINITY ? 0.0f : m_new;
      scale_old[hh] = expf(m[hh] - base);
      float sum = 0.0f;
#pragma unroll
      for (int nb = 0; nb < kNb; ++nb)
#pragma unroll
        for (int e = 0; e < 2; ++e) sum += s[nb][2 * hh + e] = expf(s[nb][2 * hh + e] - base);
      l[hh] = l[hh] * scale_old[hh] + sum;  // this thread's columns; the quad adds up at the end
      m[hh] = m_new;
    }
#pragma unroll
    for (int db = 0; db < kDb; ++db)
#pragma unroll
      for (int e = 0; e < 4; ++e) o[db][e] *= scale_old[e / 2];
#pragma unroll
    for (int kb = 0; kb < S::kKeys / 16; ++kb) {  // O += P V, P straight from the accumulators
      const unsigned a[4] = {pack_bf16(s[2 * kb][0], s[2 * kb][1]), pack_bf16(s[2 * kb][2], s[2 * kb][3]),
                             pack_bf16(s[2 * kb + 1][0], s[2 * kb + 1][1]),
                             pack_bf16(s[2 * kb + 1][2], s[2 * kb + 1][3])};
#pragma unroll
      for (int db = 0; db < kDb; db += 2) {
        unsigned r[4];  // b0, b1 of head_dim blocks db and db + 1
        ldmatrix_x4_trans(r, Vs + S::KvTile::offset(16 * kb + lane % 8 + lane / 8 % 2 * 8, 8 * db + lane / 16 * 8));
        mma_16816(o[db], a, r[0], r[1]);
        mma_16816(o[db + 1], a, r[2], r[3]);
      }
    }
  }
#pragma unroll
  for (int hh = 0; hh < 2; ++hh) {
    l[hh] += __shfl_xor_sync(0xffffffffu, l[hh], 1);
    l[hh] += __shfl_xor_sync(0xffffffffu, l[hh], 2);
    const long long i = q0 + 16 * warp + g + 8 * hh;
    if (i >= p.seq_q) continue;
    const float inv = l[hh] == 0.0f ? 0.0f : 1.0f / l[hh];
    bf16* out = O + at(p.o, b, i, h) + 2 * t;
#pragma unroll
    for (int db = 0; db < kDb; ++db)
      *reinterpret_cast<unsigned*>(out + 8 * db) = pack_bf16(o[db][2 * hh] * inv, o[db][2 * hh + 1] * inv);
    if (lse != nullptr && t == 0) lse[bh * p.seq_q + i] = l[hh] == 0.0f ? -INFINITY : m[hh] + logf(l[hh]);
  }
}
//! [mma kernel]

/// The plan of a step-4-like kernel for head_dim 64 or 128 (null otherwise, or without 16-byte
/// rows): one block per 64 query rows of each head.
inline Plan<RowKernel> mma_plan_with(const Problem& p, const bf16* Q, const bf16* K, const bf16* V, const bf16* O,
                                     RowKernel k64, RowKernel k128) {
  const bool rows = rows16(Q, p.q) && rows16(K, p.k) && rows16(V, p.v) && rows16(O, p.o);
  const RowKernel k = !rows ? nullptr : p.head_dim == 64 ? k64 : p.head_dim == 128 ? k128 : nullptr;
  return grid_plan(k, 1LL * p.batch * p.heads_q * tiles(p.seq_q, 64), dim3(128),
                   p.head_dim == 64 ? MmaShape<64>::kSmemBytes : MmaShape<128>::kSmemBytes);
}

/// The plan of step 4 (the pointers decide whether the rows take 16-byte copies).
inline Plan<RowKernel> mma_plan(const Problem& p, const bf16* Q = nullptr, const bf16* K = nullptr,
                                const bf16* V = nullptr, const bf16* O = nullptr) {
  return mma_plan_with(p, Q, K, V, O, mma_kernel<64>, mma_kernel<128>);
}
inline std::size_t mma_workspace(const Problem&) { return 0; }

/// O = softmax(scale Q K^T + mask) V and its LSE on mma.sync, P kept in registers.
inline cudaError_t mma(const Problem& p, const bf16* Q, const bf16* K, const bf16* V, bf16* O, float* lse, void*,
                       std::size_t, cudaStream_t stream = nullptr) {
  const Args a = check_args(p, Q, K, V, O, lse);
  if (a == Args::invalid || (p.head_dim != 64 && p.head_dim != 128)) return cudaErrorInvalidValue;
  if (a != Args::launch) return finish_without_launch(a, p, O, lse, stream);
  return launch(mma_plan(p, Q, K, V, O), stream, p, Q, K, V, O, lse);
}

}  // namespace smem::attention

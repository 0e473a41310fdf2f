/// \file attention_04_mma.cuh
/// \brief Step 4, tensor cores: both products on `mma.sync` m16n8k16 with `ldmatrix`, Q's
/// fragments and P kept in registers, K and V in XOR-swizzled tiles.
///
/// Change from step 3: a block takes 64 query rows, 16 per warp, and walks K and V in tiles of 64
/// keys; the warp's work is the kit's WarpRows. A warp loads its Q rows' A fragments once
/// (`ldmatrix` from the swizzled Q tile) and keeps them in registers for the whole loop.
/// S = Q K^T is a 16 x 64 tile of fp32 accumulators per warp: K's rows, as stored, are the
/// column-major B operand, so plain `ldmatrix` reads them. The online softmax of step 3 runs on
/// those accumulators: a thread holds two rows, the four threads of a quad share them, two
/// shuffles give the row max. Then the trick that makes FlashAttention-2 fast on these
/// instructions: the accumulator layout of two 16 x 8 blocks of S is, element for element, the
/// A-fragment layout of a 16 x 16 block, so P = exp(S - m), rounded to bf16 pairs, is the A operand
/// of O += P V without a trip through shared memory. V (row-major, keys by head_dim) is read with
/// `ldmatrix.trans`. The tiles are XOR-swizzled (SwizzledTile), so every `ldmatrix` is
/// conflict-free with rows of 128 or 256 bytes.
///
/// head_dim 64 and 128 (others: cudaErrorInvalidValue). Q, K, V and O need 16-byte aligned rows
/// (pointers 16-byte aligned, strides multiples of 8): the tiles are copied in 16-byte chunks.
#pragma once
#include <cuda_runtime.h>

#include <cmath>
#include <cstddef>

#include "attention_sm80.cuh"

namespace smem::attention {

/// Copies rows 0 to Tile::kRows - 1 of a tensor (row r at src + r * seq_stride) into the swizzled
/// tile at `dst` in 16-byte chunks, zeros for rows at or past `valid`; kThreads threads share it.
template <class Tile, int kThreads>
__device__ __forceinline__ void load_tile16(bf16* dst, const bf16* src, long long seq_stride, long long valid) {
  constexpr int D = Tile::kD, kChunks = Tile::kRows * D / 8;
  static_assert(kChunks % kThreads == 0, "every thread copies the same number of chunks");
#pragma unroll
  for (int i = 0; i < kChunks / kThreads; ++i) {
    const int id = int(threadIdx.x) + i * kThreads, r = chunk_row(id, D), c = chunk_col(id, D);
    uint4 v = make_uint4(0, 0, 0, 0);
    if (r < valid) v = *reinterpret_cast<const uint4*>(src + r * seq_stride + c);
    *reinterpret_cast<uint4*>(dst + Tile::offset(r, c)) = v;
  }
}

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
  extern __shared__ __align__(16) unsigned char smem_raw[];
  bf16* Qs = reinterpret_cast<bf16*>(smem_raw);
  bf16* Ks = Qs + S::QTile::kElems;
  bf16* Vs = Ks + S::KvTile::kElems;
  const long long tiles_q = tiles(p.seq_q, S::kRows), bh = blockIdx.x / tiles_q;
  const long long b = bh / p.heads_q, h = bh % p.heads_q, hk = h / (p.heads_q / p.heads_kv);
  const long long q0 = blockIdx.x % tiles_q * S::kRows;
  const int row0 = 16 * int(threadIdx.x / 32);  // the warp's first row in the block
  const long long i0 = q0 + row0;

  load_tile16<typename S::QTile, S::kThreads>(Qs, Q + at(p.q, b, q0, h), p.q.seq, p.seq_q - q0);
  __syncthreads();
  WarpRows<D, S::kKeys> w(i0);
  w.load_q(Qs, row0, p.scale < 0);
  for (long long k0 = 0; k0 < p.seq_kv; k0 += S::kKeys) {
    __syncthreads();  // every warp is done with the previous tiles
    load_tile16<typename S::KvTile, S::kThreads>(Ks, K + at(p.k, b, k0, hk), p.k.seq, p.seq_kv - k0);
    load_tile16<typename S::KvTile, S::kThreads>(Vs, V + at(p.v, b, k0, hk), p.v.seq, p.seq_kv - k0);
    __syncthreads();
    w.scores(Ks);
    w.softmax(p, k0);
    w.add_pv(Vs);
  }
  w.store(p, b, h, i0, O, lse);
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

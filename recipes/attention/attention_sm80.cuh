/// \file attention_sm80.cuh
/// \brief The Ampere kit of the attention family, what its tensor-core steps (4 on) share: the
/// XOR-swizzled shared tile of head_dim columns, its 16-byte copy from global memory, the
/// `ldmatrix`, `mma.sync` m16n8k16 (bf16 in, fp32 accumulators) and `cp.async` instructions, and a warp's
/// share of the work on its 16 query rows (WarpRows: the scores, the online softmax on the
/// accumulators, P V with P in registers, the store).
#pragma once
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>

#include "attention_common.cuh"

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 800
#error "attention_sm80.cuh needs ldmatrix and bf16 mma.sync: compile for sm_80 or newer (e.g. -arch=sm_80)"
#endif

namespace smem::attention {

//! [swizzled tile]
/// A shared tile of ROWS rows of D bf16 (D a multiple of 64), its 16-byte chunks XOR-swizzled:
/// chunk c / 8 of row r sits at chunk (c / 8) ^ (r % 8). The 8 rows that one `ldmatrix` matrix
/// reads at one chunk then sit in 8 different 16-byte bank groups: no conflict, no padding.
template <int ROWS, int D>
struct SwizzledTile {
  static_assert(D % 64 == 0, "rows of whole 128-byte lines");
  static constexpr int kRows = ROWS, kD = D, kElems = ROWS * D;
  __host__ __device__ static constexpr int offset(int r, int c) { return r * D + ((c / 8) ^ (r % 8)) * 8 + c % 8; }
};
//! [swizzled tile]

/// True when a tensor's rows may be copied in 16-byte chunks: a 16-byte aligned base and strides
/// that are multiples of 8 elements.
inline bool rows16(const void* p, const Strides& t) {
  return aligned(p, 16) && t.batch % 8 == 0 && t.seq % 8 == 0 && t.head % 8 == 0;
}

/// Copies rows 0 to Tile::kRows - 1 of a tensor (row r at src + r * seq_stride) into the swizzled
/// tile at `dst` in 16-byte chunks, zeros for rows at or past `valid`; kThreads threads share it.
template <class Tile, int kThreads>
__device__ __forceinline__ void load_tile16(bf16* dst, const bf16* src, long long seq_stride, long long valid) {
  constexpr int D = Tile::kD, kChunks = Tile::kRows * D / 8;
  static_assert(kChunks % kThreads == 0, "every thread copies the same number of chunks");
#pragma unroll
  for (int i = 0; i < kChunks / kThreads; ++i) {
    const int id = int(threadIdx.x) + i * kThreads, r = id / (D / 8), c = id % (D / 8) * 8;
    uint4 v = make_uint4(0, 0, 0, 0);
    if (r < valid) v = *reinterpret_cast<const uint4*>(src + r * seq_stride + c);
    *reinterpret_cast<uint4*>(dst + Tile::offset(r, c)) = v;
  }
}

//! [ptx]
/// The shared-memory address (state space .shared) of a generic pointer into shared memory.
__device__ __forceinline__ unsigned smem_u32(const void* p) { return unsigned(__cvta_generic_to_shared(p)); }
/// ldmatrix.x4: four 8 x 8 bf16 matrices; lane l gives the address of row l % 8 of matrix l / 8.
__device__ __forceinline__ void ldmatrix_x4(unsigned (&r)[4], const bf16* row) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(smem_u32(row)));
}
/// The same, each matrix transposed (a row-major k x n tile read as the mma's column-major B).
__device__ __forceinline__ void ldmatrix_x4_trans(unsigned (&r)[4], const bf16* row) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(smem_u32(row)));
}
/// d += a * b on a 16 x 8 x 16 tile: bf16 A (row) and B (col) fragments, fp32 accumulators.
__device__ __forceinline__ void mma_16816(float (&d)[4], const unsigned (&a)[4], unsigned b0, unsigned b1) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
      "{%0, %1, %2, %3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}
/// Two floats as a bf16 pair, x in the low half (the lower column or k index).
__device__ __forceinline__ unsigned pack_bf16(float x, float y) {
  const __nv_bfloat162 v = __floats2bfloat162_rn(x, y);
  return *reinterpret_cast<const unsigned*>(&v);
}
//! [ptx]

//! [cp.async]
/// Copies 16 bytes from global to shared memory without passing through registers (sm_80's
/// cp.async, cached in L2 only); with `valid` false it writes 16 zero bytes and reads nothing.
__device__ __forceinline__ void cp_async16(bf16* dst, const bf16* src, bool valid) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(smem_u32(dst)), "l"(src),
               "r"(valid ? 16 : 0)
               : "memory");
}
/// Closes the group of the copies issued so far by this thread.
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }
/// Waits until at most kPending of this thread's groups are in flight.
template <int kPending>
__device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(kPending) : "memory");
}
/// load_tile16 through cp.async: the copies are issued, not waited for.
template <class Tile, int kThreads>
__device__ __forceinline__ void load_tile_async(bf16* dst, const bf16* src, long long seq_stride, long long valid) {
  constexpr int D = Tile::kD, kChunks = Tile::kRows * D / 8;
  static_assert(kChunks % kThreads == 0, "every thread copies the same number of chunks");
#pragma unroll
  for (int i = 0; i < kChunks / kThreads; ++i) {
    const int id = int(threadIdx.x) + i * kThreads, r = id / (D / 8), c = id % (D / 8) * 8;
    cp_async16(dst + Tile::offset(r, c), src + (r < valid ? r * seq_stride + c : 0), r < valid);
  }
}
//! [cp.async]

//! [warp tile]
/// A warp's share of a block of tensor-core attention: 16 query rows, tiles of kKeys keys, head_dim
/// D. s: the scores S = Q K^T of the tile (kKeys / 8 accumulator blocks of 16 x 8); o: the output
/// (D / 8 blocks); m and l: the running max and this thread's part of the sum of rows g and g + 8.
template <int D, int kKeys>
struct WarpRows {
  static constexpr int kNb = kKeys / 8, kDb = D / 8;
  unsigned qf[D / 16][4];  // the 16 Q rows as A fragments, k = head_dim, loaded once
  float s[kNb][4], o[kDb][4] = {}, m[2] = {-INFINITY, -INFINITY}, l[2] = {0.0f, 0.0f};

  /// The queries of the thread's rows g and g + 8 when the warp's rows are queries i0 to i0 + 15.
  __device__ static void rows_from(long long i0, long long (&rows)[2]) {
    const int g = int(threadIdx.x % 32) / 4;
    rows[0] = i0 + g, rows[1] = i0 + g + 8;
  }

  /// Q's fragments from the swizzled tile Qs, rows row0 to row0 + 15.
  template <class QTile>
  __device__ __forceinline__ void load_q(const bf16* Qs, int row0) {
    const int lane = threadIdx.x % 32;
#pragma unroll
    for (int kk = 0; kk < D / 16; ++kk)
      ldmatrix_x4(qf[kk], Qs + QTile::offset(row0 + lane % 16, 16 * kk + lane / 16 * 8));
  }

  /// s = Q K^T for the tile in Ks: K's rows, as stored, are the mma's column-major B operand.
  template <class KvTile>
  __device__ __forceinline__ void scores(const bf16* Ks) {
    const int lane = threadIdx.x % 32;
#pragma unroll
    for (int nb = 0; nb < kNb; ++nb) s[nb][0] = s[nb][1] = s[nb][2] = s[nb][3] = 0.0f;
#pragma unroll
    for (int kk = 0; kk < D / 16; ++kk)
#pragma unroll
      for (int nb = 0; nb < kNb; nb += 2) {
        unsigned r[4];  // b0, b1 of key blocks nb and nb + 1
        ldmatrix_x4(r, Ks + KvTile::offset(8 * nb + lane / 16 * 8 + lane % 8, 16 * kk + lane / 8 % 2 * 8));
        mma_16816(s[nb], qf[kk], r[0], r[1]);
        mma_16816(s[nb + 1], qf[kk], r[2], r[3]);
      }
  }

  /// The online softmax of the tile: scale, mask (key j of the tile is k0 + j; the thread's rows
  /// g and g + 8 are queries i[0] and i[1]; with kMask false no element is masked), new max, s
  /// replaced by exp(s - max), and o and l rescaled by exp(old max - new max). Each row's max is
  /// shared by the quad (two shuffles); l stays per thread until store().
  template <bool kMask = true>
  __device__ __forceinline__ void softmax(const Problem& p, const long long (&rows)[2], long long k0) {
    const int lane = threadIdx.x % 32, t = lane % 4;
    float scale_old[2];
#pragma unroll
    for (int hh = 0; hh < 2; ++hh) {
      const long long i = rows[hh];
      float mt = -INFINITY;
#pragma unroll
      for (int nb = 0; nb < kNb; ++nb)
#pragma unroll
        for (int e = 0; e < 2; ++e) {
          const long long j = k0 + 8 * nb + 2 * t + e;
          float& x = s[nb][2 * hh + e];
          x = !kMask || (j < p.seq_kv && visible(p, i, j)) ? p.scale * x : -INFINITY;
          mt = fmaxf(mt, x);
        }
      mt = fmaxf(mt, __shfl_xor_sync(0xffffffffu, mt, 1));
      mt = fmaxf(mt, __shfl_xor_sync(0xffffffffu, mt, 2));
      const float m_new = fmaxf(m[hh], mt), base = m_new == -INFINITY ? 0.0f : m_new;
      scale_old[hh] = expf(m[hh] - base);  // 0 while the row has seen no key
      float sum = 0.0f;
#pragma unroll
      for (int nb = 0; nb < kNb; ++nb)
#pragma unroll
        for (int e = 0; e < 2; ++e) {
          s[nb][2 * hh + e] = expf(s[nb][2 * hh + e] - base);
          sum += s[nb][2 * hh + e];
        }
      l[hh] = l[hh] * scale_old[hh] + sum;
      m[hh] = m_new;
    }
#pragma unroll
    for (int db = 0; db < kDb; ++db)
#pragma unroll
      for (int e = 0; e < 4; ++e) o[db][e] *= scale_old[e / 2];
  }

  /// o += P V for the tile in Vs, P = s straight from the accumulators: two 16 x 8 accumulator
  /// blocks are, element for element, one 16 x 16 A fragment. V (keys x head_dim, row-major) is
  /// read with ldmatrix.trans.
  template <class KvTile>
  __device__ __forceinline__ void add_pv(const bf16* Vs) {
    const int lane = threadIdx.x % 32;
#pragma unroll
    for (int kb = 0; kb < kKeys / 16; ++kb) {
      const unsigned a[4] = {pack_bf16(s[2 * kb][0], s[2 * kb][1]), pack_bf16(s[2 * kb][2], s[2 * kb][3]),
                             pack_bf16(s[2 * kb + 1][0], s[2 * kb + 1][1]),
                             pack_bf16(s[2 * kb + 1][2], s[2 * kb + 1][3])};
#pragma unroll
      for (int db = 0; db < kDb; db += 2) {
        unsigned r[4];  // b0, b1 of head_dim blocks db and db + 1
        ldmatrix_x4_trans(r, Vs + KvTile::offset(16 * kb + lane % 8 + lane / 8 % 2 * 8, 8 * db + lane / 16 * 8));
        mma_16816(o[db], a, r[0], r[1]);
        mma_16816(o[db + 1], a, r[2], r[3]);
      }
    }
  }

  /// O = o / l of rows i0 + g and i0 + g + 8 below seq_q, as bf16 pairs, and their LSE; a row that
  /// saw no key: O = 0, LSE = -inf.
  __device__ __forceinline__ void store(const Problem& p, long long b, long long h, long long i0, bf16* O,
                                        float* lse) {
    const int lane = threadIdx.x % 32, g = lane / 4, t = lane % 4;
#pragma unroll
    for (int hh = 0; hh < 2; ++hh) {
      l[hh] += __shfl_xor_sync(0xffffffffu, l[hh], 1);
      l[hh] += __shfl_xor_sync(0xffffffffu, l[hh], 2);
      const long long i = i0 + g + 8 * hh;
      if (i >= p.seq_q) continue;
      const float inv = l[hh] == 0.0f ? 0.0f : 1.0f / l[hh];
      bf16* out = O + at(p.o, b, i, h) + 2 * t;
#pragma unroll
      for (int db = 0; db < kDb; ++db)
        *reinterpret_cast<unsigned*>(out + 8 * db) = pack_bf16(o[db][2 * hh] * inv, o[db][2 * hh + 1] * inv);
      if (lse != nullptr && t == 0)
        lse[(b * p.heads_q + h) * p.seq_q + i] = l[hh] == 0.0f ? -INFINITY : m[hh] + logf(l[hh]);
    }
  }
};
//! [warp tile]

}  // namespace smem::attention

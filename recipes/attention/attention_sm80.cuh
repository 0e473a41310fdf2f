/// \file attention_sm80.cuh
/// \brief The Ampere kit of the attention family, what its tensor-core steps (4 on) share: the
/// XOR-swizzled shared tile of head_dim columns, the `ldmatrix`, `mma.sync` m16n8k16 (bf16 in,
/// fp32 accumulators), `ex2` and `cp.async` instructions, a warp's share of the work on its query
/// rows (WarpRows: the scores, the online softmax on the accumulators, P V with P in registers,
/// the store), and the pipelined steps' block shape and plan.
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

/// Chunk `id` of a tile copy, 16-byte chunks in row order, of a tile of d columns: its row and
/// its first column.
__host__ __device__ constexpr int chunk_row(int id, int d) { return id / (d / 8); }
__host__ __device__ constexpr int chunk_col(int id, int d) { return id % (d / 8) * 8; }

/// True when a tensor's rows may be copied in 16-byte chunks: a 16-byte aligned base and strides
/// that are multiples of 8 elements.
inline bool rows16(const void* p, const Strides& t) {
  return aligned(p, 16) && t.batch % 8 == 0 && t.seq % 8 == 0 && t.head % 8 == 0;
}

//! [ptx]
/// The shared-memory address (state space .shared) of a generic pointer into shared memory.
__device__ __forceinline__ unsigned smem_u32(const void* p) { return unsigned(__cvta_generic_to_shared(p)); }
/// ldmatrix.x4: four 8 x 8 bf16 matrices; lane l gives the shared address of row l % 8 of matrix l / 8.
__device__ __forceinline__ void ldmatrix_x4(unsigned (&r)[4], unsigned row) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(row));
}
/// The same, each matrix transposed (a row-major k x n tile read as the mma's column-major B).
__device__ __forceinline__ void ldmatrix_x4_trans(unsigned (&r)[4], unsigned row) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(row));
}
/// d += a * b on a 16 x 8 x 16 tile: bf16 A (row) and B (col) fragments, fp32 accumulators.
__device__ __forceinline__ void mma_16816(float (&d)[4], const unsigned (&a)[4], unsigned b0, unsigned b1) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
      "{%0, %1, %2, %3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}
/// The element (row, column) of a 16 x 16 block whose address lane l gives to ldmatrix.x4, in the
/// order the mma takes the four registers. ColFirst: Q's rows as the A fragment, V with .trans as
/// b0, b1 of 8 columns, then of the next 8. RowFirst: K's rows (keys) as b0, b1 of 8 keys, then
/// of the next 8.
struct ColFirst {
  __host__ __device__ static constexpr int row(int l) { return l % 16; }
  __host__ __device__ static constexpr int col(int l) { return l / 16 * 8; }
};
struct RowFirst {
  __host__ __device__ static constexpr int row(int l) { return l / 16 * 8 + l % 8; }
  __host__ __device__ static constexpr int col(int l) { return l / 8 % 2 * 8; }
};
/// A lane's ldmatrix addresses (map Map) in a SwizzledTile of D columns, or with kPanelRows > 0
/// in the layout TMA's 128-byte swizzle writes (sm90::TmaTile: 64-column panels of kPanelRows
/// rows, one after the other; the same XOR inside a panel). Rows 8 apart share the XOR, and it
/// changes only the low three bits of a chunk index: the block at rows R, columns C (R a multiple
/// of 8, C of 16) is at the lane's row offset, plus 32 (C / 16 % 4) bytes XOR the lane's own chunk
/// XOR, plus a constant. In the unrolled loops R and C are constants: per read, an immediate
/// offset on one of four sums the compiler forms once per tile.
template <int D, class Map, int kPanelRows = 0>
struct LdsmLanes {
  static constexpr int kPitch = kPanelRows > 0 ? 64 : D;                // elements from a row to the next
  static constexpr int kPanel = kPanelRows > 0 ? 64 * kPanelRows : 64;  // from 64 columns to the next 64
  __host__ __device__ static constexpr unsigned row_bytes(int l) { return 2u * unsigned(Map::row(l) * kPitch); }
  __host__ __device__ static constexpr unsigned xor16(int l) {
    return 16u * unsigned(Map::col(l) / 8 ^ Map::row(l) % 8);
  }
  __host__ __device__ static constexpr unsigned bytes(unsigned row, unsigned x, int R, int C) {
    return row + (32u * unsigned(C / 16 % 4) ^ x) + 2u * unsigned(R * kPitch + C / 64 * kPanel);
  }
  unsigned base = row_bytes(int(threadIdx.x % 32)), x = xor16(int(threadIdx.x % 32));  // this lane's
  __device__ __forceinline__ unsigned at(unsigned tile, int R, int C) const { return tile + bytes(base, x, R, C); }
};
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
/// Copies rows 0 to Tile::kRows - 1 of a tensor (row r at src + r * seq_stride) into the swizzled
/// tile at `dst` in 16-byte chunks through cp.async, zeros for rows at or past `valid`; kThreads
/// threads share it, chunk id = thread + i kThreads. A thread's chunks lie kStep rows apart, a
/// multiple of 8: the same column and XOR, so each next one is a constant further in the tile and
/// kStep rows further in the tensor. A whole tile (every row valid) takes the copies unguarded.
/// The copies are issued, not waited for.
template <class Tile, int kThreads>
__device__ __forceinline__ void load_tile_async(bf16* dst, const bf16* src, long long seq_stride, long long valid) {
  constexpr int D = Tile::kD, kStep = kThreads / (D / 8), kCopies = Tile::kRows / kStep;
  static_assert(kThreads % (D / 8) == 0 && kStep % 8 == 0 && Tile::kRows % kStep == 0, "whole 8-row steps");
  const int r = chunk_row(int(threadIdx.x), D), c = chunk_col(int(threadIdx.x), D);
  bf16* d = dst + Tile::offset(r, c);
  const bf16* s = src + r * seq_stride + c;
  const long long step = kStep * seq_stride;
  if (valid >= Tile::kRows) {
#pragma unroll
    for (int i = 0; i < kCopies; ++i) cp_async16(d + i * kStep * D, s + i * step, true);
  } else {
#pragma unroll
    for (int i = 0; i < kCopies; ++i) {
      const bool ok = r + i * kStep < valid;
      cp_async16(d + i * kStep * D, ok ? s + i * step : src, ok);
    }
  }
}
//! [cp.async]

//! [warp tile]
/// A warp's share of a block of tensor-core attention: kMt tiles of 16 query rows, tiles of kKeys
/// keys, head_dim D. s: the scores S = Q K^T of the key tile (kKeys / 8 accumulator blocks of
/// 16 x 8 per row tile); o: the output (D / 8 blocks per row tile); m and l: the running max (in
/// base 2, of scale log2(e) S) and this thread's part of the sum, of rows g and g + 8 of each row
/// tile. With kQRegs, Q's A fragments are loaded once and stay in registers; without, they are
/// read from the shared Q tile for every key tile (the registers go to a second row tile).
/// kPanelRows > 0: Q, K and V are in TMA's layout, panels of kPanelRows rows (LdsmLanes; step 13).
template <int D, int kKeys, int kMt = 1, bool kQRegs = true, int kPanelRows = 0>
struct WarpRows {
  static_assert(kQRegs || kPanelRows == 0, "Q's fragments from TMA's layout: held in registers");
  static constexpr int kNb = kKeys / 8, kDb = D / 8;
  LdsmLanes<D, ColFirst, kPanelRows> a_lanes;              // this lane's ldmatrix offsets for Q and V,
  LdsmLanes<D, RowFirst, kPanelRows> b_lanes;              // and for K
  unsigned qf[kQRegs ? kMt : 1][kQRegs ? D / 16 : 1][4];  // Q's A fragments (kQRegs)
  unsigned qs = 0;                                         // else: the warp's rows of the shared Q tile
  float s[kMt][kNb][4], o[kMt][kDb][4] = {}, m[kMt][2], l[kMt][2];
  int row[kMt][2];  // the query index of the thread's rows g and g + 8 of each row tile

  /// Rows i0 to i0 + 16 kMt - 1 of the warp are queries i0 on, in order.
  __device__ explicit WarpRows(long long i0) {
    const int g = int(threadIdx.x % 32) / 4;
#pragma unroll
    for (int mt = 0; mt < kMt; ++mt)
#pragma unroll
      for (int hh = 0; hh < 2; ++hh) {
        row[mt][hh] = int(i0 + 16 * mt + g + 8 * hh), m[mt][hh] = -INFINITY, l[mt][hh] = 0.0f;
      }
  }

  /// Q's fragments (or where to read them): rows row0 to row0 + 16 kMt - 1 of the swizzled tile Qs.
  /// With `negate` (a negative scale) the warp takes -Q (exact: a sign bit), so that the softmax
  /// scales by |scale|, with which the max commutes: in its registers, or in its own rows.
  __device__ __forceinline__ void load_q(bf16* Qs, int row0, bool negate) {
    qs = smem_u32(Qs) + 2u * unsigned(row0 * a_lanes.kPitch);
    if constexpr (kQRegs) {
#pragma unroll
      for (int mt = 0; mt < kMt; ++mt)
#pragma unroll
        for (int kk = 0; kk < D / 16; ++kk) {
          q_fragment(qf[mt][kk], mt, kk);
#pragma unroll
          for (int e = 0; e < 4; ++e) qf[mt][kk][e] ^= negate ? 0x80008000u : 0u;
        }
    } else if (negate) {
      unsigned* pairs = reinterpret_cast<unsigned*>(Qs + row0 * D);  // 16 kMt whole rows
      for (int i = int(threadIdx.x % 32); i < 8 * kMt * D; i += 32) pairs[i] ^= 0x80008000u;
      __syncwarp();
    }
  }

  /// s = Q K^T for the tile in Ks: K's rows, as stored, are the mma's column-major B operand. One
  /// `ldmatrix` of K feeds 2 kMt mma.
  __device__ __forceinline__ void scores(const bf16* Ks) {
    const unsigned k = smem_u32(Ks);
#pragma unroll
    for (int mt = 0; mt < kMt; ++mt)
#pragma unroll
      for (int nb = 0; nb < kNb; ++nb) s[mt][nb][0] = s[mt][nb][1] = s[mt][nb][2] = s[mt][nb][3] = 0.0f;
#pragma unroll
    for (int kk = 0; kk < D / 16; ++kk) {
      unsigned a[kMt][4];
#pragma unroll
      for (int mt = 0; mt < kMt; ++mt) {
        if constexpr (kQRegs) {
#pragma unroll
          for (int e = 0; e < 4; ++e) a[mt][e] = qf[mt][kk][e];
        } else {
          q_fragment(a[mt], mt, kk);
        }
      }
#pragma unroll
      for (int nb = 0; nb < kNb; nb += 2) {
        unsigned r[4];  // b0, b1 of key blocks nb and nb + 1
        ldmatrix_x4(r, b_lanes.at(k, 8 * nb, 16 * kk));
#pragma unroll
        for (int mt = 0; mt < kMt; ++mt) {
          mma_16816(s[mt][nb], a[mt], r[0], r[1]);
          mma_16816(s[mt][nb + 1], a[mt], r[2], r[3]);
        }
      }
    }
  }

  /// The online softmax of the tile in base 2 (key j of the tile is k0 + j; kMask false: none
  /// masked): the raw scores' max, the new max M of c S with c = |scale| log2(e) (see load_q),
  /// s replaced by 2^(c s - M) (an fma and an ex2), o and l rescaled by 2^(old max - M); M moves
  /// only when the tile's max passes it by more than kMaxSlack. The mask is one integer compare
  /// per element: a row sees the keys below its limit; a masked score becomes -inf, then 0 (also
  /// where c is 0). The quad shares each row's max (two shuffles); l stays per thread until store().
  template <bool kMask = true>
  __device__ __forceinline__ void softmax(const Problem& p, long long k0) {
    const int t = threadIdx.x % 4;
    const float c = fabsf(p.scale) * 1.44269504088896341f;  // log2(e)
#pragma unroll
    for (int mt = 0; mt < kMt; ++mt) {
      float scale_old[2];
#pragma unroll
      for (int hh = 0; hh < 2; ++hh) {
        int limit = kKeys;  // keys k0 + j with j < limit are visible to the row
        if (kMask) {
          const long long end = p.causal ? row[mt][hh] + 1LL + p.seq_kv - p.seq_q : p.seq_kv;
          const long long n = (end < p.seq_kv ? end : p.seq_kv) - k0;
          limit = n < 0 ? 0 : n < kKeys ? int(n) : kKeys;
        }
        float mt_max = -INFINITY;
#pragma unroll
        for (int nb = 0; nb < kNb; ++nb)
#pragma unroll
          for (int e = 0; e < 2; ++e) {
            float& x = s[mt][nb][2 * hh + e];
            if (kMask && 8 * nb + 2 * t + e >= limit) x = -INFINITY;
            mt_max = fmaxf(mt_max, x);
          }
        mt_max = fmaxf(mt_max, __shfl_xor_sync(0xffffffffu, mt_max, 1));
        mt_max = fmaxf(mt_max, __shfl_xor_sync(0xffffffffu, mt_max, 2));
        // A NaN (c = 0 times a max of -inf: no visible key yet) fails the compare: M stays.
        const float tile_max = c * mt_max, m_old = m[mt][hh];
        const float m_new = tile_max > m_old + kMaxSlack ? tile_max : m_old, base = m_new == -INFINITY ? 0.0f : m_new;
        scale_old[hh] = m_new == m_old ? 1.0f : exp2_approx(m_old - base);  // 0 on the first visible tile
        float sum = 0.0f;
#pragma unroll
        for (int nb = 0; nb < kNb; ++nb)
#pragma unroll
          for (int e = 0; e < 2; ++e) {
            float& x = s[mt][nb][2 * hh + e];
            const float y = exp2_approx(fmaf(c, x, -base));
            x = kMask && x == -INFINITY ? 0.0f : y;  // a masked key: 2^(0 (-inf)) would be NaN
            sum += x;
          }
        l[mt][hh] = l[mt][hh] * scale_old[hh] + sum;
        m[mt][hh] = m_new;
      }
      // No row of the warp's tile moved its max: the rescale of o would multiply by 1.
      if (__any_sync(0xffffffffu, scale_old[0] != 1.0f || scale_old[1] != 1.0f)) {
#pragma unroll
        for (int db = 0; db < kDb; ++db)
#pragma unroll
          for (int e = 0; e < 4; ++e) o[mt][db][e] *= scale_old[e / 2];
      }
    }
  }

  /// o += P V for the tile in Vs, P = s straight from the accumulators: two 16 x 8 accumulator
  /// blocks are, element for element, one 16 x 16 A fragment. V (keys x head_dim, row-major) is
  /// read with ldmatrix.trans; one `ldmatrix` of V feeds 2 kMt mma.
  __device__ __forceinline__ void add_pv(const bf16* Vs) {
    const unsigned v = smem_u32(Vs);
#pragma unroll
    for (int kb = 0; kb < kKeys / 16; ++kb) {
      unsigned a[kMt][4];
#pragma unroll
      for (int mt = 0; mt < kMt; ++mt) {
        a[mt][0] = pack_bf16(s[mt][2 * kb][0], s[mt][2 * kb][1]);
        a[mt][1] = pack_bf16(s[mt][2 * kb][2], s[mt][2 * kb][3]);
        a[mt][2] = pack_bf16(s[mt][2 * kb + 1][0], s[mt][2 * kb + 1][1]);
        a[mt][3] = pack_bf16(s[mt][2 * kb + 1][2], s[mt][2 * kb + 1][3]);
      }
#pragma unroll
      for (int db = 0; db < kDb; db += 2) {
        unsigned r[4];  // b0, b1 of head_dim blocks db and db + 1
        ldmatrix_x4_trans(r, a_lanes.at(v, 16 * kb, 8 * db));
#pragma unroll
        for (int mt = 0; mt < kMt; ++mt) {
          mma_16816(o[mt][db], a[mt], r[0], r[1]);
          mma_16816(o[mt][db + 1], a[mt], r[2], r[3]);
        }
      }
    }
  }

  /// Row tile mt's sum of the row of half hh over the quad, and its natural log-sum-exp
  /// (-inf for a row that saw no key).
  __device__ __forceinline__ float row_sum(int mt, int hh) const {
    const float x = l[mt][hh] + __shfl_xor_sync(0xffffffffu, l[mt][hh], 1);
    return x + __shfl_xor_sync(0xffffffffu, x, 2);
  }
  __device__ static float natural_lse(float m2, float sum) {
    return sum == 0.0f ? -INFINITY : m2 * 0.693147180559945309f + logf(sum);  // ln(2) m2 + ln(sum)
  }

  /// O = o / l of the warp's rows below seq_q (queries i0 + 16 mt + g and + 8), as bf16 pairs, and
  /// their LSE; a row that saw no key: O = 0, LSE = -inf.
  __device__ __forceinline__ void store(const Problem& p, long long b, long long h, long long i0, bf16* O,
                                        float* lse) const {
    const int lane = threadIdx.x % 32, g = lane / 4, t = lane % 4;
#pragma unroll
    for (int mt = 0; mt < kMt; ++mt)
#pragma unroll
      for (int hh = 0; hh < 2; ++hh) {
        const float sum = row_sum(mt, hh);
        const long long i = i0 + 16 * mt + g + 8 * hh;
        if (i >= p.seq_q) continue;
        const float inv = sum == 0.0f ? 0.0f : 1.0f / sum;
        bf16* out = O + at(p.o, b, i, h) + 2 * t;
#pragma unroll
        for (int db = 0; db < kDb; ++db)
          *reinterpret_cast<unsigned*>(out + 8 * db) =
              pack_bf16(o[mt][db][2 * hh] * inv, o[mt][db][2 * hh + 1] * inv);
        if (lse != nullptr && t == 0) lse[(b * p.heads_q + h) * p.seq_q + i] = natural_lse(m[mt][hh], sum);
      }
  }

 private:
  /// The A fragment of row tile mt, k block kk, from the shared Q tile.
  __device__ __forceinline__ void q_fragment(unsigned (&a)[4], int mt, int kk) const {
    ldmatrix_x4(a, a_lanes.at(qs, 16 * mt, 16 * kk));
  }
};
//! [warp tile]

//! [pipelined shape]
/// The block of the pipelined steps (5 on): WARPS warps of MT tiles of 16 query rows, tiles of
/// KEYS keys, K and V in two stages, Q's fragments in registers or not (QREGS), and MINB blocks
/// per SM asked of the compiler (__launch_bounds__: at most 65536 / (MINB threads) registers a
/// thread). Steps 5 to 7 take step 4's tiles (the defaults); step 8 chooses others per GPU.
template <int D, int MT = 1, int KEYS = 64, int WARPS = 4, bool QREGS = true, int MINB = 1>
struct PipelinedShape {
  static constexpr int kD = D, kMt = MT, kKeys = KEYS, kWarps = WARPS, kRows = 16 * MT * WARPS, kMinBlocks = MINB;
  static constexpr int kThreads = 32 * kWarps, kStages = 2;
  static constexpr bool kAcrossHeads = false;  // the causal blocks' order (QueryTile::nth)
  using QTile = SwizzledTile<kRows, D>;
  using KvTile = SwizzledTile<kKeys, D>;
  using Warp = WarpRows<D, KEYS, MT, QREGS>;
  static constexpr unsigned kSmemBytes = (QTile::kElems + 2 * kStages * KvTile::kElems) * sizeof(bf16);
};
//! [pipelined shape]

/// The plan of a kernel of shape S64 at head_dim 64 or S128 at 128 (null at other head_dims or
/// without 16-byte rows): one block per S::kRows query rows of each head.
template <class S64, class S128>
Plan<RowKernel> shaped_plan(const Problem& p, const bf16* Q, const bf16* K, const bf16* V, const bf16* O,
                            RowKernel k64, RowKernel k128) {
  const bool rows = rows16(Q, p.q) && rows16(K, p.k) && rows16(V, p.v) && rows16(O, p.o);
  const bool d64 = p.head_dim == 64;
  const RowKernel k = !rows ? nullptr : d64 ? k64 : p.head_dim == 128 ? k128 : nullptr;
  return grid_plan(k, 1LL * p.batch * p.heads_q * tiles(p.seq_q, d64 ? S64::kRows : S128::kRows),
                   dim3(d64 ? S64::kThreads : S128::kThreads), d64 ? S64::kSmemBytes : S128::kSmemBytes);
}

}  // namespace smem::attention

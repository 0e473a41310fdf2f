/// \file tc_gemm_sm80.cuh
/// \brief The Ampere kit of the tensor-core GEMM, what steps 2 to 8 share: the layouts of their
/// shared tiles (row-major, padded, XOR-swizzled), the copy of a tile from global into shared
/// memory through registers, with 16-byte accesses where the rows allow them, and the warp's
/// `mma.sync` tile that reads those tiles (`ldmatrix` fragments, `mma.sync`, the accumulators'
/// stores: steps 3 to 8). Step 6's `cp.async` copies are in step 6, the only step that uses them.
#pragma once
#include <cuda_runtime.h>

#include <cstddef>

#include "tc_gemm_common.cuh"

namespace smem::tc_gemm {

/// True when the 16-byte paths may be used for A and B: rows of 16-byte aligned chunks.
inline bool rows16(const bf16* A, int lda, const bf16* B, int ldb) {
  return aligned(A, 16) && aligned(B, 16) && lda % 8 == 0 && ldb % 8 == 0;
}

//! [tile layouts]
/// A shared tile of COLS bf16 per row, each row padded by PAD elements: element (r, c) at
/// r (COLS + PAD) + c. With PAD = 0 the rows of a 64-column tile are 128 bytes, so the 8 rows an
/// `ldmatrix` reads sit in the same 4 banks: an 8-way conflict; PAD = 8 (16 bytes) shifts each row
/// by 4 banks and removes it.
template <int COLS, int PAD>
struct RowMajorTile {
  static constexpr int kLd = COLS + PAD;
  __host__ __device__ static constexpr int offset(int r, int c) { return r * kLd + c; }
};

/// A shared tile of COLS bf16 per row with its 16-byte chunks XOR-swizzled: chunk c / 8 of row r
/// goes to chunk (c / 8) ^ (r % 8). The 8 rows of an `ldmatrix` matrix then land in 8 different
/// 16-byte bank groups without padding, which is the layout of the hardware's 128-byte swizzle.
template <int COLS>
struct SwizzledTile {
  static_assert(COLS % 64 == 0, "rows of whole 128-byte lines");
  static constexpr int kLd = COLS;
  __host__ __device__ static constexpr int offset(int r, int c) { return r * COLS + ((c / 8) ^ (r % 8)) * 8 + c % 8; }
};
//! [tile layouts]

/// The 16-byte chunk (8 bf16) that copy `i` of thread `tid` moves when `threads` threads copy a
/// tile of `cols` columns: consecutive threads take consecutive chunks of a row (coalesced).
__host__ __device__ constexpr int chunk_row(int tid, int i, int threads, int cols) {
  return (tid + i * threads) / (cols / 8);
}
__host__ __device__ constexpr int chunk_col(int tid, int i, int threads, int cols) {
  return (tid + i * threads) % (cols / 8) * 8;
}

/// Copies the ROWS x COLS tile of a row-major bf16 matrix (rows_total x cols_total, ld) whose
/// corner is (r0, c0) into shared memory at `s`, element (r, c) at Layout::offset(r, c), with
/// zeros outside the matrix. Synchronous (through registers): 16-byte loads and stores when
/// kRows16 (16-byte aligned rows), 2-byte ones otherwise. r0 and c0 are multiples of ROWS and COLS,
/// powers of two: r0 + r and c0 + c then fit an int for any corner inside the matrix.
template <int ROWS, int COLS, int kThreads, class Layout, bool kRows16>
__device__ __forceinline__ void load_tile(bf16* s, const bf16* g, int ld, int r0, int c0, int rows_total,
                                          int cols_total) {
  static_assert(ROWS * COLS % (8 * kThreads) == 0, "every thread copies the same number of chunks");
  static_assert((ROWS & (ROWS - 1)) == 0 && (COLS & (COLS - 1)) == 0, "power-of-two tiles: no overflow");
#pragma unroll
  for (int i = 0; i < ROWS * COLS / (8 * kThreads); ++i) {
    const int r = chunk_row(threadIdx.x, i, kThreads, COLS), c = chunk_col(threadIdx.x, i, kThreads, COLS);
    const int gr = r0 + r, gc = c0 + c;
    const bf16* src = g + std::size_t(gr < rows_total ? gr : 0) * ld + gc;
    if (kRows16 && gr < rows_total && gc <= cols_total - 8) {
      *reinterpret_cast<uint4*>(s + Layout::offset(r, c)) = *reinterpret_cast<const uint4*>(src);
    } else {
      alignas(16) bf16 v[8];
#pragma unroll
      for (int j = 0; j < 8; ++j) v[j] = gr < rows_total && gc + j < cols_total ? src[j] : bf16(0.0f);
      *reinterpret_cast<uint4*>(s + Layout::offset(r, c)) = *reinterpret_cast<const uint4*>(v);
    }
  }
}

//! [ptx]
/// ldmatrix.x4: four 8 x 8 bf16 matrices; lane l gives the shared-memory address of row l % 8 of
/// matrix l / 8 (16 bytes each) and receives one 32-bit register of each matrix.
__device__ __forceinline__ void ldmatrix_x4(unsigned (&r)[4], unsigned row) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(row));
}
__device__ __forceinline__ void ldmatrix_x4(unsigned (&r)[4], const bf16* row) {
  ldmatrix_x4(r, smem_u32(row));
}
/// The same, each matrix transposed (a row-major K x N tile read as the column-major B operand).
__device__ __forceinline__ void ldmatrix_x4_trans(unsigned (&r)[4], unsigned row) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(row));
}
__device__ __forceinline__ void ldmatrix_x4_trans(unsigned (&r)[4], const bf16* row) {
  ldmatrix_x4_trans(r, smem_u32(row));
}
/// d += a * b on a 16 x 8 x 16 tile: bf16 A (row) and B (col) fragments, fp32 accumulators.
__device__ __forceinline__ void mma_16816(float (&d)[4], const unsigned (&a)[4], unsigned b0, unsigned b1) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
      "{%0, %1, %2, %3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}
//! [ptx]

//! [warp mma]
/// The 16-byte row that lane `lane` gives to ldmatrix.x4 for a 16 x 16 block: of A (m x k, the
/// four matrices in the order of the mma's A fragment) row lane % 16, column 8 (lane / 16); of B
/// (k x n, read transposed: b0, b1 of two n8 blocks) row lane % 8 + 8 (lane / 8 % 2), column
/// 8 (lane / 16).
__host__ __device__ constexpr int ldsm_a_row(int lane) { return lane % 16; }
__host__ __device__ constexpr int ldsm_a_col(int lane) { return lane / 16 * 8; }
__host__ __device__ constexpr int ldsm_b_row(int lane) { return lane % 8 + lane / 8 % 2 * 8; }
__host__ __device__ constexpr int ldsm_b_col(int lane) { return lane / 16 * 8; }

/// The A fragments (m16 x k16 each) of the warp's MI row blocks at rows wm0 + 16 i, column kk.
template <int MI, class LA>
__device__ __forceinline__ void load_a_frags(unsigned (&a)[MI][4], const bf16* As, int wm0, int kk, int lane) {
#pragma unroll
  for (int i = 0; i < MI; ++i)
    ldmatrix_x4(a[i], As + LA::offset(wm0 + 16 * i + ldsm_a_row(lane), kk + ldsm_a_col(lane)));
}
/// The B fragments (k16 x n8 each) of the warp's NJ column blocks at columns wn0 + 8 j, row kk:
/// one transposed ldmatrix.x4 covers two column blocks.
template <int NJ, class LB>
__device__ __forceinline__ void load_b_frags(unsigned (&b)[NJ][2], const bf16* Bs, int wn0, int kk, int lane) {
  static_assert(NJ % 2 == 0, "column blocks in pairs");
#pragma unroll
  for (int j = 0; j < NJ; j += 2) {
    unsigned r[4];
    ldmatrix_x4_trans(r, Bs + LB::offset(kk + ldsm_b_row(lane), wn0 + 8 * j + ldsm_b_col(lane)));
    b[j][0] = r[0], b[j][1] = r[1], b[j + 1][0] = r[2], b[j + 1][1] = r[3];
  }
}
/// acc[i][j] += a[i] b[j] for the warp's MI x NJ tiles of 16 x 8.
template <int MI, int NJ>
__device__ __forceinline__ void warp_mma(float (&acc)[MI][NJ][4], const unsigned (&a)[MI][4],
                                         const unsigned (&b)[NJ][2]) {
#pragma unroll
  for (int i = 0; i < MI; ++i)
#pragma unroll
    for (int j = 0; j < NJ; ++j) mma_16816(acc[i][j], a[i], b[j][0], b[j][1]);
}
/// The low (half 0) or high (half 1) bf16 of a pair packed in 32 bits.
__device__ __forceinline__ bf16 bf16_half(unsigned pair, int half) {
  return __ushort_as_bfloat16(static_cast<unsigned short>(pair >> (16 * half)));
}

/// Transposes 32-bit values across the four lanes of a quad: lane q's x[k] becomes lane k's x[q].
/// Two butterfly exchanges, each trading two of the four values with the lane 2 or 1 apart.
__device__ __forceinline__ void quad_transpose(unsigned (&x)[4], int lane) {
  const bool hi2 = lane & 2, hi1 = lane & 1;
  unsigned r0 = __shfl_xor_sync(~0u, hi2 ? x[0] : x[2], 2), r1 = __shfl_xor_sync(~0u, hi2 ? x[1] : x[3], 2);
  if (hi2) x[0] = r0, x[1] = r1;
  else x[2] = r0, x[3] = r1;
  r0 = __shfl_xor_sync(~0u, hi1 ? x[0] : x[1], 1), r1 = __shfl_xor_sync(~0u, hi1 ? x[2] : x[3], 1);
  if (hi1) x[0] = r0, x[2] = r1;
  else x[1] = r0, x[3] = r1;
}

/// The epilogue of the warp's accumulators: lane l holds rows l / 4 and l / 4 + 8 and columns
/// 2 (l % 4) and 2 (l % 4) + 1 of each 16 x 8 tile. Each value is finished in fp32 and rounded
/// to bf16 once, two per register; then the four lanes of a quad trade those pairs across four
/// tiles side by side (quad_transpose), so that each lane holds 8 consecutive columns of a row:
/// one 16-byte store, and a warp's store fills whole 32-byte sectors of 8 rows, where one store per
/// element wrote 8 bytes of each sector and took 8 times as many instructions.
template <int MI, int NJ>
__device__ __forceinline__ void store_acc(const float (&acc)[MI][NJ][4], int row0, int col0, int lane, int M, int N,
                                          float alpha, float beta, const bf16* C, int ldc, bf16* D, int ldd) {
  static_assert(NJ % 4 == 0, "column blocks in fours: a quad's 8-column stores");
  const bool d_rows16 = ldd % 8 == 0 && aligned(D, 16);  // D's rows take 16-byte stores
#pragma unroll
  for (int i = 0; i < MI; ++i)
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int r = row0 + 16 * i + lane / 4 + 8 * h;
#pragma unroll
      for (int g = 0; g < NJ / 4; ++g) {
        unsigned x[4];  // columns 8 (4 g + k) + 2 (lane % 4), + 1 of row r, k = 0 .. 3
#pragma unroll
        for (int k = 0; k < 4; ++k)
          x[k] = finish_pair(acc[i][4 * g + k][2 * h], acc[i][4 * g + k][2 * h + 1], r,
                             col0 + 8 * (4 * g + k) + lane % 4 * 2, M, N, alpha, beta, C, ldc);
        quad_transpose(x, lane);
        const int c = col0 + 8 * (4 * g + lane % 4);  // now columns c .. c + 7 of row r
        if (r >= M) continue;
        bf16* d = D + std::size_t(r) * ldd + c;
        if (d_rows16 && N - c >= 8) {
          *reinterpret_cast<uint4*>(d) = make_uint4(x[0], x[1], x[2], x[3]);
        } else {
#pragma unroll
          for (int e = 0; e < 8; ++e)
            if (c + e < N) d[e] = bf16_half(x[e / 2], e % 2);
        }
      }
    }
}
//! [warp mma]

}  // namespace smem::tc_gemm

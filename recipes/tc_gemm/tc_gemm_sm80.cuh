/// \file tc_gemm_sm80.cuh
/// \brief The Ampere kit of the tensor-core GEMM, what steps 2 to 7 share: the layouts of their
/// shared tiles (row-major, padded, XOR-swizzled) and the copy of a tile from global into shared
/// memory through registers, with 16-byte accesses where the rows allow them. The warp's
/// `mma.sync` tile that reads those tiles is in tc_gemm_common.cuh, because Hopper's step 8 uses it
/// too; step 6's `cp.async` copies are in step 6, the only step that uses them.
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

}  // namespace smem::tc_gemm

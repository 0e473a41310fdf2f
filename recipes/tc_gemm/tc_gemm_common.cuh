/// \file tc_gemm_common.cuh
/// \brief What every tensor-core GEMM step shares: the launcher contract (argument checks on the
/// host before any CUDA call, the `D = beta * C` kernel for the degenerate cases), the launch
/// plan, the epilogue, the global-to-shared tile copies and the PTX wrappers of steps 3 to 7
/// (`ldmatrix`, `mma.sync` and `cp.async`), and Hopper's for steps 8 to 14 (tensor maps, TMA,
/// mbarriers, `wgmma`, `setmaxnreg`, the TMA-store epilogue).
///
/// Every step computes, row-major, D = alpha * A * B + beta * C with bf16 A (M x K, lda >= K),
/// B (K x N, ldb >= N), C and D (M x N, ldc >= N, ldd >= N), fp32 accumulation and fp32 alpha
/// and beta, through a launcher
/// \code
/// cudaError_t <step>(int M, int N, int K, float alpha, const bf16* A, int lda, const bf16* B, int ldb,
///                    float beta, const bf16* C, int ldc, bf16* D, int ldd, cudaStream_t stream = nullptr);
/// \endcode
/// that checks its arguments before any CUDA call (check_args()), returns
/// `cudaErrorInvalidValue` with D untouched for bad ones, never allocates or synchronizes, and
/// returns `cudaGetLastError()` after the launch. D may be C itself (same leading dimension); C is
/// not read when beta == 0 (it may then be null). The 16-byte paths need 16-byte aligned rows
/// (pointers 16-byte aligned, leading dimensions multiples of 8); in steps 1 to 7 other operands
/// take the element-wise path of the same kernel, steps 8 to 14 (whose tensor maps need such rows)
/// return `cudaErrorInvalidValue` for them.
///
/// Accepted sizes: every M, N, K from 0 to 2^31 - 1 with M N <= 2^40 (kMaxOutputElements: a D of
/// 2 TiB, more than any GPU holds); a larger D is refused. Steps 8 to 14 also need lda (>= K) and
/// ldb (>= N), and from step 12 on ldd, to be multiples of 8, so there N and K are at most
/// 2^31 - 8. Steps 13 and 14 need no setup; prepare_cluster_order() (step 13), called once per
/// device before capturing or timing them, lets them walk their clusters by GPU processing
/// cluster: the same D, faster.
#pragma once
#include <cuda.h>
#include <cudaTypedefs.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <type_traits>

namespace smem::tc_gemm {

using bf16 = __nv_bfloat16;

/// What a launcher does with its arguments.
enum class Args {
  launch,      ///< run the step's kernel
  empty,       ///< M == 0 or N == 0: nothing to do, return cudaSuccess
  scale_only,  ///< K == 0 or alpha == 0: D = beta * C (launch scale_kernel)
  invalid      ///< return cudaErrorInvalidValue, touch nothing
};

/// First and one-past-last byte of a rows x cols row-major bf16 matrix with leading dimension ld.
struct Span {
  std::uintptr_t lo, hi;
};
inline Span span_of(const bf16* p, int rows, int cols, int ld) {
  const auto lo = reinterpret_cast<std::uintptr_t>(p);
  return {lo, lo + (std::size_t(rows - 1) * ld + cols) * sizeof(bf16)};
}
inline bool overlap(Span a, Span b) { return a.lo < b.hi && b.lo < a.hi; }
__host__ __device__ inline bool aligned(const void* p, std::size_t bytes) {
  return reinterpret_cast<std::uintptr_t>(p) % bytes == 0;
}

/// The most elements D may have, M N <= 2^40: every step's tile count and tile index then fit an
/// int with room to spare (at most 2^30 + 2^26 tiles of 32 x 32).
inline constexpr long long kMaxOutputElements = 1LL << 40;

//! [contract]
/// Checks the arguments of D = alpha * A * B + beta * C: negative sizes, M N above
/// kMaxOutputElements, leading dimensions below the widths, null pointers where a matrix is read or
/// written, pointers not aligned to a bf16, and D overlapping A or B, or overlapping C other than
/// being C itself, are invalid.
inline Args check_args(int M, int N, int K, float alpha, const bf16* A, int lda, const bf16* B, int ldb, float beta,
                       const bf16* C, int ldc, const bf16* D, int ldd) {
  if (M < 0 || N < 0 || K < 0 || static_cast<long long>(M) * N > kMaxOutputElements) return Args::invalid;
  const int n1 = N > 1 ? N : 1;
  if (lda < (K > 1 ? K : 1) || ldb < n1 || ldc < n1 || ldd < n1) return Args::invalid;
  if (M == 0 || N == 0) return Args::empty;
  const bool reads_c = beta != 0.0f;
  if (D == nullptr || (reads_c && C == nullptr)) return Args::invalid;
  if (!aligned(D, 2) || (reads_c && !aligned(C, 2))) return Args::invalid;
  const Span d = span_of(D, M, N, ldd);
  if (reads_c && overlap(d, span_of(C, M, N, ldc)) && !(C == D && ldc == ldd)) return Args::invalid;
  if (K == 0 || alpha == 0.0f) return Args::scale_only;
  if (A == nullptr || B == nullptr || !aligned(A, 2) || !aligned(B, 2)) return Args::invalid;
  if (overlap(d, span_of(A, M, K, lda)) || overlap(d, span_of(B, K, N, ldb))) return Args::invalid;
  return Args::launch;
}
//! [contract]

/// D = beta * C for an M x N matrix; beta == 0 writes zeros without reading C (a NaN in C does
/// not survive, as in BLAS).
template <class T>
__global__ void scale_kernel(int M, int N, float beta, const T* C, int ldc, T* D, int ldd) {
  const std::size_t total = std::size_t(M) * N;
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < total;
       i += std::size_t(gridDim.x) * blockDim.x) {
    const std::size_t r = i / N, c = i % N;
    D[r * ldd + c] = beta == 0.0f ? T(0.0f) : T(beta * float(C[r * ldc + c]));
  }
}

/// What a launcher returns for a non-launch Args: success for empty, the scale for scale_only,
/// cudaErrorInvalidValue for invalid.
inline cudaError_t finish_without_launch(Args a, int M, int N, float beta, const bf16* C, int ldc, bf16* D, int ldd,
                                         cudaStream_t stream) {
  if (a == Args::invalid) return cudaErrorInvalidValue;
  if (a == Args::empty) return cudaSuccess;
  const std::size_t total = std::size_t(M) * N;
  const unsigned blocks = unsigned(total < 4096u * 256u ? (total + 255) / 256 : 4096u);
  scale_kernel<bf16><<<blocks, 256, 0, stream>>>(M, N, beta, C, ldc, D, ldd);
  return cudaGetLastError();
}

/// Number of `tile`-sized tiles covering `n` (n >= 0, tile >= 1), in 64 bits from the start: n + tile
/// in int would wrap for n near 2^31. In a kernel, int(tiles(n, tile)) is a tile count that fits an int.
__host__ __device__ constexpr long long tiles(int n, int tile) {
  return (static_cast<long long>(n) + tile - 1) / tile;
}

//! [plan]
/// What a launcher launches: the kernel, its grid and block, and its dynamic shared memory.
/// The benchmark reads the same plan, so what it reports is what ran. A null kernel: the step
/// cannot run this problem (the launcher returns cudaErrorInvalidValue).
template <class Kernel>
struct Plan {
  Kernel kernel;
  dim3 grid, block;
  unsigned smem;
  Plan<const void*> erased() const { return {reinterpret_cast<const void*>(kernel), grid, block, smem}; }
};

/// A plan over a 1D grid of `blocks` blocks (the tiles of D), null beyond 2^31 - 1 blocks.
template <class Kernel>
Plan<Kernel> grid_plan(Kernel kernel, long long blocks, dim3 block, unsigned smem = 0) {
  return {blocks <= 0x7fffffffLL ? kernel : nullptr, dim3(unsigned(blocks)), block, smem};
}

/// Launches a plan with the kernel's arguments: cudaErrorInvalidValue for a null kernel; above
/// 48 KB of dynamic shared memory the kernel opts in first (per device, cheap to repeat).
template <class Kernel, class... A>
cudaError_t launch(const Plan<Kernel>& p, cudaStream_t stream, A... args) {
  if (p.kernel == nullptr) return cudaErrorInvalidValue;
  if (p.smem > 48u * 1024u)
    if (cudaError_t e = cudaFuncSetAttribute(p.kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(p.smem));
        e != cudaSuccess)
      return e;
  p.kernel<<<p.grid, p.block, p.smem, stream>>>(args...);
  return cudaGetLastError();
}
//! [plan]

/// The kernel of every step: (M, N, K, alpha, A, lda, B, ldb, beta, C, ldc, D, ldd).
using TcKernel = void (*)(int, int, int, float, const bf16*, int, const bf16*, int, float, const bf16*, int, bf16*,
                          int);

/// True when the 16-byte paths may be used for A and B: rows of 16-byte aligned chunks.
inline bool rows16(const bf16* A, int lda, const bf16* B, int ldb) {
  return aligned(A, 16) && aligned(B, 16) && lda % 8 == 0 && ldb % 8 == 0;
}

/// The tile of D that block blockIdx.x owns in a 1D grid laid row by row over the tiles of D.
struct TileCoord {
  int m, n;
};
__device__ __forceinline__ TileCoord row_major_tile(int tiles_n) {
  return {int(blockIdx.x / unsigned(tiles_n)), int(blockIdx.x % unsigned(tiles_n))};
}

/// Tile q when the tiles_m x tiles_n tiles are walked in groups of `group` tile-rows, column by
/// column inside a group: the blocks that run at the same time share a few row-panels of A and
/// column-panels of B, which stay in L2, instead of sweeping all of B for every row of tiles.
__host__ __device__ __forceinline__ TileCoord grouped_tile(int q, int group, int tiles_m, int tiles_n) {
  const int first = q / (group * tiles_n) * group;
  const int rows = tiles_m - first < group ? tiles_m - first : group;
  const int in_group = q % (group * tiles_n);
  return {first + in_group % rows, in_group / rows};
}

//! [epilogue]
/// D[r][c] = alpha * acc + beta * C[r][c] in fp32, rounded to bf16 once; C is not read when
/// beta == 0. Out-of-range elements are skipped.
__device__ __forceinline__ void store_d(int r, int c, float acc, int M, int N, float alpha, float beta, const bf16* C,
                                        int ldc, bf16* D, int ldd) {
  if (r >= M || c >= N) return;
  float v = alpha * acc;
  if (beta != 0.0f) v += beta * __bfloat162float(C[std::size_t(r) * ldc + c]);
  D[std::size_t(r) * ldd + c] = __float2bfloat16_rn(v);
}

/// Columns c and c + 1 of row r the same way, rounded to a bf16 pair packed in 32 bits (column c in
/// the low half); C is read only when beta != 0 and only inside M x N.
__device__ __forceinline__ unsigned finish_pair(float acc0, float acc1, int r, int c, int M, int N, float alpha,
                                                float beta, const bf16* C, int ldc) {
  float v0 = alpha * acc0, v1 = alpha * acc1;
  if (beta != 0.0f && r < M) {
    if (c < N) v0 += beta * __bfloat162float(C[std::size_t(r) * ldc + c]);
    if (c + 1 < N) v1 += beta * __bfloat162float(C[std::size_t(r) * ldc + c + 1]);
  }
  const __nv_bfloat162 b = __floats2bfloat162_rn(v0, v1);
  return *reinterpret_cast<const unsigned*>(&b);
}
//! [epilogue]

// ---- Steps 2 to 7: tiles of A and B in shared memory. ----

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

/// The same copy with `cp.async` (16-byte aligned rows only): no registers, completion by commit
/// groups; what lies past the matrix is zero-filled by the copy's source size. The corner as above.
template <int ROWS, int COLS, int kThreads, class Layout>
__device__ __forceinline__ void copy_tile_async(bf16* s, const bf16* g, int ld, int r0, int c0, int rows_total,
                                                int cols_total);

// ---- Steps 3 to 7: PTX wrappers (sm_80 and later). ----

//! [ptx]
/// The shared-memory address (state space .shared) of a generic pointer into shared memory.
__device__ __forceinline__ unsigned smem_u32(const void* p) { return unsigned(__cvta_generic_to_shared(p)); }
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
/// 16-byte copy global -> shared; bytes past src_bytes (0 to 16) are zero-filled.
__device__ __forceinline__ void cp_async_16(bf16* dst, const bf16* src, int src_bytes) {
  const unsigned s = unsigned(__cvta_generic_to_shared(dst));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(s), "l"(src), "r"(src_bytes));
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::); }
template <int kPending>
__device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(kPending));
}
//! [ptx]

template <int ROWS, int COLS, int kThreads, class Layout>
__device__ __forceinline__ void copy_tile_async(bf16* s, const bf16* g, int ld, int r0, int c0, int rows_total,
                                                int cols_total) {
  static_assert(ROWS * COLS % (8 * kThreads) == 0, "every thread copies the same number of chunks");
  static_assert((ROWS & (ROWS - 1)) == 0 && (COLS & (COLS - 1)) == 0, "power-of-two tiles: no overflow");
#pragma unroll
  for (int i = 0; i < ROWS * COLS / (8 * kThreads); ++i) {
    const int r = chunk_row(threadIdx.x, i, kThreads, COLS), c = chunk_col(threadIdx.x, i, kThreads, COLS);
    const int gr = r0 + r, gc = c0 + c;
    const int left = cols_total - gc;  // elements of this row from gc on
    const int bytes = gr < rows_total && left > 0 ? (left >= 8 ? 16 : 2 * left) : 0;
    cp_async_16(s + Layout::offset(r, c), bytes ? g + std::size_t(gr) * ld + gc : g, bytes);
  }
}

/// copy_tile_async for a tile wholly inside the matrix: no bounds, no zero fill. `g` and `s`
/// point at the thread's first chunk (copy 0) in global and shared memory; copy i is kRowsPerPass
/// rows further in both, which in a swizzled tile is the same chunk column because the swizzle
/// repeats every 8 rows. Two address adds per 16 bytes instead of a bounds check.
template <int ROWS, int COLS, int kThreads, class Layout>
__device__ __forceinline__ void copy_tile_async_interior(bf16* s, const bf16* g, int ld) {
  constexpr int kRowsPerPass = kThreads * 8 / COLS;
  static_assert(kRowsPerPass % 8 == 0 && ROWS % kRowsPerPass == 0, "whole passes of 8-row swizzle periods");
#pragma unroll
  for (int i = 0; i < ROWS / kRowsPerPass; ++i)
    cp_async_16(s + i * kRowsPerPass * Layout::kLd, g + std::size_t(i) * kRowsPerPass * ld, 16);
}

// ---- Steps 3 to 7: the warp's fragments and its mma tile. ----

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
  for (int i = 0; i < MI; ++i) ldmatrix_x4(a[i], As + LA::offset(wm0 + 16 * i + ldsm_a_row(lane), kk + ldsm_a_col(lane)));
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

// ---- Steps 8 to 14: Hopper (sm_90a): tensor maps, TMA, mbarriers, wgmma. ----

//! [tma tile]
/// The layout TMA writes for a ROWS x COLS bf16 tile with the 128-byte swizzle: boxes of 64 columns
/// (128 bytes, the swizzle's span), one panel of ROWS x 64 after the other, and inside a panel step
/// 5's XOR: chunk c / 8 of row r at chunk (c / 8) ^ (r % 8). The tile must start at a 1024-byte
/// boundary: the hardware takes r % 8 from the address bits, not from the row.
template <int ROWS, int COLS>
struct TmaTile {
  static_assert(COLS % 64 == 0, "whole 64-column panels");
  static constexpr int kPanel = ROWS * 64;  ///< elements from one panel to the next
  __host__ __device__ static constexpr int offset(int r, int c) {
    return c / 64 * kPanel + r * 64 + ((c % 64 / 8) ^ (r % 8)) * 8 + c % 8;
  }
};
//! [tma tile]

//! [tensor map]
/// True when TMA may read or write the rows of a matrix: a 16-byte aligned base and a leading
/// dimension that is a multiple of 16 bytes (the tensor map's stride rule). The Hopper steps return
/// cudaErrorInvalidValue for an A or B (or D, for the TMA store) that breaks it.
inline bool tma_rows(const bf16* p, int ld) { return aligned(p, 16) && ld % 8 == 0; }

/// cuTensorMapEncodeTiled, taken from the driver through the runtime once (no -lcuda needed); null
/// if the driver does not have it.
inline PFN_cuTensorMapEncodeTiled_v12000 tensor_map_encoder() {
  static const PFN_cuTensorMapEncodeTiled_v12000 fn = [] {
    void* f = nullptr;
    cudaDriverEntryPointQueryResult found{};
    if (cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &f, 12000, cudaEnableDefault, &found) !=
            cudaSuccess ||
        found != cudaDriverEntryPointSuccess)
      f = nullptr;
    return reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(f);
  }();
  return fn;
}

/// The tensor map of a rows x cols row-major bf16 matrix (leading dimension ld) read or written in
/// boxes of box_rows x 64 with the 128-byte swizzle (TmaTile's panels). Boxes that reach past the
/// matrix are zero-filled on loads; stores clip rows past the matrix, but a row only at 16-byte
/// chunks (see store_tile_tma). False if the driver refuses it.
inline bool make_tile_map(CUtensorMap* map, const bf16* g, int rows, int cols, int ld, int box_rows) {
  const PFN_cuTensorMapEncodeTiled_v12000 encode = tensor_map_encoder();
  if (encode == nullptr) return false;
  const cuuint64_t dims[2] = {cuuint64_t(cols), cuuint64_t(rows)};
  const cuuint64_t strides[1] = {cuuint64_t(ld) * sizeof(bf16)};
  const cuuint32_t box[2] = {64, cuuint32_t(box_rows)}, unit[2] = {1, 1};
  return encode(map, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 2, const_cast<bf16*>(g), dims, strides, box, unit,
                CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) == CUDA_SUCCESS;
}
//! [tensor map]

namespace detail {

/// What decides the best shape on a GPU.
struct GpuKey {
  int cc, sms, smem_per_sm, regs_per_sm;
};

/// The most devices whose values the launchers keep (made_once).
constexpr int kMaxDevices = 64;

/// make()'s value for `slot` (0 to kSlots - 1), made by the first caller and kept: what a launcher
/// reads once per device. A caller that comes while another is making it waits for it.
template <int kSlots, class T, class Make>
const T& made_once(int slot, Make make) {
  static T values[kSlots];
  static std::atomic<int> state[kSlots];  // 0 not made, 1 being made, 2 ready
  int expected = 0;
  if (state[slot].compare_exchange_strong(expected, 1)) {
    values[slot] = make();
    state[slot].store(2);
  }
  while (state[slot].load() != 2) {
  }
  return values[slot];
}

/// The current device's GpuKey, read once per device (all zero on error).
inline GpuKey gpu_key() {
  int dev = 0;
  if (cudaGetDevice(&dev) != cudaSuccess || dev < 0 || dev >= kMaxDevices) return {};
  return made_once<kMaxDevices, GpuKey>(dev, [dev] {
    int major = 0, minor = 0, sms = 0, smem = 0, regs = 0;
    if (cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev) == cudaSuccess &&
        cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev) == cudaSuccess &&
        cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev) == cudaSuccess &&
        cudaDeviceGetAttribute(&smem, cudaDevAttrMaxSharedMemoryPerMultiprocessor, dev) == cudaSuccess &&
        cudaDeviceGetAttribute(&regs, cudaDevAttrMaxRegistersPerMultiprocessor, dev) == cudaSuccess)
      return GpuKey{major * 10 + minor, sms, smem, regs};
    return GpuKey{};
  });
}

}  // namespace detail

/// The kernel of steps 8 to 11: (a_map, b_map, M, N, K, alpha, beta, C, ldc, D, ldd).
using TmaKernel = void (*)(const CUtensorMap, const CUtensorMap, int, int, int, float, float, const bf16*, int, bf16*,
                           int);
/// The kernel of steps 12 and later, which store D with TMA: (a_map, b_map, d_map, M, N, K, alpha,
/// beta, C, ldc, D, ldd); D itself for the columns TMA cannot store alone (see store_tile_tma).
using TmaStoreKernel = void (*)(const CUtensorMap, const CUtensorMap, const CUtensorMap, int, int, int, float, float,
                                const bf16*, int, bf16*, int);
struct ClusterOrder;
/// The kernel of steps 13 and 14: a TmaStoreKernel that also takes the order of its clusters by GPU
/// processing cluster (ClusterOrder, step 13: cluster_order).
using ClusterKernel = void (*)(const CUtensorMap, const CUtensorMap, const CUtensorMap, int, int, int, float, float,
                               const bf16*, int, bf16*, int, const ClusterOrder);

/// A Hopper step's launch: the argument checks and the tensor maps' row rule (tma_rows: A, B and,
/// for the kernels that store with TMA, D), both before any CUDA call; then the tensor maps of A
/// (boxes of a_rows x 64), B (boxes of b_rows x 64) and D (boxes of 64 x 64), then the plan's
/// kernel, a ClusterKernel with its clusters' order (cluster_order, step 13).
/// cudaErrorInvalidValue when the rows break the rule, the plan is null or the driver refuses a map.
template <class Kernel>
cudaError_t launch_tma(Plan<Kernel> (*plan_of)(int, int, int, const bf16*, int, const bf16*, int, const bf16*, int,
                                               const bf16*, int),
                       int a_rows, int b_rows, int M, int N, int K, float alpha, const bf16* A, int lda, const bf16* B,
                       int ldb, float beta, const bf16* C, int ldc, bf16* D, int ldd, cudaStream_t stream) {
  if (Args a = check_args(M, N, K, alpha, A, lda, B, ldb, beta, C, ldc, D, ldd); a != Args::launch)
    return finish_without_launch(a, M, N, beta, C, ldc, D, ldd, stream);
  if (!tma_rows(A, lda) || !tma_rows(B, ldb) || (!std::is_same_v<Kernel, TmaKernel> && !tma_rows(D, ldd)))
    return cudaErrorInvalidValue;
  const Plan<Kernel> p = plan_of(M, N, K, A, lda, B, ldb, C, ldc, D, ldd);
  CUtensorMap a_map, b_map;
  if (p.kernel == nullptr || !make_tile_map(&a_map, A, M, K, lda, a_rows) ||
      !make_tile_map(&b_map, B, K, N, ldb, b_rows))
    return cudaErrorInvalidValue;
  if constexpr (std::is_same_v<Kernel, TmaKernel>) {
    return launch(p, stream, a_map, b_map, M, N, K, alpha, beta, C, ldc, D, ldd);
  } else {
    CUtensorMap d_map;
    if (!make_tile_map(&d_map, D, M, N, ldd, 64)) return cudaErrorInvalidValue;
    if constexpr (std::is_same_v<Kernel, ClusterKernel>)
      return launch(p, stream, a_map, b_map, d_map, M, N, K, alpha, beta, C, ldc, D, ldd, cluster_order(p));
    else
      return launch(p, stream, a_map, b_map, d_map, M, N, K, alpha, beta, C, ldc, D, ldd);
  }
}

//! [mbarrier]

/// The first 1024-byte boundary at or after p in shared memory: where the swizzled tiles start (the
/// kernels ask for 1024 bytes more dynamic shared memory than their tiles need).
__device__ __forceinline__ unsigned char* align_1024(unsigned char* p) {
  return p + (1024 - smem_u32(p) % 1024) % 1024;
}

/// An mbarrier that completes a phase when `count` threads arrived and every byte announced with
/// expect_tx has landed.
__device__ __forceinline__ void mbar_init(std::uint64_t* bar, unsigned count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(smem_u32(bar)), "r"(count));
}
/// Makes the initialized barriers visible to the async proxy (TMA) and to the cluster.
__device__ __forceinline__ void fence_barrier_init() {
  asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
}
/// Arrives once and announces `bytes` more to land on this phase.
__device__ __forceinline__ void mbar_arrive_expect_tx(std::uint64_t* bar, unsigned bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(smem_u32(bar)), "r"(bytes) : "memory");
}
__device__ __forceinline__ void mbar_arrive(std::uint64_t* bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(smem_u32(bar)) : "memory");
}
/// Waits until the phase of parity `parity` has completed.
__device__ __forceinline__ void mbar_wait(std::uint64_t* bar, unsigned parity) {
  unsigned done = 0;
  do {
    asm volatile(
        "{\n.reg .pred p;\nmbarrier.try_wait.parity.shared::cta.b64 "
        "p, [%1], %2;\nselp.u32 %0, 1, 0, p;\n}\n"
        : "=r"(done)
        : "r"(smem_u32(bar)), "r"(parity)
        : "memory");
  } while (!done);
}
//! [mbarrier]

//! [tma]
/// TMA: the box of `map` whose corner is (column c, row r) into shared memory at dst; its bytes
/// complete_tx on `bar`.
__device__ __forceinline__ void tma_load(bf16* dst, const CUtensorMap* map, int c, int r, std::uint64_t* bar) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_"
      "tx::bytes [%0], [%1, {%2, %3}], [%4];\n" ::"r"(smem_u32(dst)),
      "l"(map), "r"(c), "r"(r), "r"(smem_u32(bar))
      : "memory");
}
/// The same box written to the same offset in the shared memory of every block of the cluster in
/// `mask`, completing on the barrier at the same offset in each.
__device__ __forceinline__ void tma_load_multicast(bf16* dst, const CUtensorMap* map, int c, int r, std::uint64_t* bar,
                                                   std::uint16_t mask) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::"
      "complete_tx::bytes.multicast::cluster"
      " [%0], [%1, {%2, %3}], [%4], %5;\n" ::"r"(smem_u32(dst)),
      "l"(map), "r"(c), "r"(r), "r"(smem_u32(bar)), "h"(mask)
      : "memory");
}
/// TMA store of a box from shared memory; the part past the matrix is not written.
__device__ __forceinline__ void tma_store(const CUtensorMap* map, int c, int r, const bf16* src) {
  asm volatile(
      "cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group "
      "[%0, {%1, %2}], [%3];\n" ::"l"(map),
      "r"(c), "r"(r), "r"(smem_u32(src))
      : "memory");
}
__device__ __forceinline__ void tma_store_commit() { asm volatile("cp.async.bulk.commit_group;\n" ::: "memory"); }
/// Waits until all but the kPending most recent committed stores have read their shared memory
/// (which may then be overwritten).
template <int kPending>
__device__ __forceinline__ void tma_store_wait_read() {
  asm volatile("cp.async.bulk.wait_group.read %0;\n" ::"n"(kPending) : "memory");
}
/// Orders this thread's shared-memory writes before later async-proxy (TMA) reads of them.
__device__ __forceinline__ void fence_proxy_async() { asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory"); }
//! [tma]

//! [wgmma]
/// The shared-memory descriptor of a 128-byte-swizzled operand tile at s: start address, leading
/// and stride byte offsets (in 16-byte units), swizzle mode 1 (128 bytes). A K-major tile (A: rows
/// of 64 k) uses only the stride, 1024 bytes from one 8-row group to the next; an MN-major tile (B:
/// rows of 64 n, TmaTile's panels) steps by the leading offset from one 64-column panel to the next
/// and by 1024 bytes from one group of 8 k to the next.
__device__ __forceinline__ std::uint64_t sw128_desc(const bf16* s, unsigned leading_bytes, unsigned stride_bytes) {
  return std::uint64_t(smem_u32(s) >> 4 & 0x3FFF) | std::uint64_t(leading_bytes >> 4 & 0x3FFF) << 16 |
         std::uint64_t(stride_bytes >> 4 & 0x3FFF) << 32 | std::uint64_t(1) << 62;
}
//! [tma stage]
/// One pipeline stage of a BM x BN x BK block tile as TMA fills it: A's tile (one box of BM rows by
/// 64 k) and then B's (BN / 64 boxes of BK rows by 64 columns), in TmaTile layouts.
template <int BM, int BN, int BK>
struct TmaStage {
  static_assert(BK == 64, "a row of A's tile is one 128-byte swizzle span");
  static_assert(BM % 64 == 0 && BM <= 256 && BN % 64 == 0, "whole wgmma blocks, boxes of at most 256 rows");
  using LA = TmaTile<BM, BK>;
  using LB = TmaTile<BK, BN>;
  static constexpr int kAElems = BM * BK, kElems = kAElems + BK * BN;
  static constexpr unsigned kBytes = kElems * sizeof(bf16);
  /// Window kt of the block tile at (m0, n0) into the stage at s, its bytes announced on bar (one
  /// thread issues it).
  __device__ static void load(bf16* s, const CUtensorMap* a_map, const CUtensorMap* b_map, int m0, int n0, int kt,
                              std::uint64_t* bar) {
    mbar_arrive_expect_tx(bar, kBytes);
    tma_load(s, a_map, kt * BK, m0, bar);
#pragma unroll
    for (int p = 0; p < BN / 64; ++p) tma_load(s + kAElems + p * LB::kPanel, b_map, n0 + 64 * p, kt * BK, bar);
  }
};
//! [tma stage]

//! [wgmma descriptors]
/// The descriptors of the k16 slice at column kk of an A tile (K-major, rows of 64 k: 1024 bytes
/// per 8 rows; inside the 128-byte swizzle a k step is a 32-byte move of the start address) and at
/// row kk of a B tile (MN-major, LB's panels: kPanel elements from one 64-column panel to the next,
/// 1024 bytes per 8 rows of k).
template <class LA>
__device__ __forceinline__ std::uint64_t a_desc(const bf16* As, int row, int kk) {
  return sw128_desc(As + LA::offset(row, 0) + kk, 16, 1024);
}
template <class LB>
__device__ __forceinline__ std::uint64_t b_desc(const bf16* Bs, int kk) {
  return sw128_desc(Bs + LB::offset(kk, 0), LB::kPanel * sizeof(bf16), 1024);
}
/// The descriptors of every stage of a ring of S's stages at `smem`, from a pair built once. A
/// descriptor's low 32 bits hold the start address in 16-byte units (a 14-bit field, and the ring
/// lies in the block's shared memory, below 256 KiB), so the operand of another stage, row block
/// or k slice is one 32-bit add away; built from its address each time (a_desc, b_desc), every
/// descriptor is a chain of shifts, masks and ors that the consumer warps issue between wgmma
/// groups.
template <class S>
struct RingDescs {
  std::uint64_t a0, b0;  ///< stage 0: A at row 0, k 0; B at k 0
  __device__ explicit RingDescs(const bf16* smem)
      : a0(a_desc<typename S::LA>(smem, 0, 0)), b0(b_desc<typename S::LB>(smem + S::kAElems, 0)) {}
  __device__ std::uint64_t a(int s, int row, int kk) const {
    return advance(a0, s * S::kBytes + (S::LA::offset(row, 0) + kk) * sizeof(bf16));
  }
  __device__ std::uint64_t b(int s, int kk) const {
    return advance(b0, s * S::kBytes + S::LB::offset(kk, 0) * sizeof(bf16));
  }
  __device__ static std::uint64_t advance(std::uint64_t d, unsigned bytes) {
    return (d >> 32 << 32) | (unsigned(d) + bytes / 16);
  }
};
//! [wgmma descriptors]

__device__ __forceinline__ void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); }
__device__ __forceinline__ void wgmma_commit() { asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory"); }
/// Waits until at most kPending committed wgmma groups of this warpgroup are still running.
template <int kPending>
__device__ __forceinline__ void wgmma_wait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(kPending) : "memory");
}
/// Keeps the compiler from moving accumulator reads or writes across wgmma_fence/wgmma_wait.
template <int N>
__device__ __forceinline__ void fence_acc(float (&d)[N]) {
#pragma unroll
  for (int i = 0; i < N; ++i) asm volatile("" : "+f"(d[i])::"memory");
}

#define SMEM_ACC8(i)                                                                                              \
  "+f"(d[i + 0]), "+f"(d[i + 1]), "+f"(d[i + 2]), "+f"(d[i + 3]), "+f"(d[i + 4]), "+f"(d[i + 5]), "+f"(d[i + 6]), \
      "+f"(d[i + 7])
/// d[64] = A (64 x 16) * B (16 x 128) + (accumulate ? d : 0), one warpgroup.
__device__ __forceinline__ void wgmma_m64n128k16(float (&d)[64], std::uint64_t a, std::uint64_t b, bool accumulate) {
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 {"
      "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
      "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, "
      "%30, %31, "
      "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, "
      "%46, %47, "
      "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, "
      "%62, %63"
      "}, %64, %65, p, 1, 1, 0, 1;\n}\n"
      : SMEM_ACC8(0), SMEM_ACC8(8), SMEM_ACC8(16), SMEM_ACC8(24), SMEM_ACC8(32), SMEM_ACC8(40), SMEM_ACC8(48),
        SMEM_ACC8(56)
      : "l"(a), "l"(b), "r"(int(accumulate)));
}

/// d[128] = A (64 x 16) * B (16 x 256) + (accumulate ? d : 0), one warpgroup.
__device__ __forceinline__ void wgmma_m64n256k16(float (&d)[128], std::uint64_t a, std::uint64_t b, bool accumulate) {
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %130, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16 {"
      "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
      "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, "
      "%30, %31, "
      "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, "
      "%46, %47, "
      "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, "
      "%62, %63, "
      "%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, "
      "%78, %79, "
      "%80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, "
      "%94, %95, "
      "%96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, "
      "%108, %109, %110, %111, "
      "%112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, "
      "%124, %125, %126, %127"
      "}, %128, %129, p, 1, 1, 0, 1;\n}\n"
      : SMEM_ACC8(0), SMEM_ACC8(8), SMEM_ACC8(16), SMEM_ACC8(24), SMEM_ACC8(32), SMEM_ACC8(40), SMEM_ACC8(48),
        SMEM_ACC8(56), SMEM_ACC8(64), SMEM_ACC8(72), SMEM_ACC8(80), SMEM_ACC8(88), SMEM_ACC8(96), SMEM_ACC8(104),
        SMEM_ACC8(112), SMEM_ACC8(120)
      : "l"(a), "l"(b), "r"(int(accumulate)));
}

#undef SMEM_ACC8

/// d = A (64 x 16) * B (16 x N) + (accumulate ? d : 0): the m64nNk16 wgmma for N = 128 or 256.
template <int N>
__device__ __forceinline__ void wgmma_tile(float (&d)[N / 2], std::uint64_t a, std::uint64_t b, bool accumulate) {
  static_assert(N == 128 || N == 256, "the wgmma widths this family uses");
  if constexpr (N == 128)
    wgmma_m64n128k16(d, a, b, accumulate);
  else
    wgmma_m64n256k16(d, a, b, accumulate);
}
//! [wgmma]

/// This thread's warpgroup, threadIdx.x / 128, read from lane 0: the compiler then knows that it is
/// the same in the whole warp and keeps what is computed from it (the descriptors) in uniform
/// registers, which wgmma takes without a move.
__device__ __forceinline__ int warpgroup() { return __shfl_sync(0xffffffffu, int(threadIdx.x) / 128, 0); }

/// Moves this warpgroup's registers per thread to kRegs (setmaxnreg): down for a producer that
/// needs few, up for the consumers that hold the accumulators.
template <int kRegs>
__device__ __forceinline__ void regs_down() {
  asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(kRegs));
}
template <int kRegs>
__device__ __forceinline__ void regs_up() {
  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(kRegs));
}
/// A barrier of `threads` threads on hardware barrier `id` (0 is __syncthreads'): one warpgroup
/// synchronizes without stopping the others.
__device__ __forceinline__ void named_barrier(int id, int threads) {
  asm volatile("bar.sync %0, %1;\n" ::"r"(id), "r"(threads) : "memory");
}

//! [wgmma epilogue]
/// Where an m64nN wgmma's accumulators lie in its 64 x N tile: thread t of the warpgroup holds
/// row acc_row(t, h) and columns acc_col(t, j) + e in d[4 j + 2 h + e] (h, e in {0, 1}).
__device__ __forceinline__ int acc_row(int t, int h) { return 16 * (t / 32) + t % 32 / 4 + 8 * h; }
__device__ __forceinline__ int acc_col(int t, int j) { return 8 * j + 2 * (t % 4); }

/// D = alpha acc + beta C for the accumulators of one m64nN wgmma whose tile corner is (row0,
/// col0). Pairs of columns go out as one 4-byte store where D (and C) allow it.
template <int N>
__device__ __forceinline__ void store_wgmma_acc(const float (&d)[N / 2], int row0, int col0, int M, int N_, float alpha,
                                                float beta, const bf16* C, int ldc, bf16* D, int ldd) {
  const int t = threadIdx.x % 128;
  const bool pairs = ldd % 2 == 0 && aligned(D, 4) && (beta == 0.0f || (ldc % 2 == 0 && aligned(C, 4)));
#pragma unroll
  for (int j = 0; j < N / 8; ++j)
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int r = row0 + acc_row(t, h), c = col0 + acc_col(t, j);
      if (r >= M || c >= N_) continue;
      const float v0 = d[4 * j + 2 * h], v1 = d[4 * j + 2 * h + 1];
      if (pairs && c + 1 < N_) {
        float2 v = make_float2(alpha * v0, alpha * v1);
        if (beta != 0.0f) {
          const float2 cv = __bfloat1622float2(*reinterpret_cast<const __nv_bfloat162*>(C + std::size_t(r) * ldc + c));
          v.x += beta * cv.x, v.y += beta * cv.y;
        }
        *reinterpret_cast<__nv_bfloat162*>(D + std::size_t(r) * ldd + c) = __float22bfloat162_rn(v);
      } else {
        store_d(r, c, v0, M, N_, alpha, beta, C, ldc, D, ldd);
        store_d(r, c + 1, v1, M, N_, alpha, beta, C, ldc, D, ldd);
      }
    }
}
//! [wgmma epilogue]

/// The warp-specialized tile of steps 12 to 14: 128 x BN x 64 windows in a ring of Stages, one
/// producer warpgroup and two consumer warpgroups of 64 x BN each, plus two 64 x 64 staging
/// panels of D per consumer for the TMA-store epilogue.
template <int BN, int Stages>
struct PersistentShapeOf : TmaStage<128, BN, 64> {
  static constexpr int kBM = 128, kBN = BN, kBK = 64, kStages = Stages, kConsumers = 2;
  static constexpr int kThreads = 128 * (kConsumers + 1);
  static constexpr int kProducerRegs = 40, kConsumerRegs = 232;
  using LD = TmaTile<64, 64>;  ///< one staging panel of D
  static constexpr int kPanelElems = 64 * 64;
  static constexpr unsigned kSmemBytes =
      kStages * TmaStage<128, BN, 64>::kBytes + kConsumers * 2 * kPanelElems * sizeof(bf16) + 1024;
};

/// A persistent block's count of the windows it has issued (or consumed), `it`, after each of its
/// tiles: cut back so that it stays below 4 kStages + ceil(K / 64) however many tiles the block
/// takes. What the ring reads of it is unchanged: the stage it % kStages, the stage's parity
/// it / kStages % 2 (both need only it modulo 2 kStages) and whether every stage was used once
/// (it >= kStages).
template <int kStages>
__host__ __device__ __forceinline__ int ring_after_tile(int it) {
  return it < 4 * kStages ? it : it % (2 * kStages) + 2 * kStages;
}

//! [tma epilogue]
/// A consumer's finished 64 x BN tile (corner (row0, col0) of D) as alpha acc + beta C in bf16
/// pairs, v[2 j + h] holding d[4 j + 2 h] and d[4 j + 2 h + 1]: half the registers of the fp32
/// accumulators, so the tile can wait in them while the next tile's first wgmma overwrites acc.
template <int BN>
__device__ __forceinline__ void pack_tile(const float (&d)[BN / 2], unsigned (&v)[BN / 4], int row0, int col0, int M,
                                          int N, float alpha, float beta, const bf16* C, int ldc) {
  const int t = threadIdx.x % 128;
#pragma unroll
  for (int j = 0; j < BN / 8; ++j)
#pragma unroll
    for (int h = 0; h < 2; ++h)
      v[2 * j + h] = finish_pair(d[4 * j + 2 * h], d[4 * j + 2 * h + 1], row0 + acc_row(t, h), col0 + acc_col(t, j), M,
                                 N, alpha, beta, C, ldc);
}
/// Panel P (columns 64 P to 64 P + 63) of one consumer warpgroup's tile packed by pack_tile, its
/// corner at (row0, col0) of D: through staging panel P % 2 of `stage` to a TMA store. Thread 0 of
/// the warpgroup (`leader`) issues the store; bar_id is the warpgroup's named barrier. A TMA store
/// clips at 16-byte chunks of a row, not at elements: where N is not a multiple of 8, the panel
/// holding column N would overwrite up to 7 elements past it, so the threads store that panel
/// themselves, straight to D. A tile's panels go out in increasing P.
template <int BN, class LD, int P>
__device__ __forceinline__ void store_packed_panel(const unsigned (&v)[BN / 4], bf16* stage, const CUtensorMap* d_map,
                                                   int row0, int col0, int M, int N, bf16* D, int ldd, int bar_id) {
  const int t = threadIdx.x % 128;
  const bool leader = t == 0;
  if (N % 8 != 0 && N - col0 < 64 * (P + 1)) {  // the same for the whole warpgroup
#pragma unroll
    for (int j = 8 * P; j < 8 * P + 8; ++j)
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const int r = row0 + acc_row(t, h), c = col0 + acc_col(t, j);
        const __nv_bfloat162 b = *reinterpret_cast<const __nv_bfloat162*>(&v[2 * j + h]);
        if (r < M && c < N) D[std::size_t(r) * ldd + c] = b.x;
        if (r < M && c + 1 < N) D[std::size_t(r) * ldd + c + 1] = b.y;
      }
    return;
  }
  bf16* buf = stage + (P % 2) * 64 * 64;
  // The store that last read buf is done: for P > 0 the store before last (the threads' own
  // panels come only after a tile's last TMA panel); for P = 0, whose buffer a tile ago may have
  // been the last one written, every store.
  if (leader) {
    if (P == 0)
      tma_store_wait_read<0>();
    else
      tma_store_wait_read<1>();
  }
  named_barrier(bar_id, 128);
#pragma unroll
  for (int j = 8 * P; j < 8 * P + 8; ++j)
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int r = acc_row(t, h), c = acc_col(t, j - 8 * P);
      *reinterpret_cast<unsigned*>(buf + LD::offset(r, c)) = v[2 * j + h];
    }
  fence_proxy_async();  // the writes above, before the async proxy's read
  named_barrier(bar_id, 128);
  if (leader) {
    tma_store(d_map, col0 + 64 * P, row0, buf);
    tma_store_commit();
  }
}
/// Panel p, chosen at run time (a chain of branches, so v stays in registers).
template <int BN, class LD, int P = 0>
__device__ __forceinline__ void store_packed_panel_at(const unsigned (&v)[BN / 4], int p, bf16* stage,
                                                      const CUtensorMap* d_map, int row0, int col0, int M, int N,
                                                      bf16* D, int ldd, int bar_id) {
  if constexpr (P < BN / 64) {
    if (p == P)
      store_packed_panel<BN, LD, P>(v, stage, d_map, row0, col0, M, N, D, ldd, bar_id);
    else
      store_packed_panel_at<BN, LD, P + 1>(v, p, stage, d_map, row0, col0, M, N, D, ldd, bar_id);
  }
}
/// The whole packed tile, panel after panel.
template <int BN, class LD, int P = 0>
__device__ __forceinline__ void store_packed_tma(const unsigned (&v)[BN / 4], bf16* stage, const CUtensorMap* d_map,
                                                 int row0, int col0, int M, int N, bf16* D, int ldd, int bar_id) {
  if constexpr (P < BN / 64) {
    store_packed_panel<BN, LD, P>(v, stage, d_map, row0, col0, M, N, D, ldd, bar_id);
    store_packed_tma<BN, LD, P + 1>(v, stage, d_map, row0, col0, M, N, D, ldd, bar_id);
  }
}
/// pack_tile, then store_packed_tma: a finished tile stored at once.
template <int BN, class LD>
__device__ __forceinline__ void store_tile_tma(const float (&d)[BN / 2], bf16* stage, const CUtensorMap* d_map,
                                               int row0, int col0, int M, int N, float alpha, float beta, const bf16* C,
                                               int ldc, bf16* D, int ldd, int bar_id) {
  unsigned v[BN / 4];
  pack_tile<BN>(d, v, row0, col0, M, N, alpha, beta, C, ldc);
  store_packed_tma<BN, LD>(v, stage, d_map, row0, col0, M, N, D, ldd, bar_id);
}
//! [tma epilogue]

}  // namespace smem::tc_gemm

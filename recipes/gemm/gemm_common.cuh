/// \file gemm_common.cuh
/// \brief What every SGEMM step shares: the launcher contract (argument checks on the host
/// before any CUDA call, the `C = beta * C` kernel for the degenerate cases), the launch plan,
/// and the building blocks of several steps: the float4 row loads and stores and the alignment
/// test (steps 9 to 13), the block order, the fragment loads, outer product and epilogue of the
/// warp tiles (steps 11 to 13), and the GPU's key of the tuned tables (steps 13 and 17).
///
/// Every step computes, row-major, C = alpha * A * B + beta * C with A M x K (lda >= K),
/// B K x N (ldb >= N), C M x N (ldc >= N), through a launcher
/// \code
/// cudaError_t <step>(int M, int N, int K, float alpha, const float* A, int lda, const float* B,
///                    int ldb, float beta, float* C, int ldc, cudaStream_t stream = nullptr);
/// \endcode
/// that checks its arguments before any CUDA call (check_args()), returns
/// `cudaErrorInvalidValue` with C untouched for bad ones, never allocates or synchronizes, and
/// returns `cudaGetLastError()` after the launch.
///
/// Accepted sizes: every M, N, K from 0 to INT_MAX and every leading dimension up to INT_MAX
/// (row offsets are 64-bit; tile and K-tile counts cannot wrap), with two limits, each a refusal
/// (`cudaErrorInvalidValue`, C untouched):
/// - the grid: a step launches one block per BM x BN tile of C in gridDim.x, so it refuses more
///   than kMaxGridBlocks = 2^31 - 1 tiles, ceil(M / BM) * ceil(N / BN) > 2^31 - 1, with
///   BM x BN = 16 x 16 (step 3, tiled_16), 32 x 32 (steps 1, 2, tiled_32, 5, 6), 64 x 64
///   (step 7), 128 x 128 (steps 8 to 11, 14), 128 x 256 (step 12), and 64 x 64 for all of step
///   13 (each shape it picks is at least that large; split_tail splits no tail that would take
///   its grid past the limit). The smallest C refused holds 241 x (2^31 - 15) floats, 1.88 TiB
///   (16 x 16 tiles; more for larger ones). Checked on the host, before any CUDA call.
/// - step 3's full-K strip: K at most full_k_max_k(), from the device's opt-in shared memory per
///   block (1815 at 227 KB); checked with a device attribute query, before any launch.
#pragma once
#include <cuda_runtime.h>

#include <atomic>
#include <cstddef>
#include <cstdint>

namespace smem::gemm {

/// What a launcher does with its arguments.
enum class Args {
  launch,      ///< run the step's kernel
  empty,       ///< M == 0 or N == 0: nothing to do, return cudaSuccess
  scale_only,  ///< K == 0 or alpha == 0: C = beta * C (launch scale_c)
  invalid      ///< return cudaErrorInvalidValue, touch nothing
};

/// First and one-past-last byte of a rows x cols row-major matrix with leading dimension ld
/// (rows, cols >= 1). The size cannot wrap (under 2^64 bytes for int sizes); an end past the
/// address space saturates, so that it cannot wrap around and hide an overlap.
struct Span {
  std::uintptr_t lo, hi;
};
inline Span span_of(const float* p, int rows, int cols, int ld) {
  const auto lo = reinterpret_cast<std::uintptr_t>(p);
  const std::uintptr_t bytes = (std::uintptr_t(rows - 1) * std::uintptr_t(ld) + std::uintptr_t(cols)) * sizeof(float);
  return {lo, bytes > UINTPTR_MAX - lo ? UINTPTR_MAX : lo + bytes};
}
inline bool overlap(Span a, Span b) { return a.lo < b.hi && b.lo < a.hi; }

//! [contract]
/// Checks the arguments of C = alpha * A * B + beta * C: negative sizes, null pointers where a
/// matrix is read or written, leading dimensions below the widths, and C overlapping A or B are
/// invalid.
inline Args check_args(int M, int N, int K, float alpha, const float* A, int lda, const float* B,
                       int ldb, const float* C, int ldc) {
  if (M < 0 || N < 0 || K < 0) return Args::invalid;
  if (ldc < (N > 1 ? N : 1) || lda < (K > 1 ? K : 1) || ldb < (N > 1 ? N : 1)) return Args::invalid;
  if (M == 0 || N == 0) return Args::empty;
  if (C == nullptr) return Args::invalid;
  if (K == 0 || alpha == 0.0f) return Args::scale_only;
  if (A == nullptr || B == nullptr) return Args::invalid;
  const Span c = span_of(C, M, N, ldc);
  if (overlap(c, span_of(A, M, K, lda)) || overlap(c, span_of(B, K, N, ldb))) return Args::invalid;
  return Args::launch;
}
//! [contract]

/// C = beta * C for an M x N matrix; beta == 0 writes zeros without reading C (a NaN in C does
/// not survive, as in BLAS). A template so that the header can be included in many translation
/// units.
template <class T>
__global__ void scale_c_kernel(int M, int N, T beta, T* C, int ldc) {
  const std::size_t total = std::size_t(M) * N;
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < total;
       i += std::size_t(gridDim.x) * blockDim.x) {
    T& c = C[i / N * ldc + i % N];
    c = beta == T(0) ? T(0) : beta * c;
  }
}

/// What a launcher returns for a non-launch Args: success for empty, the scale for scale_only,
/// cudaErrorInvalidValue for invalid.
inline cudaError_t finish_without_launch(Args a, int M, int N, float beta, float* C, int ldc,
                                         cudaStream_t stream) {
  if (a == Args::invalid) return cudaErrorInvalidValue;
  if (a == Args::empty) return cudaSuccess;
  const std::size_t total = std::size_t(M) * N;
  const unsigned blocks = unsigned(total < 4096u * 256u ? (total + 255) / 256 : 4096u);
  scale_c_kernel<float><<<blocks, 256, 0, stream>>>(M, N, beta, C, ldc);
  return cudaGetLastError();
}

/// Number of `tile`-sized tiles covering `n` (n >= 0, tile >= 1): in unsigned arithmetic, where
/// n + tile - 1 cannot wrap for any int n, unlike (n + tile - 1) / tile in int at n near INT_MAX.
/// The kernels count their tiles of M, N and K with it.
__host__ __device__ constexpr int tiles(int n, int tile) {
  return int((unsigned(n) + unsigned(tile) - 1u) / unsigned(tile));
}

/// Blocks of a grid with one block per BM x BN tile of an M x N matrix (up to 2^54: 64-bit).
constexpr long long tile_blocks(int M, int N, int BM, int BN) {
  return static_cast<long long>(tiles(M, BM)) * tiles(N, BN);
}

/// The C update of every step's epilogue: `alpha * acc + beta * c`, and with beta == 0 C is not
/// read (a NaN in C does not leak into the result).
__device__ __forceinline__ void update_c(float* c, float acc, float alpha, float beta) {
  *c = beta == 0.0f ? alpha * acc : alpha * acc + beta * *c;
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

/// The most blocks a grid of any step has: gridDim.x's limit. Every step puts its tiles of C in
/// gridDim.x (gridDim.y and z stop at 65,535).
inline constexpr long long kMaxGridBlocks = 0x7fffffffLL;

/// A plan over a 1D grid of `blocks` blocks; a null kernel above kMaxGridBlocks.
template <class Kernel>
Plan<Kernel> grid_plan(Kernel kernel, long long blocks, dim3 block, unsigned smem = 0) {
  if (blocks > kMaxGridBlocks) return {nullptr, dim3(), block, smem};
  return {kernel, dim3(unsigned(blocks)), block, smem};
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

/// The kernel of steps 1 to 10 and 14: (M, N, K, alpha, A, lda, B, ldb, beta, C, ldc).
using GemmKernel = void (*)(int, int, int, float, const float*, int, const float*, int, float, float*, int);

/// The tile of C that block blockIdx.x owns in a 1D grid laid row by row over the tiles of C
/// (tiles_n tiles per row): the order a 2D grid (column tiles in x) would give.
struct TileCoord {
  int m, n;
};
__device__ __forceinline__ TileCoord row_major_tile(int tiles_n) {
  return {int(blockIdx.x / unsigned(tiles_n)), int(blockIdx.x % unsigned(tiles_n))};
}

// ---- Steps 9 to 13: float4 rows. ----

/// Four consecutive floats p[k .. k + 3] of a row, zero past `limit`; one float4 load when `vec`
/// (the row start and the leading dimension are multiples of 4 floats) and all four are inside.
__device__ __forceinline__ float4 load4_row(const float* p, int k, int limit, bool vec) {
  if (vec && k + 3 < limit) return *reinterpret_cast<const float4*>(p + k);
  float4 v;
  v.x = k + 0 < limit ? p[k + 0] : 0.0f;
  v.y = k + 1 < limit ? p[k + 1] : 0.0f;
  v.z = k + 2 < limit ? p[k + 2] : 0.0f;
  v.w = k + 3 < limit ? p[k + 3] : 0.0f;
  return v;
}

/// The epilogue of four consecutive outputs of one row: c[n .. n + 3] = alpha * acc + beta * c,
/// columns at or past N skipped, C not read when beta == 0; one float4 access when `vec`.
__device__ __forceinline__ void store4_row(float* c, int n, int N, float4 acc, float alpha, float beta, bool vec) {
  if (vec && n + 3 < N) {
    float4 r = make_float4(alpha * acc.x, alpha * acc.y, alpha * acc.z, alpha * acc.w);
    if (beta != 0.0f) {
      const float4 o = *reinterpret_cast<const float4*>(c + n);
      r.x += beta * o.x, r.y += beta * o.y, r.z += beta * o.z, r.w += beta * o.w;
    }
    *reinterpret_cast<float4*>(c + n) = r;
    return;
  }
  const float a[4] = {acc.x, acc.y, acc.z, acc.w};
#pragma unroll
  for (int j = 0; j < 4; ++j)
    if (n + j < N) c[n + j] = beta == 0.0f ? alpha * a[j] : alpha * a[j] + beta * c[n + j];
}

inline bool aligned16(const void* p) { return reinterpret_cast<std::uintptr_t>(p) % 16 == 0; }

// ---- Steps 11 to 13: warp tiles. ----

/// The geometry of steps 11 to 13 (explained in sgemm_11_warptiled.cuh).
//! [warp tiling]
/// Block tile BM x BN x BK, warp tile WM x WN, thread tile TM x TN.
template <int BM, int BN, int BK, int WM, int WN, int TM, int TN>
struct WarpTiling {
  static constexpr int kBM = BM, kBN = BN, kBK = BK, kWM = WM, kWN = WN, kTM = TM, kTN = TN;
  static constexpr int kWarpsM = BM / WM, kWarpsN = BN / WN;
  static constexpr int kThreads = kWarpsM * kWarpsN * 32;
  static constexpr int kLanesM = WM / TM, kLanesN = WN / TN;  ///< lane grid inside a warp
  static_assert(BM % WM == 0 && BN % WN == 0, "the warp tile must divide the block tile");
  static_assert(TM % 4 == 0 && TN % 4 == 0, "thread tiles are made of 4 x 4 float4 groups");
  static_assert(WM % TM == 0 && WN % TN == 0 && kLanesM * kLanesN == 32, "32 lanes per warp");
  static_assert((kLanesM == 4 || kLanesM == 8) && (kLanesN == 4 || kLanesN == 8),
                "a warp's fragment read must stay within 128 bytes");
  static_assert(BK % 8 == 0, "BK: a multiple of 8");
  /// Minimum resident blocks per SM for __launch_bounds__: the register budget that fits the
  /// accumulators (255 registers from 128 accumulators up, 128 below).
  static constexpr int kMinBlocks = 65536 / (kThreads * (TM * TN >= 128 ? 255 : 128)) > 0
                                        ? 65536 / (kThreads * (TM * TN >= 128 ? 255 : 128))
                                        : 1;

  /// The float4 loads each thread stages per K-tile (step 11; step 12 copies differently).
  static constexpr int kALoads = BM * BK / 4 / kThreads, kBLoads = BK * BN / 4 / kThreads;
  /// Staged load r of thread `tid`: A row stage_a_m, columns stage_a_k .. + 3 (a warp covers whole
  /// 32-byte sectors of 4 rows); B row stage_b_k, columns stage_b_n .. + 3 (512 bytes of a row).
  __host__ __device__ static constexpr int stage_a_m(int tid, int r) { return (tid + r * kThreads) / (BK / 4); }
  __host__ __device__ static constexpr int stage_a_k(int tid, int r) { return (tid + r * kThreads) % (BK / 4) * 4; }
  __host__ __device__ static constexpr int stage_b_k(int tid, int r) { return (tid + r * kThreads) / (BN / 4); }
  __host__ __device__ static constexpr int stage_b_n(int tid, int r) { return (tid + r * kThreads) % (BN / 4) * 4; }

  /// Transposed A tile As[k][m], rows padded by 4 floats (16-byte aligned, conflict-free store).
  static constexpr int kALd = BM + 4;
  static constexpr int kAFloats = BK * kALd, kBFloats = BK * BN;
  __host__ __device__ static constexpr int a_offset(int k, int m) { return k * kALd + m; }
  __host__ __device__ static constexpr int b_offset(int k, int n) { return k * BN + n; }
  /// A lane's place in the kLanesM x kLanesN lane grid. Bit 0 of the lane number moves along m
  /// and bit 1 along n; the other bits fill the rest of the grid. So lanes l and l ^ 2 read the
  /// same A float4 and lanes l and l ^ 1 the same B float4: both fragment reads pair, and cost 2
  /// wavefronts instead of 4 (row-major lanes pair on one of the two only).
  __host__ __device__ static constexpr int lane_m(int lane) {
    return kLanesM == 8 ? (lane & 1) | (lane >> 1 & 6) : (lane & 1) | (lane >> 3 & 2);
  }
  __host__ __device__ static constexpr int lane_n(int lane) {
    return kLanesM == 8 ? (lane >> 1 & 1) | (lane >> 3 & 2) : (lane >> 1 & 7);
  }
  /// First row (column) of the g-th group of 4 rows (columns) that lane `lane` of warp `warp`
  /// owns, relative to the block tile.
  __host__ __device__ static constexpr int thread_row(int warp, int lane, int g) {
    return (warp / kWarpsN) * WM + g * kLanesM * 4 + lane_m(lane) * 4;
  }
  __host__ __device__ static constexpr int thread_col(int warp, int lane, int g) {
    return (warp % kWarpsN) * WN + g * kLanesN * 4 + lane_n(lane) * 4;
  }
};
//! [warp tiling]

/// Block tile of linear block index `pid`, in groups of `group` block rows so that consecutive
/// blocks share rows of A and columns of B in L2.
__device__ __forceinline__ TileCoord grouped_block(int tiles_m, int tiles_n, int pid, int group = 8) {
  const int per_group = group * tiles_n;
  const int first_m = pid / per_group * group;
  const int rows = tiles_m - first_m < group ? tiles_m - first_m : group;
  const int r = pid % per_group;
  return {first_m + r % rows, r / rows};
}

//! [warp tile compute]
/// T is a WarpTiling. Loads the thread's A and B fragments of row k of a stage: TM / 4 and TN / 4 float4 reads.
template <class T>
__device__ __forceinline__ void load_fragments(const float* As, const float* Bs, int k, int warp, int lane,
                                               float (&a)[T::kTM], float (&b)[T::kTN]) {
#pragma unroll
  for (int g = 0; g < T::kTM / 4; ++g) {
    const float4 v = *reinterpret_cast<const float4*>(As + T::a_offset(k, T::thread_row(warp, lane, g)));
    a[4 * g + 0] = v.x, a[4 * g + 1] = v.y, a[4 * g + 2] = v.z, a[4 * g + 3] = v.w;
  }
#pragma unroll
  for (int g = 0; g < T::kTN / 4; ++g) {
    const float4 v = *reinterpret_cast<const float4*>(Bs + T::b_offset(k, T::thread_col(warp, lane, g)));
    b[4 * g + 0] = v.x, b[4 * g + 1] = v.y, b[4 * g + 2] = v.z, b[4 * g + 3] = v.w;
  }
}

/// acc += a b^T: TM x TN FFMAs. kSerpentine: the rows alternate direction, so that the last FFMA
/// of a row and the first of the next share b[j]. The order changes how ptxas schedules the
/// fragment reads of the next k step around the FFMAs; which order is faster depends on the
/// kernel (step 12 passes it from 64 outputs per thread up, step 11 keeps row order).
template <class T, bool kSerpentine = false>
__device__ __forceinline__ void outer_product(float (&acc)[T::kTM][T::kTN], const float (&a)[T::kTM],
                                              const float (&b)[T::kTN]) {
#pragma unroll
  for (int i = 0; i < T::kTM; ++i)
#pragma unroll
    for (int jj = 0; jj < T::kTN; ++jj) {
      const int j = kSerpentine && i % 2 == 1 ? T::kTN - 1 - jj : jj;
      acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
    }
}

/// C[n .. n + 3] += alpha * acc with atomics (those below N): one 16-byte atomicAdd on sm_90 and
/// later when `vec`, else four 4-byte ones.
__device__ __forceinline__ void add4_row(float* c, int n, int N, float4 acc, float alpha, bool vec) {
#if __CUDA_ARCH__ >= 900
  if (vec && n + 3 < N) {
    atomicAdd(reinterpret_cast<float4*>(c + n),
              make_float4(alpha * acc.x, alpha * acc.y, alpha * acc.z, alpha * acc.w));
    return;
  }
#else
  (void)vec;
#endif
  const float a[4] = {acc.x, acc.y, acc.z, acc.w};
#pragma unroll
  for (int j = 0; j < 4; ++j)
    if (n + j < N) atomicAdd(c + n + j, alpha * a[j]);
}

/// C = alpha * acc + beta * C for the thread's TM x TN outputs of the block tile at (m0, n0); with
/// kAdd, C += alpha * acc with atomics instead (beta unused: the blocks of a tile split along K in
/// step 12 add into a C already scaled by beta).
template <class T, bool kAdd = false>
__device__ __forceinline__ void store_tile(const float (&acc)[T::kTM][T::kTN], int m0, int n0, int warp,
                                           int lane, int M, int N, float alpha, float beta, float* C, int ldc,
                                           bool cvec) {
#pragma unroll
  for (int i = 0; i < T::kTM; ++i) {
    const int m = m0 + T::thread_row(warp, lane, i / 4) + i % 4;
    if (m >= M) continue;
    float* c = C + std::size_t(m) * ldc;
#pragma unroll
    for (int g = 0; g < T::kTN / 4; ++g) {
      const int n = n0 + T::thread_col(warp, lane, g);
      const float4 v = make_float4(acc[i][4 * g], acc[i][4 * g + 1], acc[i][4 * g + 2], acc[i][4 * g + 3]);
      if constexpr (kAdd)
        add4_row(c, n, N, v, alpha, cvec);
      else
        store4_row(c, n, N, v, alpha, beta, cvec);
    }
  }
}
//! [warp tile compute]

namespace detail {

/// What decides the best shape on a GPU.
struct GpuKey {
  int cc, sms, smem_per_sm, regs_per_sm;
};

/// The most devices whose values the launchers keep.
constexpr int kMaxDevices = 64;

/// The family's one per-device cache: kSlots values of T (one per device, or per device and
/// variant), each made once by the first caller and kept. Fixed size, nothing allocated or thrown,
/// thread-safe: a caller that comes while another makes a value waits for it.
template <class T, int kSlots>
struct PerDevice {
  T value[kSlots];
  std::atomic<int> state[kSlots];  // 0 not made, 1 being made, 2 made
  /// Value s, made by make(value) unless it was made before. make returns false when it failed:
  /// then nothing is kept (a later call makes it again) and the result is null.
  template <class Make>
  const T* made_once(int s, Make make) {
    for (int expected = 0; !state[s].compare_exchange_strong(expected, 1); expected = 0)
      if (expected == 2) return &value[s];
    const bool made = make(value[s]);
    state[s].store(made ? 2 : 0);
    return made ? &value[s] : nullptr;
  }
};

/// The current device's GpuKey, read once per device (all zero on error).
inline GpuKey gpu_key() {
  static PerDevice<GpuKey, kMaxDevices> keys;
  int dev = 0;
  if (cudaGetDevice(&dev) != cudaSuccess || dev < 0 || dev >= kMaxDevices) return {};
  const GpuKey* k = keys.made_once(dev, [dev](GpuKey& key) {
    int major = 0, minor = 0, sms = 0, smem = 0, regs = 0;
    if (cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev) != cudaSuccess ||
        cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev) != cudaSuccess ||
        cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev) != cudaSuccess ||
        cudaDeviceGetAttribute(&smem, cudaDevAttrMaxSharedMemoryPerMultiprocessor, dev) != cudaSuccess ||
        cudaDeviceGetAttribute(&regs, cudaDevAttrMaxRegistersPerMultiprocessor, dev) != cudaSuccess)
      return false;
    key = GpuKey{major * 10 + minor, sms, smem, regs};
    return true;
  });
  return k != nullptr ? *k : GpuKey{};
}

}  // namespace detail

}  // namespace smem::gemm

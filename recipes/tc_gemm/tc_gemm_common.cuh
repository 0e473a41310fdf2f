/// \file tc_gemm_common.cuh
/// \brief What every tensor-core GEMM step uses: the launcher contract (argument checks on the host
/// before any CUDA call, the `D = beta * C` kernel for the degenerate cases), the launch plan, the
/// tile orders, the epilogue and the per-device values the launchers read once. What several steps
/// of one generation share is in that generation's kit: tc_gemm_sm80.cuh (steps 2 to 8: the tile
/// layouts and the warp's `mma.sync` tile) and tc_gemm_sm90.cuh (steps 8 to 16, the only header of
/// the family that includes <cuda.h>). Step 8, TMA feeding mma.sync, is the one step that takes
/// both kits.
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
/// take the element-wise path of the same kernel, steps 8 to 16 (whose tensor maps need such rows)
/// return `cudaErrorInvalidValue` for them.
///
/// Accepted sizes: every M, N, K from 0 to 2^31 - 1 with M N <= 2^40 (kMaxOutputElements: a D of
/// 2 TiB, more than any GPU holds); a larger D is refused. Steps 8 to 16 also need lda (>= K) and
/// ldb (>= N), and from step 12 on ldd, to be multiples of 8, so there N and K are at most
/// 2^31 - 8. Steps 15 and 16 need no setup; prepare_cluster_order() (step 15), called once per
/// device before capturing or timing them, lets them walk their clusters by GPU processing
/// cluster: the same D, faster.
#pragma once
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <atomic>
#include <cstddef>
#include <cstdint>

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

namespace detail {

/// The most devices whose values the launchers keep.
constexpr int kMaxDevices = 64;

/// The family's one per-device cache: kSlots values of T (one per device, or per device and
/// variant), each made once by the first caller and kept. Fixed size, nothing allocated or thrown,
/// thread-safe: a caller that comes while another makes a value waits for it.
template <class T, int kSlots>
struct PerDevice {
  T value[kSlots];
  std::atomic<int> state[kSlots];  // 0 not made, 1 being made, 2 made
  /// Value s once made, else null.
  const T* find(int s) const { return state[s].load() == 2 ? &value[s] : nullptr; }
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

/// What decides the best shape on a GPU.
struct GpuKey {
  int cc, sms, smem_per_sm, regs_per_sm;
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

/// The shared-memory address (state space .shared) of a generic pointer into shared memory.
__device__ __forceinline__ unsigned smem_u32(const void* p) { return unsigned(__cvta_generic_to_shared(p)); }

}  // namespace smem::tc_gemm

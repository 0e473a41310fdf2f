/// \file stencil_common.cuh
/// \brief What every stencil step shares: the two launcher contracts (2D convolution and 3D
/// 7-point stencil), the launch plan, the zero-padded reads, the filter in constant memory and
/// the 7-point update.
///
/// Two problems, one ladder each, both fp32, both out of place, both with zero padding (every
/// point outside the image or grid reads as 0):
///
/// **2D convolution** (steps `conv2d_*`), a square filter of radius r, (2r + 1)^2 taps, row-major
/// and dense (`in` and `out` are height x width, the filter (2r + 1) x (2r + 1)):
/// \code
/// out[y][x] = sum over i, j in [0, 2r] of filter[i][j] * in[y + i - r][x + j - r]
/// cudaError_t <step>(const float* in, float* out, int height, int width, const float* filter,
///                    int radius, cudaStream_t stream = nullptr);
/// \endcode
/// (the cross-correlation of image processing and neural networks: the filter is not flipped).
/// `in`, `out` and `filter` are device pointers. 1 <= radius <= kMaxRadius; a radius larger than
/// the image is fine (the taps outside read 0). The steps that read the filter from constant
/// memory copy it there first with `cudaMemcpyToSymbolAsync` on `stream`: stream-ordered and
/// capturable, and the launch may be followed at once by a change of `filter`. There is one such
/// symbol per program (per translation unit), so two launches of those steps with *different*
/// filters must not run concurrently on different streams.
///
/// **7-point stencil** (steps `st7_*`), an nx x ny x nz grid, x fastest (point (x, y, z) at
/// `(z * ny + y) * nx + x`):
/// \code
/// out = c.center * u + c.x * (u[x - 1] + u[x + 1]) + c.y * (u[y - 1] + u[y + 1]) + c.z * (u[z - 1] + u[z + 1])
/// cudaError_t <step>(const float* in, float* out, int nx, int ny, int nz, Coefficients c,
///                    cudaStream_t stream = nullptr);
/// \endcode
///
/// Both: invalid (returns `cudaErrorInvalidValue` before any CUDA call, with `out` untouched):
/// a negative size, a radius outside [1, kMaxRadius], a null pointer with a non-zero size, a
/// pointer not aligned to 4 bytes, `in` and `out` overlapping (a stencil cannot run in place:
/// a block would overwrite what its neighbours still read), the filter overlapping `out`. A zero
/// size is a no-op. Indices are 64-bit. The launchers never allocate or synchronize, so they can
/// be captured in a CUDA graph; each returns `cudaGetLastError()` after its launch.
///
/// Accepted sizes: every size from 0 to INT_MAX in each dimension, but for two limits, refused
/// like the invalid arguments above (`cudaErrorInvalidValue` before any CUDA call):
/// - an image or grid of more than kMaxPoints = 2^61 - 1 points, whose bytes would pass
///   PTRDIFF_MAX: no buffer is that large;
/// - a step whose grid needs more than kMaxBlocks = 2^31 - 1 blocks (gridDim.x's limit): one
///   block per tile, ceil(n / t) tiles along a dimension of n points with a tile edge of t.
///   Convolution (width x height): steps 1 and 2 tiles of 32 x 8, steps 3 and 4 32 x 32, steps
///   5 and 6 128 x 64. 7-point (nx x ny x nz): step 1 tiles of 32 x 8 in a plane, whatever nz
///   (its blocks walk several planes where one block per tile and plane would pass the limit);
///   step 2 32 x 4 x 4; step 3 32 x 8 x 32; step 4 128 x 8 x 32; step 5 four blocks per tile of
///   128 x 8 x 64; step 6 256 x 32 x 3, or else step 4's grid, which it then runs. The smallest
///   arrays refused: 1 x 13 x (2^31 - 3) for 7-point step 2 (104 GiB each), more than 900 GiB
///   each for every other step.
#pragma once
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

namespace smem::stencil {

/// Largest filter radius: 17 x 17 taps.
inline constexpr int kMaxRadius = 8;
inline constexpr int kMaxTaps = (2 * kMaxRadius + 1) * (2 * kMaxRadius + 1);

/// The 7-point stencil's weights: the point, and each pair of neighbours along x, y and z.
struct Coefficients {
  float center, x, y, z;
};

/// What a launcher does with its arguments: launch, return success without touching the GPU
/// (an empty image or grid), or return cudaErrorInvalidValue.
enum class Args { launch, empty, invalid };

/// The cudaError_t a launcher returns when a check says not to launch.
constexpr cudaError_t args_error(Args a) { return a == Args::empty ? cudaSuccess : cudaErrorInvalidValue; }

/// True when [a, a + a_bytes) and [b, b + b_bytes) share a byte.
inline bool overlap(const void* a, std::size_t a_bytes, const void* b, std::size_t b_bytes) {
  const auto x = reinterpret_cast<std::uintptr_t>(a), y = reinterpret_cast<std::uintptr_t>(b);
  return x < y + b_bytes && y < x + a_bytes;
}

inline bool misaligned(const void* p) { return reinterpret_cast<std::uintptr_t>(p) % alignof(float) != 0; }

/// Most points of an image or grid: its bytes fit a ptrdiff_t, as every buffer's do.
inline constexpr long long kMaxPoints = (long long)(PTRDIFF_MAX / sizeof(float));

//! [contract]
/// The 2D convolution's argument checks (no CUDA call).
inline Args check_conv2d_args(const float* in, const float* out, int height, int width, const float* filter,
                              int radius) {
  if (height < 0 || width < 0 || radius < 1 || radius > kMaxRadius) return Args::invalid;
  if (height == 0 || width == 0) return Args::empty;
  if (std::size_t(height) * std::size_t(width) > std::size_t(kMaxPoints)) return Args::invalid;
  if (in == nullptr || out == nullptr || filter == nullptr) return Args::invalid;
  if (misaligned(in) || misaligned(out) || misaligned(filter)) return Args::invalid;
  const std::size_t bytes = std::size_t(height) * std::size_t(width) * sizeof(float);
  const std::size_t taps = std::size_t(2 * radius + 1) * std::size_t(2 * radius + 1) * sizeof(float);
  if (overlap(in, bytes, out, bytes) || overlap(filter, taps, out, bytes)) return Args::invalid;
  return Args::launch;
}

/// The 7-point stencil's argument checks (no CUDA call).
inline Args check_7point_args(const float* in, const float* out, int nx, int ny, int nz) {
  if (nx < 0 || ny < 0 || nz < 0) return Args::invalid;
  if (nx == 0 || ny == 0 || nz == 0) return Args::empty;
  if (std::size_t(nx) * std::size_t(ny) > std::size_t(kMaxPoints) / std::size_t(nz)) return Args::invalid;
  if (in == nullptr || out == nullptr || misaligned(in) || misaligned(out)) return Args::invalid;
  const std::size_t bytes = std::size_t(nx) * std::size_t(ny) * std::size_t(nz) * sizeof(float);
  return overlap(in, bytes, out, bytes) ? Args::invalid : Args::launch;
}
//! [contract]

//! [plan]
/// What a launcher launches: the kernel, its grid and block, and its dynamic shared memory.
/// The benchmark reads the same plan, so what it reports is what ran. A null kernel: the
/// problem does not fit the grid (the launcher returns cudaErrorInvalidValue).
template <class Kernel>
struct Plan {
  Kernel kernel;
  dim3 grid, block;
  unsigned smem;
  Plan<const void*> erased() const { return {reinterpret_cast<const void*>(kernel), grid, block, smem}; }
};

/// Most blocks of a grid: gridDim.x's limit.
inline constexpr long long kMaxBlocks = 0x7fffffff;

/// The plan of a kernel over `blocks` blocks of a 1D grid (null when that exceeds kMaxBlocks).
/// Every step launches a 1D grid and decodes its tile from blockIdx.x, so no image or grid
/// dimension meets the 65,535 limit of gridDim.y and gridDim.z.
template <class Kernel>
Plan<Kernel> grid_plan(Kernel kernel, long long blocks, dim3 block, unsigned smem = 0) {
  return {blocks <= kMaxBlocks ? kernel : nullptr, dim3(unsigned(blocks)), block, smem};
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

/// Tiles of edge t along n points: ceil(n / t), 0 for n <= 0. Written (n - 1) / t + 1: the usual
/// (n + t - 1) / t overflows an int for n within t of INT_MAX.
__host__ __device__ constexpr int tiles_along(int n, int t) { return n > 0 ? (n - 1) / t + 1 : 0; }

/// Number of a x b tiles (a, b the tile's extent in each dimension) covering n x m, in 64 bits.
__host__ __device__ constexpr long long tile_count(int n, int m, int a, int b) {
  return (long long)tiles_along(n, a) * tiles_along(m, b);
}

/// Output tile edge of convolution steps 3 and 4, and their block: 32 x 8 threads, 4 outputs each.
inline constexpr int kTile = 32, kTileRows = 8;

/// Block of 7-point steps 1 and 3: 32 x 8 threads over a 32 x 8 tile of each plane.
inline constexpr int kSt7X = 32, kSt7Y = 8;

//! [zero padding]
/// in[y][x] of a height x width image, 0 outside it.
__device__ inline float fetch2d(const float* __restrict__ in, int height, int width, long long y, long long x) {
  return y >= 0 && y < height && x >= 0 && x < width ? __ldg(in + y * width + x) : 0.0f;
}

/// in(x, y, z) of an nx x ny x nz grid, 0 outside it.
__device__ inline float fetch3d(const float* __restrict__ in, int nx, int ny, int nz, long long x, long long y,
                                long long z) {
  return x >= 0 && x < nx && y >= 0 && y < ny && z >= 0 && z < nz ? __ldg(in + (z * ny + y) * nx + x) : 0.0f;
}
//! [zero padding]

//! [constant filter]
/// The filter of the constant-memory steps: every thread of a warp reads the same tap at the same
/// time, which the constant cache serves as one broadcast.
__constant__ float c_filter[kMaxTaps];

/// Copies the (2r + 1)^2 taps at `filter` (device memory) into c_filter, ordered on `stream`.
inline cudaError_t upload_filter(const float* filter, int radius, cudaStream_t stream) {
  const std::size_t bytes = std::size_t(2 * radius + 1) * std::size_t(2 * radius + 1) * sizeof(float);
  return cudaMemcpyToSymbolAsync(c_filter, filter, bytes, 0, cudaMemcpyDeviceToDevice, stream);
}

/// The launch of the constant-memory steps: the filter's copy, then the plan, on `stream`.
template <class Kernel, class... A>
cudaError_t launch_with_filter(const Plan<Kernel>& p, const float* filter, int radius, cudaStream_t stream, A... args) {
  if (p.kernel == nullptr) return cudaErrorInvalidValue;
  if (cudaError_t e = upload_filter(filter, radius, stream); e != cudaSuccess) return e;
  return launch(p, stream, args...);
}
//! [constant filter]

//! [seven point]
/// The 7-point update, in the one order every step uses.
__host__ __device__ inline float seven_point(const Coefficients& c, float u, float xm, float xp, float ym, float yp,
                                             float zm, float zp) {
  return c.center * u + c.x * (xm + xp) + c.y * (ym + yp) + c.z * (zm + zp);
}

/// The update of 4 consecutive points of a row, `u`, whose x neighbours beyond the vector are xl
/// and xr, and whose neighbours in y and z are the vectors ym, yp, zm and zp.
__host__ __device__ inline float4 seven_point4(const Coefficients& c, float4 u, float xl, float xr, float4 ym,
                                               float4 yp, float4 zm, float4 zp) {
  return make_float4(seven_point(c, u.x, xl, u.y, ym.x, yp.x, zm.x, zp.x),
                     seven_point(c, u.y, u.x, u.z, ym.y, yp.y, zm.y, zp.y),
                     seven_point(c, u.z, u.y, u.w, ym.z, yp.z, zm.z, zp.z),
                     seven_point(c, u.w, u.z, xr, ym.w, yp.w, zm.w, zp.w));
}
//! [seven point]

}  // namespace smem::stencil

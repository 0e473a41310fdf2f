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
#include <cuda.h>
#include <cudaTypedefs.h>
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

//! [tma]
// ---- Hopper (sm_90): the TMA steps' tensor maps, mbarriers and bulk tensor copies. ----

/// cuTensorMapEncodeTiled, taken from the driver through the runtime once (no -lcuda needed);
/// null if the driver does not have it.
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

/// The tensor map of a dense fp32 array of `rank` dimensions (dims[0] the fastest), read or
/// written in boxes of box[0] x box[1] x ...; a box that reaches outside the array is filled with
/// zeros there: the stencils' zero padding. `promotion` widens each L2 miss the box causes (a
/// box whose rows start and end inside a 256-byte line drags the rest of the line in with 256B:
/// neighbours' bytes, which they may still read from L2; NONE reads the sectors the box covers).
/// TMA needs a 16-byte aligned base and rows of a multiple of 16 bytes; false when the array
/// breaks that or the driver refuses it.
inline bool make_float_map(CUtensorMap* map, const float* g, int rank, const long long* dims, const int* box,
                           CUtensorMapL2promotion promotion = CU_TENSOR_MAP_L2_PROMOTION_L2_256B) {
  const PFN_cuTensorMapEncodeTiled_v12000 encode = tensor_map_encoder();
  if (encode == nullptr || rank < 1 || rank > 3 || reinterpret_cast<std::uintptr_t>(g) % 16 != 0 || dims[0] % 4 != 0)
    return false;
  cuuint64_t size[3], stride[2], bytes = sizeof(float);  // stride[i - 1]: bytes between steps of dimension i
  cuuint32_t box_size[3], unit[3] = {1, 1, 1};
  for (int i = 0; i < rank; ++i) {
    if (i > 0) stride[i - 1] = bytes;
    size[i] = cuuint64_t(dims[i]);
    box_size[i] = cuuint32_t(box[i]);
    bytes *= size[i];
  }
  return encode(map, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, cuuint32_t(rank), const_cast<float*>(g), size, stride, box_size,
                unit, CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_NONE, promotion,
                CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) == CUDA_SUCCESS;
}

__device__ __forceinline__ unsigned smem_u32(const void* p) { return unsigned(__cvta_generic_to_shared(p)); }

/// An mbarrier whose phase completes when one thread has arrived and every byte it announced has
/// landed; its initialization made visible to TMA (the async proxy).
__device__ __forceinline__ void mbar_init(std::uint64_t* bar) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;\n" ::"r"(smem_u32(bar)));
  asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
}
/// Arrives and announces `bytes` to land on the current phase.
__device__ __forceinline__ void mbar_arrive_expect_tx(std::uint64_t* bar, unsigned bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(smem_u32(bar)), "r"(bytes) : "memory");
}
/// Waits until the phase of parity `parity` has completed.
__device__ __forceinline__ void mbar_wait(std::uint64_t* bar, unsigned parity) {
  unsigned done = 0;
  do {
    asm volatile(
        "{\n.reg .pred p;\nmbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\nselp.u32 %0, 1, 0, p;\n}\n"
        : "=r"(done)
        : "r"(smem_u32(bar)), "r"(parity)
        : "memory");
  } while (!done);
}
/// TMA load: the box of a 2D map with corner (x, y) into shared memory at dst (128-byte
/// aligned); its bytes complete on `bar`. Coordinates may be negative.
__device__ __forceinline__ void tma_load_2d(float* dst, const CUtensorMap* map, int x, int y, std::uint64_t* bar) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];\n" ::
          "r"(smem_u32(dst)), "l"(map), "r"(x), "r"(y), "r"(smem_u32(bar))
      : "memory");
}
/// TMA load: the box of a 3D map with corner (x, y, z), as tma_load_2d.
__device__ __forceinline__ void tma_load_3d(float* dst, const CUtensorMap* map, int x, int y, int z,
                                            std::uint64_t* bar) {
  asm volatile(
      "cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4}], "
      "[%5];\n" ::"r"(smem_u32(dst)),
      "l"(map), "r"(x), "r"(y), "r"(z), "r"(smem_u32(bar))
      : "memory");
}
/// TMA store: the box of a 2D map with corner (x, y) from shared memory at src (128-byte
/// aligned); the parts of the box outside the array are not written. One bulk group per commit.
__device__ __forceinline__ void tma_store_2d(const CUtensorMap* map, int x, int y, const float* src) {
  asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group [%0, {%1, %2}], [%3];\n" ::"l"(map), "r"(x),
               "r"(y), "r"(smem_u32(src))
               : "memory");
}
__device__ __forceinline__ void tma_store_commit() { asm volatile("cp.async.bulk.commit_group;\n" ::: "memory"); }
/// Waits until all but the kPending most recent store groups have read their shared memory.
template <int kPending>
__device__ __forceinline__ void tma_store_wait_read() {
  asm volatile("cp.async.bulk.wait_group.read %0;\n" ::"n"(kPending) : "memory");
}
/// Orders this thread's shared-memory writes before later TMA (async proxy) reads of them.
__device__ __forceinline__ void fence_proxy_async() { asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory"); }
//! [tma]

}  // namespace smem::stencil

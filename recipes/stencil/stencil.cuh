/// \file stencil.cuh
/// \brief The stencil family: two ladders, the 2D convolution (SMEM_CONV2D_STEPS) and the 3D
/// 7-point stencil (SMEM_STENCIL7_STEPS), and the Variant enum, names, dispatchers and step
/// tables generated from them, which the tests and benchmarks iterate over. The family's one
/// step list, SMEM_STENCIL_STEPS, is the two ladders in order. Adding a step is one header, its
/// `#include` here and one line in its ladder's list.
#pragma once
#include <cuda_runtime.h>

#include "../smem_steps.cuh"
#include "conv2d_01_naive.cuh"
#include "conv2d_02_constant.cuh"
#include "conv2d_03_halo_tile.cuh"
#include "conv2d_04_cached_halo.cuh"
#include "conv2d_05_coarsened.cuh"
#include "conv2d_06_tma.cuh"
#include "st7_01_naive.cuh"
#include "st7_02_smem_3d.cuh"
#include "st7_03_planes.cuh"
#include "st7_04_registers.cuh"
#include "st7_05_cluster.cuh"
#include "st7_06_tma.cuh"

/// The 2D convolution's ladder: X(step, name, header, summary). `name` is the variant, the
/// launcher (`name(in, out, height, width, filter, radius, stream)`) and its plan
/// (`name##_plan(height, width, radius)`).
#define SMEM_CONV2D_STEPS(X)                                                                                \
  X(1, conv2d_naive, "conv2d_01_naive.cuh", "Naive: one thread per output, image and filter from global memory.") \
  X(2, conv2d_constant, "conv2d_02_constant.cuh", "The filter in constant memory: one broadcast per tap and warp.") \
  X(3, conv2d_halo_tile, "conv2d_03_halo_tile.cuh",                                                         \
    "Input tile with its halo in shared memory: the block loads (T + 2r)^2, computes T^2.")                 \
  X(4, conv2d_cached_halo, "conv2d_04_cached_halo.cuh",                                                     \
    "Output-sized shared tile; the halo read through the cache.")                                           \
  X(5, conv2d_coarsened, "conv2d_05_coarsened.cuh",                                                         \
    "8 x 4 outputs per thread from row windows in registers; 16-byte loads; the radius a template.")         \
  X(6, conv2d_tma, "conv2d_06_tma.cuh",                                                                     \
    "Hopper TMA both ways: the tile and its halo columns loaded as three boxes, the outputs stored from shared memory.")

/// The 7-point stencil's ladder: X(step, name, header, summary). `name` is the variant, the
/// launcher (`name(in, out, nx, ny, nz, coefficients, stream)`) and its plan
/// (`name##_plan(nx, ny, nz)`).
#define SMEM_STENCIL7_STEPS(X)                                                                              \
  X(1, st7_naive, "st7_01_naive.cuh", "Naive: one thread per point, seven global loads.")                  \
  X(2, st7_smem_3d, "st7_02_smem_3d.cuh", "A 3D shared tile with its halo: 32 x 4 x 4 points per block.")   \
  X(3, st7_planes, "st7_03_planes.cuh", "Coarsened in z: a ring of three shared planes, one new plane a step.") \
  X(4, st7_registers, "st7_04_registers.cuh",                                                               \
    "Register tiling: z neighbours in registers, one shared plane, 16-byte loads running two planes ahead.") \
  X(5, st7_cluster, "st7_05_cluster.cuh",                                                                   \
    "Hopper cluster: slabs hand their end planes to each other through distributed shared memory.") \
  X(6, st7_tma, "st7_06_tma.cuh",                                                                           \
    "Hopper TMA: five planes of a 256 x 32 tile and its halo land at once; a block computes three.")

/// The family's step list: both ladders.
#define SMEM_STENCIL_STEPS(X) SMEM_CONV2D_STEPS(X) SMEM_STENCIL7_STEPS(X)

namespace smem::stencil {

/// Variant, Step, kSteps[], kAllVariants[] and name(v), from the step list.
SMEM_STEP_TABLE(SMEM_STENCIL_STEPS)

/// Each ladder's own lines and variants.
inline constexpr Step kConv2dSteps[] = {SMEM_CONV2D_STEPS(SMEM_STEP_ROW)};
inline constexpr Step kStencil7Steps[] = {SMEM_STENCIL7_STEPS(SMEM_STEP_ROW)};
inline constexpr Variant kConv2dVariants[] = {SMEM_CONV2D_STEPS(SMEM_STEP_VARIANT)};
inline constexpr Variant kStencil7Variants[] = {SMEM_STENCIL7_STEPS(SMEM_STEP_VARIANT)};

/// Runs a convolution variant (cudaErrorInvalidValue for a 7-point one).
inline cudaError_t run_conv2d(Variant v, const float* in, float* out, int height, int width, const float* filter,
                              int radius, cudaStream_t stream = nullptr) {
  switch (v) {
#define SMEM_RUN(step, name, header, summary) \
  case Variant::name: return name(in, out, height, width, filter, radius, stream);
    SMEM_CONV2D_STEPS(SMEM_RUN)
#undef SMEM_RUN
    default: return cudaErrorInvalidValue;
  }
}

/// Runs a 7-point variant (cudaErrorInvalidValue for a convolution one).
inline cudaError_t run_7point(Variant v, const float* in, float* out, int nx, int ny, int nz, Coefficients c,
                              cudaStream_t stream = nullptr) {
  switch (v) {
#define SMEM_RUN(step, name, header, summary) \
  case Variant::name: return name(in, out, nx, ny, nz, c, stream);
    SMEM_STENCIL7_STEPS(SMEM_RUN)
#undef SMEM_RUN
    default: return cudaErrorInvalidValue;
  }
}

/// The launch plan a convolution variant uses (its kernel; the constant-memory steps also copy
/// the filter first), as the benchmark reports it.
inline Plan<const void*> plan_conv2d(Variant v, int height, int width, int radius) {
  switch (v) {
#define SMEM_PLAN(step, name, header, summary) \
  case Variant::name: return name##_plan(height, width, radius).erased();
    SMEM_CONV2D_STEPS(SMEM_PLAN)
#undef SMEM_PLAN
    default: return {nullptr, dim3(), dim3(), 0};
  }
}

/// The launch plan a 7-point variant uses, as the benchmark reports it.
inline Plan<const void*> plan_7point(Variant v, int nx, int ny, int nz) {
  switch (v) {
#define SMEM_PLAN(step, name, header, summary) \
  case Variant::name: return name##_plan(nx, ny, nz).erased();
    SMEM_STENCIL7_STEPS(SMEM_PLAN)
#undef SMEM_PLAN
    default: return {nullptr, dim3(), dim3(), 0};
  }
}

}  // namespace smem::stencil

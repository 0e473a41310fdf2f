/// \file transpose.cuh
/// \brief The transpose family: every step, one Variant enum and a dispatcher, which the tests
/// and benchmarks iterate over. Adding a step is one header and one enum entry here.
#pragma once
#include <cuda_runtime.h>

#include "transpose_00_copy.cuh"
#include "transpose_01_smem_copy.cuh"
#include "transpose_02_naive.cuh"
#include "transpose_03_smem_tile.cuh"
#include "transpose_04_padded.cuh"
#include "transpose_05_swizzled.cuh"
#include "transpose_06_vectorized.cuh"

namespace smem::transpose {

/// Every step of the ladder. copy and smem_copy are the roofs: they copy, not transpose.
enum class Variant { copy, smem_copy, naive, smem_tile, padded, swizzled, vectorized };

inline constexpr Variant kAllVariants[] = {Variant::copy,      Variant::smem_copy, Variant::naive,
                                           Variant::smem_tile, Variant::padded,    Variant::swizzled,
                                           Variant::vectorized};

/// True for the variants that transpose (all but the two copy roofs).
constexpr bool transposes(Variant v) { return v != Variant::copy && v != Variant::smem_copy; }

constexpr const char* name(Variant v) {
  switch (v) {
    case Variant::copy: return "copy";
    case Variant::smem_copy: return "smem_copy";
    case Variant::naive: return "naive";
    case Variant::smem_tile: return "smem_tile_32x32";
    case Variant::padded: return "padded_32x33";
    case Variant::swizzled: return "swizzled_32x32";
    case Variant::vectorized: return "vectorized";
  }
  return "?";
}

/// Runs one variant: out = transpose(in) (or out = in for the copy roofs).
template <class T>
cudaError_t run(Variant v, int rows, int cols, const T* in, T* out, cudaStream_t stream = nullptr) {
  switch (v) {
    case Variant::copy: return copy(rows, cols, in, out, stream);
    case Variant::smem_copy: return smem_copy(rows, cols, in, out, stream);
    case Variant::naive: return transpose_naive(rows, cols, in, out, stream);
    case Variant::smem_tile: return transpose_smem_tile(rows, cols, in, out, stream);
    case Variant::padded: return transpose_padded(rows, cols, in, out, stream);
    case Variant::swizzled: return transpose_swizzled(rows, cols, in, out, stream);
    case Variant::vectorized: return transpose_vectorized(rows, cols, in, out, stream);
  }
  return cudaErrorInvalidValue;
}

}  // namespace smem::transpose

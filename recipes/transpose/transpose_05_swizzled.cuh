/// \file transpose_05_swizzled.cuh
/// \brief Step 5, XOR-swizzled tile: conflict-free without padding.
///
/// Instead of widening the rows, the swizzle permutes each row: element (r, c) goes to column
/// c ^ r of row r. A column read (r = 0..31, c fixed) lands on columns c ^ 0 .. c ^ 31, a
/// permutation of 0..31, so 32 different banks; a row read permutes within one row, still
/// conflict-free. The tile stays 32 x 32 (no wasted words) and every row stays aligned, which
/// is what vectorized steps need (a padded row of 33 words breaks 16-byte alignment).
#pragma once
#include <cuda_runtime.h>

#include "transpose_03_smem_tile.cuh"

namespace smem::transpose {

//! [swizzled layout]
/// 32 x 32 tile: element (r, c) at word r * 32 + (c ^ r).
struct SwizzledLayout {
  static constexpr int kElements = kTile * kTile;
  __host__ __device__ static constexpr int offset(int r, int c) { return r * kTile + (c ^ r); }
};
//! [swizzled layout]

template <class T>
Plan<void (*)(int, int, const T*, T*)> swizzled_plan(int rows, int cols, const T*, const T*) {
  return tile_plan<T, SwizzledLayout>(rows, cols);
}

/// out (cols x rows) = transpose(in (rows x cols)) through an XOR-swizzled 32 x 32 shared tile.
template <class T>
cudaError_t swizzled(int rows, int cols, const T* in, T* out, cudaStream_t stream = nullptr) {
  return tiled<T, SwizzledLayout>(rows, cols, in, out, stream);
}

}  // namespace smem::transpose

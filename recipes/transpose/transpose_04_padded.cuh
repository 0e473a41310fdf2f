/// \file transpose_04_padded.cuh
/// \brief Step 4, padded 32 x 33 tile: the kernel of step 3 with one unused word per row.
///
/// With a row stride of 33 words, element (r, c) sits in bank (33 r + c) mod 32 = (r + c) mod 32:
/// the 32 lanes reading a column (r = 0..31, c fixed) now hit 32 different banks, one wavefront
/// instead of 32. Row accesses stay conflict-free. Cost: 32 extra words per tile (3%).
/// For `double` the same padding works: lanes are served 16 at a time (8-byte accesses) and
/// (66 r + 2 c) mod 32 separates the 16 lanes of each half.
#pragma once
#include <cuda_runtime.h>

#include "transpose_03_smem_tile.cuh"

namespace smem::transpose {

//! [padded layout]
/// 32 x 33 tile: element (r, c) at word r * 33 + c.
struct PaddedLayout {
  static constexpr int kElements = kTile * (kTile + 1);
  __host__ __device__ static constexpr int offset(int r, int c) { return r * (kTile + 1) + c; }
};
//! [padded layout]

template <class T>
Plan<void (*)(int, int, const T*, T*)> padded_plan(int rows, int cols, const T*, const T*) {
  return tile_plan<T, PaddedLayout>(rows, cols);
}

/// out (cols x rows) = transpose(in (rows x cols)) through a padded 32 x 33 shared tile.
template <class T>
cudaError_t padded(int rows, int cols, const T* in, T* out, cudaStream_t stream = nullptr) {
  return tiled<T, PaddedLayout>(rows, cols, in, out, stream);
}

}  // namespace smem::transpose

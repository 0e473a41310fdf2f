/// \file transpose_06_vectorized.cuh
/// \brief Step 6, coarsened and vectorized: 16-byte loads and stores everywhere, a 4 x 4
/// register transpose, and a swizzled tile of 16-byte chunks.
///
/// What changes from step 5, and why it is faster:
/// - Wider tiles, fewer blocks: a 256-byte-wide tile (64 x 64 float, 32 x 32 double) per block of
///   256 threads, so each warp request moves 512 contiguous bytes, 4 or 8 times step 5's.
/// - 16-byte accesses: each thread loads a V x V block (V = 16 / sizeof(T): 4 floats or 2
///   doubles) as V vectors of V elements from V consecutive rows, transposes it in registers,
///   and stores V vectors to shared memory already transposed. The read-back and the global
///   store are 16-byte vectors too. A quarter of the load/store instructions of step 5.
/// - Block order: consecutive blocks take consecutive tiles down a tile column (steps 0-5 go
///   along a tile row). Scattered 256-byte writes cost more DRAM bandwidth than scattered reads;
///   this order makes the writes of the blocks running together adjacent.
/// - The tile holds 16-byte chunks, placed by an XOR swizzle on the chunk index:
///   chunk c of transposed row r goes to c ^ ((r / V) mod S), S = 128 / 16 = 8 chunks per
///   128 bytes. The 8 lanes of each phase of a 16-byte store then hit 8 different chunks of a
///   128-byte line: conflict-free stores and loads (see the bank-model test).
///
/// Vector accesses need rows and cols to be multiples of V and both pointers 16-byte aligned;
/// otherwise the same kernel runs with V = 1 (scalar elements, swizzle r mod 32 for float, r mod
/// 16 for double), still coalesced and conflict-free, just with more instructions.
#pragma once
#include <cuda_runtime.h>

#include <cstdint>

#include "transpose_common.cuh"

namespace smem::transpose {

/// Tile edge (elements) of this step: 256 bytes per tile row.
template <class T>
inline constexpr int kVecTile = 256 / int(sizeof(T));
/// Threads per block.
inline constexpr int kVecThreads = 256;

//! [vectorized layout]
/// Shared-memory offset (in elements) of chunk c of row r of a Tile x Tile tile of T stored as
/// chunks of V elements. The XOR spreads the chunks that one phase of lanes accesses over all
/// 32 banks: S chunks span 128 bytes, the width of the bank array.
template <class T, int V, int Tile>
__host__ __device__ constexpr int vec_tile_offset(int r, int c) {
  constexpr int S = 128 / (V * int(sizeof(T)));
  return r * Tile + (c ^ ((r / V) % S)) * V;
}
//! [vectorized layout]

/// The thread maps of vectorized_kernel (C = Tile / V chunks per tile row): in the load loop,
/// thread id handles the V x V block (id / C, id % C) and its j-th transposed row goes to row
/// (id % C) V + j, chunk id / C; in the store loop it moves chunk (id / C, id % C).
template <class T, int V>
__host__ __device__ constexpr int vec_store_offset(int id, int j) {
  constexpr int Tile = 256 / int(sizeof(T)), C = Tile / V;
  return vec_tile_offset<T, V, Tile>(id % C * V + j, id / C);
}
template <class T, int V>
__host__ __device__ constexpr int vec_read_offset(int id) {
  constexpr int Tile = 256 / int(sizeof(T)), C = Tile / V;
  return vec_tile_offset<T, V, Tile>(id / C, id % C);
}

/// V elements of T moved as one access (16 bytes when V * sizeof(T) == 16).
template <class T, int V>
struct alignas(V * sizeof(T)) Chunk {
  T v[V];
};

//! [vectorized kernel]
template <class T, int V>
__global__ void __launch_bounds__(kVecThreads)
    vectorized_kernel(int rows, int cols, const T* __restrict__ in, T* __restrict__ out) {
  constexpr int Tile = kVecTile<T>, C = Tile / V;  // C chunks per tile row
  using Vec = Chunk<T, V>;
  __shared__ Vec tile[Tile * C];  // tile[r][c]: row r of the TRANSPOSED tile
  T* s = reinterpret_cast<T*>(tile);
  // Consecutive blocks walk DOWN a column of tiles: the blocks resident together then write
  // adjacent 256-byte pieces of the same rows of `out` and scatter their reads instead.
  const int tiles_r = tiles(rows, Tile);
  const int r0 = blockIdx.x % tiles_r * Tile, c0 = blockIdx.x / tiles_r * Tile;

  // Load V x V blocks: block (a, b) covers in rows r0 + a*V .. +V-1, cols c0 + b*V .. +V-1.
  // Consecutive lanes take consecutive b: each warp load is 32 contiguous chunks of a row.
  for (int id = threadIdx.x; id < C * C; id += kVecThreads) {
    const int a = id / C, b = id % C;
    const int col = c0 + b * V;
    Vec x[V];
#pragma unroll
    for (int k = 0; k < V; ++k) {
      const int row = r0 + a * V + k;
      if (row < rows && col < cols)  // with V > 1, rows and cols are multiples of V
        x[k] = *reinterpret_cast<const Vec*>(in + std::size_t(row) * cols + col);
    }
    // Register transpose: transposed row b*V + j, chunk a, holds column j of the V loaded rows.
#pragma unroll
    for (int j = 0; j < V; ++j) {
      Vec y;
#pragma unroll
      for (int k = 0; k < V; ++k) y.v[k] = x[k].v[j];
      *reinterpret_cast<Vec*>(s + vec_store_offset<T, V>(id, j)) = y;
    }
  }
  __syncthreads();

  // Store: transposed row r is out row c0 + r; chunk c covers out cols r0 + c*V .. +V-1.
  for (int id = threadIdx.x; id < C * Tile; id += kVecThreads) {
    const int r = id / C, c = id % C;
    const int orow = c0 + r, ocol = r0 + c * V;
    if (orow < cols && ocol < rows)
      *reinterpret_cast<Vec*>(out + std::size_t(orow) * rows + ocol) =
          *reinterpret_cast<const Vec*>(s + vec_read_offset<T, V>(id));
  }
}
//! [vectorized kernel]

/// Elements per 16-byte vector, or 1 when (rows, cols, in, out) do not allow 16-byte accesses.
template <class T>
constexpr int vector_width(int rows, int cols, const T* in, const T* out) {
  constexpr int V = 16 / int(sizeof(T));
  const bool aligned = (reinterpret_cast<std::uintptr_t>(in) | reinterpret_cast<std::uintptr_t>(out)) % 16 == 0;
  return aligned && rows % V == 0 && cols % V == 0 ? V : 1;
}

/// The 16-byte kernel when vector_width() allows it, the scalar one otherwise.
template <class T>
Plan<void (*)(int, int, const T*, T*)> vectorized_plan(int rows, int cols, const T* in, const T* out) {
  static_assert(16 % sizeof(T) == 0, "element size must divide 16 bytes");
  constexpr int V = 16 / int(sizeof(T));
  return grid_plan(vector_width(rows, cols, in, out) == V ? vectorized_kernel<T, V> : vectorized_kernel<T, 1>,
                   tile_count(rows, cols, kVecTile<T>), dim3(kVecThreads));
}

/// out (cols x rows) = transpose(in (rows x cols)): 16-byte vectors, register transpose,
/// swizzled 256-byte-wide tile. Any sizes; the vector path when vector_width() allows it.
template <class T>
cudaError_t vectorized(int rows, int cols, const T* in, T* out, cudaStream_t stream = nullptr) {
  if (Args a = check_args(rows, cols, in, out); a != Args::launch) return args_error(a);
  return launch(vectorized_plan(rows, cols, in, out), stream, rows, cols, in, out);
}

}  // namespace smem::transpose

// Tests and docs only: recipes never include support/.
//
// Every warp-wide shared-memory request of the transpose kernels, written once from the kernels'
// own index functions (the layouts' offset() and vectorized_kernel's vec_store_offset /
// vec_read_offset); see bank_access.hpp for how the tests and the docs use them.
#pragma once
#include <transpose/transpose.cuh>

#include "bank_access.hpp"

namespace smem::test::transpose_access {

namespace tr = smem::transpose;

/// Steps 1 and 3-5 run blocks of kTile x kBlockRows threads: warp w is threadIdx.y = w, lane l is
/// threadIdx.x = l, and warp w moves tile rows j = w, w + kBlockRows, ... So over one block there
/// is one warp request per j and access, lane l at column l.

/// Step 1 (smem_copy_kernel): `tile[j][tx]` written, then read back in the same order.
template <class T, class Visit>
void smem_copy(Visit&& visit) {
  constexpr const char* what = "row write and row read `tile[j][tx]`";
  for (int j = 0; j < tr::kTile; ++j) {
    visit(request(what, Access::store, sizeof(T), sizeof(T), [&](int l) { return j * tr::kTile + l; }));
    visit(request(what, Access::load, sizeof(T), sizeof(T), [&](int l) { return j * tr::kTile + l; }));
  }
}

/// Steps 3-5 (tile_kernel<T, Layout>): row writes `tile[offset(j, tx)]`, column reads
/// `tile[offset(tx, j)]`.
template <class Layout, class T, class Visit>
void tile(Visit&& visit) {
  for (int j = 0; j < tr::kTile; ++j) {
    visit(request("row write `tile[offset(j, tx)]`", Access::store, sizeof(T), sizeof(T),
                  [&](int l) { return Layout::offset(j, l); }));
    visit(request("column read `tile[offset(tx, j)]`", Access::load, sizeof(T), sizeof(T),
                  [&](int l) { return Layout::offset(l, j); }));
  }
}

/// Step 6 (vectorized_kernel<T, V>), one block of kVecThreads threads: thread id = 32 w + l
/// (+ kVecThreads per loop trip) stores the V transposed rows of its V x V block, then reads back
/// chunk id. V = 1 is the scalar fallback.
template <class T, int V, class Visit>
void vectorized(Visit&& visit) {
  constexpr int Tile = tr::kVecTile<T>, C = Tile / V, W = V * int(sizeof(T));
  const char* store = V > 1 ? "transposed chunk store" : "scalar fallback store";
  const char* load = V > 1 ? "chunk read-back" : "scalar fallback read-back";
  for (int first = 0; first < C * C; first += 32)
    for (int j = 0; j < V; ++j)
      visit(request(store, Access::store, W, sizeof(T),
                    [&](int l) { return tr::vec_store_offset<T, V>(first + l, j); }));
  for (int first = 0; first < C * Tile; first += 32)
    visit(request(load, Access::load, W, sizeof(T), [&](int l) { return tr::vec_read_offset<T, V>(first + l); }));
}

/// Not a kernel: step 6's transposed stores with the chunks placed row-major, without the XOR
/// (row r, chunk c at r * Tile + c * V), to show what the swizzle removes.
template <class T, int V, class Visit>
void vectorized_stores_without_swizzle(Visit&& visit) {
  constexpr int Tile = tr::kVecTile<T>, C = Tile / V, W = V * int(sizeof(T));
  for (int first = 0; first < C * C; first += 32)
    for (int j = 0; j < V; ++j)
      visit(request("transposed chunk store, chunks row-major", Access::store, W, sizeof(T), [&](int l) {
        const int id = first + l;
        return (id % C * V + j) * Tile + id / C * V;
      }));
}

}  // namespace smem::test::transpose_access

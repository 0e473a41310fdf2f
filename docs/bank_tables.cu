// Prints the tables of docs/banks.md: the bank model (common/bank_model.hpp) evaluated on the
// shared-memory index functions the recipe kernels use, for every access of every step.
// tools/report.py --bank-tables <this program> puts the output between the page's markers, and
// `--check` fails when the committed tables differ from what this program prints.
// Host only: it calls no CUDA function and runs without a GPU.
#include <transpose/transpose.cuh>

#include <algorithm>
#include <cstdio>
#include <set>
#include <string>

#include "bank_model.hpp"

namespace tr = smem::transpose;
using smem::bank::ideal_wavefronts;
using smem::bank::wavefronts_of;

namespace {

template <class T>
const char* type_name() { return sizeof(T) == 4 ? "float" : "double"; }

void row(const char* step, const std::string& access, const char* type, int width, int wavefronts) {
  const int ideal = ideal_wavefronts(width);
  std::printf("| %s | %s | %s | %d | %d | %d | %s |\n", step, access.c_str(), type, width, wavefronts,
              ideal, wavefronts == ideal ? "none" : (std::to_string(wavefronts / ideal) + "-way").c_str());
}

// Lane l of the first warp is thread (threadIdx.x = l, threadIdx.y = 0); the worst j is shown.
template <class Layout, class T>
int tile_access(bool column) {
  int worst = 0;
  for (int j = 0; j < tr::kTile; ++j)
    worst = std::max(worst, wavefronts_of([&](int l) {
      return (column ? Layout::offset(l, j) : Layout::offset(j, l)) * int(sizeof(T));
    }, sizeof(T)));
  return worst;
}

// vectorized_kernel: the transposed 16-byte stores and the read-back, every warp of the block.
template <class T, int V>
int vec_store() {
  constexpr int Tile = tr::kVecTile<T>, C = Tile / V;
  int worst = 0;
  for (int first = 0; first < C * C; first += 32)
    for (int j = 0; j < V; ++j)
      worst = std::max(worst, wavefronts_of([&](int l) {
        const int id = first + l;
        return tr::vec_tile_offset<T, V, Tile>(id % C * V + j, id / C) * int(sizeof(T));
      }, V * sizeof(T)));
  return worst;
}
template <class T, int V>
int vec_load() {
  constexpr int Tile = tr::kVecTile<T>, C = Tile / V;
  int worst = 0;
  for (int first = 0; first < C * Tile; first += 32)
    worst = std::max(worst, wavefronts_of([&](int l) {
      const int id = first + l;
      return tr::vec_tile_offset<T, V, Tile>(id / C, id % C) * int(sizeof(T));
    }, V * sizeof(T)));
  return worst;
}
// The same stores with the chunks placed row-major, without the XOR.
template <class T, int V>
int vec_store_unswizzled() {
  constexpr int Tile = tr::kVecTile<T>, C = Tile / V;
  int worst = 0;
  for (int first = 0; first < C * C; first += 32)
    for (int j = 0; j < V; ++j)
      worst = std::max(worst, wavefronts_of([&](int l) {
        const int id = first + l;
        return ((id % C * V + j) * Tile + id / C * V) * int(sizeof(T));
      }, V * sizeof(T)));
  return worst;
}

template <class T>
void transpose_rows() {
  const char* t = type_name<T>();
  const int w = sizeof(T);
  row("01 `smem_copy`", "row write and row read `tile[j][tx]`", t, w, tile_access<tr::UnpaddedLayout, T>(false));
  row("03 `smem_tile_32x32`", "row write `tile[offset(j, tx)]`", t, w, tile_access<tr::UnpaddedLayout, T>(false));
  row("03 `smem_tile_32x32`", "column read `tile[offset(tx, j)]`", t, w, tile_access<tr::UnpaddedLayout, T>(true));
  row("04 `padded_32x33`", "row write `tile[offset(j, tx)]`", t, w, tile_access<tr::PaddedLayout, T>(false));
  row("04 `padded_32x33`", "column read `tile[offset(tx, j)]`", t, w, tile_access<tr::PaddedLayout, T>(true));
  row("05 `swizzled_32x32`", "row write `tile[offset(j, tx)]`", t, w, tile_access<tr::SwizzledLayout, T>(false));
  row("05 `swizzled_32x32`", "column read `tile[offset(tx, j)]`", t, w, tile_access<tr::SwizzledLayout, T>(true));
}

// Banks of the first 8 lanes, and the number of distinct banks over the warp, for the column read
// (j = 0) of a 32 x 32 float tile.
template <class Layout>
void bank_map(const char* name) {
  std::string first;
  std::set<int> banks;
  for (int l = 0; l < 32; ++l) {
    const int bank = Layout::offset(l, 0) % smem::bank::kBanks;
    banks.insert(bank);
    if (l < 8) first += (l ? ", " : "") + std::to_string(bank);
  }
  std::printf("| %s | %s, ... | %zu | %d |\n", name, first.c_str(), banks.size(),
              wavefronts_of([](int l) { return Layout::offset(l, 0) * 4; }, 4));
}

}  // namespace

int main() {
  std::printf("Column read (`j = 0`) of the 32 x 32 float tile: the bank of each lane's word.\n\n");
  std::printf("| layout | banks of lanes 0..7 | distinct banks (32 lanes) | wavefronts |\n");
  std::printf("| --- | --- | ---: | ---: |\n");
  bank_map<tr::UnpaddedLayout>("`UnpaddedLayout` (r * 32 + c)");
  bank_map<tr::PaddedLayout>("`PaddedLayout` (r * 33 + c)");
  bank_map<tr::SwizzledLayout>("`SwizzledLayout` (r * 32 + (c ^ r))");

  std::printf("\nEvery shared-memory access of the transpose ladder, the worst warp request of each "
              "(wavefronts per request; ideal = bytes per lane / 4):\n\n");
  std::printf("| step | access | element | bytes/lane | wavefronts | ideal | conflict |\n");
  std::printf("| --- | --- | --- | ---: | ---: | ---: | --- |\n");
  transpose_rows<float>();
  transpose_rows<double>();
  row("06 `vectorized`", "transposed chunk store (V = 4)", "float", 16, vec_store<float, 4>());
  row("06 `vectorized`", "chunk read-back (V = 4)", "float", 16, vec_load<float, 4>());
  row("06 `vectorized`", "transposed chunk store (V = 2)", "double", 16, vec_store<double, 2>());
  row("06 `vectorized`", "chunk read-back (V = 2)", "double", 16, vec_load<double, 2>());
  row("06 `vectorized`", "scalar fallback store (V = 1)", "float", 4, vec_store<float, 1>());
  row("06 `vectorized`", "scalar fallback read-back (V = 1)", "float", 4, vec_load<float, 1>());
  row("06 `vectorized`", "scalar fallback store (V = 1)", "double", 8, vec_store<double, 1>());
  row("06 `vectorized`", "scalar fallback read-back (V = 1)", "double", 8, vec_load<double, 1>());
  row("06 without the XOR", "transposed chunk store (V = 4), chunks row-major", "float", 16,
      vec_store_unswizzled<float, 4>());
  row("06 without the XOR", "transposed chunk store (V = 2), chunks row-major", "double", 16,
      vec_store_unswizzled<double, 2>());
  return 0;
}

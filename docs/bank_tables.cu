// Prints the tables of docs/banks.md: the bank model (common/bank_model.hpp) evaluated on the
// shared-memory index functions the recipe kernels use, for every access of every step.
// tools/report.py --bank-tables <this program> puts the output between the page's markers, and
// `--check` fails when the committed tables differ from what this program prints.
// Host only: it calls no CUDA function and runs without a GPU.
#include <gemm/gemm.cuh>
#include <reduction/reduction.cuh>
#include <transpose/transpose.cuh>

#include <algorithm>
#include <cstdio>
#include <set>
#include <string>

#include "bank_model.hpp"
#include "gemm_bank_access.hpp"

namespace tr = smem::transpose;
namespace gm = smem::gemm;
namespace rd = smem::reduction;
using smem::bank::Cost;
using smem::bank::cost_of;
using smem::bank::wavefronts_of;

namespace {

template <class T>
const char* type_name() { return sizeof(T) == 4 ? "float" : "double"; }

// A request's wavefronts, its phases (the wavefronts it would take without a conflict) and the
// conflict: the wavefronts of its worst phase.
void row(const char* step, const std::string& access, const char* type, int width, Cost c) {
  std::printf("| %s | %s | %s | %d | %d | %d | %s |\n", step, access.c_str(), type, width, c.wavefronts,
              c.phases,
              c.conflict_free() ? "none" : (std::to_string(c.wavefronts / c.phases) + "-way").c_str());
}

Cost worse(Cost a, Cost b) { return b.wavefronts > a.wavefronts ? b : a; }

// Lane l of the first warp is thread (threadIdx.x = l, threadIdx.y = 0); the worst j is shown.
template <class Layout, class T>
Cost tile_access(bool column) {
  Cost worst;
  for (int j = 0; j < tr::kTile; ++j)
    worst = worse(worst, cost_of([&](int l) {
      return (column ? Layout::offset(l, j) : Layout::offset(j, l)) * int(sizeof(T));
    }, sizeof(T)));
  return worst;
}

// vectorized_kernel: the transposed 16-byte stores and the read-back, every warp of the block,
// through the kernel's own maps; `unswizzled`: the same stores with the chunks placed row-major.
template <class T, int V>
Cost vec_store(bool unswizzled = false) {
  constexpr int Tile = tr::kVecTile<T>, C = Tile / V;
  Cost worst;
  for (int first = 0; first < C * C; first += 32)
    for (int j = 0; j < V; ++j)
      worst = worse(worst, cost_of([&](int l) {
        const int id = first + l;
        return (unswizzled ? (id % C * V + j) * Tile + id / C * V : tr::vec_store_offset<T, V>(id, j)) * int(sizeof(T));
      }, V * sizeof(T)));
  return worst;
}
template <class T, int V>
Cost vec_load() {
  constexpr int Tile = tr::kVecTile<T>, C = Tile / V;
  Cost worst;
  for (int first = 0; first < C * Tile; first += 32)
    worst = worse(worst, cost_of([&](int l) { return tr::vec_read_offset<T, V>(first + l) * int(sizeof(T)); },
                                 V * sizeof(T)));
  return worst;
}

template <class T>
void transpose_rows() {
  const char* t = type_name<T>();
  const int w = sizeof(T);
  row("01 `smem_copy`", "row write and row read `tile[j][tx]`", t, w, tile_access<tr::UnpaddedLayout, T>(false));
  row("03 `smem_tile`", "row write `tile[offset(j, tx)]`", t, w, tile_access<tr::UnpaddedLayout, T>(false));
  row("03 `smem_tile`", "column read `tile[offset(tx, j)]`", t, w, tile_access<tr::UnpaddedLayout, T>(true));
  row("04 `padded`", "row write `tile[offset(j, tx)]`", t, w, tile_access<tr::PaddedLayout, T>(false));
  row("04 `padded`", "column read `tile[offset(tx, j)]`", t, w, tile_access<tr::PaddedLayout, T>(true));
  row("05 `swizzled`", "row write `tile[offset(j, tx)]`", t, w, tile_access<tr::SwizzledLayout, T>(false));
  row("05 `swizzled`", "column read `tile[offset(tx, j)]`", t, w, tile_access<tr::SwizzledLayout, T>(true));
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

// One row per access of a kernel, its worst request (smem::test::worst_by_access over the
// kernel's requests, common/gemm_bank_access.hpp).
template <class Walk>
void kernel_rows(const char* step, Walk&& walk) {
  for (const auto& a : smem::test::worst_by_access(walk)) row(step, a.what, "float", a.width, a.cost);
}

void gemm_rows() {
  namespace ga = smem::test::gemm_access;
  for (int K : {64, 1001, 1024}) {
    const std::string step = "03 `full_k_strip` (K = " + std::to_string(K) + ")";
    kernel_rows(step.c_str(), [K](auto&& v) { ga::full_k_strip(K, v); });
  }
  row("03 without the +1", "A strip read, row stride K (K = 1024)", "float", 4,
      cost_of([](int l) { return (l / 16 * 1024) * 4; }, 4));
  kernel_rows("04 `tiled_16`", [](auto&& v) { ga::tiled<16, 0>(v); });
  kernel_rows("04 `tiled_32`", [](auto&& v) { ga::tiled<32, 0>(v); });
  kernel_rows("05 `tiled_32_padded`", [](auto&& v) { ga::tiled<32, 1>(v); });
  kernel_rows("07 `blocktile_1d`", [](auto&& v) { ga::blocktile_1d(v); });
  kernel_rows("08 `blocktile_2d`", [](auto&& v) { ga::blocktile_2d(v); });
  kernel_rows("09 `vectorized`", [](auto&& v) { ga::vectorized<gm::Vectorized<128>>(v); });
  kernel_rows("10 `conflict_free`", [](auto&& v) { ga::vectorized<gm::ConflictFree>(v); });
  kernel_rows("11 `warptiled`", [](auto&& v) {
    ga::fragment_reads<gm::WarptiledShape>(v);
    ga::staged_stores<gm::WarptiledShape>(v);
  });
  kernel_rows("12 `multistage`", [](auto&& v) {
    ga::fragment_reads<gm::MultistageDefault>(v);
    ga::copies<gm::MultistageDefault>(v);
  });
}

// Reduction tree round `stride`, warp 0 (busy in every round): the worse of the two accesses
// s[k] and s[k + stride] over the lanes that take part.
template <class T>
int strided_round(unsigned stride) {
  std::uint32_t active = 0;
  for (unsigned l = 0; l < 32; ++l)
    if (rd::strided_index(stride, l) < unsigned(rd::kTreeThreads)) active |= 1u << l;
  const int a = wavefronts_of([&](int l) { return rd::strided_index(stride, l) * sizeof(T); }, sizeof(T), active);
  const int b = wavefronts_of([&](int l) { return (rd::strided_index(stride, l) + stride) * sizeof(T); },
                              sizeof(T), active);
  return std::max(a, b);
}
template <class T>
int sequential_round(unsigned stride) {
  std::uint32_t active = 0;
  for (unsigned l = 0; l < 32; ++l)
    if (l < stride) active |= 1u << l;
  const int a = wavefronts_of([&](int l) { return l * int(sizeof(T)); }, sizeof(T), active);
  const int b = wavefronts_of([&](int l) { return rd::sequential_partner(stride, l) * sizeof(T); }, sizeof(T),
                              active);
  return std::max(a, b);
}

void reduction_rows() {
  for (unsigned s = 1; s < unsigned(rd::kTreeThreads); s *= 2) {
    int lanes = 0;
    for (unsigned l = 0; l < 32; ++l) lanes += rd::strided_index(s, l) < unsigned(rd::kTreeThreads);
    std::printf("| %u | %d | %d | %d | %d | %d |\n", s, lanes, strided_round<float>(s), strided_round<double>(s),
                sequential_round<float>(s), sequential_round<double>(s));
  }
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
              "(wavefronts per request; phases: what it takes without a conflict):\n\n");
  std::printf("| step | access | element | bytes/lane | wavefronts | phases | conflict |\n");
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
      vec_store<float, 4>(true));
  row("06 without the XOR", "transposed chunk store (V = 2), chunks row-major", "double", 16,
      vec_store<double, 2>(true));

  std::printf("\nEvery shared-memory access of the SGEMM ladder (steps with a shared tile), the worst "
              "warp request over every warp of the block and every k (a float4 that lanes share in "
              "pairs is 2 phases, a `cp.async` copy is 4 whatever its width):\n\n");
  std::printf("| step | access | element | bytes/lane | wavefronts | phases | conflict |\n");
  std::printf("| --- | --- | --- | ---: | ---: | ---: | --- |\n");
  gemm_rows();

  std::printf("\nThe reduction's shared-memory tree (%d values per block), round by round, warp 0: "
              "wavefronts of the worse of its two accesses `s[k]` and `s[k + stride]`. Step 2 indexes "
              "`k = 2 * stride * tid` (lanes 2 * stride words apart), step 3 `k = tid` with partner "
              "`tid + stride`.\n\n", rd::kTreeThreads);
  std::printf("| stride | active lanes (step 2) | 02 `interleaved_strided`, float | 02, double | "
              "03 `sequential`, float | 03, double |\n");
  std::printf("| ---: | ---: | ---: | ---: | ---: | ---: |\n");
  reduction_rows();
  return 0;
}

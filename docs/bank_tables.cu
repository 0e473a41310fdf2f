// Prints the tables of docs/banks.md: the bank model (common/bank_model.hpp) evaluated on the
// shared-memory index functions the recipe kernels use, for every access of every step.
// tools/report.py --bank-tables <this program> puts the output between the page's markers, and
// `--check` fails when the committed tables differ from what this program prints.
// Host only: it calls no CUDA function and runs without a GPU.
#include <gemm/sgemm_03_full_k_strip.cuh>
#include <gemm/sgemm_04_tiled.cuh>
#include <gemm/sgemm_07_blocktile_1d.cuh>
#include <gemm/sgemm_08_blocktile_2d.cuh>
#include <gemm/sgemm_09_vectorized.cuh>
#include <gemm/sgemm_10_conflict_free.cuh>
#include <gemm/sgemm_11_warptiled.cuh>
#include <gemm/sgemm_12_multistage.cuh>
#include <reduction/reduction_02_interleaved_strided.cuh>
#include <reduction/reduction_03_sequential.cuh>
#include <transpose/transpose.cuh>

#include <algorithm>
#include <cstdio>
#include <set>
#include <string>

#include "bank_model.hpp"

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

// vectorized_kernel: the transposed 16-byte stores and the read-back, every warp of the block.
// `at(r, c)` is the element offset of chunk c of transposed row r.
template <class T, int V, class At>
Cost vec_store_with(At at) {
  constexpr int Tile = tr::kVecTile<T>, C = Tile / V;
  Cost worst;
  for (int first = 0; first < C * C; first += 32)
    for (int j = 0; j < V; ++j)
      worst = worse(worst, cost_of([&](int l) {
        const int id = first + l;
        return at(id % C * V + j, id / C) * int(sizeof(T));
      }, V * sizeof(T)));
  return worst;
}
template <class T, int V>
Cost vec_store() {
  return vec_store_with<T, V>([](int r, int c) { return tr::vec_tile_offset<T, V, tr::kVecTile<T>>(r, c); });
}
template <class T, int V>
Cost vec_load() {
  constexpr int Tile = tr::kVecTile<T>, C = Tile / V;
  Cost worst;
  for (int first = 0; first < C * Tile; first += 32)
    worst = worse(worst, cost_of([&](int l) {
      const int id = first + l;
      return tr::vec_tile_offset<T, V, Tile>(id / C, id % C) * int(sizeof(T));
    }, V * sizeof(T)));
  return worst;
}
// The same stores with the chunks placed row-major, without the XOR.
template <class T, int V>
Cost vec_store_unswizzled() {
  return vec_store_with<T, V>([](int r, int c) { return r * tr::kVecTile<T> + c * V; });
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

// The worst request over every warp w of a block of `threads` threads and every k < ks:
// addr(w, k, lane) -> byte address; a cp.async copy when `copy`.
template <class Addr>
Cost worst(int threads, int ks, int width, Addr&& addr, bool copy = false) {
  Cost out;
  for (int w = 0; w < threads / 32; ++w)
    for (int k = 0; k < ks; ++k) {
      auto lane = [&](int l) { return addr(w, k, l); };
      out = worse(out, copy ? smem::bank::copy_cost_of(lane, width) : cost_of(lane, width));
    }
  return out;
}

// SGEMM tiled steps: T x T threads, tx = tid % T, ty = tid / T.
template <int T, int Pad>
void tiled_rows(const char* step) {
  using L = gm::TileLayout<T, Pad>;
  auto tx = [](int w, int l) { return (32 * w + l) % T; };
  auto ty = [](int w, int l) { return (32 * w + l) / T; };
  row(step, "tile store `As[ty][tx]`, `Bs[ty][tx]`", "float", 4,
      worst(T * T, 1, 4, [&](int w, int, int l) { return L::offset(ty(w, l), tx(w, l)) * 4; }));
  if (Pad == 0)  // four k at once: the rows are 16-byte aligned, and the compiler reads a float4
    row(step, "A read `As[ty][k .. k + 3]` (one 16-byte load)", "float", 16,
        worst(T * T, T / 4, 16, [&](int w, int k, int l) { return L::offset(ty(w, l), 4 * k) * 4; }));
  else
    row(step, "A read `As[ty][k]`", "float", 4,
        worst(T * T, T, 4, [&](int w, int k, int l) { return L::offset(ty(w, l), k) * 4; }));
  row(step, "B read `Bs[k][tx]`", "float", 4,
      worst(T * T, T, 4, [&](int w, int k, int l) { return L::offset(k, tx(w, l)) * 4; }));
}

// Steps 11 and 12 (the shapes they launch by default): float4 fragment reads of A and B for every
// warp and k; step 11's register-staged A store; step 12's cp.async copies.
template <class T, bool StagedStore>
void warptiling_rows(const char* step) {
  const int threads = T::kThreads;
  Cost a, b;
  for (int gi = 0; gi < T::kTM / 4; ++gi)
    a = worse(a, worst(threads, T::kBK, 16, [&](int w, int k, int l) { return T::a_offset(k, T::thread_row(w, l, gi)) * 4; }));
  for (int gj = 0; gj < T::kTN / 4; ++gj)
    b = worse(b, worst(threads, T::kBK, 16, [&](int w, int k, int l) { return T::b_offset(k, T::thread_col(w, l, gj)) * 4; }));
  row(step, "A fragment float4 read", "float", 16, a);
  row(step, "B fragment float4 read", "float", 16, b);
  if constexpr (StagedStore) {
    Cost st;
    for (int first = 0; first < T::kBM * T::kBK / 4; first += 32)
      for (int c = 0; c < 4; ++c)
        st = worse(st, cost_of([&](int l) {
          const int idx = first + l;
          return T::a_offset(idx % (T::kBK / 4) * 4 + c, idx / (T::kBK / 4)) * 4;
        }, 4));
    row(step, "register-staged A store, 4 words down `As`", "float", 4, st);
  } else {
    using S = T;
    Cost ca, cb;
    for (int p = 0; p < S::kAPasses; ++p)
      for (int c = 0; c < S::kAChunks; ++c)
        ca = worse(ca, worst(threads, 1, 4, [&](int w, int, int l) {
          const int t = 32 * w + l;
          return S::a_offset(S::a_copy_k(t, c), S::a_copy_row(t, p)) * 4;
        }, true));
    for (int q = 0; q < S::kBPasses; ++q)
      cb = worse(cb, worst(threads, 1, 16, [&](int w, int, int l) {
        const int t = 32 * w + l;
        return S::b_offset(S::b_copy_row(t, q), S::b_copy_col(t)) * 4;
      }, true));
    row(step, "`cp.async` 4-byte copy of A into `As[k][m]`", "float", 4, ca);
    row(step, "`cp.async` 16-byte copy of B", "float", 16, cb);
  }
}

void gemm_rows() {
  // Step 3: a 16 x 16 block; warp 0 has rows ty = 0 and 1 (lanes 0-15 and 16-31).
  for (int K : {64, 1001, 1024}) {
    const std::string k = " (K = " + std::to_string(K) + ")";
    row("03 `full_k_strip`", "A strip read `As[ty][k]`" + k, "float", 4,
        worst(32, K, 4, [&](int, int kk, int l) { return gm::strip_a_offset(K, l / 16, kk) * 4; }));
    row("03 `full_k_strip`", "B strip read `Bs[k][tx]`" + k, "float", 4,
        worst(32, K, 4, [&](int, int kk, int l) { return gm::strip_b_offset(K, kk, l % 16) * 4; }));
  }
  row("03 without the +1", "A strip read, row stride K (K = 1024)", "float", 4,
      worst(32, 1024, 4, [&](int, int kk, int l) { return (l / 16 * 1024 + kk) * 4; }));
  tiled_rows<16, 0>("04 `tiled_16`");
  tiled_rows<32, 0>("04 `tiled_32`");
  tiled_rows<32, 1>("05 `tiled_32_padded`");
  {  // Steps 7 and 8 read each thread's 8 consecutive words of A (and of B in step 8) as float4.
    namespace b1 = gm::bt1d;
    namespace b2 = gm::bt2d;
    row("07 `blocktile_1d`", "A read `As[(ty * TM + i) * BK + k .. + 3]`", "float", 16,
        worst(b1::kThreads, b1::TM, 16, [&](int w, int i, int l) { return ((32 * w + l) / b1::BN * b1::TM + i) * b1::BK * 4; }));
    row("07 `blocktile_1d`", "B read `Bs[k * BN + tx]`", "float", 4,
        worst(b1::kThreads, b1::BK, 4, [&](int w, int k, int l) { return (k * b1::BN + (32 * w + l) % b1::BN) * 4; }));
    row("08 `blocktile_2d`", "A read `As[(ty * TM + i) * BK + k .. + 3]`", "float", 16,
        worst(b2::kThreads, b2::TM, 16, [&](int w, int i, int l) {
          return ((32 * w + l) / (b2::BN / b2::TN) * b2::TM + i) * b2::BK * 4;
        }));
    row("08 `blocktile_2d`", "B read `Bs[k * BN + tx * TN + j .. + 3]`", "float", 16,
        worst(b2::kThreads, b2::BK, 16, [&](int w, int k, int l) {
          return (k * b2::BN + (32 * w + l) % (b2::BN / b2::TN) * b2::TN) * 4;
        }));
  }
  namespace v = gm::vec;
  auto tid = [](int w, int l) { return 32 * w + l; };
  const int tpr = v::BN / v::TN;
  row("09 `vectorized`", "transposed A store `As[a_col + i][a_row]`", "float", 4,
      worst(v::kThreads, 4, 4, [&](int w, int i, int l) {
        return v::a_offset(v::a_col(tid(w, l)) + i, v::a_row(tid(w, l))) * 4;
      }));
  row("09 `vectorized`", "B float4 store `Bs[b_row][b_col]`", "float", 16,
      worst(v::kThreads, 1, 16, [&](int w, int, int l) { return v::b_offset(v::b_row(tid(w, l)), v::b_col(tid(w, l))) * 4; }));
  row("09 `vectorized`", "A fragment float4 read", "float", 16,
      worst(v::kThreads, v::BK * 2, 16, [&](int w, int kh, int l) {
        return v::a_offset(kh / 2, v::frag(tid(w, l) / tpr, kh % 2 * 4)) * 4;
      }));
  row("09 `vectorized`", "B fragment float4 read", "float", 16,
      worst(v::kThreads, v::BK * 2, 16, [&](int w, int kh, int l) {
        return v::b_offset(kh / 2, v::frag(tid(w, l) % tpr, kh % 2 * 4)) * 4;
      }));
  row("10 `conflict_free`", "transposed A store, rows padded to 132 words", "float", 4,
      worst(gm::cf::kThreads, 4, 4, [&](int w, int c, int l) {
        return gm::cf::a_offset(gm::cf::a_col(tid(w, l)) + c, gm::cf::a_row(tid(w, l))) * 4;
      }));
  row("10 `conflict_free`", "A fragment float4 read", "float", 16,
      worst(gm::cf::kThreads, gm::cf::BK * 2, 16, [&](int w, int kh, int l) {
        return gm::cf::a_offset(kh / 2, v::frag(tid(w, l) / tpr, kh % 2 * 4)) * 4;
      }));
  warptiling_rows<gm::WarptiledShape, true>("11 `warptiled`");
  warptiling_rows<gm::MultistageDefault, false>("12 `multistage`");
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
      vec_store_unswizzled<float, 4>());
  row("06 without the XOR", "transposed chunk store (V = 2), chunks row-major", "double", 16,
      vec_store_unswizzled<double, 2>());

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

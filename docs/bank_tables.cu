// Prints the tables of docs/banks.md: the bank model (support/bank_model.hpp) evaluated on every
// warp request of every step's kernel, from the access lists the bank-model tests use
// (support/*_bank_access.hpp, written from the recipes' own index functions).
// tools/report.py --bank-tables <this program> puts the output between the page's markers, and
// `--check` fails when the committed tables differ from what this program prints.
// Host only: it calls no CUDA function and runs without a GPU.
#include <attention/attention.cuh>
#include <gemm/gemm.cuh>
#include <histogram/histogram.cuh>
#include <reduction/reduction.cuh>
#include <scan/scan.cuh>
#include <stencil/stencil.cuh>
#include <tc_gemm/tc_gemm.cuh>
#include <transpose/transpose.cuh>

#include <cstdio>
#include <set>
#include <string>
#include <utility>

#include "attention_bank_access.hpp"
#include "bank_model.hpp"
#include "gemm_bank_access.hpp"
#include "histogram_bank_access.hpp"
#include "reduction_bank_access.hpp"
#include "scan_bank_access.hpp"
#include "stencil_bank_access.hpp"
#include "tc_gemm_bank_access.hpp"
#include "transpose_bank_access.hpp"

namespace tr = smem::transpose;
namespace gm = smem::gemm;
namespace rd = smem::reduction;
namespace ra = smem::test::reduction_access;
namespace sa = smem::test::scan_access;
namespace sta = smem::test::stencil_access;
namespace ta = smem::test::transpose_access;
namespace tc = smem::tc_gemm;
namespace tca = smem::test::tc_gemm_access;
namespace att = smem::attention;
namespace aa = smem::test::attention_access;
using smem::bank::Cost;
using smem::bank::wavefronts_of;
using smem::test::Access;

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

// One row per access of a kernel, its worst request (smem::test::worst_by_access over the
// kernel's requests), the access named `what` plus `suffix`.
template <class Walk>
void kernel_rows(const char* step, const char* type, Walk&& walk, const std::string& suffix = "") {
  for (const auto& a : smem::test::worst_by_access(walk)) row(step, a.what + suffix, type, a.width, a.cost);
}

template <class T>
void transpose_rows() {
  const char* t = type_name<T>();
  kernel_rows("01 `smem_copy`", t, [](auto&& v) { ta::smem_copy<T>(v); });
  kernel_rows("03 `smem_tile`", t, [](auto&& v) { ta::tile<tr::UnpaddedLayout, T>(v); });
  kernel_rows("04 `padded`", t, [](auto&& v) { ta::tile<tr::PaddedLayout, T>(v); });
  kernel_rows("05 `swizzled`", t, [](auto&& v) { ta::tile<tr::SwizzledLayout, T>(v); });
}

// Step 6 with V elements per access: " (V = 4)" after the access.
template <class T, int V>
void vectorized_rows() {
  const std::string v = " (V = " + std::to_string(V) + ")";
  kernel_rows("06 `vectorized`", type_name<T>(), [](auto&& visit) { ta::vectorized<T, V>(visit); }, v);
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

void gemm_rows() {
  namespace ga = smem::test::gemm_access;
  const char* f = "float";
  for (int K : {64, 1001, 1024}) {
    const std::string step = "03 `full_k_strip` (K = " + std::to_string(K) + ")";
    kernel_rows(step.c_str(), f, [K](auto&& v) { ga::full_k_strip(K, v); });
  }
  kernel_rows("03 without the +1", f, [](auto&& v) { ga::full_k_strip_read_without_pad(1024, v); }, " (K = 1024)");
  kernel_rows("04 `tiled_16`", f, [](auto&& v) { ga::tiled<16, 0>(v); });
  kernel_rows("04 `tiled_32`", f, [](auto&& v) { ga::tiled<32, 0>(v); });
  kernel_rows("05 `tiled_32_padded`", f, [](auto&& v) { ga::tiled<32, 1>(v); });
  kernel_rows("07 `blocktile_1d`", f, [](auto&& v) { ga::blocktile_1d(v); });
  kernel_rows("08 `blocktile_2d`", f, [](auto&& v) { ga::blocktile_2d(v); });
  kernel_rows("09 `vectorized`", f, [](auto&& v) { ga::vectorized<gm::Vectorized<128>>(v); });
  kernel_rows("10 `conflict_free`", f, [](auto&& v) { ga::vectorized<gm::ConflictFree>(v); });
  kernel_rows("11 `warptiled`", f, [](auto&& v) {
    ga::fragment_reads<gm::WarptiledShape>(v);
    ga::staged_stores<gm::WarptiledShape>(v);
  });
  kernel_rows("12 `multistage`", f, [](auto&& v) {
    ga::fragment_reads<gm::MultistageDefault>(v);
    ga::copies<gm::MultistageDefault>(v);
  });
  kernel_rows("14 `split_tf32`", f, [](auto&& v) { ga::split_tf32<gm::SplitTf32Default>(v); });
#if defined(SMEM_GEMM_SM90A)
  kernel_rows("15 `split_wgmma`", f, [](auto&& v) { ga::split_wgmma<gm::SplitWgmmaShape>(v); });
  kernel_rows("16 `split_presplit`", f, [](auto&& v) { ga::split_wgmma<gm::PresplitShape>(v); });
#endif
}

// Reduction tree round `stride`, warp 0 (busy in every round): the worst of its requests (the
// two loads s[k] and s[k + stride], and the store to s[k], which costs what s[k] does).
template <class T>
int strided_round(unsigned stride) {
  return smem::test::worst_request([&](auto&& v) { ra::strided_round<T>(0, stride, v); }).wavefronts;
}
template <class T>
int sequential_round(unsigned stride) {
  return smem::test::worst_request([&](auto&& v) { ra::sequential_round<T>(0, stride, v); }).wavefronts;
}

void reduction_rows() {
  for (unsigned s = 1; s < unsigned(rd::kTreeThreads); s *= 2) {
    int lanes = 0;
    ra::strided_round<float>(0, s, [&](const smem::test::Request& r) { lanes = __builtin_popcount(r.active); });
    std::printf("| %u | %d | %d | %d | %d | %d |\n", s, lanes, strided_round<float>(s), strided_round<double>(s),
                sequential_round<float>(s), sequential_round<double>(s));
  }
}

template <class T>
void scan_rows() {
  namespace sc = smem::scan;
  const char* t = type_name<T>();
  kernel_rows("01 `kogge_stone`", t, [](auto&& v) { sa::kogge_stone<T>(v); });
  kernel_rows("02 `brent_kung`", t, [](auto&& v) { sa::brent_kung<sc::DenseLayout, T>(v); });
  kernel_rows("03 `padded`", t, [](auto&& v) { sa::brent_kung<sc::PaddedLayout, T>(v); });
  kernel_rows("04 `warp_shuffle`", t, [](auto&& v) { sa::warp_shuffle<T>(v); });
  kernel_rows("05, 06 tile transpose", t, [](auto&& v) {
    sa::tile_load<T>(v);
    sa::tile_store<T>(v);
  });
}

// Every access of each histogram kernel for uint8 samples (256 privatized counters) and for 1024
// and 65536 float bins; the atomics for each data pattern, suffixed with the pattern.
void histogram_rows() {
  namespace hg = smem::histogram;
  namespace ha = smem::test::histogram_access;
  for (const auto& shape : {std::pair<const char*, int>{"uint8", 256}, {"float", 1024}, {"float", 65536}})
    for (const auto& s : hg::kSteps) {
      const char* type = shape.first;
      const int pbins = shape.second;
      if (s.variant == hg::Variant::global_atomics || (pbins > 256 && !hg::fits<float>(s.variant, pbins))) continue;
      const std::string step = "0" + std::to_string(s.step) + " `" + s.name + "`";
      const std::string shape = std::string(type) + ", " + std::to_string(pbins);
      for (auto p : {ha::Pattern::distinct, ha::Pattern::strided, ha::Pattern::same})
        for (const auto& a : smem::test::worst_by_access([&](auto&& v) { ha::walk(s.variant, pbins, p, v); }))
          if (p == ha::Pattern::distinct || a.what.rfind("atomicAdd", 0) == 0)
            row(step.c_str(), a.what + (a.what.rfind("atomicAdd", 0) == 0 ? std::string(", ") + ha::pattern_name(p) : ""),
                shape.c_str(), a.width, a.cost);
    }
}

void stencil_rows() {
  kernel_rows("conv 03 `conv2d_halo_tile`", "float", [](auto&& v) { sta::halo_tile(2, v); });
  kernel_rows("conv 04 `conv2d_cached_halo`", "float", [](auto&& v) { sta::cached_halo(2, v); });
  kernel_rows("conv 05 `conv2d_coarsened`", "float", [](auto&& v) { sta::coarsened<2>(v); });
  kernel_rows("conv 06 `conv2d_tma`", "float", [](auto&& v) { sta::tma_tile<2>(v); });
  kernel_rows("7-point 02 `st7_smem_3d`", "float", [](auto&& v) { sta::smem_3d(v); });
  kernel_rows("7-point 03 `st7_planes`", "float", [](auto&& v) { sta::planes_step(v); });
  kernel_rows("7-point 04 `st7_registers`", "float", [](auto&& v) { sta::registers_step(v); });
  kernel_rows("7-point 05 `st7_cluster`", "float", [](auto&& v) { sta::cluster(v); });
  kernel_rows("7-point 06 `st7_tma`", "float", [](auto&& v) { sta::tma_slab_step(v); });
}

void tc_gemm_rows() {
  kernel_rows("03 `mma_ldmatrix`", "bf16", [](auto&& v) { tca::mma_tiled<tc::LdmatrixA, tc::LdmatrixB>(v); });
  kernel_rows("04 `padded`", "bf16", [](auto&& v) { tca::mma_tiled<tc::PaddedA, tc::PaddedB>(v); });
  kernel_rows("05 `swizzled`", "bf16", [](auto&& v) { tca::mma_tiled<tc::SwizzledA, tc::SwizzledB>(v); });
  kernel_rows("06 `multistage`", "bf16", [](auto&& v) { tca::multistage(v); });
  kernel_rows("08 `tma`", "bf16", [](auto&& v) { tca::tma(v); });
  kernel_rows("12 to 14, epilogue", "bf16", [](auto&& v) { tca::tma_epilogue(v); });
  kernel_rows("12 without the swizzle", "bf16", [](auto&& v) { tca::tma_epilogue_without_swizzle(v); });
}

void attention_rows() {
  for (int d : {64, 128}) {
    const std::string bf16 = "bf16, d = " + std::to_string(d);
    kernel_rows("02, 03 `two_pass`, `online`", bf16.c_str(),
                [d](auto&& v) { aa::row_tiles(d, att::RowTiles::ld(d), v); });
    kernel_rows("02 without the padding", bf16.c_str(), [d](auto&& v) { aa::row_tiles(d, d, v); });
  }
  kernel_rows("04 `mma`", "bf16, d = 128", [](auto&& v) { aa::block<att::MmaShape<128>>(Access::store, v); });
  kernel_rows("05, 06 `pipelined`, `causal`", "bf16, d = 128",
              [](auto&& v) { aa::block<att::PipelinedShape<128>>(Access::copy, v); });
  kernel_rows("07 `decode`", "bf16, d = 128", [](auto&& v) { aa::decode<128>(v); });
  kernel_rows("08 `tuned` (H100, H200)", "bf16, d = 128",
              [](auto&& v) { aa::block<att::TunedShape<128, 2, 32, 4, 0, 1>>(Access::copy, v); });
}

/// The introduction and header of a ladder's table: the worst warp request of each access.
void ladder_table(const char* intro) {
  std::printf("\n%s\n\n", intro);
  std::printf("| step | access | element | bytes/lane | wavefronts | phases | conflict |\n");
  std::printf("| --- | --- | --- | ---: | ---: | ---: | --- |\n");
}

}  // namespace

int main() {
  std::printf("Column read (`j = 0`) of the 32 x 32 float tile: the bank of each lane's word.\n\n");
  std::printf("| layout | banks of lanes 0..7 | distinct banks (32 lanes) | wavefronts |\n");
  std::printf("| --- | --- | ---: | ---: |\n");
  bank_map<tr::UnpaddedLayout>("`UnpaddedLayout` (r * 32 + c)");
  bank_map<tr::PaddedLayout>("`PaddedLayout` (r * 33 + c)");
  bank_map<tr::SwizzledLayout>("`SwizzledLayout` (r * 32 + (c ^ r))");

  ladder_table("Every shared-memory access of the transpose ladder, the worst warp request of each "
              "(wavefronts per request; phases: what it takes without a conflict):");
  transpose_rows<float>();
  transpose_rows<double>();
  vectorized_rows<float, 4>();
  vectorized_rows<double, 2>();
  vectorized_rows<float, 1>();
  vectorized_rows<double, 1>();
  row("06 without the XOR", "transposed chunk store (V = 4), chunks row-major", "float", 16,
      smem::test::worst_request([](auto&& v) { ta::vectorized_stores_without_swizzle<float, 4>(v); }));
  row("06 without the XOR", "transposed chunk store (V = 2), chunks row-major", "double", 16,
      smem::test::worst_request([](auto&& v) { ta::vectorized_stores_without_swizzle<double, 2>(v); }));

  ladder_table("Every shared-memory access of the SGEMM ladder (steps with a shared tile), the worst "
              "warp request over every warp of the block and every k (a float4 that lanes share in "
              "pairs is 2 phases, a `cp.async` copy is 4 whatever its width):");
  gemm_rows();

  std::printf("\nThe reduction's shared-memory tree (%d values per block), round by round, warp 0: "
              "wavefronts of the worse of its two accesses `s[k]` and `s[k + stride]`. Step 2 indexes "
              "`k = 2 * stride * tid` (lanes 2 * stride words apart), step 3 `k = tid` with partner "
              "`tid + stride`.\n\n", rd::kTreeThreads);
  std::printf("| stride | active lanes (step 2) | 02 `interleaved_strided`, float | 02, double | "
              "03 `sequential`, float | 03, double |\n");
  std::printf("| ---: | ---: | ---: | ---: | ---: | ---: |\n");
  reduction_rows();

  ladder_table("Every shared-memory access of the scan ladder, one full tile, the worst warp request of each "
              "(steps 5 and 6: the transpose through the padded tile on both sides; their block scan is "
              "step 4's):");
  scan_rows<float>();
  scan_rows<double>();

  ladder_table("Every shared-memory access of the histogram ladder, one block, the worst warp request of "
              "each (element: the samples and the privatized counters per copy). The zeroing and the "
              "merge do not depend on the data; the atomics do, and are shown for three patterns of one "
              "request: lane l in bin l, in bin 32 l, and every lane in one bin. The model counts bank "
              "wavefronts only: lanes on one word (the skewed input) are one wavefront here, but the "
              "atomic unit serves them one after the other.");
  histogram_rows();
  ladder_table("Every shared-memory access of the stencil ladders (the convolution at radius 2, a block's "
              "tile; the 7-point stencil, one plane of a block's walk, step 5 a cluster's full slabs), the "
              "worst warp request of each:");
  stencil_rows();
  ladder_table("Every shared-memory access that the threads of the tensor-core GEMM ladder issue, the worst "
              "warp request of each (steps 3 to 6: one block and one K window; an `ldmatrix.x4` reads 32 "
              "rows of 16 bytes, 8 per phase). TMA's writes (steps 8 to 16) and `wgmma`'s reads (steps 9 to "
              "14) are the hardware's own requests, which the model does not see: the layout they share, "
              "TMA's 128-byte swizzle, is step 5's XOR, read here by step 8's `ldmatrix` and written by the "
              "epilogue of steps 12 to 16.");
  tc_gemm_rows();
  ladder_table("Every shared-memory access of the attention ladder, one K/V tile, the worst warp request of "
              "each (steps 2 and 3 at both head_dims, with and without their padding word; from step 4 on the "
              "swizzled tiles at head_dim 128, every warp's `ldmatrix` reads of Q, K and V and the block's "
              "16-byte copies):");
  attention_rows();
  return 0;
}

// SGEMM shared-memory banks (host suite): the bank model on every warp request of every kernel
// (support/gemm_bank_access.hpp, written from the kernels' own maps; docs/bank_tables.cu prints
// the same requests): which accesses are conflict-free and which conflict, and the totals held
// against Nsight Compute's counters (results/<gpu>/banks.json).
#include <doctest/doctest.h>

#include <gemm/gemm.cuh>

#include <algorithm>
#include <array>
#include <cstdio>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "../bench/gemm_tune_candidates.cuh"
#include "bank_evidence.hpp"
#include "bank_model.hpp"
#include "gemm_bank_access.hpp"

namespace gm = smem::gemm;
namespace ga = smem::test::gemm_access;
using smem::test::BankPrediction;
using smem::test::Request;

namespace {

// Tallies requests as Nsight Compute's SASS-level counters do: loads and stores of one block and
// one K-tile, and the copies' wavefronts times `copy_repeats` (the blocks and K-tiles of the
// launch).
struct Tallier {
  BankPrediction p;
  double copy_repeats = 1;
  void operator()(const Request& r) { p.add(r, copy_repeats); }
};

template <class S>
BankPrediction multistage_prediction(int M, int N, int K) {
  Tallier t;
  ga::fragment_reads<S>(t);
  t.copy_repeats = double(M / S::kBM) * (N / S::kBN) * (K / S::kBK);
  ga::copies<S>(t);
  return t.p;
}

// The shape a multistage launch ran, read from the profiled kernel's name
// ("...MultistageShape<128, 256, 16, 64, 64, 8, 16, 3>..."), among the shapes the steps can pick.
std::optional<BankPrediction> multistage_by_name(const std::string& kernel, int M, int N, int K) {
  std::array<int, 8> d{};
  const auto at = kernel.find("MultistageShape<");
  if (at == std::string::npos ||
      std::sscanf(kernel.c_str() + at, "MultistageShape<%d, %d, %d, %d, %d, %d, %d, %d>", &d[0], &d[1], &d[2], &d[3],
                  &d[4], &d[5], &d[6], &d[7]) != 8)
    return std::nullopt;
  std::optional<BankPrediction> out;
  auto try_shape = [&](auto shape) {
    using S = decltype(shape);
    if (d == std::array<int, 8>{S::kBM, S::kBN, S::kBK, S::kWM, S::kWN, S::kTM, S::kTN, S::kStages})
      out = multistage_prediction<S>(M, N, K);
  };
  try_shape(gm::MultistageDefault{});
  try_shape(gm::HeuristicLarge{});
  try_shape(gm::HeuristicMedium{});
  try_shape(gm::HeuristicSmall{});
#define SMEM_SGEMM_TUNED_CASE(CC, SMS, SMEM, REGS, MAX_MN, BM, BN, BK, WM, WN, TM, TN, S) \
  try_shape(gm::MultistageShape<BM, BN, BK, WM, WN, TM, TN, S>{});
  SMEM_SGEMM_TUNED_TABLE(SMEM_SGEMM_TUNED_CASE)
#undef SMEM_SGEMM_TUNED_CASE
  // Every shape the tuner can write into the table: a measurement may predate the current table.
#define SMEM_TUNE_CASE(BM, BN, BK, WM, WN, TM, TN, S) try_shape(gm::MultistageShape<BM, BN, BK, WM, WN, TM, TN, S>{});
  SMEM_TUNE_CANDIDATES(SMEM_TUNE_CASE)
#undef SMEM_TUNE_CASE
  return out;
}

std::optional<BankPrediction> gemm_bank_prediction(const std::string& variant, const std::string& kernel, int M, int N,
                                                   int K) {
  Tallier t;
  if (variant == "naive" || variant == "coalesced") return t.p;
  if (variant == "full_k_strip") ga::full_k_strip(K, t);
  else if (variant == "tiled_16") ga::tiled<16, 0>(t);
  else if (variant == "tiled_32" || variant == "double_buffered") ga::tiled<32, 0>(t);
  else if (variant == "tiled_32_padded") ga::tiled<32, 1>(t);
  else if (variant == "blocktile_1d") ga::blocktile_1d(t);
  else if (variant == "blocktile_2d") ga::blocktile_2d(t);
  else if (variant == "vectorized") ga::vectorized<gm::Vectorized<128>>(t);
  else if (variant == "conflict_free") ga::vectorized<gm::ConflictFree>(t);
  else if (variant == "warptiled") ga::fragment_reads<gm::WarptiledShape>(t), ga::staged_stores<gm::WarptiledShape>(t);
  else if (variant == "split_tf32") ga::split_tf32<gm::SplitTf32Default>(t);
  else if (variant == "multistage" || variant == "heuristic" || variant == "autotuned")
    return multistage_by_name(kernel, M, N, K);
  else return std::nullopt;
  return t.p;
}

// Every access of a kernel conflict-free, except those named in `conflicts` with their ways.
template <class Walk>
void check_accesses(Walk&& walk, const std::vector<std::pair<std::string, int>>& conflicts = {}) {
  for (const auto& access : smem::test::worst_by_access(walk)) {
    const std::string& what = access.what;
    const smem::bank::Cost c = access.cost;
    CAPTURE(what);
    int ways = 1;
    for (const auto& [name, w] : conflicts)
      if (what == name) ways = w;
    CHECK(c.wavefronts == ways * c.phases);
  }
}

}  // namespace

TEST_SUITE("host") {
  TEST_CASE("tiled kernels: As[ty][k] broadcast and Bs[k][tx] are conflict-free, padded or not") {
    check_accesses([](auto&& v) { ga::tiled<16, 0>(v); });
    check_accesses([](auto&& v) { ga::tiled<32, 0>(v); });
    check_accesses([](auto&& v) { ga::tiled<32, 1>(v); });  // step 5: the pad removes no wavefront
    // 32 lanes of a T = 32 warp share ty: As[ty][k] is one word, a broadcast.
    std::set<int> words;
    for (int l = 0; l < 32; ++l) words.insert(gm::TileLayout<32, 0>::offset(ga::ty(0, l, 32), 5));
    CHECK(words.size() == 1);
  }

  TEST_CASE("full-K strip: the +1 row stride keeps the two rows of a warp in different banks") {
    // The reads are what the +1 is for; the copy's stores put the two rows' 16 words on
    // overlapping banks (row starts (K + 1) mod 32 banks apart): 2-way, once per element.
    for (int K : {64, 1024, 1815, 1001}) {
      CAPTURE(K);
      check_accesses([K](auto&& v) { ga::full_k_strip(K, v); }, {{"A strip store", 2}});
    }
    // Without the +1, K = 1024 puts both rows in one bank: 2 wavefronts.
    ga::full_k_strip_read_without_pad(1024, [](const Request& r) { CHECK(r.cost().wavefronts == 2); });
  }

  TEST_CASE("blocktiling: steps 7 and 8") {
    check_accesses([](auto&& v) { ga::blocktile_1d(v); });
    // Step 8's B fragment: a thread's 8 columns at an 8-word stride, read as float4, lanes 4
    // apart in a quarter-warp on the same 4 banks: twice the ideal.
    check_accesses([](auto&& v) { ga::blocktile_2d(v); }, {{"B read `Bs[k][thread_n + j .. + 3]`", 2}});
  }

  TEST_CASE("vectorized: step 9's transposed A store is 2-way, step 10's padded rows remove it") {
    // Lanes 2j and 2j + 1 share a_row (same bank), 4 rows of As (512 words) apart.
    check_accesses([](auto&& v) { ga::vectorized<gm::Vectorized<128>>(v); },
                   {{"transposed A store `As[a_col + c][a_row]`", 2}});
    check_accesses([](auto&& v) { ga::vectorized<gm::ConflictFree>(v); });
    // The pad keeps every row 16-byte aligned, so the float4 fragment reads stay legal.
    for (int k = 0; k < gm::ConflictFree::BK; ++k) CHECK(gm::ConflictFree::a_offset(k, 0) % 4 == 0);
  }

  // Steps 11-13 for a WarpTiling T: fragment reads pair (2 wavefronts each), the staged stores
  // and the cp.async copies are conflict-free, every lane has its own place in the lane grid, and
  // every element of both tiles is copied exactly once per K-tile.
  template <class T>
  void check_warptiling(bool staged_store) {
    INFO("BM BN BK WM WN TM TN = " << T::kBM << " " << T::kBN << " " << T::kBK << " " << T::kWM << " " << T::kWN
                                   << " " << T::kTM << " " << T::kTN);
    ga::fragment_reads<T>([](const Request& r) { CHECK(r.cost().wavefronts == 2); });
    if (staged_store) check_accesses([](auto&& v) { ga::staged_stores<T>(v); });
    using S = gm::MultistageShape<T::kBM, T::kBN, T::kBK, T::kWM, T::kWN, T::kTM, T::kTN, 3>;
    ga::copies<S>([](const Request& r) { CHECK(r.cost().wavefronts == 4); });
    std::vector<int> place(32);
    for (int l = 0; l < 32; ++l) {
      REQUIRE(T::lane_m(l) < T::kLanesM);
      REQUIRE(T::lane_n(l) < T::kLanesN);
      ++place[T::lane_m(l) * T::kLanesN + T::lane_n(l)];
    }
    CHECK(std::count(place.begin(), place.end(), 1) == 32);
    std::vector<int> a_hits(T::kBM * T::kBK), b_hits(T::kBK * T::kBN);
    for (int t = 0; t < T::kThreads; ++t) {
      for (int p = 0; p < S::kAPasses; ++p)
        for (int c = 0; c < S::kAChunks; ++c) ++a_hits[S::a_copy_row(t, p) * T::kBK + S::a_copy_k(t, c)];
      for (int q = 0; q < S::kBPasses; ++q)
        for (int c = 0; c < 4; ++c) ++b_hits[S::b_copy_row(t, q) * T::kBN + S::b_copy_col(t) + c];
    }
    CHECK(std::count(a_hits.begin(), a_hits.end(), 1) == T::kBM * T::kBK);
    CHECK(std::count(b_hits.begin(), b_hits.end(), 1) == T::kBK * T::kBN);
  }

  TEST_CASE("steps 11-13: fragment reads pair, staged stores and cp.async copies conflict-free") {
    check_warptiling<gm::WarptiledShape>(true);
    check_warptiling<gm::MultistageDefault>(false);
    check_warptiling<gm::HeuristicLarge>(false);
    check_warptiling<gm::HeuristicMedium>(false);
    check_warptiling<gm::HeuristicSmall>(false);
    // A selection of the tuner's shapes (bench/gemm_tune_candidates.cuh).
    check_warptiling<gm::WarpTiling<128, 256, 8, 64, 64, 8, 16>>(true);
    check_warptiling<gm::WarpTiling<256, 128, 16, 64, 64, 16, 8>>(false);
    check_warptiling<gm::WarpTiling<64, 64, 8, 32, 32, 4, 8>>(true);
    check_warptiling<gm::WarpTiling<128, 64, 8, 64, 32, 8, 8>>(true);
  }

  // Step 14: every request at the fewest wavefronts its bytes need: 1 for the 4-byte loads of B's
  // fragments (ring rows BN + 8 words apart: rows k to k + 3 of 8 columns in 32 banks), 4 for the
  // 16-byte copies and each ldmatrix.x4 (rows BK + 4 words apart put 8 consecutive rows of A in 8
  // bank quads). Every element is copied once.
  template <class S>
  void check_split() {
    INFO("BM BN BK WM WN = " << S::kBM << " " << S::kBN << " " << S::kBK << " " << S::kWM << " " << S::kWN);
    CHECK(S::kSmemBytes <= 227 * 1024);
    ga::split_tf32<S>([](const Request& r) {
      INFO(r.what);
      CHECK(r.cost().wavefronts == (r.width == 4 ? 1 : 4));
    });
    std::vector<int> a_copied(S::kBM * S::kBK), b_copied(S::kBK * S::kBN);
    for (int t = 0; t < S::kThreads; ++t) {
      for (int i = 0; i < S::kACopies; ++i)
        for (int c = 0; c < 4; ++c) ++a_copied[S::a_copy_m(t, i) * S::kBK + S::a_copy_k(t, i) + c];
      for (int i = 0; i < S::kBCopies; ++i)
        for (int c = 0; c < 4; ++c) ++b_copied[S::b_copy_k(t, i) * S::kBN + S::b_copy_n(t, i) + c];
    }
    for (const auto* hits : {&a_copied, &b_copied})
      CHECK(std::count(hits->begin(), hits->end(), 1) == int(hits->size()));
  }

#if defined(SMEM_GEMM_SM90A)
  TEST_CASE("steps 15 to 17: the split pass at its fewest wavefronts; B^T's fragment loads 2-way") {
    // A warp's 16-byte split requests cover four whole 128-byte rows of A's swizzled tile. A
    // fragment load reads rows k = q and k + 4 of B's tile, 8 consecutive n each: the swizzle XORs
    // a row's 16-byte chunks with k % 8, and rows k and k ^ 1 then trade the same two chunks.
    check_accesses([](auto&& v) { ga::split_wgmma<gm::SplitWgmmaShape>(v); }, {{"B^T fragment load `B[k][n]`", 2}});
    check_accesses([](auto&& v) { ga::split_wgmma<gm::PresplitShape>(v); }, {{"B^T fragment load `B[k][n]`", 2}});
    // Step 17's 64-row tiles: the split pass of half as many chunks, B's tile unchanged.
    check_accesses([](auto&& v) { ga::split_wgmma<gm::SplitWgmmaShapeOf<64, 6, 8>>(v); },
                   {{"B^T fragment load `B[k][n]`", 2}});
    check_accesses([](auto&& v) { ga::split_wgmma<gm::NarrowPresplitShape>(v); }, {{"B^T fragment load `B[k][n]`", 2}});
  }

#endif
  TEST_CASE("step 14: copies and fragment reads at their fewest wavefronts, every element copied once") {
    check_split<gm::SplitTf32Default>();
    check_split<gm::SplitShape<128, 128, 32, 64, 32, 3>>();
    check_split<gm::SplitShape<128, 64, 32, 32, 32, 3>>();
    check_split<gm::SplitShape<64, 128, 16, 32, 64, 4>>();
    check_split<gm::SplitShape<256, 128, 16, 64, 64, 3>>();
    // The pad at work: ring rows of BK = 32 words would put the 8 rows of an ldmatrix matrix on
    // the same bank quad.
    const auto unpadded = smem::test::request("ldmatrix rows of BK words", smem::test::Access::ldmatrix, 16, 4,
                                              [](int l) { return (l % 8) * 32 + 4 * (l / 8 % 2); });
    CHECK(unpadded.cost().wavefronts == 32);
  }

  TEST_CASE("bank model agrees with Nsight Compute's measured wavefronts (results/*/banks.json)") {
    const auto not_modelled = smem::test::check_bank_evidence("gemm", [](const std::string& variant,
                                                                         const smem::test::BankMeasurement& m) {
      int M = 0, N = 0, K = 0;
      REQUIRE(std::sscanf(m.benchmark.c_str() + m.benchmark.rfind('/') + 1, "%dx%dx%d", &M, &N, &K) == 3);
      return gemm_bank_prediction(variant, m.kernel, M, N, K);
    });
    CHECK(not_modelled.empty());
  }
}

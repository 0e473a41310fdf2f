// Tests and docs only: recipes never include support/.
//
// Every warp-wide shared-memory request of the histogram kernels for one block, written once from
// the kernels' own maps (warp_copy_offset, lane_copy_offset, lane_merge_copy, cluster_rank and
// cluster_word); see bank_access.hpp for how the tests and the docs use them. In program order:
// the zeroing stores, the atomics of one request per warp, the merge's loads.
//
// The zeroing and the merge do not depend on the data: the walks give them exactly, and they are
// what Nsight Compute's shared load and store counters count. The atomics do: which words a
// request's lanes name depends on the samples. The walks give them for three patterns of one
// request (Pattern), and the model counts bank wavefronts only: lanes that name the same word
// (the skewed input's popular bin) cost one wavefront in the model, but the atomic unit serves
// them one after the other, which the model does not see.
#pragma once
#include <histogram/histogram.cuh>

#include "bank_access.hpp"

namespace smem::test::histogram_access {

namespace hg = smem::histogram;

/// The privatized bin of lane l in one request of atomics: consecutive bins (`distinct`), one bin
/// for every lane (`same`: the skewed input), or bins 32 apart (`strided`: one bank per copy).
enum class Pattern { distinct, same, strided };
inline const char* pattern_name(Pattern p) {
  return p == Pattern::distinct ? "bins l" : p == Pattern::same ? "one bin" : "bins 32 l";
}
constexpr int pattern_bin(Pattern p, int lane, int pbins) {
  return p == Pattern::distinct ? lane % pbins : p == Pattern::same ? 0 : 32 * lane % pbins;
}

/// The requests of warp w over `words` counters, thread t touching word index(t), t, t + 256, ...
template <class Index, class Visit>
void block_loop(const char* what, Access kind, int words, Index&& index, Visit&& visit) {
  for (int base = 0; base < words; base += hg::kThreads)
    for (int w = 0; w < hg::kThreads / 32; ++w) {
      const std::uint32_t active = active_lanes(w, [&](int t) { return base + t < words; });
      if (active != 0)
        visit(request(what, kind, 4, 4, [&](int l) { return index(base + 32 * w + l); }, active));
    }
}

/// One request of atomics per warp: lane l of warp w adds to `word(w, l, bin)`.
template <class Word, class Visit>
void atomics(const char* what, Pattern p, int pbins, Word&& word, Visit&& visit) {
  for (int w = 0; w < hg::kThreads / 32; ++w)
    visit(request(what, Access::atomic, 4, 4, [&](int l) { return word(w, l, pattern_bin(p, l, pbins)); }));
}

/// Step 2 (shared_atomics_kernel): zero `hist`, the atomics, the merge's reads.
template <class Visit>
void shared_atomics(int pbins, Pattern p, Visit&& visit) {
  const auto self = [](int i) { return i; };
  block_loop("zero `hist[i]`", Access::store, pbins, self, visit);
  atomics("atomicAdd `hist[b]`", p, pbins, [](int, int, int b) { return b; }, visit);
  block_loop("merge `hist[i]`", Access::load, pbins, self, visit);
}

/// Step 3 `per_warp` (sub_histograms_kernel): copies whole histograms, warp w in copy w % copies.
template <class Visit>
void per_warp(int pbins, Pattern p, Visit&& visit) {
  const int copies = hg::sub_histogram_copies(hg::Copies::per_warp, pbins);
  block_loop("zero `hist[i]`", Access::store, copies * pbins, [](int i) { return i; }, visit);
  atomics("atomicAdd `hist[warp_copy_offset(b, w)]`", p, pbins,
          [=](int w, int, int b) { return hg::warp_copy_offset(b, w % copies, pbins); }, visit);
  for (int c = 0; c < copies; ++c)
    block_loop("merge `hist[warp_copy_offset(i, c)]`", Access::load, pbins,
               [=](int i) { return hg::warp_copy_offset(i, c, pbins); }, visit);
}

/// Steps 3 `per_lane`, 4 and 5 (per-lane copies): the zeroing, the atomics into the lane's copy,
/// the merge's rotated reads.
template <class Visit>
void per_lane(int pbins, Pattern p, Visit&& visit) {
  const int copies = hg::copies_that_fit(pbins, 32);
  block_loop("zero `hist[i]`", Access::store, copies * pbins, [](int i) { return i; }, visit);
  atomics("atomicAdd `hist[lane_copy_offset(b, l)]`", p, pbins,
          [=](int, int l, int b) { return hg::lane_copy_offset(b, l % copies, copies); }, visit);
  for (int r = 0; r < copies; ++r)
    block_loop("merge `hist[lane_copy_offset(i, lane_merge_copy(i, r))]`", Access::load, pbins,
               [=](int i) { return hg::lane_copy_offset(i, hg::lane_merge_copy(i, r, copies), copies); }, visit);
}

/// Step 6 (cluster_kernel), block rank 0 of its cluster: the zeroing of its slice, the atomics
/// that land in its slice (the lanes whose bin it holds), its merge's reads.
template <class Visit>
void cluster(int pbins, Pattern p, Visit&& visit) {
  const int slice = hg::cluster_slice(pbins, hg::cluster_blocks(pbins));
  const auto self = [](int i) { return i; };
  block_loop("zero `hist[i]` (own slice)", Access::store, slice, self, visit);
  for (int w = 0; w < hg::kThreads / 32; ++w) {
    std::uint32_t mine = 0;
    for (int l = 0; l < 32; ++l)
      if (hg::cluster_rank(pattern_bin(p, l, pbins), slice) == 0) mine |= 1u << l;
    if (mine != 0)
      visit(request("atomicAdd `owner[cluster_word(b)]`", Access::atomic, 4, 4,
                    [&](int l) { return hg::cluster_word(pattern_bin(p, l, pbins), slice); }, mine));
  }
  block_loop("merge `hist[i]` (own slice)", Access::load, slice, self, visit);
}

/// The walk of variant v for `pbins` privatized bins and the atomics' pattern; step 1 has none.
template <class Visit>
void walk(hg::Variant v, int pbins, Pattern p, Visit&& visit) {
  switch (v) {
    case hg::Variant::global_atomics: return;
    case hg::Variant::shared_atomics: return shared_atomics(pbins, p, visit);
    case hg::Variant::per_warp: return per_warp(pbins, p, visit);
    case hg::Variant::per_lane:
    case hg::Variant::runs:
    case hg::Variant::vectorized: return per_lane(pbins, p, visit);
    case hg::Variant::cluster: return cluster(pbins, p, visit);
  }
}

}  // namespace smem::test::histogram_access

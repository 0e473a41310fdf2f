// Tests and docs only: recipes never include support/.
//
// Every warp-wide shared-memory request of the reduction kernels, written once from the kernels'
// own index functions (strided_index, sequential_partner, the block reduction's warp slots); see
// bank_access.hpp for how the tests and the docs use them. Where the compiler fuses accesses, the
// requests are the SASS's (cuobjdump -sass shows them, for float): noted where it happens.
#pragma once
#include <reduction/reduction.cuh>

#include "bank_access.hpp"

namespace smem::test::reduction_access {

namespace rd = smem::reduction;

/// Warps of a tree block (steps 1-6, kTreeThreads threads; lane l of warp w is tid = 32 w + l).
inline constexpr int kTreeWarps = rd::kTreeThreads / 32;

/// The request of warp w in which the threads with take(tid) access s[index(tid)] (T elements).
template <class T, class Take, class Index>
Request tree_request(const char* what, Access kind, int w, Take&& take, Index&& index, int width = sizeof(T)) {
  return request(what, kind, width, sizeof(T), [&](int l) { return index(32 * w + l); }, active_lanes(w, take));
}

/// One round `s[k] = op(s[k], s[k + stride])` of warp w, by the threads with take(tid), at
/// k = index(tid): the two loads, then the store.
template <class T, class Take, class Index, class Visit>
void tree_round(int w, unsigned stride, Take&& take, Index&& index, Visit&& visit) {
  visit(tree_request<T>("`s[k]`", Access::load, w, take, index));
  visit(tree_request<T>("`s[k + stride]`", Access::load, w, take, [&](int t) { return index(t) + int(stride); }));
  visit(tree_request<T>("store `s[k]`", Access::store, w, take, index));
}

/// Step 1's round: the threads with tid % (2 stride) == 0 combine s[tid] and s[tid + stride].
template <class T, class Visit>
void divergent_round(int w, unsigned stride, Visit&& visit) {
  tree_round<T>(w, stride, [stride](int t) { return t % (2 * stride) == 0; }, [](int t) { return t; }, visit);
}
/// Step 2's round: k = strided_index(stride, tid), the threads whose k is inside the block.
template <class T, class Visit>
void strided_round(int w, unsigned stride, Visit&& visit) {
  tree_round<T>(
      w, stride, [stride](int t) { return rd::strided_index(stride, t) < unsigned(rd::kTreeThreads); },
      [stride](int t) { return int(rd::strided_index(stride, t)); }, visit);
}
/// Steps 3-6's round: k = tid and its partner sequential_partner(stride, tid), for tid < stride.
template <class T, class Visit>
void sequential_round(int w, unsigned stride, Visit&& visit) {
  const auto take = [stride](int t) { return unsigned(t) < stride; };
  visit(tree_request<T>("`s[k]`", Access::load, w, take, [](int t) { return t; }));
  visit(tree_request<T>("`s[k + stride]`", Access::load, w, take,
                        [stride](int t) { return int(rd::sequential_partner(stride, unsigned(t))); }));
  visit(tree_request<T>("store `s[k]`", Access::store, w, take, [](int t) { return t; }));
}

/// `s[tid] = value` by every thread of every warp, before the tree.
template <class T, class Visit>
void tree_fill(Visit&& visit) {
  for (int w = 0; w < kTreeWarps; ++w)
    visit(tree_request<T>("fill `s[tid]`", Access::store, w, [](int) { return true; }, [](int t) { return t; }));
}
/// Thread 0 reads s[0] for the block's result.
template <class T, class Visit>
void thread0_result(Visit&& visit) {
  visit(tree_request<T>("thread 0 reads `s[0]`", Access::load, 0, [](int t) { return t == 0; }, [](int) { return 0; }));
}

/// Step 1 (interleaved_divergent_kernel), one block.
template <class T, class Visit>
void interleaved_divergent(Visit&& visit) {
  tree_fill<T>(visit);
  for (unsigned s = 1; s < unsigned(rd::kTreeThreads); s *= 2)
    for (int w = 0; w < kTreeWarps; ++w) divergent_round<T>(w, s, visit);
  thread0_result<T>(visit);
}

/// Step 2 (interleaved_strided_kernel), one block. In the first round (stride 1, k = 2 tid even)
/// the compiler reads s[k] and s[k + 1] as one load of twice the width (SASS: LDS.64 for float).
template <class T, class Visit>
void interleaved_strided(Visit&& visit) {
  tree_fill<T>(visit);
  const auto take1 = [](int t) { return rd::strided_index(1, t) < unsigned(rd::kTreeThreads); };
  const auto index1 = [](int t) { return int(rd::strided_index(1, t)); };
  for (int w = 0; w < kTreeWarps; ++w) {
    visit(tree_request<T>("`s[k]` and `s[k + 1]` as one load", Access::load, w, take1, index1, 2 * int(sizeof(T))));
    visit(tree_request<T>("store `s[k]`", Access::store, w, take1, index1));
  }
  for (unsigned s = 2; s < unsigned(rd::kTreeThreads); s *= 2)
    for (int w = 0; w < kTreeWarps; ++w) strided_round<T>(w, s, visit);
  thread0_result<T>(visit);
}

/// Steps 3-4 (sequential_tree: every round down to stride 1, then thread 0 reads s[0]) and
/// steps 5-6 (rounds down to stride 64, then warp 0 reads s[tid] and s[tid + 32] into
/// registers), one block: `last_stride` is 1 or 64.
template <class T, class Visit>
void sequential(unsigned last_stride, Visit&& visit) {
  tree_fill<T>(visit);
  for (unsigned s = rd::kTreeThreads / 2; s >= last_stride; s /= 2)
    for (int w = 0; w < kTreeWarps; ++w) sequential_round<T>(w, s, visit);
  if (last_stride == 1) {
    thread0_result<T>(visit);
  } else {
    const auto warp0 = [](int t) { return t < 32; };
    visit(tree_request<T>("warp 0 reads `s[tid]`", Access::load, 0, warp0, [](int t) { return t; }));
    visit(tree_request<T>("warp 0 reads `s[tid + 32]`", Access::load, 0, warp0, [](int t) { return t + 32; }));
  }
}

/// Steps 7-8's block stage (ShuffleBlockReduce<kStrideThreads>), one block: lane 0 of each warp
/// stores its warp's value in warp_results[warp], warp 0 reads warp_results[lane % kWarps]. The
/// single-pass step adds the `last` flag (one byte: thread 0 writes it, every warp reads it). Step
/// 9's block stage is cub::BlockReduce, whose shared layout is CUB's: not modelled.
template <class T, class Visit>
void grid_stride(bool single_pass, Visit&& visit) {
  constexpr int kWarps = rd::kStrideThreads / 32;
  for (int w = 0; w < kWarps; ++w)
    visit(request("lane 0 stores `warp_results[warp]`", Access::store, sizeof(T), sizeof(T), [w](int) { return w; },
                  1u));
  visit(request("warp 0 reads `warp_results[lane % kWarps]`", Access::load, sizeof(T), sizeof(T),
                [](int l) { return l % kWarps; }));
  if (single_pass) {
    visit(request("thread 0 writes `last`", Access::store, 1, 1, [](int) { return 0; }, 1u));
    for (int w = 0; w < kWarps; ++w)
      visit(request("every warp reads `last`", Access::load, 1, 1, [](int) { return 0; }));
  }
}

}  // namespace smem::test::reduction_access

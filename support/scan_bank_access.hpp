// Tests and docs only: recipes never include support/.
//
// Every warp-wide shared-memory request of the scan kernels for one full tile, written once from
// the kernels' own index maps (brent_kung_index and the layouts, TileMap, the block scan's warp
// slots); see bank_access.hpp for how the tests and the docs use them. Inclusive scans with tile
// totals (the first kernel of a launch over many tiles), in program order; requests in which no
// lane takes part are left out, as the SASS-level counters leave them out.
#pragma once
#include <scan/scan.cuh>

#include "bank_access.hpp"

namespace smem::test::scan_access {

namespace sc = smem::scan;

/// The request of warp w in which the threads with take(tid) access element index(tid) of a
/// shared array of T; nothing when no lane of the warp takes part.
template <class T, class Take, class Index, class Visit>
void warp_request(const char* what, Access kind, int w, Take&& take, Index&& index, Visit&& visit) {
  const std::uint32_t active = active_lanes(w, take);
  if (active != 0) visit(request(what, kind, sizeof(T), sizeof(T), [&](int l) { return index(32 * w + l); }, active));
}

template <class T, class Visit>
void thread0_reads(const char* what, int element, Visit&& visit) {
  warp_request<T>(what, Access::load, 0, [](int t) { return t == 0; }, [=](int) { return element; }, visit);
}

/// Step 1 (kogge_stone_kernel): the load into buf[0], each round's two reads of buf[src] and its
/// write of buf[src ^ 1], then the output and the tile total read from the last buffer.
template <class T, class Visit>
void kogge_stone(Visit&& visit) {
  constexpr int kTile = sc::kKoggeStoneThreads, kWarps = kTile / 32;
  const auto all = [](int) { return true; };
  for (int w = 0; w < kWarps; ++w)
    warp_request<T>("load `buf[0][t]`", Access::store, w, all, [](int t) { return t; }, visit);
  int src = 0;
  for (int d = 1; d < kTile; d *= 2, src ^= 1)
    for (int w = 0; w < kWarps; ++w) {
      warp_request<T>("`buf[src][t - d]`", Access::load, w, [d](int t) { return t >= d; },
                      [=](int t) { return src * kTile + t - d; }, visit);
      warp_request<T>("`buf[src][t]`", Access::load, w, all, [=](int t) { return src * kTile + t; }, visit);
      warp_request<T>("store `buf[src ^ 1][t]`", Access::store, w, all, [=](int t) { return (src ^ 1) * kTile + t; },
                      visit);
    }
  for (int w = 0; w < kWarps; ++w)
    warp_request<T>("output `buf[src][t]`", Access::load, w, all, [=](int t) { return src * kTile + t; }, visit);
  thread0_reads<T>("tile total", src * kTile + kTile - 1, visit);
}

/// Steps 2 and 3 (brent_kung_kernel with Layout): the load (two elements per thread), the
/// up-sweep's and the down-sweep's rounds, the output (two elements per thread), the tile total.
template <class Layout, class T, class Visit>
void brent_kung(Visit&& visit) {
  constexpr int kTile = sc::kBrentKungTile, kThreads = sc::kBrentKungThreads, kWarps = kThreads / 32;
  const auto all = [](int) { return true; };
  const auto at = [](int j) { return Layout::offset(j); };
  for (int half = 0; half < 2; ++half)
    for (int w = 0; w < kWarps; ++w)
      warp_request<T>("load `s[t]`, `s[t + 512]`", Access::store, w, all,
                      [=](int t) { return at(t + half * kThreads); }, visit);
  // In the first round (stride 1) s[k - 1] and s[k] are neighbours; where the layout keeps them
  // adjacent with the pair aligned for every thread (DenseLayout), ptxas reads both with one load
  // twice as wide, as Nsight Compute's instruction counts show.
  bool paired = true;
  for (int t = 0; t < kThreads; ++t)
    paired = paired && at(2 * t + 1) == at(2 * t) + 1 && at(2 * t) % 2 == 0;
  for (int s = 1; s < kTile; s *= 2)
    for (int w = 0; w < kWarps; ++w) {
      const auto busy = [s](int t) { return sc::brent_kung_index(s, t) < kTile; };
      const auto k = [s](int t) { return sc::brent_kung_index(s, t); };
      if (s == 1 && paired) {
        visit(request("up-sweep `s[k - 1]` and `s[k]`, one wide load", Access::load, 2 * sizeof(T), sizeof(T),
                      [&](int l) { return at(k(32 * w + l) - 1); }, active_lanes(w, busy)));
      } else {
        warp_request<T>("up-sweep `s[k - stride]`", Access::load, w, busy, [=](int t) { return at(k(t) - s); }, visit);
        warp_request<T>("up-sweep `s[k]`", Access::load, w, busy, [=](int t) { return at(k(t)); }, visit);
      }
      warp_request<T>("up-sweep store `s[k]`", Access::store, w, busy, [=](int t) { return at(k(t)); }, visit);
    }
  for (int s = kTile / 4; s > 0; s /= 2)
    for (int w = 0; w < kWarps; ++w) {
      const auto busy = [s](int t) { return sc::brent_kung_index(s, t) + s < kTile; };
      const auto k = [s](int t) { return sc::brent_kung_index(s, t); };
      warp_request<T>("down-sweep `s[k]`", Access::load, w, busy, [=](int t) { return at(k(t)); }, visit);
      warp_request<T>("down-sweep `s[k + stride]`", Access::load, w, busy, [=](int t) { return at(k(t) + s); }, visit);
      warp_request<T>("down-sweep store `s[k + stride]`", Access::store, w, busy, [=](int t) { return at(k(t) + s); },
                      visit);
    }
  for (int half = 0; half < 2; ++half)
    for (int w = 0; w < kWarps; ++w)
      warp_request<T>("output `s[t]`, `s[t + 512]`", Access::load, w, all,
                      [=](int t) { return at(t + half * kThreads); }, visit);
  thread0_reads<T>("tile total", at(kTile - 1), visit);
}

/// block_exclusive_scan<kThreads>: lane 31 of each warp stores its warp's total, then every warp
/// reads warp_totals[lane] for lane < kWarps.
template <int kThreads, class T, class Visit>
void block_scan(Visit&& visit) {
  constexpr int kWarps = kThreads / 32;
  for (int w = 0; w < kWarps; ++w)
    warp_request<T>("lane 31 stores `warp_totals[warp]`", Access::store, w, [](int t) { return t % 32 == 31; },
                    [](int t) { return t / 32; }, visit);
  for (int w = 0; w < kWarps; ++w)
    warp_request<T>("`warp_totals[lane]`", Access::load, w, [](int t) { return t % 32 < kWarps; },
                    [](int t) { return t % 32; }, visit);
}

/// Step 4 (warp_shuffle_kernel): only the block scan touches shared memory.
template <class T, class Visit>
void warp_shuffle(Visit&& visit) {
  block_scan<sc::kWarpShuffleThreads, T>(visit);
}

/// One 16-byte request per warp: lane l of warp w moves the vector at element offset
/// `element(l)` of the warp's slice.
template <class T, class Element, class Visit>
void vector_request(const char* what, Access kind, int w, Element&& element, Visit&& visit) {
  using Map = sc::TileMap<T, sc::kTileItems<T>>;
  visit(request(what, kind, 16, sizeof(T), [&](int l) { return w * Map::kSize + element(l); }));
}

/// load_tile's vector path (a full, aligned slice): each lane's 16-byte vectors stored at their
/// swizzled places, then its 8 blocked vectors read back.
template <class T, class Visit>
void tile_load(Visit&& visit) {
  using Map = sc::TileMap<T, sc::kTileItems<T>>;
  constexpr int kWarps = sc::kTileThreads / 32;
  for (int v = 0; v < Map::kLaneVecs; ++v)
    for (int w = 0; w < kWarps; ++w)
      vector_request<T>("transpose in: store vector v", Access::store, w,
                        [=](int l) { return Map::vector_offset(Map::vectorized(v, l)); }, visit);
  for (int c = 0; c < Map::kLaneVecs; ++c)
    for (int w = 0; w < kWarps; ++w)
      vector_request<T>("transpose in: blocked read of vector c", Access::load, w,
                        [=](int l) { return Map::vector_offset(Map::blocked(l, c)); }, visit);
}

/// store_tile's vector path: the blocked vectors written, then read back in the coalesced order.
template <class T, class Visit>
void tile_store(Visit&& visit) {
  using Map = sc::TileMap<T, sc::kTileItems<T>>;
  constexpr int kWarps = sc::kTileThreads / 32;
  for (int c = 0; c < Map::kLaneVecs; ++c)
    for (int w = 0; w < kWarps; ++w)
      vector_request<T>("transpose out: blocked write of vector c", Access::store, w,
                        [=](int l) { return Map::vector_offset(Map::blocked(l, c)); }, visit);
  for (int v = 0; v < Map::kLaneVecs; ++v)
    for (int w = 0; w < kWarps; ++w)
      vector_request<T>("transpose out: read vector v", Access::load, w,
                        [=](int l) { return Map::vector_offset(Map::vectorized(v, l)); }, visit);
}

/// Step 5's first kernel (tile_totals_kernel): the tile load and the block scan.
template <class T, class Visit>
void tile_totals(Visit&& visit) {
  tile_load<T>(visit);
  block_scan<sc::kTileThreads, T>(visit);
}

/// Step 6 (decoupled_look_back_kernel) for a tile after the first: thread 0 writes the tile
/// number, every warp reads it; the tile load; the block scan; thread 0 writes the prefix, every
/// warp reads it; the tile store. (The tile number and prefix are one word each, in their own
/// shared variables: modelled at element 0 of their own arrays.)
template <class T, class Visit>
void decoupled_look_back(Visit&& visit) {
  constexpr int kWarps = sc::kTileThreads / 32;
  const auto zero = [](int) { return 0; };
  const auto thread0 = [](int t) { return t == 0; };
  const auto all = [](int) { return true; };
  visit(request("thread 0 writes `tile_number`", Access::store, 4, 4, zero, 1u));
  for (int w = 0; w < kWarps; ++w) warp_request<unsigned>("`tile_number`", Access::load, w, all, zero, visit);
  tile_load<T>(visit);
  block_scan<sc::kTileThreads, T>(visit);
  warp_request<T>("thread 0 writes `tile_prefix`", Access::store, 0, thread0, zero, visit);
  for (int w = 0; w < kWarps; ++w) warp_request<T>("`tile_prefix`", Access::load, w, all, zero, visit);
  tile_store<T>(visit);
}

}  // namespace smem::test::scan_access

// Tests and docs only: recipes never include support/.
//
// Every warp-wide shared-memory request of the stencil kernels for one block, written once from
// the kernels' own maps (halo_offset, output_tile_offset, CoarseShape, box3d_offset, ring_offset,
// RegisterPlane, PlaneSlab); see bank_access.hpp for how the tests and the docs use them. A block
// of 32 x 8 threads (32 x 4 x 4 for box3d) is warp w = threadIdx.y (w = threadIdx.z * 4 + threadIdx.y),
// lane l = threadIdx.x. Requests in which no lane takes part are left out, as the SASS-level
// counters leave them out.
#pragma once
#include <stencil/stencil.cuh>

#include "bank_access.hpp"

namespace smem::test::stencil_access {

namespace st = smem::stencil;

/// The request of warp w whose active lanes access word `word(tid)` (4-byte words) with `width`
/// bytes each; nothing when no lane of the warp takes part.
template <class Take, class Word, class Visit>
void warp_words(const char* what, Access kind, int width, int w, Take&& take, Word&& word, Visit&& visit) {
  const std::uint32_t active = active_lanes(w, take);
  if (active != 0) visit(request(what, kind, width, 4, [&](int l) { return word(32 * w + l); }, active));
}

constexpr int kWarps = 8;  // every stencil block has 256 threads, but box3d's 512
const auto all = [](int) { return true; };

/// Convolution step 3 (conv2d_halo_tile_kernel), radius r: the tile load, then the (2r + 1)^2
/// reads of each of the thread's 4 outputs.
template <class Visit>
void halo_tile(int r, Visit&& visit) {
  const int pitch = st::halo_pitch(r), k = 2 * r + 1;
  for (int first = 0; first < pitch * pitch; first += 256)
    for (int w = 0; w < kWarps; ++w)
      warp_words("tile load", Access::store, 4, w, [=](int t) { return first + t < pitch * pitch; },
                 [=](int t) { return st::halo_offset(r, (first + t) / pitch, (first + t) % pitch); }, visit);
  for (int q = 0; q < st::kTile / st::kTileRows; ++q)
    for (int i = 0; i < k; ++i)
      for (int j = 0; j < k; ++j)
        for (int w = 0; w < kWarps; ++w)
          warp_words("tap `tile[row + i][tx + j]`", Access::load, 4, w, all,
                     [=](int t) { return st::halo_offset(r, t / 32 + q * st::kTileRows + i, t % 32 + j); }, visit);
}

/// Convolution step 4 (conv2d_cached_halo_kernel), radius r: the tile load, then the taps that
/// fall inside the tile (the others go to global memory).
template <class Visit>
void cached_halo(int r, Visit&& visit) {
  const int k = 2 * r + 1;
  for (int q = 0; q < st::kTile / st::kTileRows; ++q)
    for (int w = 0; w < kWarps; ++w)
      warp_words("tile load", Access::store, 4, w, all,
                 [=](int t) { return st::output_tile_offset(t / 32 + q * st::kTileRows, t % 32); }, visit);
  for (int q = 0; q < st::kTile / st::kTileRows; ++q)
    for (int i = 0; i < k; ++i)
      for (int j = 0; j < k; ++j)
        for (int w = 0; w < kWarps; ++w) {
          const int tr = w + q * st::kTileRows + i - r;
          const auto inside = [=](int t) {
            return tr >= 0 && tr < st::kTile && t % 32 + j - r >= 0 && t % 32 + j - r < st::kTile;
          };
          warp_words("tap inside the tile", Access::load, 4, w, inside,
                     [=](int t) { return st::output_tile_offset(tr, t % 32 + j - r); }, visit);
        }
}

/// Convolution steps 5 and 6, one tile: each thread's window loads, row by row, at the words
/// Map::window_offset gives (step 5's map, or step 6's three boxes).
template <int R, class Map = st::CoarseShape<R>, class Visit>
void coarsened_windows(Visit&& visit) {
  using S = st::CoarseShape<R>;
  for (int ir = 0; ir < S::kRows + 2 * R; ++ir)
    for (int q = 0; q < S::kWindow; ++q)
      for (int w = 0; w < kWarps; ++w)
        warp_words("window load (16 bytes)", Access::load, 16, w, all,
                   [=](int t) { return Map::window_offset(t % 32, w, ir, q); }, visit);
}

/// Convolution step 5 (conv2d_coarsened_kernel<R>): the tile's 16-byte stores, then the windows.
template <int R, class Visit>
void coarsened(Visit&& visit) {
  using S = st::CoarseShape<R>;
  for (int l = 0; l < S::kLoads; ++l)
    for (int w = 0; w < kWarps; ++w)
      warp_words("tile store (16 bytes)", Access::store, 16, w, [=](int t) { return t + l * S::kThreads < S::kVecs; },
                 [=](int t) { return S::load_offset(t + l * S::kThreads); }, visit);
  coarsened_windows<R>(visit);
}

/// Convolution step 6 (conv2d_tma_kernel<R>), one tile: TMA writes the tile with no
/// shared-memory instruction; the windows, then the outputs staged for the TMA store.
template <int R, class Visit>
void tma_tile(Visit&& visit) {
  using S = st::CoarseShape<R>;
  coarsened_windows<R, st::TmaTile<R>>(visit);
  for (int oy = 0; oy < S::kRows; ++oy)
    for (int w = 0; w < kWarps; ++w)
      warp_words("stage the outputs (16 bytes)", Access::store, 16, w, all,
                 [=](int t) { return st::staged_offset<R>(w * S::kRows + oy, S::kCols * (t % 32)); }, visit);
}

/// 7-point step 2 (st7_smem_3d_kernel): the tile load, then the seven reads of each point.
template <class Visit>
void smem_3d(Visit&& visit) {
  constexpr int X = st::kBox3dX + 2, Y = st::kBox3dY + 2, warps = st::kBox3dThreads / 32;
  for (int first = 0; first < st::kBox3dWords; first += st::kBox3dThreads)
    for (int w = 0; w < warps; ++w)
      warp_words("tile load", Access::store, 4, w, [=](int t) { return first + t < st::kBox3dWords; },
                 [=](int t) {
                   const int e = first + t;
                   return st::box3d_offset(e / (X * Y), e / X % Y, e % X);
                 }, visit);
  const int d[7][3] = {{0, 0, 0}, {0, 0, -1}, {0, 0, 1}, {0, -1, 0}, {0, 1, 0}, {-1, 0, 0}, {1, 0, 0}};
  for (const auto& o : d)
    for (int w = 0; w < warps; ++w)
      warp_words("point and neighbours", Access::load, 4, w, all, [=](int t) {
        const int tz = t / (32 * st::kBox3dY), ty = t / 32 % st::kBox3dY;
        return st::box3d_offset(tz + 1 + o[0], ty + 1 + o[1], t % 32 + 1 + o[2]);
      }, visit);
}

/// 7-point step 3 (st7_planes_kernel), one plane of the walk: its load into the ring, the seven
/// reads of each point.
template <class Visit>
void planes_step(Visit&& visit) {
  constexpr int X = st::kSt7X + 2;
  for (int first = 0; first < st::kRingPlaneWords; first += 256)
    for (int w = 0; w < kWarps; ++w)
      warp_words("plane load", Access::store, 4, w, [=](int t) { return first + t < st::kRingPlaneWords; },
                 [=](int t) { return st::ring_offset(2, (first + t) / X, (first + t) % X); }, visit);
  const int d[7][3] = {{1, 0, 0}, {1, 0, -1}, {1, 0, 1}, {1, -1, 0}, {1, 1, 0}, {0, 0, 0}, {2, 0, 0}};
  for (const auto& o : d)
    for (int w = 0; w < kWarps; ++w)
      warp_words("point and neighbours", Access::load, 4, w, all,
                 [=](int t) { return st::ring_offset(o[0], t / 32 + 1 + o[1], t % 32 + 1 + o[2]); }, visit);
}

/// 7-point steps 4 and 5, one plane: stage_slice's stores, update4's loads.
template <class Visit>
void stage_slice(Visit&& visit) {
  using P = st::RegisterPlane;
  for (int w = 0; w < kWarps; ++w)
    warp_words("stage the 4 points (16 bytes)", Access::store, 16, w, all,
               [=](int t) { return P::vector_offset(t % 32, t / 32, 0); }, visit);
  for (int w = 0; w < kWarps; ++w)
    warp_words("stage the y halo (16 bytes)", Access::store, 16, w,
               [](int t) { return t / 32 == 0 || t / 32 == P::kTileY - 1; },
               [=](int t) { return P::offset(P::y_halo_row(t / 32), 4 * (t % 32)); }, visit);
  warp_words("stage the x halo", Access::store, 4, 0, [](int t) { return t < P::kXHaloThreads; },
             [](int t) { return P::x_halo_offset(t); }, visit);
}
template <class Visit>
void update4(const char* prefix_y, Visit&& visit) {
  using P = st::RegisterPlane;
  for (int w = 0; w < kWarps; ++w) {
    for (int dy : {-1, 1})
      warp_words(prefix_y, Access::load, 16, w, all, [=](int t) { return P::vector_offset(t % 32, t / 32, dy); },
                 visit);
    warp_words("x halo, lane 0", Access::load, 4, w, [](int t) { return t % 32 == 0; },
               [](int t) { return P::offset(t / 32, -1); }, visit);
    warp_words("x halo, lane 31", Access::load, 4, w, [](int t) { return t % 32 == 31; },
               [](int t) { return P::offset(t / 32, P::kTileX); }, visit);
  }
}

/// 7-point step 4 (st7_registers_kernel), one plane of the walk.
template <class Visit>
void registers_step(Visit&& visit) {
  stage_slice(visit);
  update4("rows above and below (16 bytes)", visit);
}

/// 7-point step 5 (st7_cluster_kernel), the kClusterZ blocks of a cluster over full slabs: each
/// stages its first plane, walks kSlabZ - 2 planes, stages its last; then the output above the
/// walk (with the plane above from the next block's shared memory, but in the last block) and the
/// output of the first plane (the plane below from the previous block's, but in the first block).
/// The remote reads are 32 consecutive 16-byte vectors of another block's plane.
template <class Visit>
void cluster(Visit&& visit) {
  using P = st::RegisterPlane;
  const auto remote = [&](bool happens) {
    for (int w = 0; w < kWarps && happens; ++w)
      warp_words("neighbour's plane (16 bytes, distributed)", Access::remote, 16, w, all,
                 [=](int t) { return P::vector_offset(t % 32, t / 32, 0); }, visit);
  };
  for (int rank = 0; rank < st::kClusterZ; ++rank) {
    stage_slice(visit);
    for (int z = 0; z < st::kSlabZ - 2; ++z) registers_step(visit);
    stage_slice(visit);
    remote(rank + 1 < st::kClusterZ);
    update4("rows above and below (16 bytes)", visit);
    for (int w = 0; w < kWarps; ++w)
      warp_words("first plane's own points (16 bytes)", Access::load, 16, w, all,
                 [=](int t) { return P::vector_offset(t % 32, t / 32, 0); }, visit);
    remote(rank > 0);
    update4("rows above and below (16 bytes)", visit);
  }
}

/// 7-point step 6 (st7_tma_kernel), one output plane of a slab: TMA writes the slots with no
/// shared-memory instruction; each warp reads its 6 rows of this plane, then per output row the
/// x halo (lanes 0 and 31 use it) and the rows of the planes below and above.
template <class Visit>
void tma_slab_step(Visit&& visit) {
  using R = st::PlaneSlab;
  const int below = 0, here = 1, above = 2;
  for (int k = -1; k <= R::kRowsPerThread; ++k)
    for (int p = 0; p < R::kVecs; ++p)
      for (int w = 0; w < kWarps; ++w)
        warp_words("this plane's rows (16 bytes)", Access::load, 16, w, all,
                   [=](int t) { return R::offset(here, R::row(t / 32, k), R::col(p, t % 32)); }, visit);
  for (int k = 0; k < R::kRowsPerThread; ++k)
    for (int w = 0; w < kWarps; ++w) {
      warp_words("x halo (lanes 0 and 31)", Access::load, 4, w, all,
                 [=](int t) { return R::x_halo_offset(here, R::row(t / 32, k), t % 32); }, visit);
      for (int p = 0; p < R::kVecs; ++p)
        for (int slot : {below, above})
          warp_words("plane below / above (16 bytes)", Access::load, 16, w, all,
                     [=](int t) { return R::offset(slot, R::row(t / 32, k), R::col(p, t % 32)); }, visit);
    }
}

}  // namespace smem::test::stencil_access

// Tests and docs only: recipes never include support/.
//
// The warp-wide shared-memory requests of the tensor-core GEMM kernels, written once from the
// kernels' own maps (the tile layouts' offset(), ldsm_a_row/col, ldsm_b_row/col, chunk_row/col):
// the tiles' 16-byte stores and cp.async copies, the ldmatrix reads, and the epilogue's writes into
// the TMA store's staging panels. TMA's own writes and wgmma's reads are not thread requests. See
// bank_access.hpp for how the tests and the docs use them.
#pragma once
#include <tc_gemm/tc_gemm.cuh>
#include <tc_gemm/tc_gemm_sm90.cuh>  // TmaTile, whatever the build's architectures

#include "bank_access.hpp"

namespace smem::test {

namespace tc_gemm_access {

namespace tc = smem::tc_gemm;

/// Lane l's `ldmatrix.x4` row address for the A fragment at (row 16 i, column kk) of a warp tile
/// in layout L.
template <class L>
Request ldmatrix_a(int i, int kk) {
  return request("`ldmatrix.x4` of A", Access::ldmatrix, 16, 2,
                 [&](int l) { return L::offset(16 * i + tc::ldsm_a_row(l), kk + tc::ldsm_a_col(l)); });
}
/// The same for the `.trans` B fragments at (row kk, column 16 j).
template <class L>
Request ldmatrix_b(int j, int kk) {
  return request("`ldmatrix.x4.trans` of B", Access::ldmatrix, 16, 2,
                 [&](int l) { return L::offset(kk + tc::ldsm_b_row(l), 16 * j + tc::ldsm_b_col(l)); });
}

/// A warp tile's fragments at every k16 of a 64-wide window: 4 A and 4 B fragments per k16 (a
/// 64 x 64 warp tile; the layouts repeat every 8 rows and 64 columns, so one warp's tile is every
/// warp's).
template <class LA, class LB, class Visit>
void fragments(Visit&& visit) {
  for (int kk = 0; kk < 64; kk += 16)
    for (int f = 0; f < 4; ++f) {
      visit(ldmatrix_a<LA>(f, kk));
      visit(ldmatrix_b<LB>(f, kk));
    }
}

/// Copy i of warp w when 256 threads copy a tile of `cols` columns in 16-byte chunks (load_tile,
/// copy_tile_async): `kind` store (through registers) or copy (cp.async).
template <class L>
Request tile_chunk(const char* what, Access kind, int cols, int w, int i) {
  return request(what, kind, 16, 2, [&](int l) {
    const int t = 32 * w + l;
    return L::offset(tc::chunk_row(t, i, 256, cols), tc::chunk_col(t, i, 256, cols));
  });
}

/// Steps 3 to 5, one block and one window: the A (128 x 64) and B (64 x 128) tiles stored through
/// registers, then one warp tile's fragments.
template <class LA, class LB, class Visit>
void mma_tiled(Visit&& visit) {
  for (int w = 0; w < 8; ++w)
    for (int i = 0; i < tc::kTileM * tc::kTileK / (8 * 256); ++i) {
      visit(tile_chunk<LA>("16-byte store of the A tile", Access::store, tc::kTileK, w, i));
      visit(tile_chunk<LB>("16-byte store of the B tile", Access::store, tc::kTileN, w, i));
    }
  fragments<LA, LB>(visit);
}

/// Step 6 (its default 128 x 256 x 64 shape, 256 threads), one window: the cp.async copies of A
/// and B into the swizzled stage, then one warp tile's fragments.
template <class Visit>
void multistage(Visit&& visit) {
  using S = tc::MultistageDefault;
  static_assert(S::kThreads == 256, "the copies below are those of 256 threads");
  for (int w = 0; w < 8; ++w) {
    for (int i = 0; i < S::kBM * S::kBK / (8 * 256); ++i)
      visit(tile_chunk<typename S::LA>("`cp.async` 16-byte copy of A", Access::copy, S::kBK, w, i));
    for (int i = 0; i < S::kBK * S::kBN / (8 * 256); ++i)
      visit(tile_chunk<typename S::LB>("`cp.async` 16-byte copy of B", Access::copy, S::kBN, w, i));
  }
  fragments<typename S::LA, typename S::LB>(visit);
}

/// Step 8: TMA writes the stage (no thread request); the warps' fragments from TMA's 128-byte
/// swizzle (TmaTile) of the 128 x 64 A and 64 x 256 B windows.
template <class Visit>
void tma(Visit&& visit) {
  fragments<tc::TmaTile<tc::bf16, 128, 64>, tc::TmaTile<tc::bf16, 64, 256>>(visit);
}

/// Lane l of warp w of a consumer warpgroup writes the bf16 pair at (16 w + l / 4 + 8 h,
/// 8 j + 2 (l % 4)) of a 64 x 64 staging panel (store_tile_tma), at element offset(r, c).
template <class Offset, class Visit>
void staging_writes(const char* what, Offset&& offset, Visit&& visit) {
  for (int w = 0; w < 4; ++w)
    for (int j = 0; j < 8; ++j)
      for (int h = 0; h < 2; ++h)
        visit(request(what, Access::store, 4, 2, [&](int l) { return offset(16 * w + l / 4 + 8 * h, 8 * j + 2 * (l % 4)); }));
}

/// Steps 12 to 14's epilogue: the staging panels in TMA's swizzle (TmaTile<bf16, 64, 64>).
template <class Visit>
void tma_epilogue(Visit&& visit) {
  staging_writes("bf16x2 write into a staging panel",
                 [](int r, int c) { return tc::TmaTile<tc::bf16, 64, 64>::offset(r, c); }, visit);
}

/// Not a kernel: the same writes into a plain panel of 128-byte rows, to show what the swizzle is for.
template <class Visit>
void tma_epilogue_without_swizzle(Visit&& visit) {
  staging_writes("bf16x2 write into a plain 64 x 64 panel", [](int r, int c) { return r * 64 + c; }, visit);
}

}  // namespace tc_gemm_access

}  // namespace smem::test

// Tests and docs only: recipes never include support/.
//
// The warp-wide shared-memory requests of the attention kernels, written from the kernels' own
// maps: steps 2 and 3's padded row tiles (RowTiles: K read a column at a time by 32 lanes, Q
// broadcast, V along its rows), and from step 4 on the swizzled tiles (SwizzledTile) with the
// kit's ldmatrix lane maps (ColFirst, RowFirst) and 16-byte chunk copies (chunk_row,
// chunk_col). See bank_access.hpp for how the tests and the docs use them.
#pragma once
#include <attention/attention.cuh>

#include "bank_access.hpp"

namespace smem::test {

namespace attention_access {

namespace att = smem::attention;

/// Steps 2 and 3, one K/V tile at head_dim d with rows `ld` elements apart (RowTiles::ld(d) in the
/// kernels; d to show what the padding is for): per bf16 pair of columns, lane j reads K row j
/// (4 bytes) and every lane the same Q pair (a broadcast); then, per key, lane l reads V's
/// columns l, l + 32, ... (2 bytes).
template <class Visit>
void row_tiles(int d, int ld, Visit&& visit) {
  for (int c = 0; c < d; c += 2) {
    visit(request("K pair, a column of 32 rows", Access::load, 4, 2,
                  [&](int l) { return (att::RowTiles::kRows + l) * ld + c; }));
    visit(request("Q pair (one address: a broadcast)", Access::load, 4, 2, [&](int) { return c; }));
  }
  for (int j = 0; j < att::RowTiles::kKeys; ++j)
    for (int t = 0; 32 * t < d; ++t)
      visit(request("V element, along the row", Access::load, 2, 2, [&](int l) { return att::RowTiles::v_offset(d, j, l + 32 * t); },
                    d - 32 * t >= 32 ? 0xffffffffu : (1u << (d - 32 * t)) - 1u));
}

/// Copy i of warp w when `threads` threads copy a tile of layout T in 16-byte chunks: `kind` store
/// (step 4's load_tile16) or copy (cp.async, steps 5 on).
template <class T, int D = T::kD>
Request tile_chunk(const char* what, Access kind, int threads, int w, int i) {
  return request(what, kind, 16, 2, [&](int l) {
    const int id = 32 * w + l + i * threads;
    return T::offset(att::chunk_row(id, D), att::chunk_col(id, D));
  });
}

/// One warp's ldmatrix reads for one K/V tile of kKeys keys at head_dim D: Q's A fragments of
/// kMt row tiles from row q_row of the Q tile QT, then K's B fragments and V's .trans ones from
/// the K/V tile layout KT (its rows k_row on).
template <class QT, class KT, int kKeys, int kMt, int D = KT::kD, class Visit>
void warp_fragments(int q_row, int k_row, Visit&& visit) {
  for (int mt = 0; mt < kMt; ++mt)
    for (int kk = 0; kk < D / 16; ++kk)
      visit(request("`ldmatrix.x4` of Q", Access::ldmatrix, 16, 2, [&](int l) {
        return QT::offset(q_row + 16 * mt + att::ColFirst::row(l), 16 * kk + att::ColFirst::col(l));
      }));
  for (int kk = 0; kk < D / 16; ++kk)
    for (int nb = 0; nb < kKeys / 8; nb += 2)
      visit(request("`ldmatrix.x4` of K", Access::ldmatrix, 16, 2, [&](int l) {
        return KT::offset(k_row + 8 * nb + att::RowFirst::row(l), 16 * kk + att::RowFirst::col(l));
      }));
  for (int kb = 0; kb < kKeys / 16; ++kb)
    for (int db = 0; db < D / 8; db += 2)
      visit(request("`ldmatrix.x4.trans` of V", Access::ldmatrix, 16, 2, [&](int l) {
        return KT::offset(k_row + 16 * kb + att::ColFirst::row(l), 8 * db + att::ColFirst::col(l));
      }));
}

/// A block of shape S (PipelinedShape or step 4's MmaShape), one K/V tile: the copies of Q, K and
/// V (`kind`: step 4's stores or cp.async), then every warp's fragments.
template <class S, class Visit>
void block(Access kind, Visit&& visit) {
  using QT = typename S::QTile;
  using KT = typename S::KvTile;
  constexpr int kMt = S::kRows / (16 * S::kWarps);
  const char* what = kind == Access::copy ? "`cp.async` 16-byte copy" : "16-byte store of a tile";
  for (int w = 0; w < S::kWarps; ++w) {
    for (int i = 0; i < QT::kElems / 8 / S::kThreads; ++i) visit(tile_chunk<QT>(what, kind, S::kThreads, w, i));
    for (int i = 0; i < KT::kElems / 8 / S::kThreads; ++i) visit(tile_chunk<KT>(what, kind, S::kThreads, w, i));
  }
  for (int w = 0; w < S::kWarps; ++w) warp_fragments<QT, KT, S::kKeys, kMt>(16 * kMt * w, 0, visit);
}

/// Step 7 at head_dim D: the 16 Q rows, each warp's 16-key slice of a 64-key tile (16 whole rows
/// from row 16 w, read as a SwizzledTile<16, D>).
template <int D, class Visit>
void decode(Visit&& visit) {
  using QT = att::SwizzledTile<16, D>;
  for (int w = 0; w < 4; ++w) {
    for (int i = 0; i < QT::kElems / 8 / 128; ++i)
      visit(tile_chunk<QT>("`cp.async` 16-byte copy", Access::copy, 128, w, i));
    // The slice starts 16 w rows into the 64-row tile: the same XOR as the tile's rows 16 w on.
    warp_fragments<QT, att::SwizzledTile<64, D>, 16, 1>(0, 16 * w, visit);
  }
}

#if defined(SMEM_ATTENTION_SM90A)
/// Step 13 at head_dim D: the 16 Q rows gathered into TMA's layout (the panels of a 64-row tile),
/// each warp's 16-key slice of a 64-key tile TMA wrote (rows 16 w on, in every panel).
template <int D, class Visit>
void tma_decode(Visit&& visit) {
  using T = smem::sm90::TmaTile<att::bf16, 64, D>;
  for (int w = 0; w < 4; ++w) {
    for (int i = 0; i < 16 * D / 8 / 128; ++i)
      visit(tile_chunk<T, D>("`cp.async` 16-byte copy", Access::copy, 128, w, i));
    warp_fragments<T, T, 16, 1, D>(0, 16 * w, visit);
  }
}

/// Step 14's V transpose, per unit u (one warp's): its `ldmatrix.x4.trans` of V's tile (keys
/// fp8_tr_src_key at head_dim fp8_tr_src_dim) and its `stmatrix.x4` into V^T's (rows fp8_tr_dst at
/// keys 16 (u / 4) on), both tiles in TMA's layout (128-byte rows).
template <class Visit>
void fp8_transpose(Visit&& visit) {
  using T = att::Fp8Shape::Tile;
  for (int u = 0; u < 32; ++u) {
    visit(request("`ldmatrix.x4.trans` of V", Access::ldmatrix, 16, 1,
                  [&](int l) { return T::offset(att::fp8_tr_src_key(u, l), att::fp8_tr_src_dim(u, l)); }));
    visit(request("`stmatrix.x4` of V^T", Access::stmatrix, 16, 1,
                  [&](int l) { return T::offset(att::fp8_tr_dst(u, l), 16 * (u / 4)); }));
  }
}
#endif

}  // namespace attention_access

}  // namespace smem::test

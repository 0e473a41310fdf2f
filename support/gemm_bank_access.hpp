// Tests and docs only: recipes never include support/.
//
// Every warp-wide shared-memory request of the SGEMM kernels, written once from the kernels' own
// thread-to-shared-memory maps (the constexpr functions of each step's header); see
// bank_access.hpp for how the tests and the docs use them. Where the compiler fuses accesses, the
// requests are the SASS's (cuobjdump -sass shows them): noted where it happens.
#pragma once
#include <gemm/gemm.cuh>

#include "bank_access.hpp"

namespace smem::test {

namespace gemm_access {

namespace gm = smem::gemm;

/// The request whose lane l touches float word `word(l)`.
template <class Word>
Request request(const char* what, Access kind, int width, Word&& word) {
  return smem::test::request(what, kind, width, 4, word);
}

/// Threads of a 2D block `width` wide: lane l of warp w is (tid % width, tid / width).
inline int tx(int w, int l, int width) { return (32 * w + l) % width; }
inline int ty(int w, int l, int width) { return (32 * w + l) / width; }

/// Step 3, one block (16 x 16 threads), the whole K. The strip copies loop k = tx + 16 j (A) and
/// k = ty + 16 j (B); when 16 does not divide K, the last trip has only the lanes with k < K.
template <class Visit>
void full_k_strip(int K, Visit&& visit) {
  constexpr int S = gm::kStrip;
  for (int w = 0; w < S * S / 32; ++w) {
    for (int j = 0; j * S < K; ++j) {
      visit(smem::test::request("A strip store", Access::store, 4, 4,
                                [&](int l) { return gm::strip_a_offset(K, ty(w, l, S), tx(w, l, S) + S * j); },
                                active_lanes(w, [&](int t) { return t % S + S * j < K; })));
      visit(smem::test::request("B strip store", Access::store, 4, 4,
                                [&](int l) { return gm::strip_b_offset(K, ty(w, l, S) + S * j, tx(w, l, S)); },
                                active_lanes(w, [&](int t) { return t / S + S * j < K; })));
    }
    for (int k = 0; k < K; ++k) {
      visit(request("A strip read `As[ty][k]`", Access::load, 4, [&](int l) { return gm::strip_a_offset(K, ty(w, l, S), k); }));
      visit(request("B strip read `Bs[k][tx]`", Access::load, 4, [&](int l) { return gm::strip_b_offset(K, k, tx(w, l, S)); }));
    }
  }
}

/// Not a kernel: step 3's A strip read with the rows K words apart instead of K + 1, to show what
/// the +1 is for (warp 0 at k = 0).
template <class Visit>
void full_k_strip_read_without_pad(int K, Visit&& visit) {
  constexpr int S = gm::kStrip;
  visit(request("A strip read, row stride K", Access::load, 4, [&](int l) { return ty(0, l, S) * K; }));
}

/// Steps 4-6, one block of T x T threads and one window. Without the pad the compiler reads four
/// As[ty][k] at once (LDS.128); with it, one at a time.
template <int T, int Pad, class Visit>
void tiled(Visit&& visit) {
  using L = gm::TileLayout<T, Pad>;
  for (int w = 0; w < T * T / 32; ++w) {
    for (const char* what : {"tile store `As[ty][tx]`", "tile store `Bs[ty][tx]`"})
      visit(request(what, Access::store, 4, [&](int l) { return L::offset(ty(w, l, T), tx(w, l, T)); }));
    for (int k = 0; k < T; ++k)
      visit(request("B read `Bs[k][tx]`", Access::load, 4, [&](int l) { return L::offset(k, tx(w, l, T)); }));
    if (Pad == 0)
      for (int k = 0; k < T; k += 4)
        visit(request("A read `As[ty][k .. k + 3]` (one 16-byte load)", Access::load, 16,
                      [&](int l) { return L::offset(ty(w, l, T), k); }));
    else
      for (int k = 0; k < T; ++k)
        visit(request("A read `As[ty][k]`", Access::load, 4, [&](int l) { return L::offset(ty(w, l, T), k); }));
  }
}

/// Step 7, one block and one window: the compiler reads a thread's 8 words of A as two float4.
template <class Visit>
void blocktile_1d(Visit&& visit) {
  using L = gm::Blocktile1d;
  for (int w = 0; w < L::kThreads / 32; ++w) {
    auto t = [&](int l) { return 32 * w + l; };
    visit(request("A store", Access::store, 4, [&](int l) { return L::a_offset(L::a_m(t(l)), L::a_k(t(l))); }));
    visit(request("B store", Access::store, 4, [&](int l) { return L::b_offset(L::b_k(t(l)), L::b_n(t(l))); }));
    for (int k = 0; k < L::BK; ++k)
      visit(request("B read `Bs[k][thread_n]`", Access::load, 4, [&](int l) { return L::b_offset(k, L::thread_n(t(l))); }));
    for (int i = 0; i < L::TM; ++i)
      for (int k = 0; k < L::BK; k += 4)
        visit(request("A read `As[thread_m + i][k .. k + 3]`", Access::load, 16,
                      [&](int l) { return L::a_offset(L::thread_m(t(l), i), k); }));
  }
}

/// Step 8, one block and one window: a thread's 8 A and 8 B values per k are read as float4.
template <class Visit>
void blocktile_2d(Visit&& visit) {
  using L = gm::Blocktile2d;
  for (int w = 0; w < L::kThreads / 32; ++w) {
    auto t = [&](int l) { return 32 * w + l; };
    for (int i = 0; i < L::kLoads; ++i) {
      visit(request("A store", Access::store, 4, [&](int l) { return L::a_offset(L::a_m(t(l), i), L::a_k(t(l), i)); }));
      visit(request("B store", Access::store, 4, [&](int l) { return L::b_offset(L::b_k(t(l), i), L::b_n(t(l), i)); }));
    }
    for (int i = 0; i < L::TM; ++i)
      for (int k = 0; k < L::BK; k += 4)
        visit(request("A read `As[thread_m + i][k .. k + 3]`", Access::load, 16,
                      [&](int l) { return L::a_offset(L::thread_m(t(l), i), k); }));
    for (int k = 0; k < L::BK; ++k)
      for (int j = 0; j < L::TN; j += 4)
        visit(request("B read `Bs[k][thread_n + j .. + 3]`", Access::load, 16,
                      [&](int l) { return L::b_offset(k, L::thread_n(t(l), j)); }));
  }
}

/// Steps 9 and 10 (layout L: Vectorized<128> or ConflictFree), one block and one window.
template <class L, class Visit>
void vectorized(Visit&& visit) {
  constexpr int kThreadsPerRow = L::BN / L::TN;
  for (int w = 0; w < L::kThreads / 32; ++w) {
    auto t = [&](int l) { return 32 * w + l; };
    for (int c = 0; c < 4; ++c)
      visit(request("transposed A store `As[a_col + c][a_row]`", Access::store, 4,
                    [&](int l) { return L::a_offset(L::a_col(t(l)) + c, L::a_row(t(l))); }));
    visit(request("B float4 store `Bs[b_row][b_col]`", Access::store, 16,
                  [&](int l) { return L::b_offset(L::b_row(t(l)), L::b_col(t(l))); }));
    for (int k = 0; k < L::BK; ++k)
      for (int h : {0, 4}) {
        visit(request("A fragment float4 read", Access::load, 16,
                      [&](int l) { return L::a_offset(k, L::frag(t(l) / kThreadsPerRow, h)); }));
        visit(request("B fragment float4 read", Access::load, 16,
                      [&](int l) { return L::b_offset(k, L::frag(t(l) % kThreadsPerRow, h)); }));
      }
  }
}

/// Steps 11-13 (WarpTiling T), one block and one K-tile: the float4 fragment reads of every warp
/// and k.
template <class T, class Visit>
void fragment_reads(Visit&& visit) {
  for (int w = 0; w < T::kThreads / 32; ++w)
    for (int k = 0; k < T::kBK; ++k) {
      for (int g = 0; g < T::kTM / 4; ++g)
        visit(request("A fragment float4 read", Access::load, 16, [&](int l) { return T::a_offset(k, T::thread_row(w, l, g)); }));
      for (int g = 0; g < T::kTN / 4; ++g)
        visit(request("B fragment float4 read", Access::load, 16, [&](int l) { return T::b_offset(k, T::thread_col(w, l, g)); }));
    }
}

/// Step 11's register-staged stores (WarpTiling T), one block and one K-tile.
template <class T, class Visit>
void staged_stores(Visit&& visit) {
  for (int w = 0; w < T::kThreads / 32; ++w) {
    auto t = [&](int l) { return 32 * w + l; };
    for (int r = 0; r < T::kALoads; ++r)
      for (int c = 0; c < 4; ++c)
        visit(request("register-staged A store, 4 words down `As`", Access::store, 4,
                      [&](int l) { return T::a_offset(T::stage_a_k(t(l), r) + c, T::stage_a_m(t(l), r)); }));
    for (int r = 0; r < T::kBLoads; ++r)
      visit(request("register-staged B float4 store", Access::store, 16,
                    [&](int l) { return T::b_offset(T::stage_b_k(t(l), r), T::stage_b_n(t(l), r)); }));
  }
}

/// Steps 12-13's cp.async copies (MultistageShape S), one block and one K-tile.
template <class S, class Visit>
void copies(Visit&& visit) {
  for (int w = 0; w < S::kThreads / 32; ++w) {
    auto t = [&](int l) { return 32 * w + l; };
    for (int p = 0; p < S::kAPasses; ++p)
      for (int c = 0; c < S::kAChunks; ++c)
        visit(request("`cp.async` 4-byte copy of A into `As[k][m]`", Access::copy, 4,
                      [&](int l) { return S::a_offset(S::a_copy_k(t(l), c), S::a_copy_row(t(l), p)); }));
    for (int q = 0; q < S::kBPasses; ++q)
      visit(request("`cp.async` 16-byte copy of B", Access::copy, 16,
                    [&](int l) { return S::b_offset(S::b_copy_row(t(l), q), S::b_copy_col(t(l))); }));
  }
}

/// Step 14 (SplitShape S), one block and one K-tile: the 16-byte cp.async copies into the ring,
/// then each warp's fragment reads of every k-step: `ldmatrix.x4` of A's fragments and 4-byte loads
/// of B's (rows k and k + 4, 8 columns n each), and the 16-byte reads and writes of sum at a span's
/// end. Word addresses from the start of the stage (sum's from the start of sum).
template <class S, class Visit>
void split_tf32(Visit&& visit) {
  for (int w = 0; w < S::kThreads / 32; ++w) {
    auto t = [&](int l) { return 32 * w + l; };
    for (int i = 0; i < S::kACopies; ++i)
      visit(request("`cp.async` 16-byte copy of A", Access::copy, 16,
                    [&](int l) { return S::a_offset(S::a_copy_m(t(l), i), S::a_copy_k(t(l), i)); }));
    for (int i = 0; i < S::kBCopies; ++i)
      visit(request("`cp.async` 16-byte copy of B", Access::copy, 16,
                    [&](int l) { return S::kAFloats + S::b_offset(S::b_copy_k(t(l), i), S::b_copy_n(t(l), i)); }));
    for (int kk = 0; kk < S::kBK; kk += 8) {
      for (int i = 0; i < S::kMi; ++i)
        visit(request("`ldmatrix.x4` of an A fragment `As[m][k .. k + 3]`", Access::ldmatrix, 16, [&](int l) {
          return S::a_offset(S::warp_m(w) + 16 * i + S::ldsm_a_m(l), kk + S::ldsm_a_k(l));
        }));
      for (int j = 0; j < S::kNj; ++j)
        for (int r = 0; r < 2; ++r)
          visit(request("load of a B fragment element `Bs[k][n]`", Access::load, 4, [&](int l) {
            return S::kAFloats + S::b_offset(kk + S::frag_b_k(l, r), S::warp_n(w) + 8 * j + S::frag_b_n(l));
          }));
    }
    for (int q = 0; q < S::kMi * S::kNj; ++q)
      for (Access a : {Access::load, Access::store})
        visit(request(a == Access::load ? "read of sum" : "write of sum", a, 16,
                      [&](int l) { return 4 * (q * S::kThreads + t(l)); }));
  }
}

#if defined(SMEM_GEMM_SM90A)
/// Steps 15 to 17 (a SplitWgmmaShapeOf or PresplitOf S), one block and one K-tile, the consumers'
/// requests (TMA's writes and wgmma's operand reads are not a warp's): step 15's split pass (16-byte
/// reads of A's tile, hi back in place and lo into its tile; step 16 has none) and each k-step's
/// four scalar loads of B^T's fragment from B's tile. Word addresses from the stage's start: A's
/// tile, A's lo tile, B's tile.
template <class S, class Visit>
void split_wgmma(Visit&& visit) {
  using LA = typename S::LA;
  using LB = typename S::LB;
  for (int w = 0; w < 128 * S::kConsumers / 32; ++w) {  // consumer warp w: threads ct = 32 w + l
    for (int i = 0; i < (S::kPresplit ? 0 : S::kSplitChunks); ++i) {
      auto at = [&](int l) { return LA::offset(S::split_row(32 * w + l + 256 * i), S::split_col(32 * w + l + 256 * i)); };
      visit(request("split pass: read of A `[m][k .. k + 3]`", Access::load, 16, at));
      visit(request("split pass: hi of A in place", Access::store, 16, at));
      visit(request("split pass: lo of A", Access::store, 16, [&](int l) { return S::kAElems + at(l); }));
    }
    for (int k8 = 0; k8 < S::kBK / 8; ++k8)
      for (int half : {0, 4})
        for (int dn : {0, 8})
          visit(request("B^T fragment load `B[k][n]`", Access::load, 4, [&](int l) {
            return 2 * S::kAElems + LB::offset(8 * k8 + l % 4 + half, S::frag_n(w, l) + dn);
          }));
  }
}
#endif

}  // namespace gemm_access

}  // namespace smem::test

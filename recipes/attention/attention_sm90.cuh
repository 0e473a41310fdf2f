/// \file attention_sm90.cuh
/// \brief The Hopper kit of the attention family (sm_90a), what steps 9 to 12, 15 and 16 share, on
/// the project's Hopper core (sm90/sm90.cuh): the block's shape and its tensor maps over (head_dim,
/// seq, heads, batch), the producer that streams Q, K and V by TMA into a ring of stages, the two
/// products as `wgmma`, a consumer warpgroup's 64 query rows with their online softmax and
/// epilogue, and the launch.
#pragma once
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "../sm90/sm90.cuh"
#include "attention_common.cuh"

namespace smem::attention {

/// The Hopper block: C consumer warpgroups of 64 query rows and one producer warpgroup, tiles of
/// KEYS keys (128, or 176: FlashAttention-3's tile at head_dim 128 without the mask), K and V in
/// STAGES stages, head_dim D (64 or 128). By default two consumers at 128 and three at 64: there a
/// warpgroup's two products per tile take half as long as at 128 and its softmax as long, so one
/// warpgroup's softmax needs two others' products to run under; two stages, 128 keys. Step 15
/// takes others from its table.
template <int D, int C = D == 64 ? 3 : 2, int STAGES = 2, int KEYS = 128>
struct WgmmaShape {
  static_assert(KEYS == 128 || KEYS == 176, "the two S = Q K^T widths issue_scores issues");
  static constexpr int kD = D, kConsumers = C, kRows = 64 * C, kKeys = KEYS, kStages = STAGES, kThreads = 128 * (1 + C);
  using QTile = sm90::TmaTile<bf16, kRows, D>;  ///< the Q tile: kRows rows, D / 64 panels
  using Tile = sm90::TmaTile<bf16, KEYS, D>;    ///< a K or V tile: KEYS rows
  using Panel = sm90::TmaTile<bf16, KEYS, 64>;  ///< one panel: what a K-major descriptor sees
  static constexpr unsigned kQBytes = QTile::kElems * sizeof(bf16), kTileBytes = Tile::kElems * sizeof(bf16);
  static constexpr unsigned kSmemBytes = Tile::smem_bytes(kQBytes + 2 * kStages * kTileBytes);
};

/// The rows of a Hopper block's Q tile: 64 for each warpgroup but the producer.
inline unsigned q_rows(dim3 block) { return (block.x / 128 - 1) * 64; }

//! [tensor maps]
/// The tensor map of a [batch, seq, heads, D] tensor of T (bf16, or a byte type: step 14's FP8)
/// with strides t, read in boxes of one panel: 128 bytes of head_dim (64 bf16) by `rows` rows of
/// seq (the block's kKeys: K and V tiles), of one head and one batch, L2 fills promoted to `l2`.
/// Dimensions (head_dim, seq, heads, batch); a dimension of stride 0 becomes one of size 1 (the
/// kernel reads coordinate 0). False if the driver refuses it.
template <class T>
bool head_map(CUtensorMap* map, const T* g, long long batch, long long seq, long long heads, int d, const Strides& t,
              unsigned rows = 128, CUtensorMapL2promotion l2 = CU_TENSOR_MAP_L2_PROMOTION_L2_256B) {
  static_assert(sizeof(T) == 2 || sizeof(T) == 1, "bf16 or bytes");
  const PFN_cuTensorMapEncodeTiled_v12000 encode = sm90::tensor_map_encoder();
  if (encode == nullptr) return false;
  const long long n[3] = {seq, heads, batch}, s[3] = {t.seq, t.head, t.batch};
  cuuint64_t dims[4] = {cuuint64_t(d)}, strides[3];
  for (int i = 0; i < 3; ++i) {
    dims[i + 1] = cuuint64_t(s[i] == 0 ? 1 : n[i]);
    strides[i] = cuuint64_t(s[i] == 0 ? 16 : s[i] * static_cast<long long>(sizeof(T)));
  }
  const cuuint32_t box[4] = {128 / sizeof(T), rows, 1, 1}, unit[4] = {1, 1, 1, 1};
  const CUtensorMapDataType type = sizeof(T) == 2 ? CU_TENSOR_MAP_DATA_TYPE_BFLOAT16 : CU_TENSOR_MAP_DATA_TYPE_UINT8;
  return encode(map, type, 4, const_cast<T*>(g), dims, strides, box, unit, CU_TENSOR_MAP_INTERLEAVE_NONE,
                CU_TENSOR_MAP_SWIZZLE_128B, l2, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) == CUDA_SUCCESS;
}

/// Whether TMA can read a tensor of T of `seq` rows with strides t at p: a 16-byte aligned base,
/// strides multiples of 16 bytes and below 2^40 bytes (the map's limit), and rows apart (a box of
/// 128 rows cannot repeat one row).
template <class T = bf16>
bool tma_readable(const T* p, const Strides& t, long long seq) {
  constexpr long long kStep = 16 / sizeof(T), kMax = (1LL << 40) / sizeof(T);
  return aligned(p, 16) && t.batch % kStep == 0 && t.seq % kStep == 0 && t.head % kStep == 0 && t.batch < kMax &&
         t.seq < kMax && t.head < kMax && (t.seq != 0 || seq <= 1);
}

/// TMA: the box at (c, s, h, b) of a 4D map into dst; its bytes complete_tx on `bar`.
__device__ __forceinline__ void tma_load_4d(void* dst, const CUtensorMap* map, int c, int s, int h, int b,
                                            std::uint64_t* bar) {
  asm volatile(
      "cp.async.bulk.tensor.4d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4, "
      "%5}], [%6];\n" ::"r"(sm90::smem_u32(dst)),
      "l"(map), "r"(c), "r"(s), "r"(h), "r"(b), "r"(sm90::smem_u32(bar))
      : "memory");
}

/// TMA: rows `row` on (as many as head_map's box) of head h, batch b of a tensor with strides t,
/// its D / 64 panels into the tile at dst (panels kPanel elements apart), completing on `bar`. A
/// stride of 0 reads coordinate 0 of its dimension.
template <int D, int kPanel, class T>
__device__ __forceinline__ void tma_rows(T* dst, const CUtensorMap* map, const Strides& t, long long row, long long h,
                                         long long b, std::uint64_t* bar) {
#pragma unroll
  for (int c = 0; c < D / 64; ++c)
    tma_load_4d(dst + c * kPanel, map, 64 * c, t.seq ? int(row) : 0, t.head ? int(h) : 0, t.batch ? int(b) : 0, bar);
}
//! [tensor maps]

/// The block's shared memory: the Q tile, then stage s's K and V tiles (kv = 0 and 1), and their
/// mbarriers: Q landed; a stage's K or V landed (full) or read by every consumer (empty).
template <class S>
struct WgmmaStages {
  using Tile = typename S::Tile;
  struct Bars {
    std::uint64_t q, full[S::kStages][2], empty[S::kStages][2];
  };
  bf16* q;
  Bars& bar;
  __device__ WgmmaStages(unsigned char* raw, Bars& b) : q(reinterpret_cast<bf16*>(Tile::align(raw))), bar(b) {}
  /// Key tile j's K (kv = 0) or V (kv = 1), in stage j % kStages; the parity of that stage's use.
  __device__ bf16* tile(long long j, int kv) const {
    return q + S::QTile::kElems + (2 * (j % S::kStages) + kv) * Tile::kElems;
  }
  __device__ unsigned parity(long long j) const { return unsigned(j / S::kStages & 1); }
  /// The barriers, a stage's empty ones awaiting `consumers` warpgroups' releases.
  __device__ void init(unsigned consumers = S::kConsumers) const {
    sm90::mbar_init(&bar.q, 1);
    for (int s = 0; s < S::kStages; ++s)
      for (int kv = 0; kv < 2; ++kv)
        sm90::mbar_init(&bar.full[s][kv], 1), sm90::mbar_init(&bar.empty[s][kv], consumers);
    sm90::fence_barrier_init();
  }
  /// Waits until tile j's K or V has landed.
  __device__ void wait(long long j, int kv) const { sm90::mbar_wait(&bar.full[j % S::kStages][kv], parity(j)); }
  /// Consumer thread t's warpgroup is done with tile j's K or V: one of the arrivals it awaits.
  __device__ void release(long long j, int kv, int t) const {
    if (t == 0) sm90::mbar_arrive(&bar.empty[j % S::kStages][kv]);
  }
};

/// The producer, one thread: item blk's Q into qs (landing on q_bar), then K_j and V_j of its n key
/// tiles, as the block's tiles g to g + n - 1, each into its stage once every consumer has
/// released what it held kStages tiles before. A stride of 0 reads coordinate 0 of its dimension.
template <class S>
__device__ void produce(const CUtensorMap* q_map, const CUtensorMap* k_map, const CUtensorMap* v_map,
                        const Problem& p, const QueryTile& blk, long long n, const WgmmaStages<S>& st, bf16* qs,
                        std::uint64_t* q_bar, long long g) {
  sm90::mbar_arrive_expect_tx(q_bar, S::kQBytes);
  tma_rows<S::kD, S::QTile::kPanel>(qs, q_map, p.q, blk.q0, blk.h, blk.b, q_bar);
  const CUtensorMap* map[2] = {k_map, v_map};
  const Strides* t[2] = {&p.k, &p.v};
  for (long long j = g; j < g + n; ++j)
#pragma unroll
    for (int kv = 0; kv < 2; ++kv) {
      sm90::mbar_wait(&st.bar.empty[j % S::kStages][kv], st.parity(j) ^ 1);
      std::uint64_t* bar = &st.bar.full[j % S::kStages][kv];
      sm90::mbar_arrive_expect_tx(bar, S::kTileBytes);
      tma_rows<S::kD, S::Tile::kPanel>(st.tile(j, kv), map[kv], *t[kv], (j - g) * S::kKeys,
                                       blk.h / (p.heads_q / p.heads_kv), blk.b, bar);
    }
}

//! [wgmma]
/// d[88] = A (64 x 16) * B (16 x 176) + (accumulate ? d : 0), both K-major from shared memory: the
/// core's m64n128k16 with 176 columns, S for a tile of 176 keys.
__device__ __forceinline__ void wgmma_m64n176k16(float (&d)[88], std::uint64_t a, std::uint64_t b, bool accumulate) {
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %90, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n176k16.f32.bf16.bf16 {"
      SMEM_ACC64 ", %64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, %80, %81, "
      "%82, %83, %84, %85, %86, %87"
      "}, %88, %89, p, 1, 1, 0, 0;\n}\n"
      : SMEM_ACC8(0), SMEM_ACC8(8), SMEM_ACC8(16), SMEM_ACC8(24), SMEM_ACC8(32), SMEM_ACC8(40), SMEM_ACC8(48),
        SMEM_ACC8(56), SMEM_ACC8(64), SMEM_ACC8(72), SMEM_ACC8(80)
      : "l"(a), "l"(b), "r"(int(accumulate)));
}

/// S = Q K^T for warpgroup w's 64 rows and the kKeys keys of Ks: D / 16 wgmma m64nKEYSk16, Q and K
/// both K-major from their swizzled tiles (k16 slice kk: panel kk / 4, columns 16 (kk % 4)).
/// Issued and committed as one group, not waited for. A descriptor's start address is its low 14
/// bits (the byte address / 16), so a slice's descriptor is the tile's first plus the slice's
/// offset / 16 (no carry below 256 KB of shared memory): one add instead of a descriptor's build.
template <class S>
__device__ __forceinline__ void issue_scores(float (&sc)[S::kKeys / 2], const bf16* Qs, const bf16* Ks, int w) {
  using Panel = typename S::Panel;
  const std::uint64_t dq = Panel::template desc<false>(Qs + 64 * 64 * w), dk = Panel::template desc<false>(Ks);
  sm90::wgmma_fence();
#pragma unroll
  for (int kk = 0; kk < S::kD / 16; ++kk) {
    const unsigned col = 16 * (kk % 4), bytes = sizeof(bf16);
    const unsigned q = (kk / 4 * S::QTile::kPanel + col) * bytes / 16;
    const unsigned k = (kk / 4 * S::Tile::kPanel + col) * bytes / 16;
    if constexpr (S::kKeys == 128)
      sm90::wgmma_m64n128k16<false>(sc, dq + q, dk + k, kk > 0);
    else
      wgmma_m64n176k16(sc, dq + q, dk + k, kk > 0);
  }
  sm90::wgmma_commit();
}

/// O += P V, m64nDk16: A (P's 64 x 16 slice) from registers, B (16 keys of V) from shared memory,
/// MN-major (transpose-b 1).
template <int D>
__device__ __forceinline__ void wgmma_pv(float (&d)[D / 2], const unsigned (&a)[4], std::uint64_t b) {
  if constexpr (D == 128) {
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, 1, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 {"
        SMEM_ACC64
        "}, {%64, %65, %66, %67}, %68, p, 1, 1, 1;\n}\n"
        : SMEM_ACC8(0), SMEM_ACC8(8), SMEM_ACC8(16), SMEM_ACC8(24), SMEM_ACC8(32), SMEM_ACC8(40), SMEM_ACC8(48),
          SMEM_ACC8(56)
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b));
  } else {
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, 1, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 {"
        "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
        "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31"
        "}, {%32, %33, %34, %35}, %36, p, 1, 1, 1;\n}\n"
        : SMEM_ACC8(0), SMEM_ACC8(8), SMEM_ACC8(16), SMEM_ACC8(24)
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b));
  }
}

/// O += P V over the kKeys keys of Vs: kKeys / 16 wgmma, P's k16 slice kb from pa[kb], the
/// descriptors as in issue_scores. Issued and committed as one group, not waited for.
template <class S>
__device__ __forceinline__ void issue_pv(float (&o)[S::kD / 2], const unsigned (&pa)[S::kKeys / 16][4],
                                         const bf16* Vs) {
  using Tile = typename S::Tile;
  const std::uint64_t dv = Tile::template desc<true>(Vs);  // keys 16 kb on: offset(16 kb, 0) further
  sm90::wgmma_fence();
#pragma unroll
  for (int kb = 0; kb < S::kKeys / 16; ++kb)
    wgmma_pv<S::kD>(o, pa[kb], dv + unsigned(Tile::offset(16 * kb, 0) * int(sizeof(bf16)) / 16));
  sm90::wgmma_commit();
}
//! [wgmma]

/// Whether pred holds for any thread of this thread's warpgroup (bar.red on named barrier 4 + its
/// index, past ping-pong's 1 to 3). Every thread of the warpgroup calls it.
__device__ __forceinline__ bool warpgroup_any(bool pred) {
  int any;
  asm volatile("{\n.reg .pred p;\nsetp.ne.s32 p, %1, 0;\nbar.red.or.pred p, %2, 128, p;\nselp.s32 %0, 1, 0, p;\n}\n"
               : "=r"(any)
               : "r"(int(pred)), "r"(4 + sm90::warpgroup())
               : "memory");
  return any != 0;
}

//! [rows]
/// A consumer warpgroup's 64 query rows, from r0: this thread holds rows row[0] and row[1] (acc_row), their
/// output o (the accumulators of an m64nD wgmma), running max m and sum l (of this thread's columns; the row's
/// four threads add theirs at the end), in base 2. The max moves only past kSlack (kMaxSlack); P comes out
/// times 2^kPBits (in the exponent's FFMA, no multiply; l carries it too, the LSE takes it back); tiles
/// of KEYS keys.
template <int D, int kSlack = kMaxSlack, int kPBits = 0, int KEYS = 128>
struct WgmmaRows {
  float o[D / 2] = {}, m[2] = {-INFINITY, -INFINITY}, l[2] = {0.0f, 0.0f}, rescale[2] = {1.0f, 1.0f};
  long long row[2], r0;
  int t;
  __device__ WgmmaRows(long long first_row) : r0(first_row), t(int(threadIdx.x % 128)) {
    for (int hh = 0; hh < 2; ++hh) row[hh] = r0 + sm90::acc_row(t, hh);
  }

  /// The online softmax of the scores of keys k0 to k0 + KEYS - 1 in sc, the max taken first: scaled
  /// to base 2 (by c), keys past seq_kv (and, with the mask, past the row's diagonal) at -inf, the
  /// running max and sum updated, sc replaced by P = 2^(c x - max), and rescale[] set to the factor
  /// the output owes the new max. Only a tile that reaches past seq_kv or the diagonal is masked,
  /// scaled first (then by 1); the others take the scale inside the exponent's FFMA, and their row
  /// extreme on the raw scores: the max, or the min for a negative scale (the max of c x).
  __device__ __forceinline__ void softmax_exact(float (&sc)[KEYS / 2], const Problem& p, long long k0) {
    float c = p.scale * 1.44269504088896341f;  // exp(x) = 2^(x log2(e))
    if (masked(p, k0)) {
#pragma unroll
      for (int hh = 0; hh < 2; ++hh) {
        const long long shift = p.seq_kv - p.seq_q;  // row i sees keys up to i + shift (causal)
        long long end = p.causal && row[hh] + shift + 1 < p.seq_kv ? row[hh] + shift + 1 : p.seq_kv;
        end -= k0;
        const int cut = end < 0 ? 0 : end < KEYS ? int(end) : KEYS;  // the row sees the columns below cut
#pragma unroll
        for (int jj = 0; jj < KEYS / 8; ++jj)
#pragma unroll
          for (int e = 0; e < 2; ++e) {
            float& x = sc[4 * jj + 2 * hh + e];
            x = sm90::acc_col(t, jj) + e < cut ? x * c : -INFINITY;
          }
      }
      c = 1.0f;
    }
    if (c < 0.0f)
      update<true>(sc, c);
    else
      update<false>(sc, c);
  }

  /// The online softmax without the max: after the first tile (k0 0), an unmasked tile's P is 2^(c x - M)
  /// from the running max M straight away, with no row max to wait for. A row's sum bounds each
  /// of its P, so while every sum stays within 2^(kSlack + kPBits) no score passed M by more than
  /// the slack, M stays, and P, l and rescale[] are softmax_exact's bit for bit: one FMNMX a score
  /// and two shuffles a row fewer. Returns false, nothing updated and sc spent, when a sum of the
  /// warpgroup passes the bound or overflows (a row without a max yet: +inf); the caller computes
  /// S again for softmax_exact (tile_softmax). Called by the whole warpgroup (it votes).
  __device__ __forceinline__ bool softmax(float (&sc)[KEYS / 2], const Problem& p, long long k0) {
    if (k0 == 0 || masked(p, k0)) {
      softmax_exact(sc, p, k0);
      return true;
    }
    const float c = p.scale * 1.44269504088896341f;
    float sum[2] = {0.0f, 0.0f};
#pragma unroll
    for (int hh = 0; hh < 2; ++hh)
#pragma unroll
      for (int i = 0; i < KEYS / 4; ++i) {
        float& x = sc[4 * (i / 2) + 2 * hh + i % 2];
        x = exp2_approx(fmaf(x, c, kPBits - m[hh]));
        sum[hh] += x;
      }
    constexpr float kBound = float(1 << (kSlack + kPBits));
    if (warpgroup_any(sum[0] > kBound || sum[1] > kBound)) return false;  // a NaN row passes: it stays NaN
#pragma unroll
    for (int hh = 0; hh < 2; ++hh) l[hh] += sum[hh], rescale[hh] = 1.0f;
    return true;
  }

  /// Whether tile k0 reaches past seq_kv or, with the mask, past a row's diagonal.
  __device__ __forceinline__ bool masked(const Problem& p, long long k0) const {
    return k0 + KEYS > p.seq_kv || (p.causal && k0 + KEYS - 1 > r0 + p.seq_kv - p.seq_q);
  }

  /// softmax_exact's update of the running max and sum from scores c x (kMin: c < 0, the extreme is the min).
  template <bool kMin>
  __device__ __forceinline__ void update(float (&sc)[KEYS / 2], float c) {
#pragma unroll
    for (int hh = 0; hh < 2; ++hh) {
      float mx = kMin ? INFINITY : -INFINITY;
#pragma unroll
      for (int i = 0; i < KEYS / 4; ++i) {
        const float x = sc[4 * (i / 2) + 2 * hh + i % 2];
        mx = kMin ? fminf(mx, x) : fmaxf(mx, x);
      }
#pragma unroll
      for (int lane = 1; lane <= 2; lane *= 2) {
        const float y = __shfl_xor_sync(0xffffffffu, mx, lane);
        mx = kMin ? fminf(mx, y) : fmaxf(mx, y);
      }
      const float tile = mx * c, mn = tile > m[hh] + kSlack ? tile : m[hh], base = mn == -INFINITY ? 0.0f : mn;
      rescale[hh] = mn == m[hh] ? 1.0f : exp2_approx(m[hh] - base);
      float sum = 0.0f;
#pragma unroll
      for (int i = 0; i < KEYS / 4; ++i) {
        float& x = sc[4 * (i / 2) + 2 * hh + i % 2];
        x = exp2_approx(fmaf(x, c, kPBits - base));
        sum += x;
      }
      l[hh] = l[hh] * rescale[hh] + sum;
      m[hh] = mn;
    }
  }

  /// The output rescaled to the newest max (before the products of the tile that set it); skipped
  /// when no row of the warp moved its max.
  __device__ __forceinline__ void rescale_o() {
    if (!__any_sync(0xffffffffu, rescale[0] != 1.0f || rescale[1] != 1.0f)) return;
#pragma unroll
    for (int jj = 0; jj < D / 8; ++jj)
#pragma unroll
      for (int e = 0; e < 4; ++e) o[4 * jj + e] *= rescale[e / 2];
  }

  /// P as wgmma's A fragments: the accumulator layout of S is, pair by pair, the register layout of
  /// the A operand, so k16 slice kb of the keys is accumulator blocks 2 kb and 2 kb + 1, packed.
  __device__ __forceinline__ static void pack(const float (&sc)[KEYS / 2], unsigned (&pa)[KEYS / 16][4]) {
#pragma unroll
    for (int kb = 0; kb < KEYS / 16; ++kb)
#pragma unroll
      for (int r = 0; r < 4; ++r) pa[kb][r] = pack_bf16(sc[8 * kb + 2 * r], sc[8 * kb + 2 * r + 1]);
  }

  /// O = o / l and LSE of the rows below seq_q; a row that saw no key: O = 0, LSE = -inf.
  __device__ __forceinline__ void store(const Problem& p, const QueryTile& blk, bf16* O, float* lse) {
#pragma unroll
    for (int hh = 0; hh < 2; ++hh) {
      float sum = l[hh] + __shfl_xor_sync(0xffffffffu, l[hh], 1);
      sum += __shfl_xor_sync(0xffffffffu, sum, 2);
      if (row[hh] >= p.seq_q) continue;
      const float inv = sum == 0.0f ? 0.0f : 1.0f / sum;
      bf16* out = O + at(p.o, blk.b, row[hh], blk.h);
#pragma unroll
      for (int jj = 0; jj < D / 8; ++jj)
        *reinterpret_cast<unsigned*>(out + sm90::acc_col(t, jj)) =
            pack_bf16(o[4 * jj + 2 * hh] * inv, o[4 * jj + 2 * hh + 1] * inv);
      if (lse != nullptr && t % 4 == 0)
        lse[(blk.b * p.heads_q + blk.h) * p.seq_q + row[hh]] =
            sum == 0.0f ? -INFINITY : (m[hh] - kPBits) * 0.693147180559945309f + logf(sum);
    }
  }
};
//! [rows]

/// The rows of shape S's consumer warpgroups: tiles of S::kKeys keys.
template <class S>
using RowsOf = WgmmaRows<S::kD, kMaxSlack, 0, S::kKeys>;

/// Tile k0's softmax in r, S (sc) done from Q (Qs) and the tile's K (Ks) by warpgroup w: without the
/// max (Rows::softmax), and where that fails, S again from Ks, which must still be resident, and
/// the max first. The second S waits for every product in flight.
template <class S, class Rows>
__device__ __forceinline__ void tile_softmax(Rows& r, float (&sc)[S::kKeys / 2], const bf16* Qs, const bf16* Ks,
                                             int w, const Problem& p, long long k0) {
  if (r.softmax(sc, p, k0)) return;
  issue_scores<S>(sc, Qs, Ks, w);
  sm90::wgmma_wait<0>();
  sm90::fence_acc(sc);
  r.softmax_exact(sc, p, k0);
}

/// A Hopper kernel's roles: thread 0 initializes the ring's barriers and the block synchronizes
/// (with kCluster, the cluster: a block's barriers must exist before another block's copies and
/// arrivals reach them); the producer warpgroup keeps kProducerRegs registers a thread, its first
/// thread runs `producer`, and it returns false; the consumer warpgroups share what the block
/// holds from its launch (64K over its threads) less the producer's, a multiple of 8 a thread, and
/// return true (`setmaxnreg.inc` waits for free registers: asking past what the producer gave back
/// hangs).
template <class S, int kProducerRegs = 24, bool kCluster = false, class Stages, class Producer>
__device__ __forceinline__ bool split_roles(const Stages& st, Producer producer) {
  if (threadIdx.x == 0) st.init();
  if constexpr (kCluster)
    sm90::cluster_sync();
  else
    __syncthreads();
  if (sm90::warpgroup() == 0) {
    sm90::regs_down<kProducerRegs>();
    if (threadIdx.x == 0) producer();
    return false;
  }
  constexpr int kLaunch = 65536 / S::kThreads / 8 * 8;
  sm90::regs_up<(kLaunch * (1 + S::kConsumers) - kProducerRegs) / S::kConsumers / 8 * 8>();
  return true;
}

/// The start of a kernel of one item per block: the producer streams the block's n tiles, a
/// consumer warpgroup waits for Q (if there is a tile) and returns true.
template <class S>
__device__ __forceinline__ bool start_block(const CUtensorMap* q_map, const CUtensorMap* k_map,
                                            const CUtensorMap* v_map, const Problem& p, const QueryTile& blk,
                                            long long n, const WgmmaStages<S>& st) {
  if (!split_roles<S>(st, [&] {
        if (n > 0) produce<S>(q_map, k_map, v_map, p, blk, n, st, st.q, &st.bar.q, 0);
      }))
    return false;
  if (n > 0) sm90::mbar_wait(&st.bar.q, 0);
  return true;
}

/// The kernel of steps 9 to 12, 15 and 16: (q_map, k_map, v_map, problem, O, lse).
using WgmmaKernel = void (*)(CUtensorMap, CUtensorMap, CUtensorMap, Problem, bf16*, float*);

/// A Hopper step's kernel, of its kernels for head_dim 64 and 128: null for another head_dim or a
/// tensor TMA cannot read.
inline WgmmaKernel wgmma_pick(WgmmaKernel k64, WgmmaKernel k128, const Problem& p, const bf16* Q, const bf16* K,
                              const bf16* V, const bf16* O) {
  const bool ok = tma_readable(Q, p.q, p.seq_q) && tma_readable(K, p.k, p.seq_kv) && tma_readable(V, p.v, p.seq_kv) &&
                  tma_readable(O, p.o, p.seq_q);
  return !ok ? nullptr : p.head_dim == 64 ? k64 : p.head_dim == 128 ? k128 : nullptr;
}

/// The plan of kernel k of shape S, one block per query tile: null for more than 2^31 - 1 blocks.
template <class S>
Plan<WgmmaKernel> tile_plan(WgmmaKernel k, const Problem& p) {
  return grid_plan(k, 1LL * p.batch * p.heads_q * tiles(p.seq_q, S::kRows), dim3(S::kThreads), S::kSmemBytes);
}

/// The plan of a Hopper step of one block per query tile, the kit's shapes: null as wgmma_pick, or
/// for more than 2^31 - 1 blocks.
inline Plan<WgmmaKernel> wgmma_grid_plan(WgmmaKernel k64, WgmmaKernel k128, const Problem& p, const bf16* Q,
                                         const bf16* K, const bf16* V, const bf16* O) {
  const WgmmaKernel k = wgmma_pick(k64, k128, p, Q, K, V, O);
  return p.head_dim == 64 ? tile_plan<WgmmaShape<64>>(k, p) : tile_plan<WgmmaShape<128>>(k, p);
}

/// The tensor maps of Q (boxes of `rows` rows, the block's) and of K and V (boxes of kv_rows) into m
/// (false if the driver refuses one).
inline bool wgmma_maps(const Problem& p, const bf16* Q, const bf16* K, const bf16* V, unsigned rows,
                       unsigned kv_rows, CUtensorMap (&m)[3]) {
  return head_map(&m[0], Q, p.batch, p.seq_q, p.heads_q, p.head_dim, p.q, rows) &&
         head_map(&m[1], K, p.batch, p.seq_kv, p.heads_kv, p.head_dim, p.k, kv_rows) &&
         head_map(&m[2], V, p.batch, p.seq_kv, p.heads_kv, p.head_dim, p.v, kv_rows);
}

/// A Hopper step's launch: the argument checks before any CUDA call, then the step's plan, the
/// tensor maps of Q, K and V (K's and V's boxes of kv_rows rows), and the kernel.
inline cudaError_t wgmma_launch(Plan<WgmmaKernel> (*plan_of)(const Problem&, const bf16*, const bf16*, const bf16*,
                                                             const bf16*),
                                const Problem& p, const bf16* Q, const bf16* K, const bf16* V, bf16* O, float* lse,
                                cudaStream_t stream, unsigned kv_rows = 128) {
  const Args a = check_args(p, Q, K, V, O, lse);
  if (a == Args::invalid || (p.head_dim != 64 && p.head_dim != 128)) return cudaErrorInvalidValue;
  if (a != Args::launch) return finish_without_launch(a, p, O, lse, stream);
  const Plan<WgmmaKernel> plan = plan_of(p, Q, K, V, O);
  CUtensorMap m[3];
  if (plan.kernel == nullptr || !wgmma_maps(p, Q, K, V, q_rows(plan.block), kv_rows, m))
    return cudaErrorInvalidValue;
  return launch(plan, stream, m[0], m[1], m[2], p, O, lse);
}

}  // namespace smem::attention

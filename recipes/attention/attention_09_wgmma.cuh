/// \file attention_09_wgmma.cuh
/// \brief Step 9, Hopper's attention (sm_90a): TMA loads of Q, K and V into 128-byte-swizzled
/// tiles, `wgmma` for both products, a producer warp that streams K and V through a ring of stages
/// and two consumer warpgroups of 64 query rows each.
///
/// What changes from the `mma.sync` steps, and why it is faster: there, every warp reads its K and
/// V fragments from shared memory with `ldmatrix` (every fragment a shared-memory load) and
/// issues one m16n8k16 `mma.sync` per 4 KFLOP, each waiting on the previous one's registers.
/// Here one `wgmma` m64n128k16 of a warpgroup reads its B operand (K, then V) straight from the
/// swizzled tile by a descriptor, 262 KFLOP per instruction, asynchronously: the tensor cores run
/// from shared memory while the warps wait on one barrier. S = Q K^T takes Q and K from shared
/// memory (both K-major); P never leaves the registers: the accumulator layout of S is, pair by
/// pair, the register layout of wgmma's A operand, so O += P V takes P from registers and V from
/// shared memory as an MN-major operand (rows of keys, head_dim contiguous). One thread of a
/// producer warpgroup issues the TMA loads, each completing on an mbarrier with its byte count,
/// so no consumer thread computes an address or waits on a copy it issued; `setmaxnreg` gives the
/// producer's registers to the consumers, which hold the 64 x 128 scores and output in registers.
/// TMA zero-fills the rows past seq_q and seq_kv (the tensor maps know each tensor's extents and
/// strides), so the tiles need no bounds checks; the mask hides the keys past seq_kv.
///
/// Takes head_dim 64 and 128, tensors whose base is 16-byte aligned and whose strides are multiples
/// of 8 elements below 2^39 (the tensor map's rules); a stride of 0 (a tensor shared across a
/// batch, say) reads coordinate 0 of that dimension. Causal problems walk only the tiles the mask
/// leaves visible, and the blocks with the most tiles start first.
#pragma once
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "../sm90/sm90.cuh"
#include "attention_common.cuh"

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 900
#error "attention_09_wgmma.cuh needs TMA, wgmma and setmaxnreg: compile for sm_90a (e.g. -arch=sm_90a)"
#endif

namespace smem::attention {

/// Step 9's block: 128 query rows (two consumer warpgroups of 64), tiles of 128 keys, K and V in
/// kStages stages, head_dim D (64 or 128).
template <int D>
struct WgmmaShape {
  static constexpr int kD = D, kRows = 128, kKeys = 128, kStages = 2, kThreads = 384;
  using Tile = sm90::TmaTile<bf16, 128, D>;    ///< a Q, K or V tile: 128 rows, D / 64 panels
  using Panel = sm90::TmaTile<bf16, 128, 64>;  ///< one panel: what a K-major descriptor sees
  static constexpr unsigned kTileBytes = Tile::kElems * sizeof(bf16);
  static constexpr unsigned kSmemBytes = Tile::smem_bytes((1 + 2 * kStages) * kTileBytes);
};

//! [tensor maps]
/// The tensor map of a [batch, seq, heads, D] tensor with strides t, read in boxes of one panel:
/// 64 of head_dim by 128 rows of seq, of one head and one batch. Dimensions (head_dim, seq, heads,
/// batch); a dimension of stride 0 becomes one of size 1 (the kernel reads coordinate 0). False
/// if the driver refuses it.
inline bool head_map(CUtensorMap* map, const bf16* g, long long batch, long long seq, long long heads, int d,
                     const Strides& t) {
  const PFN_cuTensorMapEncodeTiled_v12000 encode = sm90::tensor_map_encoder();
  if (encode == nullptr) return false;
  const long long n[3] = {seq, heads, batch}, s[3] = {t.seq, t.head, t.batch};
  cuuint64_t dims[4] = {cuuint64_t(d)}, strides[3];
  for (int i = 0; i < 3; ++i) {
    dims[i + 1] = cuuint64_t(s[i] == 0 ? 1 : n[i]);
    strides[i] = cuuint64_t(s[i] == 0 ? 16 : s[i] * 2);
  }
  const cuuint32_t box[4] = {64, 128, 1, 1}, unit[4] = {1, 1, 1, 1};
  return encode(map, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 4, const_cast<bf16*>(g), dims, strides, box, unit,
                CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) == CUDA_SUCCESS;
}

/// Whether TMA can read a tensor of `seq` rows with strides t at p: a 16-byte aligned base,
/// strides multiples of 8 elements (16 bytes) and below 2^39 elements (the map's 2^40 bytes), and
/// rows apart (a box of 128 rows cannot repeat one row).
inline bool tma_readable(const void* p, const Strides& t, long long seq) {
  constexpr long long kMax = 1LL << 39;
  return aligned(p, 16) && t.batch % 8 == 0 && t.seq % 8 == 0 && t.head % 8 == 0 && t.batch < kMax &&
         t.seq < kMax && t.head < kMax && (t.seq != 0 || seq <= 1);
}

/// TMA: the box at (c, s, h, b) of a 4D map into dst; its bytes complete_tx on `bar`.
__device__ __forceinline__ void tma_load_4d(bf16* dst, const CUtensorMap* map, int c, int s, int h, int b,
                                            std::uint64_t* bar) {
  asm volatile(
      "cp.async.bulk.tensor.4d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4, "
      "%5}], [%6];\n" ::"r"(sm90::smem_u32(dst)),
      "l"(map), "r"(c), "r"(s), "r"(h), "r"(b), "r"(sm90::smem_u32(bar))
      : "memory");
}
//! [tensor maps]

//! [wgmma]
/// O += P V, m64nDk16: A (P's 64 x 16 slice) from registers, B (16 keys of V) from shared memory,
/// MN-major (transpose-b 1).
template <int D>
__device__ __forceinline__ void wgmma_pv(float (&d)[D / 2], const unsigned (&a)[4], std::uint64_t b) {
  if constexpr (D == 128) {
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, 1, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 {"
        "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
        "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "
        "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "
        "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63"
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
//! [wgmma]

/// The block's work: query tile, batch and head. Without the mask a head's query tiles are
/// consecutive blocks (they share its K and V in L2); with it the blocks are numbered from the
/// last query tile down, heads innermost (the longest blocks first).
struct WgmmaBlock {
  long long b, h, q0;
  __device__ WgmmaBlock(const Problem& p, int rows) {
    const long long heads = 1LL * p.batch * p.heads_q, tiles_q = tiles(p.seq_q, rows);
    const long long tile = p.causal ? tiles_q - 1 - blockIdx.x / heads : blockIdx.x % tiles_q;
    const long long bh = p.causal ? blockIdx.x % heads : blockIdx.x / tiles_q;
    b = bh / p.heads_q, h = bh % p.heads_q, q0 = tile * rows;
  }
};

/// The key tiles a block of rows [q0, q0 + rows) walks: all of them, or with the causal mask those
/// up to the last row's diagonal key (none if that row sees no key).
__host__ __device__ inline long long walked_tiles(const Problem& p, long long q0, int rows, int keys) {
  const long long n = tiles(p.seq_kv, keys), last = (q0 + rows < p.seq_q ? q0 + rows : p.seq_q) - 1;
  const long long reach = last + p.seq_kv - p.seq_q;  // the last row's last visible key
  if (!p.causal) return n;
  return reach < 0 ? 0 : reach / keys + 1 < n ? reach / keys + 1 : n;
}

//! [wgmma kernel]
template <class S>
__global__ void __launch_bounds__(S::kThreads, 1)
    wgmma_kernel(const __grid_constant__ CUtensorMap q_map, const __grid_constant__ CUtensorMap k_map,
                 const __grid_constant__ CUtensorMap v_map, Problem p, bf16* O, float* lse) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  using namespace sm90;
  using Tile = typename S::Tile;
  using Panel = typename S::Panel;
  constexpr int D = S::kD, kPanels = D / 64, kSt = S::kStages;
  extern __shared__ unsigned char raw[];
  bf16* Qs = reinterpret_cast<bf16*>(Tile::align(raw));
  bf16* ring = Qs + Tile::kElems;  // stage s: K at ring + 2 s Tile::kElems, V after it
  __shared__ std::uint64_t q_full, k_full[kSt], v_full[kSt], empty[kSt];
  const WgmmaBlock blk(p, S::kRows);
  const long long n = walked_tiles(p, blk.q0, S::kRows, S::kKeys);
  if (threadIdx.x == 0) {
    mbar_init(&q_full, 1);
    for (int s = 0; s < kSt; ++s) mbar_init(&k_full[s], 1), mbar_init(&v_full[s], 1), mbar_init(&empty[s], 2);
    fence_barrier_init();
  }
  __syncthreads();
  if (warpgroup() == 0) {  // the producer: one thread issues every load
    regs_down<24>();
    if (threadIdx.x == 0 && n > 0) {
      const int hk = int(blk.h / (p.heads_q / p.heads_kv));
      const int qh = p.q.head ? int(blk.h) : 0, qb = p.q.batch ? int(blk.b) : 0;
      const int kh = p.k.head ? hk : 0, kb = p.k.batch ? int(blk.b) : 0;
      const int vh = p.v.head ? hk : 0, vb = p.v.batch ? int(blk.b) : 0;
      const int q_row = p.q.seq ? int(blk.q0) : 0;
      mbar_arrive_expect_tx(&q_full, S::kTileBytes);
      for (int c = 0; c < kPanels; ++c) tma_load_4d(Qs + c * Tile::kPanel, &q_map, 64 * c, q_row, qh, qb, &q_full);
      for (long long j = 0; j < n; ++j) {
        const int s = int(j % kSt), key = p.k.seq ? int(j * S::kKeys) : 0, vkey = p.v.seq ? int(j * S::kKeys) : 0;
        mbar_wait(&empty[s], unsigned(j / kSt & 1) ^ 1);
        bf16* Ks = ring + 2 * s * Tile::kElems;
        mbar_arrive_expect_tx(&k_full[s], S::kTileBytes);
        for (int c = 0; c < kPanels; ++c) tma_load_4d(Ks + c * Tile::kPanel, &k_map, 64 * c, key, kh, kb, &k_full[s]);
        mbar_arrive_expect_tx(&v_full[s], S::kTileBytes);
        for (int c = 0; c < kPanels; ++c)
          tma_load_4d(Ks + Tile::kElems + c * Tile::kPanel, &v_map, 64 * c, vkey, vh, vb, &v_full[s]);
      }
    }
    return;
  }
  regs_up<240>();
  // The consumers: warpgroup w holds query rows q0 + 64 w + acc_row(t, 0 or 1).
  const int w = warpgroup() - 1, t = threadIdx.x % 128;
  const float c = p.scale * 1.44269504088896341f;  // scores in base 2: exp(x) = 2^(x log2(e))
  const long long shift = p.seq_kv - p.seq_q;       // row i sees keys up to i + shift (causal)
  long long row[2];
  for (int hh = 0; hh < 2; ++hh) row[hh] = blk.q0 + 64 * w + acc_row(t, hh);
  float o[D / 2] = {}, sc[64], m[2] = {-INFINITY, -INFINITY}, l[2] = {0.0f, 0.0f};
  if (n > 0) mbar_wait(&q_full, 0);
  for (long long j = 0; j < n; ++j) {
    const int s = int(j % kSt);
    const unsigned parity = unsigned(j / kSt & 1);
    const bf16* Ks = ring + 2 * s * Tile::kElems;
    mbar_wait(&k_full[s], parity);
    wgmma_fence();
#pragma unroll
    for (int kk = 0; kk < D / 16; ++kk) {  // k16 slice kk of head_dim: panel kk / 4, columns 16 (kk % 4)
      const bf16* q = Qs + kk / 4 * Tile::kPanel + 64 * 64 * w + 16 * (kk % 4);
      const bf16* k = Ks + kk / 4 * Tile::kPanel + 16 * (kk % 4);
      wgmma_m64n128k16<false>(sc, Panel::template desc<false>(q), Panel::template desc<false>(k), kk > 0);
    }
    wgmma_commit();
    wgmma_wait<0>();
    fence_acc(sc);
    // The online softmax of rows row[0] and row[1]: scores scaled to base 2, keys past seq_kv (and,
    // with the mask, past the row's diagonal) at -inf, the running max and sum updated, the
    // output rescaled.
    const long long k0 = j * S::kKeys;
    const bool edge = k0 + S::kKeys > p.seq_kv || (p.causal && k0 + S::kKeys - 1 > blk.q0 + 64 * w + shift);
    float rescale[2];
#pragma unroll
    for (int hh = 0; hh < 2; ++hh) {
      float mx = -INFINITY;
#pragma unroll
      for (int jj = 0; jj < 16; ++jj)
#pragma unroll
        for (int e = 0; e < 2; ++e) {
          float& x = sc[4 * jj + 2 * hh + e];
          x *= c;
          const long long key = k0 + acc_col(t, jj) + e;
          if (edge && (key >= p.seq_kv || (p.causal && key > row[hh] + shift))) x = -INFINITY;
          mx = fmaxf(mx, x);
        }
      mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 1));
      mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 2));
      const float mn = fmaxf(m[hh], mx), base = mn == -INFINITY ? 0.0f : mn;
      rescale[hh] = exp2_approx(m[hh] - base);
      float sum = 0.0f;
#pragma unroll
      for (int jj = 0; jj < 16; ++jj)
#pragma unroll
        for (int e = 0; e < 2; ++e) {
          float& x = sc[4 * jj + 2 * hh + e];
          x = exp2_approx(x - base);
          sum += x;
        }
      l[hh] = l[hh] * rescale[hh] + sum;
      m[hh] = mn;
    }
#pragma unroll
    for (int jj = 0; jj < D / 8; ++jj)
#pragma unroll
      for (int e = 0; e < 4; ++e) o[4 * jj + e] *= rescale[e / 2];
    // P's A fragments: k16 slice kb of the keys is accumulator blocks 2 kb and 2 kb + 1.
    unsigned pa[8][4];
#pragma unroll
    for (int kb = 0; kb < 8; ++kb)
#pragma unroll
      for (int r = 0; r < 4; ++r) pa[kb][r] = pack_bf16(sc[8 * kb + 2 * r], sc[8 * kb + 2 * r + 1]);
    mbar_wait(&v_full[s], parity);
    wgmma_fence();
#pragma unroll
    for (int kb = 0; kb < 8; ++kb)
      wgmma_pv<D>(o, pa[kb], Tile::template desc<true>(Ks + Tile::kElems + Tile::offset(16 * kb, 0)));
    wgmma_commit();
    wgmma_wait<0>();
    fence_acc(o);
    if (t == 0) mbar_arrive(&empty[s]);  // both consumers done with stage s: the producer refills it
  }
  // O = o / l and LSE; a row that saw no key: O = 0, LSE = -inf.
#pragma unroll
  for (int hh = 0; hh < 2; ++hh) {
    float sum = l[hh] + __shfl_xor_sync(0xffffffffu, l[hh], 1);
    sum += __shfl_xor_sync(0xffffffffu, sum, 2);
    if (row[hh] >= p.seq_q) continue;
    const float inv = sum == 0.0f ? 0.0f : 1.0f / sum;
    bf16* out = O + at(p.o, blk.b, row[hh], blk.h);
#pragma unroll
    for (int jj = 0; jj < D / 8; ++jj)
      *reinterpret_cast<unsigned*>(out + acc_col(t, jj)) = pack_bf16(o[4 * jj + 2 * hh] * inv, o[4 * jj + 2 * hh + 1] * inv);
    if (lse != nullptr && t % 4 == 0)
      lse[(blk.b * p.heads_q + blk.h) * p.seq_q + row[hh]] =
          sum == 0.0f ? -INFINITY : m[hh] * 0.693147180559945309f + logf(sum);
  }
#endif
}
//! [wgmma kernel]

using WgmmaKernel = void (*)(CUtensorMap, CUtensorMap, CUtensorMap, Problem, bf16*, float*);

/// Step 9's plan: null for a head_dim other than 64 and 128, a tensor TMA cannot read, or more
/// than 2^31 - 1 blocks.
inline Plan<WgmmaKernel> wgmma_plan(const Problem& p, const bf16* Q = nullptr, const bf16* K = nullptr,
                                    const bf16* V = nullptr, const bf16* O = nullptr) {
  using S64 = WgmmaShape<64>;
  using S128 = WgmmaShape<128>;
  const bool ok = tma_readable(Q, p.q, p.seq_q) && tma_readable(K, p.k, p.seq_kv) && tma_readable(V, p.v, p.seq_kv) &&
                  tma_readable(O, p.o, p.seq_q);
  const WgmmaKernel k = !ok                 ? nullptr
                        : p.head_dim == 64  ? wgmma_kernel<S64>
                        : p.head_dim == 128 ? wgmma_kernel<S128>
                                            : nullptr;
  return grid_plan(k, 1LL * p.batch * p.heads_q * tiles(p.seq_q, 128), dim3(384),
                   p.head_dim == 64 ? S64::kSmemBytes : S128::kSmemBytes);
}

inline std::size_t wgmma_workspace(const Problem&) { return 0; }

//! [wgmma launcher]
/// O = softmax(scale Q K^T + mask) V and its LSE on wgmma, the loads by TMA (sm_90a).
inline cudaError_t wgmma(const Problem& p, const bf16* Q, const bf16* K, const bf16* V, bf16* O, float* lse, void*,
                         std::size_t, cudaStream_t stream = nullptr) {
  const Args a = check_args(p, Q, K, V, O, lse);
  if (a == Args::invalid || (p.head_dim != 64 && p.head_dim != 128)) return cudaErrorInvalidValue;
  if (a != Args::launch) return finish_without_launch(a, p, O, lse, stream);
  const Plan<WgmmaKernel> plan = wgmma_plan(p, Q, K, V, O);
  if (plan.kernel == nullptr) return cudaErrorInvalidValue;
  CUtensorMap qm, km, vm;
  if (!head_map(&qm, Q, p.batch, p.seq_q, p.heads_q, p.head_dim, p.q) ||
      !head_map(&km, K, p.batch, p.seq_kv, p.heads_kv, p.head_dim, p.k) ||
      !head_map(&vm, V, p.batch, p.seq_kv, p.heads_kv, p.head_dim, p.v))
    return cudaErrorInvalidValue;
  return launch(plan, stream, qm, km, vm, p, O, lse);
}
//! [wgmma launcher]

}  // namespace smem::attention

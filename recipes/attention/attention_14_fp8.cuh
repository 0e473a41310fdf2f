/// \file attention_14_fp8.cuh
/// \brief Step 14, FP8 (sm_90a): Q, K and V in e4m3 with one scale per tensor, both products as
/// FP8 `wgmma` (m64n128k32, fp32 accumulators), V transposed in shared memory by the producer
/// warpgroup.
///
/// What changes from step 11, and why it is faster: an FP8 `wgmma` does twice the products of a
/// bf16 one in the same time, and the tiles are half the bytes. The block and its schedule are step
/// 11's: the consumer warpgroups take turns (step 10's Turns), and a turn issues S_j and P_{j-1}
/// V_{j-1}, the latter running under the softmax of S_j; with products half as long, the softmax is
/// as long as a turn's products, and the turns keep the tensor cores busy with the other
/// warpgroup's products meanwhile. Three things follow from the format. (1) The scales: element x
/// of Q is `scales.q` times its e4m3 value (likewise K and V), so S = scale Q K^T takes `scale *
/// scales.q * scales.k` as the softmax's scale, and O its factor `scales.v` at the end. (2) FP8
/// `wgmma` takes both operands K-major only (k contiguous): Q and K are (rows of head_dim), but V's
/// rows are keys with head_dim contiguous, the wrong way for O = P V. Three warps of the producer
/// warpgroup, idle in step 11, transpose each V tile into a V^T tile (rows of head_dim, keys
/// contiguous) once it has landed, and the consumers read V^T. A warp moves 16 keys by 32 head_dim
/// bytes in three instructions: `ldmatrix.x4.trans` reads them as 16-bit pairs, byte permutes put
/// four keys in each register, `stmatrix.x4` writes V^T's rows. (3) P goes from registers into the
/// A operand as e4m3, four to a register; the accumulator layout of S is not the 8-bit A layout (a
/// thread holds keys 2t, 2t + 1, 8 + 2t, 9 + 2t of 16 where the A operand wants 4t to 4t + 3).
/// Instead of moving P between threads, V^T stores the keys in that order (fp8_key()): logical key
/// k of the product is physical key fp8_key(k), for P and V^T alike, and a sum over keys does not
/// depend on their order. The softmax leaves P times 2^7 (inside its exponent) with the max moved
/// past 1 only (P <= 2, so 2^7 P <= 256, below e4m3's 448): small probabilities keep their 3 bits
/// of mantissa instead of falling below e4m3's smallest subnormal, and the sum l carries the 2^7.
///
/// Barriers per stage: K and V landed (TMA's byte counts), K read by both consumers, V read by the
/// three transposing warps, V^T written by them (each thread fences its stores for the async
/// proxy first), V^T read by both consumers. Head_dim 128 (a row of 128 bytes, one swizzle span);
/// Q, K and V 16-byte aligned with strides multiples of 16 elements; O as step 9's. Built for
/// sm_90a only (step 10's `#error`).
#pragma once
#include <cuda_fp8.h>
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "attention_10_pingpong.cuh"
#include "attention_common.cuh"
#include "attention_sm90.cuh"

namespace smem::attention {

using e4m3 = __nv_fp8_e4m3;  ///< step 14's element of Q, K and V

/// Step 14's scales: element x of Q is q times its stored e4m3 value; likewise K and V.
struct Fp8Scales {
  float q = 1.0f, k = 1.0f, v = 1.0f;
};

//! [fp8 layout]
/// Step 14's block: step 9's 128 query rows and 128-key tiles at head_dim 128, in bytes: every
/// tile (Q, K, V, V^T) 128 rows of 128 bytes. Per stage K, V and V^T.
struct Fp8Shape {
  static constexpr int kD = 128, kRows = 128, kKeys = 128, kStages = 2, kThreads = 384;
  static constexpr int kProducerRegs = 56, kConsumerRegs = 224;  // 128 x 56 + 256 x 224 <= 64K
  using Tile = sm90::TmaTile<e4m3, 128, 128>;
  static constexpr unsigned kTileBytes = Tile::kElems;
  static constexpr unsigned kSmemBytes = Tile::smem_bytes((1 + 3 * kStages) * kTileBytes);
};

/// The physical key (of 0 to 127) at logical key k of the second product: in each 16 keys, the
/// keys a thread holds in S's accumulators (2t, 2t + 1, 8 + 2t, 9 + 2t) at the A operand's 4t to
/// 4t + 3.
__host__ __device__ constexpr int fp8_key(int k) { return k / 16 * 16 + k % 16 / 4 * 2 + k % 2 + k % 4 / 2 * 8; }

/// The score in S's accumulators (sc[], m64n128: sc[4 j + 2 h + e] is column 8 j + 2 (t % 4) + e)
/// that byte `byte` of A register `reg` of k32 slice kb holds: row half reg % 2, logical key
/// 32 kb + 16 (reg / 2) + 4 (t % 4) + byte, the physical key fp8_key() of it.
__host__ __device__ constexpr int fp8_p_index(int kb, int reg, int byte) {
  return 4 * (4 * kb + 2 * (reg / 2) + byte / 2) + 2 * (reg % 2) + byte % 2;
}

/// The transpose's work, in 32 units of 16 keys by 32 head_dim bytes: unit u is keys 16 (u / 4) on
/// at head_dim 32 (u % 4) on. Its `ldmatrix.x4.trans` reads four 8 x 8 matrices of 16-bit pairs
/// (matrix m: keys 8 (m % 2) on, head_dim 16 (m / 2) on; lane l gives row l % 8 of matrix l / 8),
/// so lane l holds, per matrix, the byte pairs of keys 2 (l % 4) and 2 (l % 4) + 1 at head_dim
/// 2 (l / 4) and 2 (l / 4) + 1. Two byte permutes of the key-low and key-high matrices' words give
/// the four keys fp8_key() puts at 4 (l % 4) to 4 (l % 4) + 3, at head_dim 2 (l / 4) (selector
/// 0x6420) and at 2 (l / 4) + 1 (0x7531): a 32-bit row piece of V^T each, which `stmatrix.x4`
/// writes as row l / 4 of its matrices. Lanes 16 on swap the two, so that each matrix's 8 rows
/// fall on 8 different rows mod 8 (swizzle chunks): matrix m, row i (given by lane 8 m + i) is V^T
/// row fp8_tr_dst(u, 8 m + i).
__host__ __device__ constexpr int fp8_tr_src_key(int u, int lane) {
  return 16 * (u / 4) + 8 * (lane / 8 % 2) + lane % 8;
}
__host__ __device__ constexpr int fp8_tr_src_dim(int u, int lane) { return 32 * (u % 4) + 16 * (lane / 16); }
__host__ __device__ constexpr int fp8_tr_dst(int u, int lane) {
  return 32 * (u % 4) + 16 * (lane / 16) + 2 * (lane % 8) + ((lane / 8 % 2) ^ (lane % 8 / 4));
}
/// The byte permute of lane l for stmatrix's matrices 0 and 2 (head_dim 2 (l / 4), or + 1 from
/// lane 16 on); matrices 1 and 3 take the other (selector ^ 0x1111).
__host__ __device__ constexpr unsigned fp8_tr_perm(int lane) { return lane < 16 ? 0x6420u : 0x7531u; }
//! [fp8 layout]

namespace detail {
/// Four floats as e4m3 bytes, x0 in the low byte (saturated to +-448).
__device__ __forceinline__ unsigned pack_e4m3(float x0, float x1, float x2, float x3) {
  const unsigned lo = __nv_cvt_float2_to_fp8x2(make_float2(x0, x1), __NV_SATFINITE, __NV_E4M3);
  const unsigned hi = __nv_cvt_float2_to_fp8x2(make_float2(x2, x3), __NV_SATFINITE, __NV_E4M3);
  return lo | hi << 16;
}
/// One transpose unit: ldmatrix.x4.trans from V (this lane's row address src), four byte permutes
/// (selectors sel, sel ^ 0x1111), stmatrix.x4 into V^T (this lane's row address dst).
__device__ __forceinline__ void transpose_unit(unsigned src, unsigned dst, unsigned sel) {
  asm volatile(
      "{\n.reg .b32 v<4>, t<4>;\n"
      "ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {v0, v1, v2, v3}, [%0];\n"
      "prmt.b32 t0, v0, v1, %2;\nprmt.b32 t1, v0, v1, %3;\n"
      "prmt.b32 t2, v2, v3, %2;\nprmt.b32 t3, v2, v3, %3;\n"
      "stmatrix.sync.aligned.m8n8.x4.shared.b16 [%1], {t0, t1, t2, t3};\n}\n" ::"r"(src),
      "r"(dst), "r"(sel), "r"(sel ^ 0x1111u)
      : "memory");
}
}  // namespace detail

/// d[64] += A (64 x 32 e4m3) * B (32 x 128 e4m3), fp32 accumulators; B K-major by descriptor, A
/// from shared memory (descriptor a) or, with kRegsA, from registers ra.
template <bool kRegsA>
__device__ __forceinline__ void wgmma_fp8(float (&d)[64], std::uint64_t a, const unsigned (&ra)[4], std::uint64_t b,
                                          bool accumulate) {
  if constexpr (kRegsA) {
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %69, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n128k32.f32.e4m3.e4m3 {"
        SMEM_ACC64
        "}, {%64, %65, %66, %67}, %68, p, 1, 1;\n}\n"
        : SMEM_ACC8(0), SMEM_ACC8(8), SMEM_ACC8(16), SMEM_ACC8(24), SMEM_ACC8(32), SMEM_ACC8(40), SMEM_ACC8(48),
          SMEM_ACC8(56)
        : "r"(ra[0]), "r"(ra[1]), "r"(ra[2]), "r"(ra[3]), "l"(b), "r"(int(accumulate)));
  } else {
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n128k32.f32.e4m3.e4m3 {"
        SMEM_ACC64
        "}, %64, %65, p, 1, 1;\n}\n"
        : SMEM_ACC8(0), SMEM_ACC8(8), SMEM_ACC8(16), SMEM_ACC8(24), SMEM_ACC8(32), SMEM_ACC8(40), SMEM_ACC8(48),
          SMEM_ACC8(56)
        : "l"(a), "l"(b), "r"(int(accumulate)));
  }
}

/// Issues S = Q K^T for a warpgroup's 64 rows (Q at descriptor dq, K at dk): four k32 slices, 32
/// bytes apart, committed as one group, not waited for.
__device__ __forceinline__ void fp8_scores(float (&sc)[64], std::uint64_t dq, std::uint64_t dk) {
  const unsigned none[4] = {0, 0, 0, 0};
  sm90::wgmma_fence();
#pragma unroll
  for (int kk = 0; kk < 4; ++kk) wgmma_fp8<false>(sc, dq + 2 * kk, none, dk + 2 * kk, kk > 0);
  sm90::wgmma_commit();
}

/// Issues O += P V from P's e4m3 registers and V^T (descriptor dvt): four k32 slices of keys, one
/// group, not waited for.
__device__ __forceinline__ void fp8_pv(float (&o)[64], const unsigned (&pa)[4][4], std::uint64_t dvt) {
  sm90::wgmma_fence();
#pragma unroll
  for (int kb = 0; kb < 4; ++kb) wgmma_fp8<true>(o, 0, pa[kb], dvt + 2 * kb, true);
  sm90::wgmma_commit();
}

/// P x 2^7 (as the softmax left it in sc) as e4m3, in the A registers of the four k32 slices.
__device__ __forceinline__ void fp8_pack(const float (&sc)[64], unsigned (&pa)[4][4]) {
#pragma unroll
  for (int kb = 0; kb < 4; ++kb)
#pragma unroll
    for (int reg = 0; reg < 4; ++reg)
      pa[kb][reg] = detail::pack_e4m3(sc[fp8_p_index(kb, reg, 0)], sc[fp8_p_index(kb, reg, 1)],
                                      sc[fp8_p_index(kb, reg, 2)], sc[fp8_p_index(kb, reg, 3)]);
}

/// The block's barriers, per stage s: K_s and V_s landed (TMA), K_s read by both consumer
/// warpgroups (one arrival each), V_s read and V^T_s written by the 96 transposing threads (one
/// arrival each), V^T_s read by both consumers; and Q landed.
template <class S>
struct Fp8Bars {
  std::uint64_t q, k_full[S::kStages], v_full[S::kStages], k_empty[S::kStages], v_empty[S::kStages],
      vt_full[S::kStages], vt_empty[S::kStages];
  __device__ void init() {
    sm90::mbar_init(&q, 1);
    for (int s = 0; s < S::kStages; ++s) {
      sm90::mbar_init(&k_full[s], 1), sm90::mbar_init(&v_full[s], 1), sm90::mbar_init(&k_empty[s], 2);
      sm90::mbar_init(&v_empty[s], 96), sm90::mbar_init(&vt_full[s], 96), sm90::mbar_init(&vt_empty[s], 2);
    }
    sm90::fence_barrier_init();
  }
};

//! [fp8 kernel]
template <class S>
__global__ void __launch_bounds__(S::kThreads, 1)
    fp8_kernel(const __grid_constant__ CUtensorMap q_map, const __grid_constant__ CUtensorMap k_map,
               const __grid_constant__ CUtensorMap v_map, Problem p, Fp8Scales scales, bf16* O, float* lse) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  using Tile = typename S::Tile;
  extern __shared__ unsigned char raw[];
  __shared__ Fp8Bars<S> bar;
  e4m3* const q = reinterpret_cast<e4m3*>(Tile::align(raw));
  // Key tile j's K (part 0), V (1) or V^T (2), in stage j % kStages; the parity of that stage's use.
  auto tile = [&](long long j, int part) { return q + (1 + 3 * (j % S::kStages) + part) * Tile::kElems; };
  auto parity = [](long long j) { return unsigned(j / S::kStages & 1); };
  const QueryTile blk = QueryTile::nth(p, blockIdx.x, S::kRows);
  const long long n = KeyTiles(p, blk.q0, blk.last, S::kKeys).end, hk = blk.h / (p.heads_q / p.heads_kv);
  if (threadIdx.x == 0) bar.init();
  __syncthreads();
  if (sm90::warpgroup() == 0) {
    sm90::regs_down<S::kProducerRegs>();
    if (threadIdx.x == 0 && n > 0) {  // the producer: Q, then K_j and V_j as their stages free up
      auto load = [&](e4m3* dst, const CUtensorMap* map, const Strides& t, long long row, long long h,
                      std::uint64_t* b) {
        sm90::mbar_arrive_expect_tx(b, S::kTileBytes);
        tma_rows<64, 0>(dst, map, t, row, h, blk.b, b);  // one box: the 128 bytes of a row
      };
      load(q, &q_map, p.q, blk.q0, blk.h, &bar.q);
      for (long long j = 0; j < n; ++j) {
        const int s = int(j % S::kStages);
        sm90::mbar_wait(&bar.k_empty[s], parity(j) ^ 1);
        load(tile(j, 0), &k_map, p.k, j * S::kKeys, hk, &bar.k_full[s]);
        sm90::mbar_wait(&bar.v_empty[s], parity(j) ^ 1);
        load(tile(j, 1), &v_map, p.v, j * S::kKeys, hk, &bar.v_full[s]);
      }
    } else if (threadIdx.x >= 32) {  // warps 1 to 3: V_j into V^T_j, keys in fp8_key() order
      const int lane = int(threadIdx.x % 32), warp = int(threadIdx.x / 32) - 1;
      for (long long j = 0; j < n; ++j) {
        const int s = int(j % S::kStages);
        sm90::mbar_wait(&bar.v_full[s], parity(j));
        sm90::mbar_wait(&bar.vt_empty[s], parity(j) ^ 1);
        const unsigned char* v = reinterpret_cast<const unsigned char*>(tile(j, 1));
        unsigned char* vt = reinterpret_cast<unsigned char*>(tile(j, 2));
        for (int u = warp; u < 32; u += 3)
          detail::transpose_unit(sm90::smem_u32(v + Tile::offset(fp8_tr_src_key(u, lane), fp8_tr_src_dim(u, lane))),
                                 sm90::smem_u32(vt + Tile::offset(fp8_tr_dst(u, lane), 16 * (u / 4))),
                                 fp8_tr_perm(lane));
        sm90::fence_proxy_async();  // this thread's stores, before the consumers' wgmma reads them
        sm90::mbar_arrive(&bar.vt_full[s]), sm90::mbar_arrive(&bar.v_empty[s]);
      }
    }
    return;
  }
  sm90::regs_up<S::kConsumerRegs>();
  const int w = sm90::warpgroup() - 1, t = int(threadIdx.x % 128);  // consumer warpgroup w: rows q0 + 64 w on
  WgmmaRows<S::kD, 1, 7> r(blk.q0 + 64 * w);  // P x 2^7 <= 256; the max first on every tile (softmax_exact):
  // with a slack of 1, a row's sum passes the bound of the kit's softmax without the max on most tiles
  Problem ps = p;  // the softmax sees scale Q K^T in the e4m3 values' units
  ps.scale = p.scale * scales.q * scales.k;
  if (n > 0) {  // step 11's turns: turn j issues S_j (j < n) and P_{j-1} V_{j-1} (j > 0)
    auto release = [&](std::uint64_t* b) {
      if (t == 0) sm90::mbar_arrive(b);
    };
    sm90::mbar_wait(&bar.q, 0);
    const std::uint64_t dq = Tile::template desc<false>(q + 64 * 128 * w);
    const Turns turns(w, n + 1);
    float sc[64];
    unsigned pa[4][4];  // P x 2^7 as e4m3, k32 slice kb's A registers
    sm90::mbar_wait(&bar.k_full[0], 0);
    turns.wait();
    fp8_scores(sc, dq, Tile::template desc<false>(tile(0, 0)));
    turns.done(0);
    sm90::wgmma_wait<0>();
    sm90::fence_acc(sc);
    release(&bar.k_empty[0]);
    r.softmax_exact(sc, ps, 0);
    fp8_pack(sc, pa);
    for (long long j = 1; j < n; ++j) {
      const int s = int(j % S::kStages), prev = int((j - 1) % S::kStages);
      sm90::mbar_wait(&bar.k_full[s], parity(j));
      sm90::mbar_wait(&bar.vt_full[prev], parity(j - 1));
      turns.wait();
      fp8_scores(sc, dq, Tile::template desc<false>(tile(j, 0)));
      r.rescale_o();
      fp8_pv(r.o, pa, Tile::template desc<false>(tile(j - 1, 2)));
      turns.done(j);
      sm90::wgmma_wait<1>();  // S_j done; P_{j-1} V_{j-1} runs on under the softmax
      sm90::fence_acc(sc);
      release(&bar.k_empty[s]);
      r.softmax_exact(sc, ps, j * S::kKeys);
      sm90::wgmma_wait<0>();  // P_{j-1}'s registers and the output are free
      sm90::fence_acc(r.o);
      release(&bar.vt_empty[prev]);
      fp8_pack(sc, pa);
    }
    const int last = int((n - 1) % S::kStages);
    sm90::mbar_wait(&bar.vt_full[last], parity(n - 1));
    turns.wait();
    r.rescale_o();
    fp8_pv(r.o, pa, Tile::template desc<false>(tile(n - 1, 2)));
    turns.done(n);
    sm90::wgmma_wait<0>();
    sm90::fence_acc(r.o);
    release(&bar.vt_empty[last]);
  }
#pragma unroll
  for (int i = 0; i < 64; ++i) r.o[i] *= scales.v;
  r.store(p, blk, O, lse);
#endif
}
//! [fp8 kernel]

using Fp8Kernel = void (*)(CUtensorMap, CUtensorMap, CUtensorMap, Problem, Fp8Scales, bf16*, float*);

/// Step 14's plan: null unless head_dim is 128 and TMA can read Q, K, V (and write-align O as step
/// 9 needs), or for more than 2^31 - 1 blocks.
inline Plan<Fp8Kernel> fp8_plan(const Problem& p, const e4m3* Q = nullptr, const e4m3* K = nullptr,
                                const e4m3* V = nullptr, const bf16* O = nullptr) {
  const bool ok = p.head_dim == 128 && tma_readable(Q, p.q, p.seq_q) && tma_readable(K, p.k, p.seq_kv) &&
                  tma_readable(V, p.v, p.seq_kv) && tma_readable(O, p.o, p.seq_q);
  return grid_plan(ok ? fp8_kernel<Fp8Shape> : nullptr, 1LL * p.batch * p.heads_q * tiles(p.seq_q, 128), dim3(384),
                   Fp8Shape::kSmemBytes);
}

//! [fp8 launcher]
/// O = softmax(scale Q K^T + mask) V and its LSE from e4m3 Q, K and V with per-tensor scales
/// (sm_90a). Invalid (cudaErrorInvalidValue, before any CUDA call): what check_args() refuses, a
/// scale that is not finite, a head_dim other than 128, tensors TMA cannot read.
inline cudaError_t fp8(const Problem& p, const Fp8Scales& scales, const e4m3* Q, const e4m3* K, const e4m3* V, bf16* O,
                       float* lse, cudaStream_t stream = nullptr) {
  const Args a = check_args(p, Q, K, V, O, lse);
  const bool finite = std::isfinite(scales.q) && std::isfinite(scales.k) && std::isfinite(scales.v);
  if (a == Args::invalid || !finite || p.head_dim != 128) return cudaErrorInvalidValue;
  if (a != Args::launch) return finish_without_launch(a, p, O, lse, stream);
  const Plan<Fp8Kernel> plan = fp8_plan(p, Q, K, V, O);
  CUtensorMap m[3];
  if (plan.kernel == nullptr || !head_map(&m[0], Q, p.batch, p.seq_q, p.heads_q, p.head_dim, p.q) ||
      !head_map(&m[1], K, p.batch, p.seq_kv, p.heads_kv, p.head_dim, p.k) ||
      !head_map(&m[2], V, p.batch, p.seq_kv, p.heads_kv, p.head_dim, p.v))
    return cudaErrorInvalidValue;
  return launch(plan, stream, m[0], m[1], m[2], p, scales, O, lse);
}
//! [fp8 launcher]

}  // namespace smem::attention

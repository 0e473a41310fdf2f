/// \file tc_gemm_sm90.cuh
/// \brief The Hopper kit of the tensor-core GEMM (sm_90a), what steps 8 to 16 share, on the
/// project's Hopper core (sm90/sm90.cuh: TmaTile, the tensor maps, mbarriers, TMA loads and stores,
/// wgmma's fences, `setmaxnreg`): the stages of bf16 TmaTile windows that TMA fills and the launch
/// that makes their tensor maps, the bf16 `wgmma` instructions and their descriptors, and the
/// warp-specialized tile of steps 12 to 16 with its TMA-store epilogue.
#pragma once
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "../sm90/sm90.cuh"
#include "tc_gemm_common.cuh"

namespace smem::tc_gemm {

using namespace smem::sm90;  // the core's names; smem_u32 resolves to tc_gemm_common's, the same function

/// The kernel of steps 8 to 11: (a_map, b_map, M, N, K, alpha, beta, C, ldc, D, ldd).
using TmaKernel = void (*)(const CUtensorMap, const CUtensorMap, int, int, int, float, float, const bf16*, int, bf16*,
                           int);

/// A Hopper step's launch, for its shape S: the argument checks and the tensor maps' row rule
/// (tma_rows: A, B and, for a kernel that stores D with TMA, any but a TmaKernel, D), both before
/// any CUDA call; then the tensor maps of A and B in S's tiles (S::LA, S::LB) and, for a kernel that
/// stores with TMA, of D in S::LD's panels, then the plan's kernel with (a_map, b_map[, d_map], M,
/// N, K, alpha, beta, C, ldc, D, ldd) and, per `extra`, one more argument extra(plan) (steps 13 to 16: their
/// clusters' order). cudaErrorInvalidValue when the rows break the rule, the plan is null or the
/// driver refuses a map.
template <class S, class Kernel, class... Extra>
cudaError_t launch_tma(Plan<Kernel> (*plan_of)(int, int, int, const bf16*, int, const bf16*, int, const bf16*, int,
                                               const bf16*, int),
                       int M, int N, int K, float alpha, const bf16* A, int lda, const bf16* B, int ldb, float beta,
                       const bf16* C, int ldc, bf16* D, int ldd, cudaStream_t stream, Extra... extra) {
  constexpr bool kStoresD = !std::is_same_v<Kernel, TmaKernel>;
  if (Args a = check_args(M, N, K, alpha, A, lda, B, ldb, beta, C, ldc, D, ldd); a != Args::launch)
    return finish_without_launch(a, M, N, beta, C, ldc, D, ldd, stream);
  if (!tma_rows(A, lda) || !tma_rows(B, ldb) || (kStoresD && !tma_rows(D, ldd))) return cudaErrorInvalidValue;
  const Plan<Kernel> p = plan_of(M, N, K, A, lda, B, ldb, C, ldc, D, ldd);
  CUtensorMap a_map, b_map;
  if (p.kernel == nullptr || !S::LA::make_map(&a_map, A, M, K, lda) || !S::LB::make_map(&b_map, B, K, N, ldb))
    return cudaErrorInvalidValue;
  if constexpr (!kStoresD) {
    return launch(p, stream, a_map, b_map, M, N, K, alpha, beta, C, ldc, D, ldd);
  } else {
    CUtensorMap d_map;
    if (!S::LD::make_map(&d_map, D, M, N, ldd)) return cudaErrorInvalidValue;
    return launch(p, stream, a_map, b_map, d_map, M, N, K, alpha, beta, C, ldc, D, ldd, extra(p)...);
  }
}

//! [tma stage]
/// One pipeline stage of a BM x BN x BK block tile as TMA fills it: A's tile (one box of BM rows by
/// 64 k) and then B's (BN / 64 boxes of BK rows by 64 columns), both TmaTile, so each starts at the
/// swizzle's boundary when the first stage does.
template <int BM, int BN, int BK>
struct TmaStage {
  static_assert(BK == 64, "a row of A's tile is one 128-byte swizzle span");
  static_assert(BM % 64 == 0 && BN % 64 == 0, "whole wgmma blocks");
  using LA = TmaTile<bf16, BM, BK>;
  using LB = TmaTile<bf16, BK, BN>;
  static constexpr int kAElems = LA::kElems, kElems = kAElems + LB::kElems;
  static constexpr unsigned kBytes = kElems * sizeof(bf16);
  static_assert(kAElems * sizeof(bf16) % LA::kAlign == 0 && kBytes % LA::kAlign == 0, "tiles at 1024-byte steps");
  /// The dynamic shared memory of `stages` stages and `more` bytes after them (TmaTile::smem_bytes).
  static constexpr unsigned smem_bytes(int stages, unsigned more = 0) { return LA::smem_bytes(stages * kBytes + more); }
  /// Window kt of the block tile at (m0, n0) into the stage at s, its bytes announced on bar (one
  /// thread issues it).
  __device__ static void load(bf16* s, const CUtensorMap* a_map, const CUtensorMap* b_map, int m0, int n0, int kt,
                              std::uint64_t* bar) {
    mbar_arrive_expect_tx(bar, kBytes);
    tma_load(s, a_map, kt * BK, m0, bar);
#pragma unroll
    for (int p = 0; p < BN / 64; ++p) tma_load(s + kAElems + p * LB::kPanel, b_map, n0 + 64 * p, kt * BK, bar);
  }
};
//! [tma stage]

//! [wgmma descriptors]
/// The descriptors of the k16 slice at column kk of an A tile (K-major; inside the 128-byte swizzle
/// a k step is a 32-byte move of the start address) and at row kk of a B tile (MN-major).
template <class LA>
__device__ __forceinline__ std::uint64_t a_desc(const bf16* As, int row, int kk) {
  return LA::template desc<false>(As + LA::offset(row, 0) + kk);
}
template <class LB>
__device__ __forceinline__ std::uint64_t b_desc(const bf16* Bs, int kk) {
  return LB::template desc<true>(Bs + LB::offset(kk, 0));
}
/// The descriptors of every stage of a ring of S's stages at `smem`, from a pair built once. A
/// descriptor's low 32 bits hold the start address in 16-byte units (a 14-bit field, and the ring
/// lies in the block's shared memory, below 256 KiB), so the operand of another stage, row block
/// or k slice is one 32-bit add away; built from its address each time (a_desc, b_desc), every
/// descriptor is a chain of shifts, masks and ors that the consumer warps issue between wgmma
/// groups.
template <class S>
struct RingDescs {
  std::uint64_t a0, b0;  ///< stage 0: A at row 0, k 0; B at k 0
  __device__ explicit RingDescs(const bf16* smem)
      : a0(a_desc<typename S::LA>(smem, 0, 0)), b0(b_desc<typename S::LB>(smem + S::kAElems, 0)) {}
  __device__ std::uint64_t a(int s, int row, int kk) const {
    return advance(a0, s * S::kBytes + (S::LA::offset(row, 0) + kk) * sizeof(bf16));
  }
  __device__ std::uint64_t b(int s, int kk) const {
    return advance(b0, s * S::kBytes + S::LB::offset(kk, 0) * sizeof(bf16));
  }
  __device__ static std::uint64_t advance(std::uint64_t d, unsigned bytes) {
    return (d >> 32 << 32) | (unsigned(d) + bytes / 16);
  }
};
//! [wgmma descriptors]

//! [wgmma]
/// d[128] = A (64 x 16) * B (16 x 256) + (accumulate ? d : 0), one warpgroup.
__device__ __forceinline__ void wgmma_m64n256k16(float (&d)[128], std::uint64_t a, std::uint64_t b, bool accumulate) {
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %130, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16 {"
      SMEM_ACC64 ", "
      "%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, "
      "%80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, "
      "%96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111, "
      "%112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127"
      "}, %128, %129, p, 1, 1, 0, 1;\n}\n"
      : SMEM_ACC8(0), SMEM_ACC8(8), SMEM_ACC8(16), SMEM_ACC8(24), SMEM_ACC8(32), SMEM_ACC8(40), SMEM_ACC8(48),
        SMEM_ACC8(56), SMEM_ACC8(64), SMEM_ACC8(72), SMEM_ACC8(80), SMEM_ACC8(88), SMEM_ACC8(96), SMEM_ACC8(104),
        SMEM_ACC8(112), SMEM_ACC8(120)
      : "l"(a), "l"(b), "r"(int(accumulate)));
}

/// d = A (64 x 16) * B (16 x N) + (accumulate ? d : 0): the m64nNk16 wgmma for N = 128 or 256.
template <int N>
__device__ __forceinline__ void wgmma_tile(float (&d)[N / 2], std::uint64_t a, std::uint64_t b, bool accumulate) {
  static_assert(N == 128 || N == 256, "the wgmma widths this family uses");
  if constexpr (N == 128)
    wgmma_m64n128k16<true>(d, a, b, accumulate);
  else
    wgmma_m64n256k16(d, a, b, accumulate);
}
//! [wgmma]

//! [wgmma epilogue]
/// D = alpha acc + beta C for the accumulators of one m64nN wgmma whose tile corner is (row0,
/// col0). Pairs of columns go out as one 4-byte store where D (and C) allow it.
template <int N>
__device__ __forceinline__ void store_wgmma_acc(const float (&d)[N / 2], int row0, int col0, int M, int N_, float alpha,
                                                float beta, const bf16* C, int ldc, bf16* D, int ldd) {
  const int t = threadIdx.x % 128;
  const bool pairs = ldd % 2 == 0 && aligned(D, 4) && (beta == 0.0f || (ldc % 2 == 0 && aligned(C, 4)));
#pragma unroll
  for (int j = 0; j < N / 8; ++j)
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int r = row0 + acc_row(t, h), c = col0 + acc_col(t, j);
      if (r >= M || c >= N_) continue;
      const float v0 = d[4 * j + 2 * h], v1 = d[4 * j + 2 * h + 1];
      if (pairs && c + 1 < N_) {
        float2 v = make_float2(alpha * v0, alpha * v1);
        if (beta != 0.0f) {
          const float2 cv = __bfloat1622float2(*reinterpret_cast<const __nv_bfloat162*>(C + std::size_t(r) * ldc + c));
          v.x += beta * cv.x, v.y += beta * cv.y;
        }
        *reinterpret_cast<__nv_bfloat162*>(D + std::size_t(r) * ldd + c) = __float22bfloat162_rn(v);
      } else {
        store_d(r, c, v0, M, N_, alpha, beta, C, ldc, D, ldd);
        store_d(r, c + 1, v1, M, N_, alpha, beta, C, ldc, D, ldd);
      }
    }
}
//! [wgmma epilogue]

/// The warp-specialized tile of steps 12 to 16: 128 x BN x 64 windows in a ring of Stages, one
/// producer warpgroup and two consumer warpgroups of 64 x BN each, plus two 64 x 64 staging
/// panels of D per consumer for the TMA-store epilogue.
template <int BN, int Stages>
struct PersistentShapeOf : TmaStage<128, BN, 64> {
  static constexpr int kBM = 128, kBN = BN, kBK = 64, kStages = Stages, kConsumers = 2;
  static constexpr int kThreads = 128 * (kConsumers + 1);
  static constexpr int kProducerRegs = 40, kConsumerRegs = 232;
  using LD = TmaTile<bf16, 64, 64>;  ///< one staging panel of D
  static constexpr int kPanelElems = LD::kElems;
  static constexpr unsigned kSmemBytes =
      TmaStage<128, BN, 64>::smem_bytes(kStages, unsigned(kConsumers * 2 * kPanelElems * sizeof(bf16)));
};

/// A persistent block's count of the windows it has issued (or consumed), `it`, after each of its
/// tiles: cut back so that it stays below 4 kStages + ceil(K / 64) however many tiles the block
/// takes. What the ring reads of it is unchanged: the stage it % kStages, the stage's parity
/// it / kStages % 2 (both need only it modulo 2 kStages) and whether every stage was used once
/// (it >= kStages).
template <int kStages>
__host__ __device__ __forceinline__ int ring_after_tile(int it) {
  return it < 4 * kStages ? it : it % (2 * kStages) + 2 * kStages;
}

//! [tma epilogue]
/// A consumer's finished 64 x BN tile (corner (row0, col0) of D) as alpha acc + beta C in bf16
/// pairs, v[2 j + h] holding d[4 j + 2 h] and d[4 j + 2 h + 1]: half the registers of the fp32
/// accumulators, so the tile can wait in them while the next tile's first wgmma overwrites acc.
template <int BN>
__device__ __forceinline__ void pack_tile(const float (&d)[BN / 2], unsigned (&v)[BN / 4], int row0, int col0, int M,
                                          int N, float alpha, float beta, const bf16* C, int ldc) {
  const int t = threadIdx.x % 128;
#pragma unroll
  for (int j = 0; j < BN / 8; ++j)
#pragma unroll
    for (int h = 0; h < 2; ++h)
      v[2 * j + h] = finish_pair(d[4 * j + 2 * h], d[4 * j + 2 * h + 1], row0 + acc_row(t, h), col0 + acc_col(t, j), M,
                                 N, alpha, beta, C, ldc);
}
/// Panel P (columns 64 P to 64 P + 63) of one consumer warpgroup's tile packed by pack_tile, its
/// corner at (row0, col0) of D: through staging panel P % 2 of `stage` to a TMA store. Thread 0 of
/// the warpgroup (`leader`) issues the store; bar_id is the warpgroup's named barrier. A TMA store
/// clips at 16-byte chunks of a row, not at elements: where N is not a multiple of 8, the panel
/// holding column N would overwrite up to 7 elements past it, so the threads store that panel
/// themselves, straight to D. A tile's panels go out in increasing P.
template <int BN, class LD, int P>
__device__ __forceinline__ void store_packed_panel(const unsigned (&v)[BN / 4], bf16* stage, const CUtensorMap* d_map,
                                                   int row0, int col0, int M, int N, bf16* D, int ldd, int bar_id) {
  const int t = threadIdx.x % 128;
  const bool leader = t == 0;
  if (N % 8 != 0 && N - col0 < 64 * (P + 1)) {  // the same for the whole warpgroup
#pragma unroll
    for (int j = 8 * P; j < 8 * P + 8; ++j)
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const int r = row0 + acc_row(t, h), c = col0 + acc_col(t, j);
        const __nv_bfloat162 b = *reinterpret_cast<const __nv_bfloat162*>(&v[2 * j + h]);
        if (r < M && c < N) D[std::size_t(r) * ldd + c] = b.x;
        if (r < M && c + 1 < N) D[std::size_t(r) * ldd + c + 1] = b.y;
      }
    return;
  }
  bf16* buf = stage + (P % 2) * LD::kElems;
  // The store that last read buf is done: for P > 0 the store before last (the threads' own
  // panels come only after a tile's last TMA panel); for P = 0, whose buffer a tile ago may have
  // been the last one written, every store.
  if (leader) {
    if (P == 0)
      tma_store_wait_read<0>();
    else
      tma_store_wait_read<1>();
  }
  named_barrier(bar_id, 128);
#pragma unroll
  for (int j = 8 * P; j < 8 * P + 8; ++j)
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int r = acc_row(t, h), c = acc_col(t, j - 8 * P);
      *reinterpret_cast<unsigned*>(buf + LD::offset(r, c)) = v[2 * j + h];
    }
  fence_proxy_async();  // the writes above, before the async proxy's read
  named_barrier(bar_id, 128);
  if (leader) {
    tma_store(d_map, col0 + 64 * P, row0, buf);
    tma_store_commit();
  }
}
/// The whole packed tile, panel after panel.
template <int BN, class LD, int P = 0>
__device__ __forceinline__ void store_packed_tma(const unsigned (&v)[BN / 4], bf16* stage, const CUtensorMap* d_map,
                                                 int row0, int col0, int M, int N, bf16* D, int ldd, int bar_id) {
  if constexpr (P < BN / 64) {
    store_packed_panel<BN, LD, P>(v, stage, d_map, row0, col0, M, N, D, ldd, bar_id);
    store_packed_tma<BN, LD, P + 1>(v, stage, d_map, row0, col0, M, N, D, ldd, bar_id);
  }
}
/// pack_tile, then store_packed_tma: a finished tile stored at once.
template <int BN, class LD>
__device__ __forceinline__ void store_tile_tma(const float (&d)[BN / 2], bf16* stage, const CUtensorMap* d_map,
                                               int row0, int col0, int M, int N, float alpha, float beta, const bf16* C,
                                               int ldc, bf16* D, int ldd, int bar_id) {
  unsigned v[BN / 4];
  pack_tile<BN>(d, v, row0, col0, M, N, alpha, beta, C, ldc);
  store_packed_tma<BN, LD>(v, stage, d_map, row0, col0, M, N, D, ldd, bar_id);
}
//! [tma epilogue]

}  // namespace smem::tc_gemm

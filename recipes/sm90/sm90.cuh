/// \file sm90.cuh
/// \brief The project's Hopper core: the PTX wrappers that every family's Hopper kit shares,
/// whatever its element type: the tensor maps, the 128-byte swizzle that TMA writes and wgmma reads
/// (TmaTile), mbarriers, TMA loads and stores (sm_90), wgmma's fences, accumulator layout and bf16
/// m64n128k16 (for tc_gemm and attention), `setmaxnreg` (sm_90a), named barriers, a cluster's rank,
/// barrier and arrivals in another block (for the steps with clusters). A kit includes it as
/// "../sm90/sm90.cuh" and is copied with it; it includes <cuda.h> for the tensor maps' types (no -lcuda).
#pragma once
#include <cuda.h>
#include <cudaTypedefs.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <type_traits>

namespace smem::sm90 {

/// The shared-memory address (state space .shared) of a generic pointer into shared memory.
__device__ __forceinline__ unsigned smem_u32(const void* p) { return unsigned(__cvta_generic_to_shared(p)); }

//! [tensor map]
/// True when TMA may read or write the rows of an array of T: a 16-byte aligned base and rows of
/// `ld` elements, a multiple of 16 bytes (the tensor map's stride rule).
template <class T>
inline bool tma_rows(const T* p, long long ld) {
  return reinterpret_cast<std::uintptr_t>(p) % 16 == 0 && ld * static_cast<long long>(sizeof(T)) % 16 == 0;
}

/// cuTensorMapEncodeTiled, taken from the driver through the runtime once (no -lcuda needed); null
/// if the driver does not have it.
inline PFN_cuTensorMapEncodeTiled_v12000 tensor_map_encoder() {
  static const PFN_cuTensorMapEncodeTiled_v12000 fn = [] {
    void* f = nullptr;
    cudaDriverEntryPointQueryResult found{};
    if (cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &f, 12000, cudaEnableDefault, &found) !=
            cudaSuccess ||
        found != cudaDriverEntryPointSuccess)
      f = nullptr;
    return reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(f);
  }();
  return fn;
}
//! [tensor map]

//! [tma tile]
/// The 128-byte swizzle, the one layout of every Hopper tile: TMA writes it (make_map), wgmma reads
/// it (desc), ldmatrix and the epilogue's staging writes address it (offset). A ROWS x COLS tile of
/// T is stored as panels of kSpan columns (64 bf16, 32 floats), one after the other; a panel's row
/// is 128 bytes, the swizzle's span and a TMA box's width, and in it 16-byte chunk c / kChunk of
/// row r sits at chunk (c / kChunk) ^ (r % 8), the XOR of tc_gemm's step 5. The hardware takes
/// r % 8 from address bits 7 to 9, so the pattern repeats every 8 rows (kAlign = 1024 bytes) and
/// the tile must start at such a boundary.
template <class T, int ROWS, int COLS>
struct TmaTile {
  static constexpr int kSpan = 128 / int(sizeof(T));  ///< columns of a panel: a 128-byte row
  static constexpr int kChunk = 16 / int(sizeof(T));  ///< elements of a 16-byte chunk
  static_assert(ROWS % 8 == 0 && ROWS <= 256 && COLS % kSpan == 0, "whole 8-row groups, boxes of at most 256 rows");
  static constexpr int kPanel = ROWS * kSpan;  ///< elements from one panel to the next
  static constexpr int kElems = ROWS * COLS;
  static constexpr unsigned kAlign = 1024;  ///< 8 rows of 128 bytes: where the pattern repeats
  __host__ __device__ static constexpr int offset(int r, int c) {
    return c / kSpan * kPanel + r * kSpan + ((c % kSpan / kChunk) ^ (r % 8)) * kChunk + c % kChunk;
  }
  /// The dynamic shared memory for `bytes` of such tiles: kAlign more, the most align() skips.
  static constexpr unsigned smem_bytes(unsigned bytes) { return bytes + kAlign; }
  /// The first kAlign boundary at or after p in shared memory: where the tiles start.
  static __device__ __forceinline__ unsigned char* align(unsigned char* p) {
    return p + (kAlign - smem_u32(p) % kAlign) % kAlign;
  }
  /// The tensor map of a rows x cols row-major matrix (leading dimension ld) read or written in
  /// boxes of one panel, ROWS x kSpan, in this swizzle (T: bf16 or float). Boxes that reach past the
  /// matrix are zero-filled on loads; stores clip rows past the matrix, but a row only at 16-byte
  /// chunks. False if the driver refuses it.
  static bool make_map(CUtensorMap* map, const T* g, int rows, int cols, int ld) {
    static_assert(std::is_same_v<T, __nv_bfloat16> || std::is_same_v<T, float>, "a bf16 or fp32 tile");
    const PFN_cuTensorMapEncodeTiled_v12000 encode = tensor_map_encoder();
    if (encode == nullptr) return false;
    const cuuint64_t dims[2] = {cuuint64_t(cols), cuuint64_t(rows)};
    const cuuint64_t strides[1] = {cuuint64_t(ld) * sizeof(T)};
    const cuuint32_t box[2] = {cuuint32_t(kSpan), cuuint32_t(ROWS)}, unit[2] = {1, 1};
    const CUtensorMapDataType type =
        std::is_same_v<T, float> ? CU_TENSOR_MAP_DATA_TYPE_FLOAT32 : CU_TENSOR_MAP_DATA_TYPE_BFLOAT16;
    return encode(map, type, 2, const_cast<T*>(g), dims, strides, box, unit, CU_TENSOR_MAP_INTERLEAVE_NONE,
                  CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                  CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) == CUDA_SUCCESS;
  }
  /// The wgmma descriptor of the operand at s in such a tile: start address, leading and stride
  /// byte offsets (in 16-byte units) and layout type 1, this swizzle. The stride, from one 8-row
  /// group to the next, is kAlign; the leading offset is one panel in an MN-major operand (B: rows
  /// of n, panels side by side) and unused in a K-major one (A: one panel, rows of kSpan k).
  template <bool kMnMajor>
  static __device__ __forceinline__ std::uint64_t desc(const T* s) {
    static_assert(kMnMajor || COLS == kSpan, "a K-major operand's rows are one 128-byte span");
    constexpr unsigned kLeading = kMnMajor ? kPanel * sizeof(T) : 16;
    return std::uint64_t(smem_u32(s) >> 4 & 0x3FFF) | std::uint64_t(kLeading >> 4 & 0x3FFF) << 16 |
           std::uint64_t(kAlign >> 4 & 0x3FFF) << 32 | std::uint64_t(1) << 62;
  }
};
//! [tma tile]

//! [mbarrier]
/// An mbarrier that completes a phase when `count` threads arrived and every byte announced with
/// expect_tx has landed.
__device__ __forceinline__ void mbar_init(std::uint64_t* bar, unsigned count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(smem_u32(bar)), "r"(count));
}
/// Makes the initialized barriers visible to the async proxy (TMA) and to the cluster.
__device__ __forceinline__ void fence_barrier_init() {
  asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
}
/// Arrives once and announces `bytes` more to land on this phase.
__device__ __forceinline__ void mbar_arrive_expect_tx(std::uint64_t* bar, unsigned bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(smem_u32(bar)), "r"(bytes) : "memory");
}
__device__ __forceinline__ void mbar_arrive(std::uint64_t* bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(smem_u32(bar)) : "memory");
}
/// Waits until the phase of parity `parity` has completed.
__device__ __forceinline__ void mbar_wait(std::uint64_t* bar, unsigned parity) {
  unsigned done = 0;
  do {
    asm volatile(
        "{\n.reg .pred p;\nmbarrier.try_wait.parity.shared::cta.b64 "
        "p, [%1], %2;\nselp.u32 %0, 1, 0, p;\n}\n"
        : "=r"(done)
        : "r"(smem_u32(bar)), "r"(parity)
        : "memory");
  } while (!done);
}
//! [mbarrier]

//! [tma]
/// TMA: the box of a 2D `map` whose corner is (column c, row r) into shared memory at dst (128-byte
/// aligned, kAlign for a TmaTile); its bytes complete_tx on `bar`. Coordinates may be negative.
template <class T>
__device__ __forceinline__ void tma_load(T* dst, const CUtensorMap* map, int c, int r, std::uint64_t* bar) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];\n"
      ::"r"(smem_u32(dst)), "l"(map), "r"(c), "r"(r), "r"(smem_u32(bar))
      : "memory");
}
/// TMA store of a box from shared memory; the part past the array is not written.
template <class T>
__device__ __forceinline__ void tma_store(const CUtensorMap* map, int c, int r, const T* src) {
  asm volatile(
      "cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group "
      "[%0, {%1, %2}], [%3];\n" ::"l"(map),
      "r"(c), "r"(r), "r"(smem_u32(src))
      : "memory");
}
__device__ __forceinline__ void tma_store_commit() { asm volatile("cp.async.bulk.commit_group;\n" ::: "memory"); }
/// Waits until all but the kPending most recent committed stores have read their shared memory
/// (which may then be overwritten).
template <int kPending>
__device__ __forceinline__ void tma_store_wait_read() {
  asm volatile("cp.async.bulk.wait_group.read %0;\n" ::"n"(kPending) : "memory");
}
/// Orders this thread's shared-memory writes before later async-proxy (TMA) reads of them.
__device__ __forceinline__ void fence_proxy_async() { asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory"); }
//! [tma]

//! [wgmma]
__device__ __forceinline__ void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); }
__device__ __forceinline__ void wgmma_commit() { asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory"); }
/// Waits until at most kPending committed wgmma groups of this warpgroup are still running.
template <int kPending>
__device__ __forceinline__ void wgmma_wait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(kPending) : "memory");
}
/// Keeps the compiler from moving accumulator reads or writes across wgmma_fence/wgmma_wait.
template <int N>
__device__ __forceinline__ void fence_acc(float (&d)[N]) {
#pragma unroll
  for (int i = 0; i < N; ++i) asm volatile("" : "+f"(d[i])::"memory");
}
/// The inline-PTX operands of accumulators d[i] to d[i + 7] ("+f": read and written), in a wgmma
/// wrapper whose accumulator array is named d (a wgmma lists every accumulator register).
#define SMEM_ACC8(i)                                                                                              \
  "+f"(d[i + 0]), "+f"(d[i + 1]), "+f"(d[i + 2]), "+f"(d[i + 3]), "+f"(d[i + 4]), "+f"(d[i + 5]), "+f"(d[i + 6]), \
      "+f"(d[i + 7])
/// The operands %0 to %63 in a wgmma's text: its first 64 accumulators, the asm's first operands.
#define SMEM_ACC64                                                                                                  \
  "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, " \
  "%24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, " \
  "%46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63"
/// d[64] = A (64 x 16) * B (16 x 128) + (accumulate ? d : 0) on bf16, fp32 accumulators, one
/// warpgroup, both operands from shared memory by descriptor: A K-major, B MN-major where kMnMajorB
/// (transpose-b: rows of k, n contiguous), else K-major.
template <bool kMnMajorB>
__device__ __forceinline__ void wgmma_m64n128k16(float (&d)[64], std::uint64_t a, std::uint64_t b, bool accumulate) {
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 {"
      SMEM_ACC64
      "}, %64, %65, p, 1, 1, 0, %67;\n}\n"
      : SMEM_ACC8(0), SMEM_ACC8(8), SMEM_ACC8(16), SMEM_ACC8(24), SMEM_ACC8(32), SMEM_ACC8(40), SMEM_ACC8(48),
        SMEM_ACC8(56)
      : "l"(a), "l"(b), "r"(int(accumulate)), "n"(int(kMnMajorB)));
}
/// Where an m64nN wgmma's accumulators lie in its 64 x N tile: thread t of the warpgroup holds
/// row acc_row(t, h) and columns acc_col(t, j) + e in d[4 j + 2 h + e] (h, e in {0, 1}).
__device__ __forceinline__ int acc_row(int t, int h) { return 16 * (t / 32) + t % 32 / 4 + 8 * h; }
__device__ __forceinline__ int acc_col(int t, int j) { return 8 * j + 2 * (t % 4); }
//! [wgmma]

/// This thread's warpgroup, threadIdx.x / 128, read from lane 0: the compiler then knows that it is
/// the same in the whole warp and keeps what is computed from it (the descriptors) in uniform
/// registers, which wgmma takes without a move.
__device__ __forceinline__ int warpgroup() { return __shfl_sync(0xffffffffu, int(threadIdx.x) / 128, 0); }

/// Moves this warpgroup's registers per thread to kRegs (setmaxnreg): down for a producer that
/// needs few, up for the consumers that hold the accumulators.
template <int kRegs>
__device__ __forceinline__ void regs_down() {
  asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(kRegs));
}
template <int kRegs>
__device__ __forceinline__ void regs_up() {
  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(kRegs));
}
/// A barrier of `threads` threads on hardware barrier `id` (0 is __syncthreads'): one warpgroup
/// synchronizes without stopping the others.
__device__ __forceinline__ void named_barrier(int id, int threads) {
  asm volatile("bar.sync %0, %1;\n" ::"r"(id), "r"(threads) : "memory");
}

//! [cluster]
/// This block's rank in its cluster.
__device__ __forceinline__ unsigned cluster_rank() {
  unsigned r;
  asm volatile("mov.u32 %0, %%cluster_ctarank;\n" : "=r"(r));
  return r;
}
/// Arrives on the barrier at the same shared-memory offset as `bar` in block `cta` of the cluster.
/// Plain (.release.cta) semantics: the only reads it orders are the wgmma reads already waited
/// for, and a .release.cluster arrive would add a memory fence to every release of a stage.
__device__ __forceinline__ void mbar_arrive_cluster(std::uint64_t* bar, unsigned cta) {
  asm volatile(
      "{\n.reg .b32 remote;\nmapa.shared::cluster.u32 remote, %0, %1;\n"
      "mbarrier.arrive.shared::cluster.b64 _, [remote];\n}\n" ::"r"(smem_u32(bar)),
      "r"(cta)
      : "memory");
}
/// Every thread of every block of the cluster arrives, then waits for all the others.
__device__ __forceinline__ void cluster_sync() {
  asm volatile(
      "barrier.cluster.arrive.release.aligned;\nbarrier.cluster.wait."
      "acquire.aligned;\n" ::
          : "memory");
}
//! [cluster]

}  // namespace smem::sm90

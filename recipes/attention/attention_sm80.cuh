/// \file attention_sm80.cuh
/// \brief The Ampere kit of the attention family, what its tensor-core steps (4 on) share: the
/// XOR-swizzled shared tile of head_dim columns, its 16-byte copy from global memory, and the
/// `ldmatrix` and `mma.sync` m16n8k16 instructions (bf16 in, fp32 accumulators).
#pragma once
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstdint>

#include "attention_common.cuh"

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 800
#error "attention_sm80.cuh needs ldmatrix and bf16 mma.sync: compile for sm_80 or newer (e.g. -arch=sm_80)"
#endif

namespace smem::attention {

//! [swizzled tile]
/// A shared tile of ROWS rows of D bf16 (D a multiple of 64), its 16-byte chunks XOR-swizzled:
/// chunk c / 8 of row r sits at chunk (c / 8) ^ (r % 8). The 8 rows that one `ldmatrix` matrix
/// reads at one chunk then sit in 8 different 16-byte bank groups: no conflict, no padding.
template <int ROWS, int D>
struct SwizzledTile {
  static_assert(D % 64 == 0, "rows of whole 128-byte lines");
  static constexpr int kRows = ROWS, kD = D, kElems = ROWS * D;
  __host__ __device__ static constexpr int offset(int r, int c) { return r * D + ((c / 8) ^ (r % 8)) * 8 + c % 8; }
};
//! [swizzled tile]

/// True when a tensor's rows may be copied in 16-byte chunks: a 16-byte aligned base and strides
/// that are multiples of 8 elements.
inline bool rows16(const void* p, const Strides& t) {
  return aligned(p, 16) && t.batch % 8 == 0 && t.seq % 8 == 0 && t.head % 8 == 0;
}

/// Copies rows 0 to Tile::kRows - 1 of a tensor (row r at src + r * seq_stride) into the swizzled
/// tile at `dst` in 16-byte chunks, zeros for rows at or past `valid`; kThreads threads share it.
template <class Tile, int kThreads>
__device__ __forceinline__ void load_tile16(bf16* dst, const bf16* src, long long seq_stride, long long valid) {
  constexpr int D = Tile::kD, kChunks = Tile::kRows * D / 8;
  static_assert(kChunks % kThreads == 0, "every thread copies the same number of chunks");
#pragma unroll
  for (int i = 0; i < kChunks / kThreads; ++i) {
    const int id = int(threadIdx.x) + i * kThreads, r = id / (D / 8), c = id % (D / 8) * 8;
    uint4 v = make_uint4(0, 0, 0, 0);
    if (r < valid) v = *reinterpret_cast<const uint4*>(src + r * seq_stride + c);
    *reinterpret_cast<uint4*>(dst + Tile::offset(r, c)) = v;
  }
}

//! [ptx]
/// The shared-memory address (state space .shared) of a generic pointer into shared memory.
__device__ __forceinline__ unsigned smem_u32(const void* p) { return unsigned(__cvta_generic_to_shared(p)); }
/// ldmatrix.x4: four 8 x 8 bf16 matrices; lane l gives the address of row l % 8 of matrix l / 8.
__device__ __forceinline__ void ldmatrix_x4(unsigned (&r)[4], const bf16* row) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(smem_u32(row)));
}
/// The same, each matrix transposed (a row-major k x n tile read as the mma's column-major B).
__device__ __forceinline__ void ldmatrix_x4_trans(unsigned (&r)[4], const bf16* row) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(smem_u32(row)));
}
/// d += a * b on a 16 x 8 x 16 tile: bf16 A (row) and B (col) fragments, fp32 accumulators.
__device__ __forceinline__ void mma_16816(float (&d)[4], const unsigned (&a)[4], unsigned b0, unsigned b1) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
      "{%0, %1, %2, %3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}
/// Two floats as a bf16 pair, x in the low half (the lower column or k index).
__device__ __forceinline__ unsigned pack_bf16(float x, float y) {
  const __nv_bfloat162 v = __floats2bfloat162_rn(x, y);
  return *reinterpret_cast<const unsigned*>(&v);
}
//! [ptx]

}  // namespace smem::attention

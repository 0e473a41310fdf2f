/// \file stencil_sm90.cuh
/// \brief The Hopper (sm_90) kit of the stencil family: what its TMA steps (`conv2d_06_tma.cuh`
/// and `st7_06_tma.cuh`) share, the tensor maps of fp32 arrays and the mbarrier on which a block
/// waits for TMA's bytes. Each step keeps its own copies (the convolution's 2D loads and store,
/// the 7-point stencil's 3D loads). The wrappers mean what the tensor-core GEMM's wrappers of the
/// same names mean: `mbar_init(bar, count)` takes the arrival count, and `fence_barrier_init()`
/// makes the initialized barriers visible to TMA.
#pragma once
#include <cuda.h>
#include <cudaTypedefs.h>
#include <cuda_runtime.h>

#include <cstdint>

#include "stencil_common.cuh"

namespace smem::stencil {

//! [tma]
/// cuTensorMapEncodeTiled, taken from the driver through the runtime once (no -lcuda needed);
/// null if the driver does not have it.
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

/// The tensor map of a dense fp32 array of `rank` dimensions (dims[0] the fastest), read or
/// written in boxes of box[0] x box[1] x ...; a box that reaches outside the array is filled with
/// zeros there: the stencils' zero padding. `promotion` widens each L2 miss the box causes (a
/// box whose rows start and end inside a 256-byte line drags the rest of the line in with 256B:
/// neighbours' bytes, which they may still read from L2; NONE reads the sectors the box covers).
/// TMA needs a 16-byte aligned base and rows of a multiple of 16 bytes; false when the array
/// breaks that or the driver refuses it.
inline bool make_float_map(CUtensorMap* map, const float* g, int rank, const long long* dims, const int* box,
                           CUtensorMapL2promotion promotion = CU_TENSOR_MAP_L2_PROMOTION_L2_256B) {
  const PFN_cuTensorMapEncodeTiled_v12000 encode = tensor_map_encoder();
  if (encode == nullptr || rank < 1 || rank > 3 || reinterpret_cast<std::uintptr_t>(g) % 16 != 0 || dims[0] % 4 != 0)
    return false;
  cuuint64_t size[3], stride[2], bytes = sizeof(float);  // stride[i - 1]: bytes between steps of dimension i
  cuuint32_t box_size[3], unit[3] = {1, 1, 1};
  for (int i = 0; i < rank; ++i) {
    if (i > 0) stride[i - 1] = bytes;
    size[i] = cuuint64_t(dims[i]);
    box_size[i] = cuuint32_t(box[i]);
    bytes *= size[i];
  }
  return encode(map, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, cuuint32_t(rank), const_cast<float*>(g), size, stride, box_size,
                unit, CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_NONE, promotion,
                CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) == CUDA_SUCCESS;
}

__device__ __forceinline__ unsigned smem_u32(const void* p) { return unsigned(__cvta_generic_to_shared(p)); }

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
/// Waits until the phase of parity `parity` has completed.
__device__ __forceinline__ void mbar_wait(std::uint64_t* bar, unsigned parity) {
  unsigned done = 0;
  do {
    asm volatile(
        "{\n.reg .pred p;\nmbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\nselp.u32 %0, 1, 0, p;\n}\n"
        : "=r"(done)
        : "r"(smem_u32(bar)), "r"(parity)
        : "memory");
  } while (!done);
}
//! [tma]

}  // namespace smem::stencil

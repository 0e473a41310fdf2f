/// \file stencil_sm90.cuh
/// \brief The Hopper (sm_90) kit of the stencil family: what its TMA steps (`conv2d_06_tma.cuh`
/// and `st7_06_tma.cuh`) share, the tensor maps of fp32 arrays, on the project's Hopper core
/// (sm90/sm90.cuh), whose mbarriers, 2D TMA loads and stores the kit takes into the family's
/// namespace. The 7-point stencil's 3D loads stay in its step.
#pragma once
#include <cuda_runtime.h>

#include "../sm90/sm90.cuh"
#include "stencil_common.cuh"

namespace smem::stencil {

using sm90::fence_barrier_init, sm90::fence_proxy_async, sm90::mbar_arrive_expect_tx, sm90::mbar_init, sm90::mbar_wait,
    sm90::smem_u32, sm90::tma_load, sm90::tma_rows, sm90::tma_store, sm90::tma_store_commit, sm90::tma_store_wait_read;

//! [tma]
/// The tensor map of a dense fp32 array of `rank` dimensions (dims[0] the fastest), read or
/// written in boxes of box[0] x box[1] x ...; a box that reaches outside the array is filled with
/// zeros there: the stencils' zero padding. `promotion` widens each L2 miss the box causes (a
/// box whose rows start and end inside a 256-byte line drags the rest of the line in with 256B:
/// neighbours' bytes, which they may still read from L2; NONE reads the sectors the box covers).
/// TMA needs a 16-byte aligned base and rows of a multiple of 16 bytes (tma_rows); false when the
/// array breaks that or the driver refuses it.
inline bool make_float_map(CUtensorMap* map, const float* g, int rank, const long long* dims, const int* box,
                           CUtensorMapL2promotion promotion = CU_TENSOR_MAP_L2_PROMOTION_L2_256B) {
  const PFN_cuTensorMapEncodeTiled_v12000 encode = sm90::tensor_map_encoder();
  if (encode == nullptr || rank < 1 || rank > 3 || !tma_rows(g, dims[0])) return false;
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
//! [tma]

}  // namespace smem::stencil

// Tests and benchmarks only: recipes never include support/.
//
// What a benchmark reports about the kernel a launcher runs, read from the launcher's own plan
// (the family's plan(v, ...)), so that what is reported is what ran.
#pragma once
#include <cuda_runtime.h>

#include <cstddef>

namespace smem::test {

/// Registers per thread, static and dynamic shared memory per block, threads per block, resident
/// blocks per SM (the occupancy calculator's answer) and blocks in the grid.
struct KernelAttributes {
  int registers = 0;
  int static_smem = 0;
  int dynamic_smem = 0;
  int threads = 0;
  int blocks_per_sm = 0;
  long long grid_blocks = 0;
};

/// The attributes of a plan (any family's Plan<const void*>: kernel, grid, block, smem). Above
/// 48 KB of dynamic shared memory the kernel is opted in first, as its launcher does.
template <class Plan>
cudaError_t kernel_attributes(const Plan& p, KernelAttributes* out) {
  if (p.kernel == nullptr) return cudaErrorInvalidValue;
  if (p.smem > 48u * 1024u)
    if (cudaError_t e = cudaFuncSetAttribute(p.kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(p.smem));
        e != cudaSuccess)
      return e;
  cudaFuncAttributes fa{};
  if (cudaError_t e = cudaFuncGetAttributes(&fa, p.kernel); e != cudaSuccess) return e;
  const int threads = int(p.block.x * p.block.y * p.block.z);
  int blocks = 0;
  if (cudaError_t e = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, p.kernel, threads, p.smem);
      e != cudaSuccess)
    return e;
  *out = {fa.numRegs, int(fa.sharedSizeBytes), int(p.smem), threads, blocks,
          (long long)p.grid.x * p.grid.y * p.grid.z};
  return cudaSuccess;
}

}  // namespace smem::test

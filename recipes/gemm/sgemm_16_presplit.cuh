/// \file sgemm_16_presplit.cuh
/// \brief Step 16, A split once: a pass before the GEMM writes A's hi and lo parts to memory, and
/// step 15's kernel loads both tiles with TMA instead of splitting A's tile itself (sm_90a).
///
/// What changes from step 15, and why it is faster: step 15 splits A's tile in every block that
/// loads it, ceil(N / 128) times per element of A, in a pass of the consumer warpgroups between
/// `wgmma` groups (loads, stores, a fence and a barrier of both consumers per K-tile). Here a
/// memory-bound kernel splits each element of A once into two planes, hi (rows 0 to M - 1) and lo
/// (rows M to 2 M - 1) of one array with rows of K rounded up to 4 floats, and step 15's kernel
/// (`kPresplit`) loads A's hi and lo tiles from it by TMA: the consumers only multiply. B^T is
/// still split in registers, as in step 15. The products and sums are step 15's, so C is the same
/// bit for bit.
///
/// The planes take 8 M ceil(K / 4) 4 bytes. They come from a stream-ordered memory pool of the
/// step's own per device, which keeps its memory between calls (up to the largest planes asked
/// for): the launcher needs no workspace argument, the calls after the first allocate nothing
/// from the driver. In a CUDA graph capture the planes are the graph's own allocation instead
/// (the pool is not created there: a capture forbids it). A's rows need no alignment (the split pass
/// reads it element by element); where TMA cannot read B's rows (an address or a leading dimension
/// off 16 bytes), the launcher copies B after the planes, into rows of N rounded up to 4 floats,
/// which it can. It runs step 15 where the planes' 2 M rows, or K or a copied B's N rounded up to
/// 4, would not fit an int (presplit_runs), or where the pool cannot give the memory.
#pragma once
#include <cuda_runtime.h>

#include <climits>
#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>

#include "sgemm_15_split_wgmma.cuh"

namespace smem::gemm {

/// A shape of step 15's kernel (SplitWgmmaShapeOf) with A's lo tile loaded too.
template <class Base>
struct PresplitOf : Base {
  static constexpr bool kPresplit = true;
  static constexpr unsigned kLoadBytes = (2 * Base::kAElems + Base::LB::kElems) * sizeof(float);
};
/// Step 16's tile, stages and warpgroups: step 15's.
using PresplitShape = PresplitOf<SplitWgmmaShape>;

//! [split planes]
/// Splits A (M x K, leading dimension lda) into planes: hi of row r in row r, lo (times 2^10) in
/// row M + r, rows of kp floats (K rounded up to 4; the columns past K are zero). A thread splits
/// 4 consecutive elements and stores each part's 16 bytes at once.
static __global__ void split_planes_kernel(const float* A, int lda, int M, int K, int kp, float* planes) {
  for (long long r = blockIdx.y; r < M; r += gridDim.y)
    for (long long c = 4LL * (blockIdx.x * blockDim.x + threadIdx.x); c < kp; c += 4LL * blockDim.x * gridDim.x) {
      float x[4];
#pragma unroll
      for (int e = 0; e < 4; ++e) x[e] = c + e < K ? A[r * lda + c + e] : 0.0f;
      uint4 hi, lo;
      tf32_split(x[0], hi.x, lo.x), tf32_split(x[1], hi.y, lo.y), tf32_split(x[2], hi.z, lo.z);
      tf32_split(x[3], hi.w, lo.w);
      *reinterpret_cast<uint4*>(planes + r * kp + c) = hi;
      *reinterpret_cast<uint4*>(planes + (M + r) * kp + c) = lo;
    }
}
//! [split planes]

/// Copies B (K x N, leading dimension ldb, any alignment) into rows of np floats (N rounded up to 4;
/// the columns past N are zero), which TMA can read.
static __global__ void copy_rows_kernel(const float* B, int ldb, int K, int N, int np, float* rows) {
  for (long long r = blockIdx.y; r < K; r += gridDim.y)
    for (long long c = blockIdx.x * blockDim.x + threadIdx.x; c < np; c += 1LL * blockDim.x * gridDim.x)
      rows[r * np + c] = c < N ? B[r * ldb + c] : 0.0f;
}

/// The pool of the current device's planes (created on the first call for the device, then
/// kept), or an error.
inline cudaError_t planes_pool(cudaMemPool_t* pool) {
  static std::mutex lock;
  static std::map<int, cudaMemPool_t> pools;
  int dev = 0;
  if (cudaError_t e = cudaGetDevice(&dev)) return e;
  const std::lock_guard<std::mutex> hold(lock);
  auto it = pools.find(dev);
  if (it == pools.end()) {
    cudaMemPoolProps props = {};
    props.allocType = cudaMemAllocationTypePinned;
    props.location.type = cudaMemLocationTypeDevice;
    props.location.id = dev;
    cudaMemPool_t p = nullptr;
    if (cudaError_t e = cudaMemPoolCreate(&p, &props)) return e;
    std::uint64_t keep = ~std::uint64_t(0);  // never give memory back at a synchronization
    if (cudaError_t e = cudaMemPoolSetAttribute(p, cudaMemPoolAttrReleaseThreshold, &keep)) return e;
    it = pools.emplace(dev, p).first;
  }
  *pool = it->second;
  return cudaSuccess;
}

/// Whether step 16's kernel runs: 2 M, K rounded up to 4 and, where B is copied, N rounded up to 4
/// fit an int.
inline bool presplit_runs(int M, int N, int K, const float* B, int ldb) {
  return M < (1 << 30) && K <= INT_MAX - 3 && (sm90::tma_rows(B, ldb) || N <= INT_MAX - 3);
}

/// The plan of step 16's GEMM kernel in shape S where it runs, else step 15's.
template <class S>
Plan<const void*> split_presplit_plan_with(int M, int N, int K, const float* A, int lda, const float* B, int ldb,
                                           const float* C, int ldc) {
  if (!presplit_runs(M, N, K, B, ldb)) return split_wgmma_plan(M, N, K, A, lda, B, ldb, C, ldc);
  return split_wgmma_tma_plan<S>(M, N).erased();
}

/// The plan of step 16.
inline Plan<const void*> split_presplit_plan(int M, int N, int K, const float* A, int lda, const float* B, int ldb,
                                             const float* C, int ldc) {
  return split_presplit_plan_with<PresplitShape>(M, N, K, A, lda, B, ldb, C, ldc);
}

//! [presplit launcher]
/// C = alpha * A * B + beta * C, row-major, split TF32 on wgmma with A split once into planes, the
/// kernel in shape S (a PresplitOf), B copied to 16-byte rows where TMA cannot read its own; step 15
/// where presplit_runs says no or the memory cannot be had.
template <class S>
cudaError_t split_presplit_with(int M, int N, int K, float alpha, const float* A, int lda, const float* B, int ldb,
                                float beta, float* C, int ldc, cudaStream_t stream = nullptr) {
  if (Args a = check_args(M, N, K, alpha, A, lda, B, ldb, C, ldc); a != Args::launch)
    return finish_without_launch(a, M, N, beta, C, ldc, stream);
  if (!presplit_runs(M, N, K, B, ldb)) return split_wgmma(M, N, K, alpha, A, lda, B, ldb, beta, C, ldc, stream);
  const Plan<SplitWgmmaKernel> p = split_wgmma_tma_plan<S>(M, N);
  if (p.kernel == nullptr) return cudaErrorInvalidValue;
  const int kp = (K + 3) / 4 * 4;  // K rounded up to 4
  const bool copy_b = !sm90::tma_rows(B, ldb);
  const int np = copy_b ? (N + 3) / 4 * 4 : 0;  // B's copied rows, if any
  const std::size_t plane_floats = 2 * std::size_t(M) * std::size_t(kp);
  const std::size_t bytes = (plane_floats + std::size_t(K) * std::size_t(np)) * sizeof(float);
  cudaStreamCaptureStatus capturing = cudaStreamCaptureStatusNone;
  if (cudaError_t e = cudaStreamIsCapturing(stream, &capturing)) return e;
  // In a capture the graph owns the planes (an allocation node): no pool, whose creation a capture
  // forbids. Outside one, a pool that cannot be made or has no room leaves step 15, which needs none.
  cudaMemPool_t pool = nullptr;
  float* planes = nullptr;
  const cudaError_t got = capturing != cudaStreamCaptureStatusNone ? cudaMallocAsync(&planes, bytes, stream)
                          : planes_pool(&pool) == cudaSuccess      ? cudaMallocFromPoolAsync(&planes, bytes, pool, stream)
                                                                   : cudaErrorMemoryAllocation;
  if (got != cudaSuccess) {
    if (capturing != cudaStreamCaptureStatusNone) return got;
    (void)cudaGetLastError();
    return split_wgmma(M, N, K, alpha, A, lda, B, ldb, beta, C, ldc, stream);
  }
  const unsigned across = unsigned((kp / 4 + 255) / 256), rows = unsigned(M < 65535 ? M : 65535);
  split_planes_kernel<<<dim3(across < 1024 ? across : 1024, rows), 256, 0, stream>>>(A, lda, M, K, kp, planes);
  cudaError_t e = cudaGetLastError();
  float* b_rows = planes + plane_floats;  // 16-byte aligned: kp is a multiple of 4
  if (e == cudaSuccess && copy_b) {
    const unsigned across_b = unsigned((np + 255) / 256), rows_b = unsigned(K < 65535 ? K : 65535);
    copy_rows_kernel<<<dim3(across_b < 1024 ? across_b : 1024, rows_b), 256, 0, stream>>>(B, ldb, K, N, np, b_rows);
    e = cudaGetLastError();
  }
  CUtensorMap a_map, b_map;
  if (e == cudaSuccess && (!S::LA::make_map(&a_map, planes, 2 * M, K, kp) ||
                           !S::LB::make_map(&b_map, copy_b ? b_rows : B, K, N, copy_b ? np : ldb)))
    e = cudaErrorInvalidValue;
  if (e == cudaSuccess) e = launch(p, stream, a_map, b_map, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
  const cudaError_t freed = cudaFreeAsync(planes, stream);  // after the kernels, in stream order
  return e != cudaSuccess ? e : freed;
}
//! [presplit launcher]

/// C = alpha * A * B + beta * C: step 16, the kernel in step 15's shape.
inline cudaError_t split_presplit(int M, int N, int K, float alpha, const float* A, int lda, const float* B, int ldb,
                                  float beta, float* C, int ldc, cudaStream_t stream = nullptr) {
  return split_presplit_with<PresplitShape>(M, N, K, alpha, A, lda, B, ldb, beta, C, ldc, stream);
}

}  // namespace smem::gemm

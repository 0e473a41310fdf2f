// The candidate shapes the SGEMM tuner sweeps: X(index, BM, BN, BK, WM, WN, TM, TN, stages),
// each a MultistageShape (recipes/gemm/sgemm_12_multistage.cuh). The sweep covers the block tile
// (64 x 64 .. 256 x 128), the warp tile (32 x 32 .. 128 x 32, 32 x 128), the thread tile (4 x 8 .. 16 x 8),
// BK 8, 16 or 32 and 3 or 4 stages. Each candidate is compiled in one of kTuneParts translation units
// (bench/gemm_tune_part.cu) so that the build runs in parallel.
#pragma once
#include <cuda_runtime.h>

#include <vector>

#include <gemm/gemm_common.cuh>

#define SMEM_TUNE_CANDIDATES(X)         \
  X(0, 256, 128, 8, 64, 64, 16, 8, 4)   \
  X(1, 256, 128, 16, 64, 64, 16, 8, 3)  \
  X(2, 256, 128, 16, 64, 64, 16, 8, 4)  \
  X(3, 128, 256, 8, 64, 64, 8, 16, 4)   \
  X(4, 128, 256, 16, 64, 64, 8, 16, 3)  \
  X(5, 128, 256, 16, 64, 64, 8, 16, 4)  \
  X(6, 128, 256, 16, 32, 128, 8, 16, 3) \
  X(7, 256, 128, 16, 128, 32, 16, 8, 3) \
  X(8, 128, 256, 32, 64, 64, 8, 16, 3)  \
  X(9, 128, 128, 8, 64, 32, 8, 8, 4)    \
  X(10, 128, 128, 16, 64, 32, 8, 8, 3)  \
  X(11, 128, 128, 16, 64, 32, 8, 8, 4)  \
  X(12, 128, 128, 16, 64, 64, 8, 16, 3) \
  X(13, 128, 128, 16, 64, 64, 16, 8, 3) \
  X(14, 128, 128, 8, 64, 64, 16, 8, 4)  \
  X(15, 128, 128, 32, 64, 32, 8, 8, 3)  \
  X(16, 64, 128, 8, 32, 64, 8, 8, 4)    \
  X(17, 64, 128, 16, 32, 64, 8, 8, 3)   \
  X(18, 64, 128, 16, 32, 64, 8, 8, 4)   \
  X(19, 64, 64, 8, 32, 32, 4, 8, 4)     \
  X(20, 64, 64, 16, 32, 32, 8, 4, 3)    \
  X(21, 64, 64, 16, 32, 32, 4, 8, 4)    \
  X(22, 128, 64, 16, 64, 32, 8, 8, 3)   \
  X(23, 64, 128, 8, 32, 64, 4, 16, 4)

inline constexpr int kTuneParts = 8;

namespace smem::tune {

using Launch = cudaError_t (*)(int, int, int, float, const float*, int, const float*, int, float,
                               float*, int, cudaStream_t);
/// The candidate's plan for an n x n output (its kernel, grid, block and shared memory).
using PlanOf = smem::gemm::Plan<const void*> (*)(int n);

struct Candidate {
  int index, bm, bn, bk, wm, wn, tm, tn, stages;
  Launch launch;
  PlanOf plan;
};

// One per part: gemm_tune_part.cu compiled with SMEM_TUNE_PART = 0 .. kTuneParts - 1.
void add_candidates_0(std::vector<Candidate>&);
void add_candidates_1(std::vector<Candidate>&);
void add_candidates_2(std::vector<Candidate>&);
void add_candidates_3(std::vector<Candidate>&);
void add_candidates_4(std::vector<Candidate>&);
void add_candidates_5(std::vector<Candidate>&);
void add_candidates_6(std::vector<Candidate>&);
void add_candidates_7(std::vector<Candidate>&);

}  // namespace smem::tune

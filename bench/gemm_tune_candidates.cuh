// The candidate shapes of step 13's tuned table (./cookbook tune gemm times them):
// X(BM, BN, BK, WM, WN, TM, TN, stages), each a MultistageShape (recipes/gemm/sgemm_12_multistage.cuh).
// The sweep covers the block tile (64 x 64 .. 256 x 128), the warp tile (32 x 32 .. 128 x 32, 32 x 128),
// the thread tile (4 x 8 .. 16 x 8), BK 8, 16 or 32 and 3 or 4 stages.
#pragma once

#define SMEM_TUNE_CANDIDATES(X)      \
  X(256, 128, 8, 64, 64, 16, 8, 4)   \
  X(256, 128, 16, 64, 64, 16, 8, 3)  \
  X(256, 128, 16, 64, 64, 16, 8, 4)  \
  X(128, 256, 8, 64, 64, 8, 16, 4)   \
  X(128, 256, 16, 64, 64, 8, 16, 3)  \
  X(128, 256, 16, 64, 64, 8, 16, 4)  \
  X(128, 256, 16, 32, 128, 8, 16, 3) \
  X(256, 128, 16, 128, 32, 16, 8, 3) \
  X(128, 256, 32, 64, 64, 8, 16, 3)  \
  X(128, 128, 8, 64, 32, 8, 8, 4)    \
  X(128, 128, 16, 64, 32, 8, 8, 3)   \
  X(128, 128, 16, 64, 32, 8, 8, 4)   \
  X(128, 128, 16, 64, 64, 8, 16, 3)  \
  X(128, 128, 16, 64, 64, 16, 8, 3)  \
  X(128, 128, 8, 64, 64, 16, 8, 4)   \
  X(128, 128, 32, 64, 32, 8, 8, 3)   \
  X(64, 128, 8, 32, 64, 8, 8, 4)     \
  X(64, 128, 16, 32, 64, 8, 8, 3)    \
  X(64, 128, 16, 32, 64, 8, 8, 4)    \
  X(64, 64, 8, 32, 32, 4, 8, 4)      \
  X(64, 64, 16, 32, 32, 8, 4, 3)     \
  X(64, 64, 16, 32, 32, 4, 8, 4)     \
  X(128, 64, 16, 64, 32, 8, 8, 3)    \
  X(64, 128, 8, 32, 64, 4, 16, 4)

// The candidate shapes of step 17's tuned table (sm_90a builds): X(BM, stages, group_rows), each
// step 16's kernel in PresplitShapeOf<BM, stages, group_rows> (recipes/gemm/sgemm_17_split_tuned.cuh):
// 128- and 64-row tiles, rings of 3 to 6 stages (48 KB or 32 KB each), groups of 4 to 16 tile-rows.
#define SMEM_SPLIT_TUNE_CANDIDATES(X) \
  X(128, 3, 8)                        \
  X(128, 4, 4)                        \
  X(128, 4, 8)                        \
  X(128, 4, 16)                       \
  X(64, 4, 8)                         \
  X(64, 6, 8)                         \
  X(64, 6, 16)

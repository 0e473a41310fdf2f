/// \file sgemm_13_tuned_config.cuh
/// \brief The configuration the autotuned step (13) uses: written by `./cookbook tune gemm`
/// (bench/gemm_tune.cu), one block per GPU, committed.
///
/// Each X(gpu, max_mn, BM, BN, BK, WM, WN, TM, TN, stages) entry says: on the GPU whose
/// cudaDeviceProp::name is `gpu`, for outputs of at most max_mn elements (M * N), use
/// MultistageShape<BM, BN, BK, WM, WN, TM, TN, stages>. Entries of one GPU are in ascending
/// max_mn; the tuner replaces the block of the GPU it ran on and keeps the others.
#pragma once

// BEGIN TUNED TABLE
#define SMEM_SGEMM_TUNED_TABLE(X) \
  X("NVIDIA H200", 2048000LL, 64, 64, 16, 32, 32, 8, 4, 3) \
  X("NVIDIA H200", 9223372036854775807LL, 128, 128, 32, 64, 32, 8, 8, 3)
// END TUNED TABLE

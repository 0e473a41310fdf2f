/// \file gemm.cuh
/// \brief The SGEMM family: every step, one Variant enum, a dispatcher and the kernel attributes,
/// which the tests and benchmarks iterate over. Adding a step is one header and one entry in
/// Variant, kAllVariants, name(), run() and attributes() here.
///
/// Every launcher computes, row-major, C = alpha * A * B + beta * C (A M x K with lda >= K,
/// B K x N with ldb >= N, C M x N with ldc >= N) and follows gemm_args.cuh's contract.
#pragma once
#include <cuda_runtime.h>

#include "gemm_args.cuh"
#include "sgemm_01_naive.cuh"
#include "sgemm_02_coalesced.cuh"
#include "sgemm_03_full_k_strip.cuh"
#include "sgemm_04_tiled.cuh"
#include "sgemm_05_padded.cuh"
#include "sgemm_06_double_buffered.cuh"
#include "sgemm_07_blocktile_1d.cuh"
#include "sgemm_08_blocktile_2d.cuh"
#include "sgemm_09_vectorized.cuh"
#include "sgemm_10_conflict_free.cuh"
#include "sgemm_11_warptiled.cuh"
#include "sgemm_12_multistage.cuh"
#include "sgemm_13_autotuned.cuh"

namespace smem::gemm {

/// Every step of the ladder, in order.
enum class Variant {
  naive,
  coalesced,
  full_k_strip,
  tiled_16,
  tiled_32,
  tiled_32_padded,
  double_buffered,
  blocktile_1d,
  blocktile_2d,
  vectorized,
  conflict_free,
  warptiled,
  multistage,
  autotuned,
};

inline constexpr Variant kAllVariants[] = {
    Variant::naive,           Variant::coalesced,    Variant::full_k_strip, Variant::tiled_16,
    Variant::tiled_32,        Variant::tiled_32_padded, Variant::double_buffered,
    Variant::blocktile_1d,    Variant::blocktile_2d, Variant::vectorized,
    Variant::conflict_free,   Variant::warptiled,    Variant::multistage,   Variant::autotuned,
};

constexpr const char* name(Variant v) {
  switch (v) {
    case Variant::naive: return "naive";
    case Variant::coalesced: return "coalesced";
    case Variant::full_k_strip: return "full_k_strip";
    case Variant::tiled_16: return "tiled_16";
    case Variant::tiled_32: return "tiled_32";
    case Variant::tiled_32_padded: return "tiled_32_padded";
    case Variant::double_buffered: return "double_buffered";
    case Variant::blocktile_1d: return "blocktile_1d";
    case Variant::blocktile_2d: return "blocktile_2d";
    case Variant::vectorized: return "vectorized";
    case Variant::conflict_free: return "conflict_free";
    case Variant::warptiled: return "warptiled";
    case Variant::multistage: return "multistage";
    case Variant::autotuned: return "autotuned";
  }
  return "?";
}

/// Runs one variant: C = alpha * A * B + beta * C.
inline cudaError_t run(Variant v, int M, int N, int K, float alpha, const float* A, int lda,
                       const float* B, int ldb, float beta, float* C, int ldc,
                       cudaStream_t stream = nullptr) {
  switch (v) {
    case Variant::naive: return sgemm_naive(M, N, K, alpha, A, lda, B, ldb, beta, C, ldc, stream);
    case Variant::coalesced: return sgemm_coalesced(M, N, K, alpha, A, lda, B, ldb, beta, C, ldc, stream);
    case Variant::full_k_strip: return sgemm_full_k_strip(M, N, K, alpha, A, lda, B, ldb, beta, C, ldc, stream);
    case Variant::tiled_16: return sgemm_tiled_16(M, N, K, alpha, A, lda, B, ldb, beta, C, ldc, stream);
    case Variant::tiled_32: return sgemm_tiled_32(M, N, K, alpha, A, lda, B, ldb, beta, C, ldc, stream);
    case Variant::tiled_32_padded: return sgemm_tiled_32_padded(M, N, K, alpha, A, lda, B, ldb, beta, C, ldc, stream);
    case Variant::double_buffered: return sgemm_double_buffered(M, N, K, alpha, A, lda, B, ldb, beta, C, ldc, stream);
    case Variant::blocktile_1d: return sgemm_blocktile_1d(M, N, K, alpha, A, lda, B, ldb, beta, C, ldc, stream);
    case Variant::blocktile_2d: return sgemm_blocktile_2d(M, N, K, alpha, A, lda, B, ldb, beta, C, ldc, stream);
    case Variant::vectorized: return sgemm_vectorized(M, N, K, alpha, A, lda, B, ldb, beta, C, ldc, stream);
    case Variant::conflict_free: return sgemm_conflict_free(M, N, K, alpha, A, lda, B, ldb, beta, C, ldc, stream);
    case Variant::warptiled: return sgemm_warptiled(M, N, K, alpha, A, lda, B, ldb, beta, C, ldc, stream);
    case Variant::multistage: return sgemm_multistage(M, N, K, alpha, A, lda, B, ldb, beta, C, ldc, stream);
    case Variant::autotuned: return sgemm_autotuned(M, N, K, alpha, A, lda, B, ldb, beta, C, ldc, stream);
  }
  return cudaErrorInvalidValue;
}

/// Whether variant v accepts an inner dimension K on the current device (a variant precondition
/// other than the common argument checks; the launcher returns cudaErrorInvalidValue otherwise).
inline bool supports(Variant v, int K) {
  if (v == Variant::full_k_strip) return K <= full_k_max_k();
  return true;
}

/// Registers, static and dynamic shared memory, threads per block and blocks per SM of the
/// kernel variant v launches for inner dimension K (its float4 path where it has one).
inline cudaError_t attributes(Variant v, int K, KernelAttributes* out) {
  switch (v) {
    case Variant::naive: return sgemm_naive_attributes(K, out);
    case Variant::coalesced: return sgemm_coalesced_attributes(K, out);
    case Variant::full_k_strip: return sgemm_full_k_strip_attributes(K, out);
    case Variant::tiled_16: return sgemm_tiled_16_attributes(K, out);
    case Variant::tiled_32: return sgemm_tiled_32_attributes(K, out);
    case Variant::tiled_32_padded: return sgemm_tiled_32_padded_attributes(K, out);
    case Variant::double_buffered: return sgemm_double_buffered_attributes(K, out);
    case Variant::blocktile_1d: return sgemm_blocktile_1d_attributes(K, out);
    case Variant::blocktile_2d: return sgemm_blocktile_2d_attributes(K, out);
    case Variant::vectorized: return sgemm_vectorized_attributes(K, out);
    case Variant::conflict_free: return sgemm_conflict_free_attributes(K, out);
    case Variant::warptiled: return sgemm_warptiled_attributes(K, out);
    case Variant::multistage: return sgemm_multistage_attributes(K, out);
    case Variant::autotuned: return sgemm_autotuned_attributes(K, out);
  }
  return cudaErrorInvalidValue;
}

}  // namespace smem::gemm

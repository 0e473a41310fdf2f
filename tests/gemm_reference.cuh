// Tests only: the float64 references for C = alpha * A * B + beta * C (row-major, fp32 inputs).
// Besides the reference R, both compute S = |alpha| |A| |B| + |beta| |C0|, the sum of the
// magnitudes of the terms that make up each element: the scale of its rounding error.
#pragma once
#include <cuda_runtime.h>

#include <cmath>
#include <cstddef>
#include <vector>

namespace smem::test {

/// CPU reference in float64. C0 is read only when beta != 0 (it may hold NaN otherwise).
inline void gemm_reference_cpu(int M, int N, int K, float alpha, const std::vector<float>& A, int lda,
                               const std::vector<float>& B, int ldb, float beta,
                               const std::vector<float>& C0, int ldc, std::vector<double>& R,
                               std::vector<double>& S) {
  R.assign(std::size_t(M) * N, 0.0);
  S.assign(std::size_t(M) * N, 0.0);
  std::vector<double> acc(N), mag(N);
  for (int i = 0; i < M; ++i) {
    std::fill(acc.begin(), acc.end(), 0.0);
    std::fill(mag.begin(), mag.end(), 0.0);
    for (int k = 0; k < K; ++k) {
      const double a = A[std::size_t(i) * lda + k];
      const float* b = &B[std::size_t(k) * ldb];
      for (int j = 0; j < N; ++j) {
        acc[j] += a * double(b[j]);
        mag[j] += std::fabs(a * double(b[j]));
      }
    }
    for (int j = 0; j < N; ++j) {
      const double c = beta != 0.0f ? double(C0[std::size_t(i) * ldc + j]) : 0.0;
      R[std::size_t(i) * N + j] = double(alpha) * acc[j] + double(beta) * c;
      S[std::size_t(i) * N + j] = std::fabs(double(alpha)) * mag[j] + std::fabs(double(beta) * c);
    }
  }
}

/// GPU reference in float64: a 16 x 16 shared-memory tiled kernel, R and S dense (ld N).
__global__ void gemm_reference_kernel(int M, int N, int K, float alpha, const float* A, int lda,
                                      const float* B, int ldb, float beta, const float* C0, int ldc,
                                      double* R, double* S) {
  __shared__ double As[16][17], Bs[16][17];
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int row = blockIdx.y * 16 + ty, col = blockIdx.x * 16 + tx;
  double acc = 0, mag = 0;
  for (int k0 = 0; k0 < K; k0 += 16) {
    As[ty][tx] = row < M && k0 + tx < K ? double(A[std::size_t(row) * lda + k0 + tx]) : 0.0;
    Bs[ty][tx] = k0 + ty < K && col < N ? double(B[std::size_t(k0 + ty) * ldb + col]) : 0.0;
    __syncthreads();
    for (int k = 0; k < 16; ++k) {
      const double p = As[ty][k] * Bs[k][tx];
      acc += p;
      mag += fabs(p);
    }
    __syncthreads();
  }
  if (row < M && col < N) {
    const double c = beta != 0.0f ? double(C0[std::size_t(row) * ldc + col]) : 0.0;
    R[std::size_t(row) * N + col] = double(alpha) * acc + double(beta) * c;
    S[std::size_t(row) * N + col] = fabs(double(alpha)) * mag + fabs(double(beta) * c);
  }
}

/// Launches gemm_reference_kernel (device pointers; R and S hold M * N doubles).
inline cudaError_t gemm_reference_gpu(int M, int N, int K, float alpha, const float* A, int lda,
                                      const float* B, int ldb, float beta, const float* C0, int ldc,
                                      double* R, double* S) {
  const dim3 grid((N + 15) / 16, (M + 15) / 16);
  gemm_reference_kernel<<<grid, dim3(16, 16)>>>(M, N, K, alpha, A, lda, B, ldb, beta, C0, ldc, R, S);
  return cudaGetLastError();
}

}  // namespace smem::test

// Tests and benchmarks only: the float64 references for C = alpha * A * B + beta * C (row-major,
// fp32 inputs). Besides the reference R, both compute S = |alpha| |A| |B| + |beta| |C0|, the sum of
// the magnitudes of the terms that make up each element: the scale of its rounding error. And the
// accuracy measure of a result against them, on the CPU and on the GPU.
#pragma once
#include <cuda_runtime.h>

#include <cfloat>
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

/// One element's error |c - r| / s: inf where c is not finite, and where s is 0 unless c == r.
__host__ __device__ inline double scaled_error_of(float c, double r, double s) {
  if (!(fabsf(c) <= FLT_MAX)) return INFINITY;
  const double e = fabs(double(c) - r);
  return s > 0 ? e / s : e == 0 ? 0.0 : INFINITY;
}

/// The accuracy measure: the largest scaled_error_of over the M x N elements of C (leading
/// dimension ldc) against R and S (dense). With alpha = 1 and beta = 0, S is sum_k |a_ik| |b_kj|.
inline double max_scaled_error(const std::vector<float>& C, int ldc, const std::vector<double>& R,
                               const std::vector<double>& S, int M, int N) {
  double worst = 0;
  for (int i = 0; i < M; ++i)
    for (int j = 0; j < N; ++j) {
      const std::size_t x = std::size_t(i) * N + j;
      worst = std::fmax(worst, scaled_error_of(C[std::size_t(i) * ldc + j], R[x], S[x]));
    }
  return worst;
}

/// The same on the GPU: the largest into *out (a double's bits, 0 before the launch; non-negative
/// doubles order as their bit patterns, so atomicMax on them is a max).
static __global__ void max_scaled_error_kernel(int M, int N, const float* C, int ldc, const double* R,
                                               const double* S, unsigned long long* out) {
  double worst = 0;
  const std::size_t total = std::size_t(M) * N;
  for (std::size_t x = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; x < total;
       x += std::size_t(gridDim.x) * blockDim.x)
    worst = fmax(worst, scaled_error_of(C[x / N * ldc + x % N], R[x], S[x]));
  atomicMax(out, static_cast<unsigned long long>(__double_as_longlong(worst)));
}
inline cudaError_t max_scaled_error_gpu(int M, int N, const float* C, int ldc, const double* R, const double* S,
                                        unsigned long long* out) {
  max_scaled_error_kernel<<<1024, 256>>>(M, N, C, ldc, R, S, out);
  return cudaGetLastError();
}

}  // namespace smem::test

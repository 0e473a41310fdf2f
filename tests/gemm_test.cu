// SGEMM correctness: every variant on shapes that break naive index math, with leading dimensions
// wider than the matrices, three (alpha, beta) pairs, fresh random data and NaN-poisoned outputs,
// against a float64 reference and cuBLAS; misaligned operands on a non-default stream; the BLAS
// rules for K == 0, alpha == 0 and beta == 0; M or N = 2^21 (more tiles than a grid's y dimension
// holds); every variant's launch plan; step 12's kernel with every shape of step 13 and with a
// split tail; step 14's split (its bounds, infinities, NaN, values near FLT_MAX, subnormals, the
// accuracy measure against one TF32 product's). With SMEM_SMALL (./cookbook sanitize) the gpu
// suite runs a sanitizer-sized list (kSmallShapes) that still takes every path of every step.
// The host suite: the size helpers at INT_MAX and the grid limit of every step. The "large"
// suite: M = INT_MAX, N = INT_MAX, leading dimensions of INT_MAX, a long K, step 3's K limit, on
// integer data checked exactly on the GPU.
// (Banks: gemm_bank_test.cu; bad arguments: bad_input_test.cu; graph capture: graph_test.cu.)
#include <cublas_v2.h>
#include <doctest/doctest.h>

#include <gemm/gemm.cuh>

#include <algorithm>
#include <array>
#include <cfloat>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <utility>
#include <vector>

#include "compare.hpp"
#include "cublas_handle.hpp"
#include "device_buffer.hpp"
#include "gpu.hpp"
#include "gemm_reference.cuh"
#include "kernel_attributes.hpp"
#include "limits.cuh"
#include "random.hpp"

namespace gm = smem::gemm;
using smem::test::DeviceBuffer;

using smem::test::cublas_handle;
using smem::test::Spread;

namespace {

// Leading-dimension modes: dense, one wider (odd strides: the scalar paths), and the next
// multiple of 4 above the width (padded rows that still allow float4 accesses).
enum Ld { dense, plus_one, round4 };
int ld_for(int width, Ld mode) {
  switch (mode) {
    case dense: return width > 1 ? width : 1;
    case plus_one: return width + 1;
    case round4: return (width + 4) / 4 * 4;
  }
  return width;
}

struct Shape {
  int M, N, K;
  Ld ld;
};
constexpr Shape kShapes[] = {{1, 1, 1, dense},         {1, 1, 257, round4},        {7, 13, 3, plus_one},
                             {33, 65, 17, round4},     {128, 128, 128, round4},    {129, 127, 131, dense},
                             {1000, 999, 1001, round4}, {2048, 512, 4096, dense},  {3001, 2999, 300, plus_one}};
struct Scalars {
  float alpha, beta;
};
constexpr Scalars kScalars[] = {{1.0f, 0.0f}, {0.5f, 2.0f}, {-1.0f, 1.0f}};

// The shapes of the sanitizer run (SMEM_SMALL), each with one (alpha, beta) pair in turn: the
// fewest launches and shared-memory accesses that still take every path of every step (racecheck's
// time grows with every thread's shared-memory accesses). Tiles of C: 16 x 16 to 128 x 256; K-tiles
// (BK) of 8, 16 and 32; step 12 and 13's rings of 3 and 4 stages.
constexpr Shape kSmallShapes[] = {
    {1, 1, 1, dense},         // one partial tile and one partial K-tile everywhere
    {1, 1, 257, round4},      // 257 = 16 x 16 + 1: many K-tiles, each ring wraps, a 1-element last one
    {7, 13, 3, plus_one},     // K below every K-tile; ldb, ldc not multiples of 4: the scalar paths
    {33, 65, 17, round4},     // partial tiles in M, N and K, float4 paths
    {129, 127, 131, dense},   // one row past 128; 131 = 128 + 3; odd leading dimensions (scalar)
    {129, 257, 48, round4},   // step 12's first 128 x 256 block inside C, 3 whole K-tiles (= its stages):
                              // the compile-time interior loop, 16-byte B copies
    {130, 260, 100, plus_one},  // an interior block with a partial last K-tile, 4-byte B copies, 7 K-tiles
    {1100, 20, 24, round4},   // 9 tile rows of 128, 18 of 64: grouped_block's whole group of 8 and the rest
};

// The error bound: rounding in an fp32 dot product of length K followed by the alpha/beta update
// is at most (K + 2) u S elementwise (u = FLT_EPSILON / 2, S = |alpha||A||B| + |beta||C0|); with
// random signs the errors add like a random walk, so we allow 2 sqrt(K + 2) FLT_EPSILON of S in
// the Frobenius norm. Dropping one term of the sum, or one window of K, exceeds it by far.
double error_bound(int K) { return 2.0 * std::sqrt(double(K) + 2.0) * double(FLT_EPSILON); }

// ||got - R||_F / ||S||_F over the M x N matrix (got has leading dimension ldc); inf on NaN.
double scaled_error(const std::vector<float>& got, int ldc, const std::vector<double>& R,
                    const std::vector<double>& S, int M, int N) {
  double num = 0, den = 0;
  for (int i = 0; i < M; ++i)
    for (int j = 0; j < N; ++j) {
      const double g = got[std::size_t(i) * ldc + j], r = R[std::size_t(i) * N + j], s = S[std::size_t(i) * N + j];
      if (!std::isfinite(g)) return INFINITY;
      num += (g - r) * (g - r);
      den += s * s;
    }
  return den > 0 ? std::sqrt(num / den) : std::sqrt(num);
}

// True when the elements of C outside the M x N matrix (the ldc - N padding of each row) are bit
// for bit those of `before`.
bool padding_untouched(const std::vector<float>& got, const std::vector<float>& before, int M, int N, int ldc) {
  for (int i = 0; i < M; ++i)
    for (int j = N; j < ldc; ++j)
      if (std::memcmp(&got[std::size_t(i) * ldc + j], &before[std::size_t(i) * ldc + j], sizeof(float)) != 0)
        return false;
  return true;
}

// Row-major C = alpha A B + beta C through cuBLAS in true fp32 (CUBLAS_COMPUTE_32F, no TF32):
// column-major, that is C^T = B^T A^T.
cublasStatus_t cublas_sgemm(int M, int N, int K, float alpha, const float* A, int lda, const float* B,
                            int ldb, float beta, float* C, int ldc) {
  return cublasGemmEx(cublas_handle(), CUBLAS_OP_N, CUBLAS_OP_N, N, M, K, &alpha, B, CUDA_R_32F, ldb, A,
                      CUDA_R_32F, lda, &beta, C, CUDA_R_32F, ldc, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
}

// One problem: fresh random A, B (and C0 when beta != 0; NaN otherwise, padding included), on the
// host and on the device, and its float64 reference.
struct Problem {
  int M, N, K, lda, ldb, ldc;
  float alpha, beta;
  std::vector<float> A, B, C0;
  std::vector<double> R, S;
  DeviceBuffer<float> dA, dB, dC;

  Problem(Shape s, Scalars ab, std::uint64_t salt)
      : M(s.M), N(s.N), K(s.K), lda(ld_for(s.K, s.ld)), ldb(ld_for(s.N, s.ld)), ldc(ld_for(s.N, s.ld)),
        alpha(ab.alpha), beta(ab.beta) {
    auto g = smem::test::rng(salt);
    A = smem::test::random_vector<float>(std::size_t(M) * lda, g);
    B = smem::test::random_vector<float>(std::size_t(K) * ldb, g);
    if (beta != 0.0f) {
      C0 = smem::test::random_vector<float>(std::size_t(M) * ldc, g);
    } else {
      C0.resize(std::size_t(M) * ldc);
      std::memset(C0.data(), 0xFF, C0.size() * sizeof(float));  // NaN: must not leak
    }
    dA = DeviceBuffer<float>(A);
    dB = DeviceBuffer<float>(B);
    dC = DeviceBuffer<float>(C0.size());
    if (double(M) * N * K <= double(1 << 24)) {
      smem::test::gemm_reference_cpu(M, N, K, alpha, A, lda, B, ldb, beta, C0, ldc, R, S);
    } else {
      DeviceBuffer<float> c0(C0);
      DeviceBuffer<double> r(std::size_t(M) * N), sc(std::size_t(M) * N);
      SMEM_CUDA_CHECK(smem::test::gemm_reference_gpu(M, N, K, alpha, dA.get(), lda, dB.get(), ldb, beta,
                                                     c0.get(), ldc, r.get(), sc.get()));
      SMEM_CUDA_CHECK(cudaDeviceSynchronize());
      R = r.download();
      S = sc.download();
    }
  }
  void reset_c() { dC.upload(C0); }
};

// ---- The large suite: integer data filled and checked on the GPU. ----

using smem::test::GuardedBuffer;
using smem::test::SmallIntOfIndex;

// An integer-valued matrix in the device buffer p that fill_by_index filled with f: element
// (r, c) lies at flat index r ld + c and holds f(r ld + c). The GPU reads it from p (cheaper than
// the hash for tens of GiB); the host computes it from f alone, so its samples check both.
struct IntMatrix {
  SmallIntOfIndex f;
  int ld;
  const float* p;
  __host__ __device__ int at(int r, int c) const {
    const std::size_t i = std::size_t(r) * ld + c;
#ifdef __CUDA_ARCH__
    return int(p[i]);
#else
    return f(i);
#endif
  }
};

// What the buffer C lies at the start of must hold after C = alpha A B + beta C0, element p of the
// buffer first filled with c0: inside the M x N matrix alpha (A B) + beta c0(p), anywhere else
// (the row padding, the rest of the buffer) c0(p), untouched. With small integers, alpha and beta
// every value and every partial sum is exact in float, whatever order a step adds in.
struct Expected {
  IntMatrix a, b;
  SmallIntOfIndex c0;
  int M, N, K, ldc;
  float alpha, beta;
  __host__ __device__ float at(std::size_t p) const {
    const float c = float(c0(p));
    const std::size_t i = p / ldc, j = p % ldc;
    if (i >= std::size_t(M) || j >= std::size_t(N)) return c;
    long long dot = 0;
    for (int k = 0; k < K; ++k) dot += (long long)a.at(int(i), k) * b.at(k, int(j));
    return alpha * float(dot) + beta * c;
  }
};

__global__ void count_mismatches_kernel(const float* C, std::size_t n, Expected e, unsigned long long* out) {
  unsigned long long wrong = 0, first = ~0ull;
  const std::size_t stride = std::size_t(gridDim.x) * blockDim.x;
  for (std::size_t p = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; p < n; p += stride)
    if (C[p] != e.at(p)) ++wrong, first = first < p ? first : p;
  if (wrong) atomicAdd(out, wrong), atomicMin(out + 1, first);
}

// Checks every element of C[0, n) against e on the GPU (the count and the first mismatch).
void check_on_gpu(const float* C, std::size_t n, const Expected& e) {
  DeviceBuffer<unsigned long long> out(std::vector<unsigned long long>{0, ~0ull});
  count_mismatches_kernel<<<4096, 256>>>(C, n, e, out.get());
  SMEM_CUDA_CHECK(cudaGetLastError());
  SMEM_CUDA_CHECK(cudaDeviceSynchronize());
  const auto h = out.download();
  INFO("first mismatch at element " << h[1] << " of C's buffer");
  CHECK(h[0] == 0);
}

// The same on the host for the first and the last 4096 elements of C's buffer, those around
// element 2^31 and 256 random ones: mismatches found.
int host_mismatches(const GuardedBuffer<float>& C, const Expected& e, std::mt19937_64& g) {
  int wrong = 0;
  const auto range = [&](std::size_t first, std::size_t count) {
    count = std::min(count, C.size() - first);
    const auto h = C.download(first, count);
    for (std::size_t k = 0; k < count; ++k) wrong += h[k] != e.at(first + k);
  };
  range(0, 4096);
  range(C.size() > 4096 ? C.size() - 4096 : 0, 4096);
  if (C.size() > (std::size_t(1) << 31) + 8) range((std::size_t(1) << 31) - 8, 16);
  std::uniform_int_distribution<std::size_t> any(0, C.size() - 1);
  for (int k = 0; k < 256; ++k) range(any(g), 1);
  return wrong;
}

// dots[i N + j] = sum over k of a(i, k) b(k, j), exactly: one block per element (M N small).
__global__ void dots_kernel(IntMatrix a, IntMatrix b, int N, int K, unsigned long long* dots) {
  const int i = int(blockIdx.x) / N, j = int(blockIdx.x) % N;
  long long s = 0;
  for (int k = int(threadIdx.x); k < K; k += int(blockDim.x)) s += (long long)a.at(i, k) * b.at(k, j);
  atomicAdd(dots + blockIdx.x, (unsigned long long)s);  // two's complement: a signed sum
}


// ---- Step 14, split TF32. ----

// The bits of a float and back.
std::uint32_t bits_of(float x) {
  std::uint32_t u;
  std::memcpy(&u, &x, sizeof u);
  return u;
}
float float_of(std::uint32_t u) {
  float x;
  std::memcpy(&x, &u, sizeof x);
  return x;
}

// Each x[i] split by the recipe's own tf32_split (hi[i], lo[i] as bit patterns), and each part as
// the tensor core reads it (hi_read[i], lo_read[i]): a warp multiplies its 128 x's hi parts, then
// their lo parts, as a 16 x 8 A fragment by an 8 x 8 identity B in `mma_tf32`, so D is A as read.
// n is a multiple of 128, and every x is finite and below 0x7f7ff000 (0 * an infinite hi is NaN).
__global__ void split_kernel(const float* x, unsigned* hi, unsigned* lo, float* hi_read, float* lo_read, int n) {
  const int lane = int(threadIdx.x % 32), base = int(blockIdx.x * blockDim.x + threadIdx.x) / 32 * 128;
  if (base >= n) return;
  unsigned ah[4], al[4];
  for (int r = 0; r < 4; ++r) {  // A's a[r]: row lane / 4 + 8 (r % 2), column lane % 4 + 4 (r / 2)
    const int i = base + (lane / 4 + 8 * (r % 2)) * 8 + lane % 4 + 4 * (r / 2);
    gm::tf32_split(x[i], ah[r], al[r]);
    hi[i] = ah[r], lo[i] = al[r];
  }
  const unsigned one = __float_as_uint(1.0f);  // B's b[r]: row lane % 4 + 4 r, column lane / 4
  const unsigned b0 = lane % 4 == lane / 4 ? one : 0u, b1 = lane % 4 + 4 == lane / 4 ? one : 0u;
  const float zero[4] = {};
  float dh[4], dl[4];
  gm::mma_tf32(dh, ah, b0, b1, zero);
  gm::mma_tf32(dl, al, b0, b1, zero);
  for (int r = 0; r < 4; ++r) {  // D's d[r]: row lane / 4 + 8 (r / 2), column 2 (lane % 4) + r % 2
    const int i = base + (lane / 4 + 8 * (r / 2)) * 8 + 2 * (lane % 4) + r % 2;
    hi_read[i] = dh[r], lo_read[i] = dl[r];
  }
}

// x rounded to TF32 as cvt.rna does (to nearest, ties away; finite x below 0x7f7ff000): one TF32
// product's operand.
double tf32_of(float x) { return float_of((bits_of(x) + 0x1000u) & 0xffffe000u); }

// One TF32 product per term, summed exactly (float64): the most accurate a TF32 GEMM can be,
// alpha = 1, beta = 0. C dense (ld N).
std::vector<float> tf32_gemm_cpu(int M, int N, int K, const std::vector<float>& A, int lda, const std::vector<float>& B,
                                 int ldb) {
  std::vector<float> C(std::size_t(M) * N);
  std::vector<double> acc(N);
  for (int i = 0; i < M; ++i) {
    std::fill(acc.begin(), acc.end(), 0.0);
    for (int k = 0; k < K; ++k) {
      const double a = tf32_of(A[std::size_t(i) * lda + k]);
      for (int j = 0; j < N; ++j) acc[j] += a * tf32_of(B[std::size_t(k) * ldb + j]);
    }
    for (int j = 0; j < N; ++j) C[std::size_t(i) * N + j] = float(acc[j]);
  }
  return C;
}

// The split steps: 14, and 15 to 17 where the build has Hopper's steps.
constexpr gm::Variant kSplitVariants[] = {gm::Variant::split_tf32,
#if defined(SMEM_GEMM_SM90A)
                                          gm::Variant::split_wgmma, gm::Variant::split_presplit,
                                          gm::Variant::split_tuned
#endif
};

// A rows x cols matrix of leading dimension ld copied with its rows a multiple of 4 floats apart.
std::vector<float> rows_of_4(const std::vector<float>& X, int rows, int cols, int ld, int& ld4) {
  ld4 = (ld + 3) / 4 * 4;
  std::vector<float> Y(std::size_t(rows) * ld4, 0.0f);
  for (int r = 0; r < rows; ++r)
    for (int c = 0; c < cols; ++c) Y[std::size_t(r) * ld4 + c] = X[std::size_t(r) * ld + c];
  return Y;
}

// Runs split step v on host matrices (C0 uploaded first); returns C. Steps 15 to 17 get A and B
// with rows a multiple of 16 bytes apart, so that their TMA kernels run (step 14 runs for any
// other rows).
std::vector<float> run_split(gm::Variant v, int M, int N, int K, float alpha, const std::vector<float>& A, int lda,
                             const std::vector<float>& B, int ldb, float beta, const std::vector<float>& C0, int ldc) {
  const bool tma = v != gm::Variant::split_tf32;
  int lda4 = lda, ldb4 = ldb;
  DeviceBuffer<float> dA(tma ? rows_of_4(A, M, K, lda, lda4) : A), dB(tma ? rows_of_4(B, K, N, ldb, ldb4) : B), dC(C0);
  REQUIRE(gm::run(v, M, N, K, alpha, dA.get(), lda4, dB.get(), ldb4, beta, dC.get(), ldc) == cudaSuccess);
  SMEM_CUDA_CHECK(cudaDeviceSynchronize());
  return dC.download();
}

// The elements of got (rows of n) whose bits differ from those of want; the first 8 reported.
int bit_differences(const std::vector<float>& want, const std::vector<float>& got, int n) {
  int wrong = 0;
  for (std::size_t x = 0; x < want.size(); ++x)
    if (std::memcmp(&want[x], &got[x], sizeof(float)) != 0 && wrong++ < 8)
      MESSAGE("element " << x / n << ", " << x % n << ": " << got[x] << ", expected " << want[x]);
  return wrong;
}

}  // namespace

TEST_SUITE("gpu") {
  TEST_CASE("the float64 GPU reference agrees with the CPU reference") {
    for (auto s : {Shape{7, 13, 3, plus_one}, Shape{33, 65, 17, round4}, Shape{129, 127, 131, dense},
                   Shape{64, 300, 257, plus_one}})
      for (auto ab : kScalars) {
        CAPTURE(s.M);
        CAPTURE(s.N);
        CAPTURE(s.K);
        CAPTURE(ab.beta);
        Problem p(s, ab, 7u * s.M + s.K);
        DeviceBuffer<float> c0(p.C0);
        DeviceBuffer<double> r(std::size_t(p.M) * p.N), sc(std::size_t(p.M) * p.N);
        SMEM_CUDA_CHECK(smem::test::gemm_reference_gpu(p.M, p.N, p.K, p.alpha, p.dA.get(), p.lda, p.dB.get(),
                                                       p.ldb, p.beta, c0.get(), p.ldc, r.get(), sc.get()));
        SMEM_CUDA_CHECK(cudaDeviceSynchronize());
        CHECK(smem::test::relative_error(r.download(), p.R) < 1e-12);
        CHECK(smem::test::relative_error(sc.download(), p.S) < 1e-12);
      }
  }

  TEST_CASE("every variant, every shape, every (alpha, beta): float64 reference and cuBLAS") {
    // The full run: every shape with every pair; SMEM_SMALL: the small shapes, one pair each.
    std::vector<std::pair<Shape, Scalars>> runs;
    if (smem::test::small_shapes_only())
      for (std::size_t i = 0; i < std::size(kSmallShapes); ++i) runs.push_back({kSmallShapes[i], kScalars[i % 3]});
    else
      for (auto s : kShapes)
        for (auto ab : kScalars) runs.push_back({s, ab});
    for (const auto& run : runs) {
      const Shape s = run.first;
      const Scalars ab = run.second;
      CAPTURE(s.M);
      CAPTURE(s.N);
      CAPTURE(s.K);
      CAPTURE(ab.alpha);
      CAPTURE(ab.beta);
      Problem p(s, ab, (std::uint64_t(s.M) << 40) ^ (std::uint64_t(s.N) << 20) ^ s.K ^ std::uint64_t(ab.beta * 8));
      CAPTURE(p.lda);
      CAPTURE(p.ldc);
      const double bound = error_bound(p.K);

      // cuBLAS on the same inputs: itself within the bound, and the variants within twice the
      // bound of it.
      p.reset_c();
      REQUIRE(cublas_sgemm(p.M, p.N, p.K, p.alpha, p.dA.get(), p.lda, p.dB.get(), p.ldb, p.beta, p.dC.get(),
                           p.ldc) == CUBLAS_STATUS_SUCCESS);
      const auto blas = p.dC.download();
      CHECK(scaled_error(blas, p.ldc, p.R, p.S, p.M, p.N) <= bound);
      std::vector<double> blas_d(std::size_t(p.M) * p.N);
      for (int i = 0; i < p.M; ++i)
        for (int j = 0; j < p.N; ++j) blas_d[std::size_t(i) * p.N + j] = blas[std::size_t(i) * p.ldc + j];

      for (auto v : gm::kAllVariants) {
        CAPTURE(gm::name(v));
        p.reset_c();
        const cudaError_t e = gm::run(v, p.M, p.N, p.K, p.alpha, p.dA.get(), p.lda, p.dB.get(), p.ldb, p.beta,
                                      p.dC.get(), p.ldc);
        SMEM_CUDA_CHECK(cudaDeviceSynchronize());
        const auto got = p.dC.download();
        // A stated precondition (the full-K strip's K limit): a null plan, rejected, C untouched.
        if (gm::plan(v, p.M, p.N, p.K, p.dA.get(), p.lda, p.dB.get(), p.ldb, p.dC.get(), p.ldc).kernel == nullptr) {
          CHECK(e == cudaErrorInvalidValue);
          CHECK(smem::test::first_bit_mismatch(got, p.C0) == -1);
          continue;
        }
        REQUIRE(e == cudaSuccess);
        const double err = scaled_error(got, p.ldc, p.R, p.S, p.M, p.N);
        CAPTURE(err);
        CAPTURE(bound);
        CHECK(err <= bound);
        CHECK(scaled_error(got, p.ldc, blas_d, p.S, p.M, p.N) <= 2 * bound);
        CHECK(padding_untouched(got, p.C0, p.M, p.N, p.ldc));
      }
    }
  }

  TEST_CASE("every variant: misaligned matrices (scalar paths) and a non-default stream") {
    const int M = 257, N = 129, K = 67, lda = 69, ldb = 131, ldc = 133;
    auto g = smem::test::rng(99);
    const auto A = smem::test::random_vector<float>(std::size_t(M) * lda + 1, g);
    const auto B = smem::test::random_vector<float>(std::size_t(K) * ldb + 1, g);
    const auto C0 = smem::test::random_vector<float>(std::size_t(M) * ldc + 1, g);
    std::vector<float> a(A.begin() + 1, A.end()), b(B.begin() + 1, B.end()), c0(C0.begin() + 1, C0.end());
    std::vector<double> R, S;
    smem::test::gemm_reference_cpu(M, N, K, 0.75f, a, lda, b, ldb, -0.5f, c0, ldc, R, S);
    DeviceBuffer<float> dA(A), dB(B), dC(C0.size());
    cudaStream_t stream;
    SMEM_CUDA_CHECK(cudaStreamCreate(&stream));
    for (auto v : gm::kAllVariants) {
      CAPTURE(gm::name(v));
      dC.upload(C0);
      REQUIRE(gm::run(v, M, N, K, 0.75f, dA.get() + 1, lda, dB.get() + 1, ldb, -0.5f, dC.get() + 1, ldc, stream) ==
              cudaSuccess);
      SMEM_CUDA_CHECK(cudaStreamSynchronize(stream));
      const auto all = dC.download();
      CHECK(std::memcmp(&all[0], &C0[0], sizeof(float)) == 0);  // the word before C
      const std::vector<float> got(all.begin() + 1, all.end());
      CHECK(scaled_error(got, ldc, R, S, M, N) <= error_bound(K));
      CHECK(padding_untouched(got, c0, M, N, ldc));
    }
    SMEM_CUDA_CHECK(cudaStreamDestroy(stream));
  }

  TEST_CASE("K == 0 and alpha == 0 give C = beta C; beta == 0 never reads C") {
    const int M = 33, N = 65, K = 17, ldc = 68;
    auto g = smem::test::rng(5);
    const auto C0 = smem::test::random_vector<float>(std::size_t(M) * ldc, g);
    const auto A = smem::test::random_vector<float>(std::size_t(M) * K, g);
    const auto B = smem::test::random_vector<float>(std::size_t(K) * N, g);
    DeviceBuffer<float> dA(A), dB(B), dC(C0.size());
    for (auto v : gm::kAllVariants) {
      CAPTURE(gm::name(v));
      for (int k : {0, K}) {
        CAPTURE(k);
        const float alpha = k == 0 ? 1.0f : 0.0f;
        dC.upload(C0);
        REQUIRE(gm::run(v, M, N, k, alpha, dA.get(), K, dB.get(), N, 2.0f, dC.get(), ldc) == cudaSuccess);
        auto got = dC.download();
        for (int i = 0; i < M; ++i)
          for (int j = 0; j < ldc; ++j) {
            const std::size_t x = std::size_t(i) * ldc + j;
            REQUIRE(got[x] == (j < N ? 2.0f * C0[x] : C0[x]));
          }
        dC.poison();  // NaN everywhere
        REQUIRE(gm::run(v, M, N, k, alpha, dA.get(), K, dB.get(), N, 0.0f, dC.get(), ldc) == cudaSuccess);
        got = dC.download();
        for (int i = 0; i < M; ++i)
          for (int j = 0; j < N; ++j) REQUIRE(got[std::size_t(i) * ldc + j] == 0.0f);
        CHECK(std::isnan(got[N]));  // padding untouched
      }
    }
    SMEM_CUDA_CHECK(cudaDeviceSynchronize());
  }

  TEST_CASE("every variant on 1000 x 999 x 1001 with odd leading dimensions, alpha and beta") {
    // Pads that make every leading dimension odd (the scalar and 4-byte copy paths) on a shape with
    // many tiles. Not under SMEM_SMALL: kSmallShapes has the odd leading dimensions.
    if (smem::test::small_shapes_only()) return;
    struct Case {
      int M, N, K, pad;
      float alpha, beta;
    };
    const Case cases[] = {{1000, 999, 1001, 1, -0.75f, 2.0f}, {1000, 999, 1001, 3, 1.0f, 0.0f}};
    for (const auto& c : cases) {
      INFO(c.M << "x" << c.N << "x" << c.K << " ld pad " << c.pad << " alpha " << c.alpha << " beta " << c.beta);
      const int lda = c.K + c.pad, ldb = c.N + c.pad, ldc = c.N + c.pad;
      auto rng = smem::test::rng(std::uint64_t(c.M) * 7919 + c.K * 31 + c.pad);
      const auto A = smem::test::random_vector<float>(std::size_t(c.M) * lda, rng);
      const auto B = smem::test::random_vector<float>(std::size_t(c.K) * ldb, rng);
      std::vector<float> C0 = smem::test::random_vector<float>(std::size_t(c.M) * ldc, rng);
      if (c.beta == 0.0f) std::memset(C0.data(), 0xFF, C0.size() * sizeof(float));  // NaN must not leak
      std::vector<double> R, S;
      smem::test::gemm_reference_cpu(c.M, c.N, c.K, c.alpha, A, lda, B, ldb, c.beta, C0, ldc, R, S);
      DeviceBuffer<float> dA(A), dB(B), dC(C0.size());
      for (auto v : gm::kAllVariants) {
        CAPTURE(gm::name(v));
        dC.upload(C0);
        REQUIRE(gm::run(v, c.M, c.N, c.K, c.alpha, dA.get(), lda, dB.get(), ldb, c.beta, dC.get(), ldc) ==
                cudaSuccess);
        SMEM_CUDA_CHECK(cudaDeviceSynchronize());
        const auto got = dC.download();
        CHECK(scaled_error(got, ldc, R, S, c.M, c.N) <= error_bound(c.K));
        CHECK(padding_untouched(got, C0, c.M, c.N, ldc));
      }
    }
  }

  TEST_CASE("M = 2^21, N = K = 8 and N = 2^21, M = K = 8: more tiles than a grid's y dimension holds") {
    if (smem::test::small_shapes_only()) return;
    for (bool tall : {true, false}) {
      const int M = tall ? 1 << 21 : 8, N = tall ? 8 : 1 << 21, K = 8;
      CAPTURE(M);
      CAPTURE(N);
      auto g = smem::test::rng(std::uint64_t(M) + 3);
      const auto A = smem::test::random_vector<float>(std::size_t(M) * K, g);
      const auto B = smem::test::random_vector<float>(std::size_t(K) * N, g);
      DeviceBuffer<float> dA(A), dB(B), dC(std::size_t(M) * N);
      for (auto v : gm::kAllVariants) {
        CAPTURE(gm::name(v));
        dC.poison();
        REQUIRE(gm::run(v, M, N, K, 1.0f, dA.get(), K, dB.get(), N, 0.0f, dC.get(), N) == cudaSuccess);
        SMEM_CUDA_CHECK(cudaDeviceSynchronize());
        const auto C = dC.download();
        bool all_written = true;  // no NaN of the poison left
        for (float x : C) all_written = all_written && !std::isnan(x);
        CHECK(all_written);
        // Rows (of a tall C) or columns (of a wide one) 4099 apart, and the last, against float64.
        double worst = 0;
        const int steps = 1 << 21;
        for (int s = 0; s < steps; s = s + 4099 < steps || s == steps - 1 ? s + 4099 : steps - 1) {
          const int i0 = tall ? s : 0, i1 = tall ? s + 1 : M, j0 = tall ? 0 : s, j1 = tall ? N : s + 1;
          for (int i = i0; i < i1; ++i)
            for (int j = j0; j < j1; ++j) {
              double r = 0, m = 0;
              for (int k = 0; k < K; ++k) {
                const double p = double(A[std::size_t(i) * K + k]) * B[std::size_t(k) * N + j];
                r += p, m += std::fabs(p);
              }
              worst = std::max(worst, std::fabs(C[std::size_t(i) * N + j] - r) / (m + 1e-30));
            }
        }
        CHECK(worst <= 16 * FLT_EPSILON);
      }
    }
  }

  TEST_CASE("every variant's plan: a kernel the device runs, and a grid") {
    const int M = 1000, N = 999, K = 1024;
    DeviceBuffer<float> A(std::size_t(M) * K), B(std::size_t(K) * N), C(std::size_t(M) * N);
    for (auto v : gm::kAllVariants) {
      CAPTURE(gm::name(v));
      const auto p = gm::plan(v, M, N, K, A.get(), K, B.get(), N, C.get(), N);
      REQUIRE(p.kernel != nullptr);
      smem::test::KernelAttributes at;
      REQUIRE(smem::test::kernel_attributes(p, &at) == cudaSuccess);
      CHECK(at.registers > 0);
      CHECK(at.threads > 0);
      CHECK(at.blocks_per_sm >= 1);
      CHECK(at.grid_blocks >= 1);
    }
  }

  TEST_CASE("split_tail: a part-filled last wave is split along K, whole waves are not") {
    // The autotuned shape's block slots on this GPU decide where the last wave ends.
    DeviceBuffer<float> A(1), B(1), C(1);
    int split = 0;
    for (int m = 64; m <= 8192; m += 448) {
      const int n = 2048, k = 1024;
      CAPTURE(m);
      const auto tuned = gm::plan(gm::Variant::autotuned, m, n, k, A.get(), k, B.get(), n, C.get(), n);
      const auto p = gm::split_tail_plan(m, n, k, A.get(), k, B.get(), n, C.get(), n);
      REQUIRE(p.erased().kernel != nullptr);
      if (p.tail.parts == 1) {  // autotuned's launch exactly
        CHECK(p.erased().kernel == tuned.kernel);
        CHECK(p.plan.grid.x == tuned.grid.x);
        continue;
      }
      ++split;
      CHECK(p.tail.parts >= 2);
      CHECK(p.tail.rows >= 1);
      CHECK(p.tail.first_row < m);
      CHECK(p.plan.grid.x > tuned.grid.x);
    }
    CHECK(split > 0);  // some of these heights end in a part-filled wave on any GPU
  }

  TEST_CASE("split_tail on a grid it splits: float64 reference, C scaled once, padding untouched") {
    // The first height whose grid this GPU splits: thousands of rows, too many for the sanitizers
    // (SMEM_SMALL), which run the split kernel on a small grid split by hand instead (below).
    if (smem::test::small_shapes_only()) return;
    DeviceBuffer<float> probe(1);
    const int n = 1000, k = 256;
    int m = 0;
    for (int h = 200; h <= 20000 && m == 0; h += 100)
      if (gm::split_tail_plan(h, n, k, probe.get(), k, probe.get(), n + 1, probe.get(), n + 1).tail.parts > 1) m = h;
    REQUIRE(m > 0);
    CAPTURE(m);
    for (auto ab : kScalars) {
      CAPTURE(ab.beta);
      Problem p(Shape{m, n, k, plus_one}, ab, 977u * m + std::uint64_t(ab.beta * 8));
      p.reset_c();
      REQUIRE(gm::split_tail(p.M, p.N, p.K, p.alpha, p.dA.get(), p.lda, p.dB.get(), p.ldb, p.beta, p.dC.get(),
                             p.ldc) == cudaSuccess);
      SMEM_CUDA_CHECK(cudaDeviceSynchronize());
      const auto got = p.dC.download();
      CHECK(scaled_error(got, p.ldc, p.R, p.S, p.M, p.N) <= error_bound(p.K));
      CHECK(padding_untouched(got, p.C0, p.M, p.N, p.ldc));
    }
  }

  TEST_CASE("step 12's kernel with each of step 13's heuristic and table shapes: 3 or 4 stages, K-tiles of 16, 32") {
    // Which shape step 13 picks depends on the GPU and the size; these run each one, the table's
    // entries of every GPU included (./cookbook tune gemm runs this on the entries it wrote), on a
    // shape with interior and edge blocks, a partial last K-tile and a ring that wraps, and on one
    // whose K is a whole number of K-tiles (the compile-time interior loop), scalar B and C.
    const std::pair<Shape, Scalars> runs[] = {{{130, 260, 200, round4}, {0.5f, 2.0f}},
                                              {{129, 257, 64, plus_one}, {1.0f, 0.0f}}};
    using Launch = cudaError_t (*)(int, int, int, float, const float*, int, const float*, int, float, float*, int,
                                   cudaStream_t);
    const std::pair<const char*, Launch> shapes[] = {{"HeuristicLarge", gm::multistage_with<gm::HeuristicLarge>},
                                                     {"HeuristicMedium", gm::multistage_with<gm::HeuristicMedium>},
                                                     {"HeuristicSmall", gm::multistage_with<gm::HeuristicSmall>},
#define SMEM_SGEMM_TUNED_CASE(CC, SMS, SMEM, REGS, MAX_MN, BM, BN, BK, WM, WN, TM, TN, S) \
  {"table " #BM "x" #BN "x" #BK "/" #WM "x" #WN "/" #TM "x" #TN "/" #S,                 \
   gm::multistage_with<gm::MultistageShape<BM, BN, BK, WM, WN, TM, TN, S>>},
                                                     SMEM_SGEMM_TUNED_TABLE(SMEM_SGEMM_TUNED_CASE)
#undef SMEM_SGEMM_TUNED_CASE
    };
    for (const auto& run : runs) {
      const Shape s = run.first;
      CAPTURE(s.K);
      Problem p(s, run.second, 31u * s.K + s.ld);
      for (const auto& shape : shapes) {
        CAPTURE(shape.first);
        p.reset_c();
        REQUIRE(shape.second(p.M, p.N, p.K, p.alpha, p.dA.get(), p.lda, p.dB.get(), p.ldb, p.beta, p.dC.get(), p.ldc,
                             nullptr) == cudaSuccess);
        SMEM_CUDA_CHECK(cudaDeviceSynchronize());
        const auto got = p.dC.download();
        CHECK(scaled_error(got, p.ldc, p.R, p.S, p.M, p.N) <= error_bound(p.K));
        CHECK(padding_untouched(got, p.C0, p.M, p.N, p.ldc));
      }
    }
  }

  TEST_CASE("step 12's kernel with a tail split by hand: atomics into C scaled once, short K ranges") {
    // 200 x 130 in 64 x 128 tiles (HeuristicMedium, 4 stages): tile rows 0 and 1 whole, rows 2
    // and 3 each split into 3 parts of the 7 K-tiles (2, 2 and 3: fewer than the 3 the prologue
    // fills). beta != 1 scales C first, beta == 1 does not, beta == 0 overwrites the NaN in C.
    using T = gm::HeuristicMedium;
    const gm::TailSplit tail{2, 3, 2 * T::kBM};
    const std::pair<Ld, Scalars> runs[] = {{plus_one, {0.5f, 2.0f}}, {round4, {-1.0f, 1.0f}}, {dense, {1.0f, 0.0f}}};
    for (const auto& run : runs) {
      CAPTURE(run.first);
      CAPTURE(run.second.beta);
      Problem p(Shape{200, 130, 100, run.first}, run.second, 7u + run.first);
      const auto plan = gm::multistage_plan_with<T>(p.M, p.N, p.dB.get(), p.ldb, tail);
      REQUIRE(plan.erased().kernel != nullptr);
      CHECK(plan.plan.grid.x == (4 - 2 + 2 * 3) * 2);
      p.reset_c();
      REQUIRE(gm::launch_multistage(plan, p.M, p.N, p.K, p.alpha, p.dA.get(), p.lda, p.dB.get(), p.ldb, p.beta,
                                    p.dC.get(), p.ldc, nullptr) == cudaSuccess);
      SMEM_CUDA_CHECK(cudaDeviceSynchronize());
      const auto got = p.dC.download();
      CHECK(scaled_error(got, p.ldc, p.R, p.S, p.M, p.N) <= error_bound(p.K));
      CHECK(padding_untouched(got, p.C0, p.M, p.N, p.ldc));
    }
  }

  TEST_CASE("split_tf32's split: hi is x rounded to TF32, the tensor core reads lo's TF32 truncation, x is held") {
    // Random finite bit patterns (every exponent, subnormals included) and the edges: the normal
    // and the subnormal limits, ties, the largest x whose hi is finite; the x from 0x7f7ff000 on,
    // whose hi is infinite, on their own below.
    auto g = smem::test::rng(140);
    std::vector<float> x = {0.0f, -0.0f, 1.0f, -1.0f, 1.0f + 0x1p-11f, 1.0f + 0x1p-12f + 0x1p-23f,
                            float_of(0x7f7fefffu), float_of(0xff7fefffu), float_of(0x7f7fe000u), FLT_MIN, -FLT_MIN,
                            0x1p-124f, 0x1p-125f * 1.75f, float_of(1u), float_of(0x80000001u), float_of(0x1000u),
                            float_of(0x1fffu), float_of(0x007fffffu), float_of(0x00400001u)};
    std::uniform_int_distribution<std::uint32_t> any;
    while (x.size() < (1u << 16)) {
      const std::uint32_t u = any(g);
      if ((u & 0x7fffffffu) < 0x7f7ff000u) x.push_back(float_of(u));
    }
    const int n = int(x.size());
    DeviceBuffer<float> dx(x), hr(x.size()), lr(x.size());
    DeviceBuffer<unsigned> hi(x.size()), lo(x.size());
    split_kernel<<<n / 128 / 4, 128>>>(dx.get(), hi.get(), lo.get(), hr.get(), lr.get(), n);
    SMEM_CUDA_CHECK(cudaGetLastError());
    const auto h = hi.download(), l = lo.download();
    const auto h_read = hr.download(), l_read = lr.download();
    int wrong = 0;
    for (int i = 0; i < n; ++i) {
      // hi: TF32, read as it is; lo: read as its 13 low bits cleared (values: a -0 reads as +0);
      // together within max(2^-22 |x|, 2^-146) of x.
      const double v = x[i], sum = double(h_read[i]) + double(l_read[i]) / gm::kLoScale;
      const double bound = std::fmax(std::ldexp(std::fabs(v), -22), 0x1p-146);
      const bool ok = (h[i] & 0x1fffu) == 0 && std::isfinite(float_of(h[i])) && h_read[i] == float_of(h[i]) &&
                      l_read[i] == float_of(l[i] & 0xffffe000u) && std::fabs(sum - v) < bound;
      if (!ok && wrong++ < 8)
        MESSAGE("x = " << x[i] << " (bits " << bits_of(x[i]) << "): hi " << float_of(h[i]) << " read "
                       << h_read[i] << ", lo bits " << l[i] << " read " << l_read[i]);
    }
    CHECK(wrong == 0);
    // From 0x7f7ff000 on (inf too) hi is infinite, and a NaN stays NaN: C's element is then not
    // finite, and store_split computes it again in fp32 (the tests below).
    std::vector<float> top = {float_of(0x7f7ff000u), float_of(0xff7ff000u), FLT_MAX, -FLT_MAX,
                              INFINITY,              -INFINITY,             NAN};
    top.resize(128, 0.0f);
    DeviceBuffer<float> dt(top), thr(top.size()), tlr(top.size());
    DeviceBuffer<unsigned> th(top.size()), tl(top.size());
    split_kernel<<<1, 32>>>(dt.get(), th.get(), tl.get(), thr.get(), tlr.get(), int(top.size()));
    SMEM_CUDA_CHECK(cudaGetLastError());
    const auto t = th.download();
    for (int i = 0; i < 6; ++i) CHECK(float_of(t[i]) == (top[i] > 0 ? INFINITY : -INFINITY));
    CHECK(std::isnan(float_of(t[6])));
  }

  TEST_CASE("every split step: infinities and NaN give what fp32 gives, inf * TF32-exact or tiny b included") {
    for (const gm::Variant v : kSplitVariants) {
      CAPTURE(gm::name(v));
    // Row kx of B holds TF32-exact values (b_lo = 0: an infinite a_hi times b_lo is inf * 0 in the
    // small products), one of them 0 (inf * 0 = NaN in fp32 too); row kt of B holds subnormals
    // whose hi is 0 in some columns (inf times them is inf in fp32). Expected: the float64
    // reference, whose infinities and NaN follow the same rules.
    const int M = 40, N = 36, K = 29, kx = 13, kt = 20;
    auto g = smem::test::rng(141);
    auto A = smem::test::random_vector<float>(std::size_t(M) * K, g);
    auto B = smem::test::random_vector<float>(std::size_t(K) * N, g);
    const auto C0 = smem::test::random_vector<float>(std::size_t(M) * N, g);
    for (int j = 0; j < N; ++j) B[std::size_t(kx) * N + j] = float(j % 9 - 4) * 0.5f;  // j = 4, 13, ...: 0
    const float inf = INFINITY, nan = NAN;
    A[1 * K + kx] = inf;                       // row 1: +-inf, NaN where b = 0
    A[2 * K + 3] = -inf;                       // row 2: +-inf (b not TF32-exact)
    A[3 * K + 5] = inf, A[3 * K + 6] = -inf;   // row 3: inf - inf or one sign, as the b's signs say
    A[4 * K + 7] = nan;                        // row 4: NaN
    A[5 * K + kx] = -inf, A[5 * K + 8] = -inf;  // row 5: -inf b_kx - inf b_8
    B[9 * N + 10] = inf;                       // column 10: +-inf (with rows 1 and 2: inf * inf)
    B[11 * N + 12] = nan;                      // column 12: NaN
    for (int j = 0; j < N; j += 5) B[std::size_t(kt) * N + j] = float_of((j % 2 ? 0x80000000u : 0u) | (3u + j));
    A[6 * K + kt] = inf;                       // row 6: +-inf times 3 to 38 2^-149 in columns 0, 5, ...
    for (float beta : {0.0f, 0.5f}) {
      CAPTURE(beta);
      std::vector<double> R, S;
      smem::test::gemm_reference_cpu(M, N, K, 1.0f, A, K, B, N, beta, C0, N, R, S);
      const auto got = run_split(v, M, N, K, 1.0f, A, K, B, N, beta, C0, N);
      int wrong = 0, specials = 0;
      for (std::size_t x = 0; x < R.size(); ++x) {
        const bool ok = std::isnan(R[x])   ? std::isnan(got[x])
                        : std::isinf(R[x]) ? double(got[x]) == R[x]
                                           : std::fabs(got[x] - R[x]) <= 8 * (K + 2) * FLT_EPSILON * S[x];
        specials += !std::isfinite(R[x]);
        if (!ok && wrong++ < 8)
          MESSAGE("element " << x / N << ", " << x % N << ": " << got[x] << ", expected " << R[x]);
      }
      CHECK(wrong == 0);
      CHECK(specials >= 2 * N + M);  // the rows and columns above do hold infinities and NaN
    }
    }
  }

#if defined(SMEM_GEMM_SM90A)
  TEST_CASE("step 16 gives step 15's C bit for bit, A and B at any alignment and leading dimension") {
    // The same products and sums from A split once into planes and B, whose rows TMA cannot read,
    // copied to rows it can: equal to step 15's C (which gets A and B with 16-byte rows) element
    // for element, for odd shapes, K not a multiple of 4, and A's and B's rows at odd leading
    // dimensions and one float off 16 bytes.
    auto g = smem::test::rng(161);
    for (const std::array<int, 3>& shape : {std::array<int, 3>{1, 1, 1}, {37, 131, 45}, {130, 129, 257},
                                            {256, 384, 1000}}) {
      const int M = shape[0], N = shape[1], K = shape[2];
      CAPTURE(M);
      CAPTURE(N);
      CAPTURE(K);
      const int lda = K + 3, ldb = N + 1;
      const auto A = smem::test::random_vector<float>(std::size_t(M) * lda, g);
      const auto B = smem::test::random_vector<float>(std::size_t(K) * ldb, g);
      const auto C0 = smem::test::random_vector<float>(std::size_t(M) * N, g);
      const auto c15 = run_split(gm::Variant::split_wgmma, M, N, K, 1.5f, A, lda, B, ldb, 0.5f, C0, N);
      std::vector<float> A1(A.size() + 1), B1(B.size() + 1);  // one float after a 16-byte boundary
      std::copy(A.begin(), A.end(), A1.begin() + 1);
      std::copy(B.begin(), B.end(), B1.begin() + 1);
      DeviceBuffer<float> dA(A1), dB(B1), dC(C0);
      REQUIRE(gm::run(gm::Variant::split_presplit, M, N, K, 1.5f, dA.get() + 1, lda, dB.get() + 1, ldb, 0.5f,
                      dC.get(), N) == cudaSuccess);
      SMEM_CUDA_CHECK(cudaDeviceSynchronize());
      CHECK(bit_differences(c15, dC.download(), N) == 0);
    }
  }

  TEST_CASE("step 17: the rule's shapes and every table entry give step 15's C bit for bit") {
    // Step 16's launcher in each shape step 17 may pick (./cookbook tune gemm gemm_tune_split runs
    // this on the entries it wrote): the tile height, ring depth and group height change where and
    // when a block multiplies, not what it sums. Shapes with part-filled 64- and 128-row tiles, K
    // not a multiple of 4 and more K-tiles than the deepest ring has stages.
    using Launch = cudaError_t (*)(int, int, int, float, const float*, int, const float*, int, float, float*, int,
                                   cudaStream_t);
    const std::pair<const char*, Launch> shapes[] = {
        {"PresplitShape", gm::split_presplit_with<gm::PresplitShape>},
        {"NarrowPresplitShape", gm::split_presplit_with<gm::NarrowPresplitShape>},
#define SMEM_GEMM_SPLIT_TUNED_CASE(CC, SMS, SMEM, REGS, MAX_MN, BM, STAGES, GROUP) \
  {"table " #BM "_" #STAGES "_" #GROUP, gm::split_presplit_with<gm::PresplitShapeOf<BM, STAGES, GROUP>>},
        SMEM_GEMM_SPLIT_TUNED_TABLE(SMEM_GEMM_SPLIT_TUNED_CASE)
#undef SMEM_GEMM_SPLIT_TUNED_CASE
    };
    auto g = smem::test::rng(171);
    for (const std::array<int, 3>& shape : {std::array<int, 3>{37, 131, 45}, {200, 129, 257}, {1100, 300, 333}}) {
      const int M = shape[0], N = shape[1], K = shape[2];
      CAPTURE(M);
      CAPTURE(N);
      CAPTURE(K);
      const int ld = (K + 3) / 4 * 4, ldb = (N + 3) / 4 * 4;
      const auto A = smem::test::random_vector<float>(std::size_t(M) * ld, g);
      const auto B = smem::test::random_vector<float>(std::size_t(K) * ldb, g);
      const auto C0 = smem::test::random_vector<float>(std::size_t(M) * N, g);
      const auto c15 = run_split(gm::Variant::split_wgmma, M, N, K, 1.5f, A, ld, B, ldb, 0.5f, C0, N);
      for (const auto& s : shapes) {
        CAPTURE(s.first);
        DeviceBuffer<float> dA(A), dB(B), dC(C0);
        REQUIRE(s.second(M, N, K, 1.5f, dA.get(), ld, dB.get(), ldb, 0.5f, dC.get(), N, nullptr) == cudaSuccess);
        SMEM_CUDA_CHECK(cudaDeviceSynchronize());
        CHECK(bit_differences(c15, dC.download(), N) == 0);
      }
    }
  }
#endif

  TEST_CASE("every split step: values near FLT_MAX stay finite and accurate") {
    for (const gm::Variant v : kSplitVariants) {
      CAPTURE(gm::name(v));
    // |a| up to FLT_MAX (from 0x7f7ff000 on, hi is infinite: store_split's fp32 path) times
    // |b| <= 1/4 over K = 3: every product, partial sum and result is finite in fp32; then the
    // roles swapped.
    const int M = 19, N = 23, K = 3;
    auto g = smem::test::rng(142);
    std::uniform_real_distribution<float> big(0.5f, 1.0f);
    std::vector<float> X(std::size_t(M) * K);
    std::vector<float> Y = smem::test::random_vector<float>(std::size_t(K) * N, g, -0.25f, 0.25f);
    for (auto& x : X) x = (g() & 1 ? -1.0f : 1.0f) * big(g) * FLT_MAX;
    const float edges[] = {FLT_MAX, -FLT_MAX, float_of(0x7f7ff000u), float_of(0x7f7fefffu), float_of(0xff7ff001u)};
    for (std::size_t i = 0; i < std::size(edges); ++i) X[i * 7] = edges[i];
    Y[0] = 0.25f, Y[1] = -0.125f;  // TF32-exact: b_lo = 0
    for (bool big_a : {true, false}) {
      CAPTURE(big_a);
      // big_a: A = X (M x K), B = Y (K x N); else A = Y^T (N x K), B = X^T (K x M): C is N x M.
      std::vector<float> A = X, B = Y;
      int m = M, n = N;
      if (!big_a) {
        m = N, n = M;
        B.resize(X.size());
        for (int i = 0; i < M; ++i)
          for (int k = 0; k < K; ++k) B[std::size_t(k) * M + i] = X[std::size_t(i) * K + k];
        A.resize(Y.size());
        for (int k = 0; k < K; ++k)
          for (int j = 0; j < N; ++j) A[std::size_t(j) * K + k] = Y[std::size_t(k) * N + j];
      }
      std::vector<float> C0(std::size_t(m) * n, NAN);  // beta = 0: must not leak
      std::vector<double> R, S;
      smem::test::gemm_reference_cpu(m, n, K, 1.0f, A, K, B, n, 0.0f, C0, n, R, S);
      const auto got = run_split(v, m, n, K, 1.0f, A, K, B, n, 0.0f, C0, n);
      int wrong = 0;
      for (std::size_t x = 0; x < R.size(); ++x)
        if (!(std::isfinite(got[x]) && std::fabs(got[x] - R[x]) <= 16 * FLT_EPSILON * S[x]) && wrong++ < 8)
          MESSAGE("element " << x << ": " << got[x] << ", expected " << R[x]);
      CHECK(wrong == 0);
    }
    }
  }

  TEST_CASE("every split step: subnormal inputs are read to within 2^-146, not flushed") {
    for (const gm::Variant v : kSplitVariants) {
      CAPTURE(gm::name(v));
    // Rows of A all subnormal, all just above the normal limit, or uniform(-1, 1); columns of B
    // uniform(-1, 1), large (2^20 to 2^40: subnormal a times b is a normal product) or subnormal.
    // Bound per element: fp32-level on S, plus 2^-146 for each operand read (the split keeps a
    // subnormal to within less than that) and 2^-148 for each product added in the subnormal
    // range. A flush to zero of the subnormal rows or columns exceeds it by far (checked below).
    const int M = 48, N = 45, K = 33;
    auto g = smem::test::rng(143);
    std::uniform_int_distribution<std::uint32_t> mant(1, 0x7fffffu);
    std::uniform_real_distribution<float> unit(1.0f, 2.0f);
    std::uniform_real_distribution<float> pm1(-1.0f, 1.0f);
    std::uniform_int_distribution<int> e_big(20, 40);
    auto sign = [&] { return g() & 1 ? 0x80000000u : 0u; };
    auto pm = [&] { return g() & 1 ? -1.0f : 1.0f; };
    std::vector<float> A(std::size_t(M) * K), B(std::size_t(K) * N);
    for (int i = 0; i < M; ++i)
      for (int k = 0; k < K; ++k)
        A[std::size_t(i) * K + k] = i % 3 == 0   ? float_of(sign() | mant(g))
                                    : i % 3 == 1 ? pm() * std::ldexp(unit(g), -126 + int(g() % 4))
                                                 : pm1(g);
    for (int k = 0; k < K; ++k)
      for (int j = 0; j < N; ++j)
        B[std::size_t(k) * N + j] = j % 3 == 0   ? pm1(g)
                                    : j % 3 == 1 ? pm() * std::ldexp(unit(g), e_big(g))
                                                 : float_of(sign() | mant(g));
    std::vector<float> C0(std::size_t(M) * N, NAN);
    std::vector<double> R, S;
    smem::test::gemm_reference_cpu(M, N, K, 1.0f, A, K, B, N, 0.0f, C0, N, R, S);
    const auto got = run_split(v, M, N, K, 1.0f, A, K, B, N, 0.0f, C0, N);
    int wrong = 0, telling = 0;
    for (int i = 0; i < M; ++i)
      for (int j = 0; j < N; ++j) {
        double reads = 0;
        for (int k = 0; k < K; ++k)
          reads += std::fabs(A[std::size_t(i) * K + k]) + std::fabs(B[std::size_t(k) * N + j]);
        const std::size_t x = std::size_t(i) * N + j;
        const double tol = 8 * (K + 2) * FLT_EPSILON * S[x] + 0x1p-146 * reads + K * 0x1p-148;
        telling += (i % 3 == 0 || j % 3 == 2) && std::fabs(R[x]) > 16 * tol;  // a flush would fail here
        if (!(std::fabs(got[x] - R[x]) <= tol) && wrong++ < 8)
          MESSAGE("element " << i << ", " << j << ": " << got[x] << ", expected " << R[x]);
      }
    CHECK(wrong == 0);
    CHECK(telling > M * N / 8);
    }
  }

  TEST_CASE("every split step: max |c - r| / (sum |a||b|) is fp32-level, 100 times below one TF32 product's") {
    for (const gm::Variant v : kSplitVariants) {
      CAPTURE(gm::name(v));
    // The accuracy measure (max_scaled_error) at small shapes against float64. The split's bound,
    // with u = 2^-24: 16 u (what the split misses of a product: below 2^-22 of each operand and
    // the dropped a_lo b_lo, below 2^-22 of it, 12 u in all) plus K u (an mma rounds, or truncates,
    // its accumulator once per 8 products). One TF32 product per term, even summed exactly, is far
    // above it: the test can fail.
    const double u = 0x1p-24;
    const Shape shapes[] = {{64, 64, 64, dense}, {33, 65, 17, plus_one}, {129, 127, 131, round4}};
    for (const Shape& s : shapes)
      for (auto d : {Spread::uniform, Spread::normal, Spread::exp20}) {
        CAPTURE(s.K);
        CAPTURE(int(d));
        const int lda = ld_for(s.K, s.ld), ldb = ld_for(s.N, s.ld), ldc = ld_for(s.N, s.ld);
        auto g = smem::test::rng(144u * s.K + int(d));
        const auto A = smem::test::spread_vector(std::size_t(s.M) * lda, d, g);
        const auto B = smem::test::spread_vector(std::size_t(s.K) * ldb, d, g);
        std::vector<float> C0(std::size_t(s.M) * ldc, NAN);
        std::vector<double> R, S;
        smem::test::gemm_reference_cpu(s.M, s.N, s.K, 1.0f, A, lda, B, ldb, 0.0f, C0, ldc, R, S);
        const double split = smem::test::max_scaled_error(
            run_split(v, s.M, s.N, s.K, 1.0f, A, lda, B, ldb, 0.0f, C0, ldc), ldc, R, S, s.M, s.N);
        const double tf32 = smem::test::max_scaled_error(tf32_gemm_cpu(s.M, s.N, s.K, A, lda, B, ldb), s.N, R, S,
                                                         s.M, s.N);
        const double bound = (16 + s.K) * u;
        CAPTURE(split / u);
        CAPTURE(tf32 / u);
        CHECK(split <= bound);
        CHECK(tf32 > bound);
        CHECK(tf32 >= 100 * split);
      }
    }
  }

  TEST_CASE("split_tf32's two-stage shape (SplitTf32Compact) gives the default shape's C bit for bit") {
    // The same tiles, spans and order of sums: only the ring's depth differs. K = 300: two whole
    // spans of 128 and one of 44, whose last K-tile is partial; 16-byte and 4-byte copies.
    for (const Shape& s : {Shape{200, 150, 300, dense}, Shape{131, 77, 300, plus_one}}) {
      CAPTURE(s.ld);
      const int lda = ld_for(s.K, s.ld), ldb = ld_for(s.N, s.ld), ldc = ld_for(s.N, s.ld);
      auto g = smem::test::rng(146u + s.N);
      const auto A = smem::test::random_vector<float>(std::size_t(s.M) * lda, g);
      const auto B = smem::test::random_vector<float>(std::size_t(s.K) * ldb, g);
      const auto C0 = smem::test::random_vector<float>(std::size_t(s.M) * ldc, g);
      DeviceBuffer<float> dA(A), dB(B), dC4(C0), dC2(C0);
      REQUIRE(gm::split_tf32_with<gm::SplitTf32Default>(s.M, s.N, s.K, 1.5f, dA.get(), lda, dB.get(), ldb, 0.5f,
                                                        dC4.get(), ldc) == cudaSuccess);
      REQUIRE(gm::split_tf32_with<gm::SplitTf32Compact>(s.M, s.N, s.K, 1.5f, dA.get(), lda, dB.get(), ldb, 0.5f,
                                                        dC2.get(), ldc) == cudaSuccess);
      SMEM_CUDA_CHECK(cudaDeviceSynchronize());
      const auto c4 = dC4.download(), c2 = dC2.download();
      std::vector<double> R, S;
      smem::test::gemm_reference_cpu(s.M, s.N, s.K, 1.5f, A, lda, B, ldb, 0.5f, C0, ldc, R, S);
      CHECK(scaled_error(c4, ldc, R, S, s.M, s.N) <= error_bound(s.K));
      CHECK(bit_differences(c4, c2, ldc) == 0);
    }
  }

  TEST_CASE("the GPU accuracy measure agrees with the CPU's") {
    const int M = 70, N = 90, K = 50, ldc = 93;
    auto g = smem::test::rng(145);
    const auto A = smem::test::random_vector<float>(std::size_t(M) * K, g);
    const auto B = smem::test::random_vector<float>(std::size_t(K) * N, g);
    std::vector<float> C0(std::size_t(M) * ldc, NAN);
    std::vector<double> R, S;
    smem::test::gemm_reference_cpu(M, N, K, 1.0f, A, K, B, N, 0.0f, C0, ldc, R, S);
    auto C = run_split(gm::Variant::split_tf32, M, N, K, 1.0f, A, K, B, N, 0.0f, C0, ldc);
    C[ldc + 3] += 1e-3f;  // one element clearly off: the maximum
    DeviceBuffer<float> dC(C);
    DeviceBuffer<double> dR(R), dS(S);
    DeviceBuffer<unsigned long long> out(std::vector<unsigned long long>{0});
    SMEM_CUDA_CHECK(smem::test::max_scaled_error_gpu(M, N, dC.get(), ldc, dR.get(), dS.get(), out.get()));
    double gpu;
    const unsigned long long bitsd = out.download()[0];
    std::memcpy(&gpu, &bitsd, sizeof gpu);
    const double cpu = smem::test::max_scaled_error(C, ldc, R, S, M, N);
    CHECK(cpu > 1e-5);
    CHECK(gpu == cpu);
  }
}

TEST_SUITE("host") {
  // ldmatrix.x4 gives thread t, in register j, word t % 4 of row t / 4 of matrix j, whose row r is
  // at the address that lane 8 j + r names. Step 14's lanes must so deliver the m16n8k8 TF32 A
  // fragment of the PTX ISA: a[j] at row t / 4 + 8 (j % 2), column t % 4 + 4 (j / 2).
  template <class S>
  void check_split_fragments() {
    int wrong = 0;
    for (int w = 0; w < S::kThreads / 32; ++w)
      for (int kk = 0; kk < S::kBK; kk += 8)
        for (int t = 0; t < 32; ++t)
          for (int j = 0; j < 4; ++j) {
            const int lane = 8 * j + t / 4;  // the lane whose row this word is in
            for (int i = 0; i < S::kMi; ++i) {
              const int m0 = S::warp_m(w) + 16 * i;
              const int got = S::a_offset(m0 + S::ldsm_a_m(lane), kk + S::ldsm_a_k(lane)) + t % 4;
              wrong += got != S::a_offset(m0 + t / 4 + 8 * (j % 2), kk + t % 4 + 4 * (j / 2));
            }
          }
    CHECK(wrong == 0);
  }

  TEST_CASE("split_tf32: the ldmatrix rows deliver the m16n8k8 TF32 A fragments") {
    check_split_fragments<gm::SplitTf32Default>();
    check_split_fragments<gm::SplitShape<128, 128, 32, 64, 32, 3>>();
    check_split_fragments<gm::SplitShape<64, 128, 32, 32, 64, 4>>();
  }

  TEST_CASE("check_args: the BLAS degenerate cases (K == 0, alpha == 0, empty) and adjacency") {
    std::vector<float> buf(1000);
    float *A = buf.data(), *B = A + 100, *C = B + 100;  // A 10x10, B 10x10, C 10x10, adjacent
    CHECK(gm::check_args(10, 10, 10, 1.0f, A, 10, B, 10, C, 10) == gm::Args::launch);
    CHECK(gm::check_args(10, 10, 0, 1.0f, nullptr, 1, nullptr, 10, C, 10) == gm::Args::scale_only);
    CHECK(gm::check_args(10, 10, 10, 0.0f, nullptr, 10, nullptr, 10, C, 10) == gm::Args::scale_only);
    CHECK(gm::check_args(0, 10, 10, 1.0f, nullptr, 10, nullptr, 10, nullptr, 10) == gm::Args::empty);
    CHECK(gm::check_args(10, 10, 10, 1.0f, A, 10, B, 10, C - 1, 10) == gm::Args::invalid);
    // A row-major matrix with ld > width spans (rows - 1) ld + cols: C may start right after.
    CHECK(gm::check_args(10, 10, 10, 1.0f, A, 12, B, 10, A + 9 * 12 + 10, 10) == gm::Args::invalid);  // B overlaps
    CHECK(gm::check_args(2, 2, 2, 1.0f, A, 12, B + 500, 2, A + 12 + 2, 2) == gm::Args::launch);
  }

  TEST_CASE("check_args: a matrix ending past the address space cannot hide an overlap") {
    // A of INT_MAX x INT_MAX (lda INT_MAX) from 2^63 would end past 2^64 (its end wrapped to below
    // its start); C lies inside it. The pointers are addresses, nothing is read.
    const auto at = [](std::uintptr_t a) { return reinterpret_cast<float*>(a); };
    const std::uintptr_t a = std::uintptr_t(1) << 63;
    CHECK(gm::check_args(INT_MAX, 1, INT_MAX, 1.0f, at(a), INT_MAX, at(a >> 20), 1, at(a + (a >> 10)), 1) ==
          gm::Args::invalid);
    CHECK(gm::check_args(INT_MAX, 1, INT_MAX, 1.0f, at(a), INT_MAX, at(a >> 20), 1, at(a >> 10), 1) ==
          gm::Args::launch);
  }

  TEST_CASE("tiles() and tile_blocks() at INT_MAX; step 3's shared memory at INT_MAX") {
    static_assert(gm::tiles(INT_MAX, 32) == 1 << 26, "a constant expression");
    CHECK(gm::tiles(0, 16) == 0);
    CHECK(gm::tiles(1, 16) == 1);
    CHECK(gm::tiles(16, 16) == 1);
    CHECK(gm::tiles(17, 16) == 2);
    CHECK(gm::tiles(INT_MAX - 15, 16) == (1 << 27) - 1);  // 2^31 - 16
    CHECK(gm::tiles(INT_MAX - 14, 16) == 1 << 27);
    CHECK(gm::tiles(INT_MAX, 16) == 1 << 27);  // (INT_MAX + 15) / 16 in int would wrap
    CHECK(gm::tiles(INT_MAX, 256) == 1 << 23);
    CHECK(gm::tiles(INT_MAX, 1) == INT_MAX);
    CHECK(gm::tiles(INT_MAX, INT_MAX) == 1);
    CHECK(gm::tile_blocks(INT_MAX, INT_MAX, 16, 16) == 1LL << 54);
    CHECK(gm::tile_blocks(INT_MAX, 1, 128, 256) == 1LL << 24);
    CHECK(gm::full_k_smem_bytes(INT_MAX) == (16 * (std::size_t(INT_MAX) + 1) + 16 * std::size_t(INT_MAX)) * 4);
    CHECK(gm::full_k_smem_bytes(1815) == 232384);  // Hopper's opt-in 227 KB (232448 B) holds K = 1815
    CHECK(gm::full_k_smem_bytes(1816) > 232448);
  }

  TEST_CASE("every step: the largest grid is planned, one tile row more is refused before any CUDA call") {
    // Each step's block tile BM x BN (step 13: the 64 x 64 that bounds all its shapes). With
    // N = INT_MAX a grid has 2^31 / BN tile columns (BN a power of two), so M = BM (BN - 1) plans
    // 2^31 - 2^31 / BN blocks and M = BM (BN - 1) + 1 asks for 2^31 (1.88 TiB of C and more):
    // refused, no CUDA call made. The same with M and N swapped. The pointers are addresses far
    // apart (A and B up to 8 GiB, C up to 2^48 bytes), nothing is read.
    const auto tile_of = [](gm::Variant v) -> std::pair<int, int> {
      switch (v) {
        case gm::Variant::naive:
        case gm::Variant::coalesced:
        case gm::Variant::tiled_32:
        case gm::Variant::tiled_32_padded:
        case gm::Variant::double_buffered: return {32, 32};
        case gm::Variant::full_k_strip: return {gm::kStrip, gm::kStrip};
        case gm::Variant::tiled_16: return {16, 16};
        case gm::Variant::blocktile_1d: return {gm::Blocktile1d::BM, gm::Blocktile1d::BN};
        case gm::Variant::blocktile_2d: return {gm::Blocktile2d::BM, gm::Blocktile2d::BN};
        case gm::Variant::vectorized: return {gm::Vectorized<128>::BM, gm::Vectorized<128>::BN};
        case gm::Variant::conflict_free: return {gm::ConflictFree::BM, gm::ConflictFree::BN};
        case gm::Variant::warptiled: return {gm::WarptiledShape::kBM, gm::WarptiledShape::kBN};
        case gm::Variant::multistage: return {gm::MultistageDefault::kBM, gm::MultistageDefault::kBN};
        case gm::Variant::heuristic:
        case gm::Variant::autotuned:
        case gm::Variant::split_tail: return {gm::kMinTile, gm::kMinTile};
        case gm::Variant::split_tf32: return {gm::SplitTf32Default::kBM, gm::SplitTf32Default::kBN};
#if defined(SMEM_GEMM_SM90A)
        case gm::Variant::split_wgmma:
        case gm::Variant::split_presplit:
        case gm::Variant::split_tuned: return {gm::SplitWgmmaShape::kBM, gm::SplitWgmmaShape::kBN};
#endif
      }
      return {0, 0};
    };
    const auto at = [](int shift) { return reinterpret_cast<float*>(std::uintptr_t(1) << shift); };
    float *A = at(44), *B = at(45), *C = at(49);
    for (auto v : gm::kAllVariants) {
      CAPTURE(gm::name(v));
      const int BM = tile_of(v).first, BN = tile_of(v).second;
      const bool tuned = v == gm::Variant::heuristic || v == gm::Variant::autotuned || v == gm::Variant::split_tail;
      for (bool wide : {true, false})
        for (int extra : {0, 1}) {
          const int M = wide ? BM * (BN - 1) + extra : INT_MAX, N = wide ? INT_MAX : BN * (BM - 1) + extra;
          CAPTURE(M);
          CAPTURE(N);
          const long long blocks = gm::tile_blocks(M, N, BM, BN);
          REQUIRE(blocks == (extra ? 1LL << 31 : (1LL << 31) - (1LL << 31) / (wide ? BN : BM)));
          const auto p = gm::plan(v, M, N, 1, A, 1, B, N, C, N);
          if (extra == 1) {
            CHECK(p.kernel == nullptr);
            CHECK(gm::run(v, M, N, 1, 1.0f, A, 1, B, N, 0.0f, C, N) == cudaErrorInvalidValue);
          } else if (v != gm::Variant::full_k_strip) {  // its plan asks the device for its K limit
            CHECK(p.kernel != nullptr);
            CHECK((tuned ? p.grid.x <= gm::kMaxGridBlocks : p.grid.x == blocks));
          }
        }
    }
  }
}

TEST_SUITE("large") {
  TEST_CASE("every step at M = INT_MAX (N = K = 4) and at N = INT_MAX (M = K = 4)") {
    // The largest M and N with C and the big operand (A of M x 4, or B of 4 x N) each 32 GiB:
    // N = K = 8 would need 128 GiB. Integer data from SmallIntOfIndex (|values| <= 8, so
    // |A B| <= 256 and C = alpha A B + beta C0 stays exact), C checked whole on the GPU and in
    // samples on the host (first and last rows, around element 2^31, random ones), its guards
    // intact. Buffers filled on the GPU and reused by every step.
    const std::size_t big = 4 * std::size_t(INT_MAX);
    if (!smem::test::device_can_hold(2 * big * sizeof(float))) return;
    auto g = smem::test::rng(44);
    const SmallIntOfIndex fbig{g(), 8}, fsmall{g(), 8}, fc{g(), 8};
    GuardedBuffer<float> X(big), Y(big);  // the big operand, C
    DeviceBuffer<float> small(16);        // the 4 x 4 operand
    smem::test::fill_by_index(X.get(), big, fbig);
    smem::test::fill_by_index(small.get(), 16, fsmall);
    const Scalars scalars[] = {{1.0f, -2.0f}, {-1.0f, 0.0f}};
    for (bool tall : {true, false}) {
      const int M = tall ? INT_MAX : 4, N = tall ? 4 : INT_MAX, K = 4;
      CAPTURE(M);
      CAPTURE(N);
      const float* A = tall ? X.get() : small.get();
      const float* B = tall ? small.get() : X.get();
      const IntMatrix a{tall ? fbig : fsmall, K, A}, b{tall ? fsmall : fbig, N, B};
      for (std::size_t i = 0; i < std::size(gm::kAllVariants); ++i) {
        const gm::Variant v = gm::kAllVariants[i];
        const Scalars ab = scalars[i % 2];
        CAPTURE(gm::name(v));
        CAPTURE(ab.beta);
        smem::test::fill_by_index(Y.get(), big, fc);
        REQUIRE(gm::run(v, M, N, K, ab.alpha, A, K, B, N, ab.beta, Y.get(), N) == cudaSuccess);
        SMEM_CUDA_CHECK(cudaDeviceSynchronize());
        const Expected e{a, b, fc, M, N, K, N, ab.alpha, ab.beta};
        check_on_gpu(Y.get(), big, e);
        CHECK(host_mismatches(Y, e, g) == 0);
        CHECK(Y.guards_intact());
      }
    }
  }

  TEST_CASE("every step with leading dimensions of INT_MAX (scalar paths) and INT_MAX - 3 (float4 paths)") {
    // M = 3, N = 8, K = 4: rows 2 of A and C and row 3 of B start past element 2^32 (an int
    // row * ld wraps), float4 runs along K in A and along N in B and C where the leading
    // dimensions allow them. A, B and C: 2, 3 and 2 rows of 8 GiB, 56 GiB. C's buffer is checked
    // whole: the M x N elements and the padding between and after the rows, and its guards.
    const int M = 3, N = 8, K = 4;
    const std::size_t a_size = 2 * std::size_t(INT_MAX) + K, b_size = 3 * std::size_t(INT_MAX) + N,
                      c_size = 2 * std::size_t(INT_MAX) + N;
    if (!smem::test::device_can_hold((a_size + b_size + c_size) * sizeof(float))) return;
    auto g = smem::test::rng(45);
    const SmallIntOfIndex fa{g(), 8}, fb{g(), 8}, fc{g(), 8};
    GuardedBuffer<float> A(a_size), B(b_size), C(c_size);
    smem::test::fill_by_index(A.get(), a_size, fa);
    smem::test::fill_by_index(B.get(), b_size, fb);
    for (int ld : {INT_MAX, INT_MAX - 3}) {
      CAPTURE(ld);
      for (auto v : gm::kAllVariants) {
        CAPTURE(gm::name(v));
        smem::test::fill_by_index(C.get(), c_size, fc);
        REQUIRE(gm::run(v, M, N, K, -1.0f, A.get(), ld, B.get(), ld, 2.0f, C.get(), ld) == cudaSuccess);
        SMEM_CUDA_CHECK(cudaDeviceSynchronize());
        const Expected e{{fa, ld, A.get()}, {fb, ld, B.get()}, fc, M, N, K, ld, -1.0f, 2.0f};
        check_on_gpu(C.get(), c_size, e);
        CHECK(host_mismatches(C, e, g) == 0);
        CHECK(C.guards_intact());
      }
    }
  }

  TEST_CASE("every step with a long K (2^21 + 3) and M = 3, N = 5") {
    // One tile: a block's K loop alone sets the time (about 2^21 K steps of a 128 x 256 tile for
    // step 12), which is why K is not INT_MAX here: that would take minutes per step. The tile and
    // K-tile counts at INT_MAX are the host suite's (tiles()). Values in [-1, 1]: the exact sums
    // wander like a random walk (about 1000 for 2^21 terms), far from 2^24, so every partial sum
    // in any order is exact in float.
    const int M = 3, N = 5, K = (1 << 21) + 3;
    auto g = smem::test::rng(46);
    const SmallIntOfIndex fa{g(), 1}, fb{g(), 1}, fc{g(), 8};
    DeviceBuffer<float> A(std::size_t(M) * K), B(std::size_t(K) * N);
    smem::test::fill_by_index(A.get(), A.size(), fa);
    smem::test::fill_by_index(B.get(), B.size(), fb);
    DeviceBuffer<unsigned long long> dots(std::vector<unsigned long long>(M * N, 0));
    dots_kernel<<<M * N, 256>>>(IntMatrix{fa, K, A.get()}, IntMatrix{fb, N, B.get()}, N, K, dots.get());
    SMEM_CUDA_CHECK(cudaGetLastError());
    const auto dot = dots.download();
    GuardedBuffer<float> C(std::size_t(M) * N);
    for (auto v : gm::kAllVariants) {
      CAPTURE(gm::name(v));
      smem::test::fill_by_index(C.get(), C.size(), fc);
      const cudaError_t e = gm::run(v, M, N, K, -1.0f, A.get(), K, B.get(), N, 2.0f, C.get(), N);
      SMEM_CUDA_CHECK(cudaDeviceSynchronize());
      const auto got = C.download(0, C.size());
      int wrong = 0;
      if (v == gm::Variant::full_k_strip) {  // K beyond its limit: refused, C untouched
        CHECK(e == cudaErrorInvalidValue);
        for (std::size_t p = 0; p < got.size(); ++p) wrong += got[p] != float(fc(p));
      } else {
        REQUIRE(e == cudaSuccess);
        for (std::size_t p = 0; p < got.size(); ++p)
          wrong += got[p] != -1.0f * float((long long)dot[p]) + 2.0f * float(fc(p));
      }
      CHECK(wrong == 0);
      CHECK(C.guards_intact());
    }
  }

  TEST_CASE("step 3 at its largest K runs, at the next K it is refused with C untouched") {
    const int M = 17, N = 33, K = gm::full_k_max_k();
    REQUIRE(K > 0);
    CAPTURE(K);
    auto g = smem::test::rng(47);
    const SmallIntOfIndex fa{g(), 8}, fb{g(), 8}, fc{g(), 8};  // |A B| <= 64 K: exact
    DeviceBuffer<float> A(std::size_t(M) * (K + 1)), B(std::size_t(K + 1) * N);
    smem::test::fill_by_index(A.get(), A.size(), fa);
    smem::test::fill_by_index(B.get(), B.size(), fb);
    GuardedBuffer<float> C(std::size_t(M) * N);
    smem::test::fill_by_index(C.get(), C.size(), fc);
    REQUIRE(gm::full_k_strip(M, N, K, 1.0f, A.get(), K, B.get(), N, -2.0f, C.get(), N) == cudaSuccess);
    SMEM_CUDA_CHECK(cudaDeviceSynchronize());
    const Expected e{{fa, K, A.get()}, {fb, N, B.get()}, fc, M, N, K, N, 1.0f, -2.0f};
    CHECK(host_mismatches(C, e, g) == 0);
    CHECK(C.guards_intact());
    const auto before = C.download(0, C.size());
    CHECK(gm::full_k_strip_plan(M, N, K + 1, A.get(), K + 1, B.get(), N, C.get(), N).erased().kernel == nullptr);
    CHECK(gm::full_k_strip(M, N, K + 1, 1.0f, A.get(), K + 1, B.get(), N, -2.0f, C.get(), N) ==
          cudaErrorInvalidValue);
    SMEM_CUDA_CHECK(cudaDeviceSynchronize());
    CHECK(smem::test::first_bit_mismatch(C.download(0, C.size()), before) == -1);
    CHECK(C.guards_intact());
  }
}

// SGEMM correctness: every variant on shapes that break naive index math, with leading dimensions
// wider than the matrices, three (alpha, beta) pairs, fresh random data and NaN-poisoned outputs,
// against a float64 reference and cuBLAS; misaligned operands on a non-default stream; the BLAS
// rules for K == 0, alpha == 0 and beta == 0; M or N = 2^21 (more tiles than a grid's y dimension
// holds); every variant's launch plan. (Banks: gemm_bank_test.cu; bad arguments:
// bad_input_test.cu; graph capture: graph_test.cu.)
#include <cublas_v2.h>
#include <doctest/doctest.h>

#include <gemm/gemm.cuh>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstring>
#include <vector>

#include "compare.hpp"
#include "cublas_handle.hpp"
#include "device_buffer.hpp"
#include "gpu.hpp"
#include "gemm_reference.cuh"
#include "kernel_attributes.hpp"
#include "random.hpp"

namespace gm = smem::gemm;
using smem::test::DeviceBuffer;

using smem::test::cublas_handle;

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
    for (auto s : kShapes)
      for (auto ab : kScalars) {
        if (smem::test::small_shapes_only() && double(s.M) * s.N * s.K > double(1 << 24)) continue;
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

  TEST_CASE("every variant on the sanitizer shapes with odd leading dimensions, alpha and beta") {
    // The shapes ./cookbook sanitize runs racecheck and synccheck on, with pads that make every
    // leading dimension odd (the scalar and 4-byte copy paths).
    struct Case {
      int M, N, K, pad;
      float alpha, beta;
    };
    const Case cases[] = {{129, 127, 131, 1, 1.5f, -0.5f}, {1000, 999, 1001, 1, -0.75f, 2.0f},
                          {1000, 999, 1001, 3, 1.0f, 0.0f}};
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
    // The first height whose grid this GPU splits, with K small enough for compute-sanitizer.
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
}

TEST_SUITE("host") {
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
}

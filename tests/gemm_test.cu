// SGEMM: every variant on shapes that break naive index math, with leading dimensions wider than
// the matrices, three (alpha, beta) pairs, fresh random data, against a float64 reference and
// cuBLAS; the degenerate cases; bad arguments; the bank model on the kernels' own index functions.
#include <cublas_v2.h>
#include <doctest/doctest.h>

#include <gemm/gemm.cuh>

#include <cfloat>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "bank_evidence.hpp"
#include "bank_model.hpp"
#include "compare.hpp"
#include "cublas_handle.hpp"
#include "device_buffer.hpp"
#include "gpu.hpp"
#include "gemm_reference.cuh"
#include "random.hpp"

namespace gm = smem::gemm;
using smem::bank::ideal_wavefronts;
using smem::bank::wavefronts_of;
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
                             {1000, 999, 1001, round4}, {2048, 512, 4096, dense}};
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
          if (!gm::supports(v, p.K)) {  // a stated precondition: rejected, C untouched
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

  TEST_CASE("bad arguments on device buffers: cudaErrorInvalidValue, C untouched, no error left") {
    const int M = 40, N = 50, K = 30;
    DeviceBuffer<float> A(M * K), B(K * N), C(M * N), big(4 * M * N);
    C.poison(0x5A);
    big.poison(0x5A);
    for (auto v : gm::kAllVariants) {
      CAPTURE(gm::name(v));
      auto run = [&](int m, int n, int k, const float* a, int lda, const float* b, int ldb, float* c, int ldc) {
        return gm::run(v, m, n, k, 1.0f, a, lda, b, ldb, 0.0f, c, ldc);
      };
      CHECK(run(-1, N, K, A.get(), K, B.get(), N, C.get(), N) == cudaErrorInvalidValue);
      CHECK(run(M, -1, K, A.get(), K, B.get(), N, C.get(), N) == cudaErrorInvalidValue);
      CHECK(run(M, N, -1, A.get(), K, B.get(), N, C.get(), N) == cudaErrorInvalidValue);
      CHECK(run(M, N, K, nullptr, K, B.get(), N, C.get(), N) == cudaErrorInvalidValue);
      CHECK(run(M, N, K, A.get(), K, nullptr, N, C.get(), N) == cudaErrorInvalidValue);
      CHECK(run(M, N, K, A.get(), K, B.get(), N, nullptr, N) == cudaErrorInvalidValue);
      CHECK(run(M, N, K, A.get(), K - 1, B.get(), N, C.get(), N) == cudaErrorInvalidValue);
      CHECK(run(M, N, K, A.get(), K, B.get(), N - 1, C.get(), N) == cudaErrorInvalidValue);
      CHECK(run(M, N, K, A.get(), K, B.get(), N, C.get(), N - 1) == cudaErrorInvalidValue);
      // C overlapping A or B, inside one allocation.
      CHECK(run(M, N, K, big.get(), K, B.get(), N, big.get() + M * K - 1, N) == cudaErrorInvalidValue);
      CHECK(run(M, N, K, A.get(), K, big.get() + M * N - 1, N, big.get(), N) == cudaErrorInvalidValue);
      CHECK(run(M, N, K, big.get(), K, B.get(), N, big.get(), N) == cudaErrorInvalidValue);
      // Empty: a no-op even with null pointers.
      CHECK(run(0, N, K, nullptr, K, nullptr, N, nullptr, N) == cudaSuccess);
      CHECK(run(M, 0, K, nullptr, K, nullptr, 1, nullptr, 1) == cudaSuccess);
    }
    // The full-K strip's own precondition: a K whose strips do not fit the device's limit.
    const int kmax = gm::full_k_max_k();
    REQUIRE(kmax > 0);
    DeviceBuffer<float> a(16 * (kmax + 1)), b((kmax + 1) * 16);
    CHECK(gm::sgemm_full_k_strip(16, 16, kmax + 1, 1.0f, a.get(), kmax + 1, b.get(), 16, 0.0f, C.get(), 16) ==
          cudaErrorInvalidValue);
    SMEM_CUDA_CHECK(cudaDeviceSynchronize());
    CHECK(cudaGetLastError() == cudaSuccess);
    for (const auto& buf : {C.download(), big.download()}) {
      std::vector<unsigned char> bytes(buf.size() * sizeof(float));
      std::memcpy(bytes.data(), buf.data(), bytes.size());
      for (auto x : bytes) REQUIRE(x == 0x5A);
    }
  }

  TEST_CASE("every variant reports its kernel attributes") {
    for (auto v : gm::kAllVariants) {
      CAPTURE(gm::name(v));
      gm::KernelAttributes at;
      REQUIRE(gm::attributes(v, 1024, &at) == cudaSuccess);
      CHECK(at.registers > 0);
      CHECK(at.threads > 0);
      CHECK(at.blocks_per_sm >= 1);
    }
  }
}

namespace {

// The bank model's prediction for each kernel, request by request: every warp of one block, for
// one K-tile (the full K for the strip kernel), as the kernel's code addresses shared memory.
// Where the compiler fuses accesses, the SASS decides what one request is; those fusions are
// named where they happen (cuobjdump -sass shows them).
using smem::bank::Tally;
using smem::test::BankPrediction;

// Lane l of warp w as (tid % width, tid / width): threadIdx.x, threadIdx.y of a 2D block.
struct Thread2D {
  int x, y;
};
Thread2D thread_2d(int w, int l, int width) { return {(32 * w + l) % width, (32 * w + l) / width}; }

template <class F>
int words(F&& word_of_lane, int width) {  // one request; word_of_lane gives the float offset
  return wavefronts_of([&](int l) { return 4LL * word_of_lane(l); }, width);
}

BankPrediction full_k_strip_prediction(int K) {
  BankPrediction p;
  for (int w = 0; w < gm::kStrip * gm::kStrip / 32; ++w) {
    auto t = [&](int l) { return thread_2d(w, l, gm::kStrip); };
    for (int j = 0; j < K / gm::kStrip; ++j) {
      p.st.add(words([&](int l) { return gm::strip_a_offset(K, t(l).y, t(l).x + gm::kStrip * j); }, 4));
      p.st.add(words([&](int l) { return gm::strip_b_offset(K, t(l).y + gm::kStrip * j, t(l).x); }, 4));
    }
    for (int k = 0; k < K; ++k) {
      p.ld.add(words([&](int l) { return gm::strip_a_offset(K, t(l).y, k); }, 4));
      p.ld.add(words([&](int l) { return gm::strip_b_offset(K, k, t(l).x); }, 4));
    }
  }
  return p;
}

// Steps 4-6. Without the pad the compiler reads four As[ty][k] at once (16 bytes, LDS.128).
template <int T, int Pad>
BankPrediction tiled_prediction() {
  using L = gm::TileLayout<T, Pad>;
  BankPrediction p;
  for (int w = 0; w < T * T / 32; ++w) {
    auto t = [&](int l) { return thread_2d(w, l, T); };
    p.st.add(words([&](int l) { return L::offset(t(l).y, t(l).x); }, 4), 2);  // As and Bs
    for (int k = 0; k < T; ++k) p.ld.add(words([&](int l) { return L::offset(k, t(l).x); }, 4));
    if (Pad == 0)
      for (int k = 0; k < T; k += 4) p.ld.add(words([&](int l) { return L::offset(t(l).y, k); }, 16));
    else
      for (int k = 0; k < T; ++k) p.ld.add(words([&](int l) { return L::offset(t(l).y, k); }, 4));
  }
  return p;
}

// Step 7: As[(ty * TM + i) * BK + k] over k = 0..7 is two 16-byte reads per i.
BankPrediction blocktile_1d_prediction() {
  namespace b = gm::bt1d;
  BankPrediction p;
  for (int w = 0; w < b::kThreads / 32; ++w) {
    auto t = [&](int l) { return thread_2d(w, l, b::BN); };
    p.st.add(words([&](int l) { return 32 * w + l; }, 4), 2);  // As[tid], Bs[tid]
    for (int k = 0; k < b::BK; ++k) p.ld.add(words([&](int l) { return k * b::BN + t(l).x; }, 4));
    for (int i = 0; i < b::TM; ++i)
      for (int k = 0; k < b::BK; k += 4) p.ld.add(words([&](int l) { return (t(l).y * b::TM + i) * b::BK + k; }, 16));
  }
  return p;
}

// Step 8: each thread's 8 a[] and 8 b[] per k are two 16-byte reads each.
BankPrediction blocktile_2d_prediction() {
  namespace b = gm::bt2d;
  BankPrediction p;
  for (int w = 0; w < b::kThreads / 32; ++w) {
    auto t = [&](int l) { return thread_2d(w, l, b::BN / b::TN); };
    for (int i = 0; i < b::BM * b::BK / b::kThreads; ++i)
      p.st.add(words([&](int l) { return 32 * w + l + i * b::kThreads; }, 4), 2);  // As[idx], Bs[idx]
    for (int i = 0; i < b::TM; ++i)
      for (int k = 0; k < b::BK; k += 4) p.ld.add(words([&](int l) { return (t(l).y * b::TM + i) * b::BK + k; }, 16));
    for (int k = 0; k < b::BK; ++k)
      for (int j = 0; j < b::TN; j += 4) p.ld.add(words([&](int l) { return k * b::BN + t(l).x * b::TN + j; }, 16));
  }
  return p;
}

// Steps 9 and 10, which differ in the A tile's row stride.
template <class AOffset>
BankPrediction vectorized_prediction(AOffset a_offset) {
  namespace v = gm::vec;
  BankPrediction p;
  for (int w = 0; w < v::kThreads / 32; ++w) {
    auto tid = [&](int l) { return 32 * w + l; };
    for (int c = 0; c < 4; ++c) p.st.add(words([&](int l) { return a_offset(v::a_col(tid(l)) + c, v::a_row(tid(l))); }, 4));
    p.st.add(words([&](int l) { return v::b_offset(v::b_row(tid(l)), v::b_col(tid(l))); }, 16));
    const int tpr = v::BN / v::TN;
    for (int k = 0; k < v::BK; ++k)
      for (int h : {0, 4}) {
        p.ld.add(words([&](int l) { return a_offset(k, v::frag(tid(l) / tpr, h)); }, 16));
        p.ld.add(words([&](int l) { return v::b_offset(k, v::frag(tid(l) % tpr, h)); }, 16));
      }
  }
  return p;
}

// Steps 11-13: the float4 fragment reads of every warp and k.
template <class T>
void add_fragment_reads(Tally& ld) {
  for (int w = 0; w < T::kThreads / 32; ++w)
    for (int k = 0; k < T::kBK; ++k) {
      for (int g = 0; g < T::kTM / 4; ++g) ld.add(words([&](int l) { return T::a_offset(k, T::thread_row(w, l, g)); }, 16));
      for (int g = 0; g < T::kTN / 4; ++g) ld.add(words([&](int l) { return T::b_offset(k, T::thread_col(w, l, g)); }, 16));
    }
}

template <class T>
BankPrediction warptiled_prediction() {
  BankPrediction p;
  add_fragment_reads<T>(p.ld);
  for (int first = 0; first < T::kThreads; first += 32) {
    for (int r = 0; r < T::kBM * T::kBK / 4 / T::kThreads; ++r)
      for (int c = 0; c < 4; ++c)
        p.st.add(words([&](int l) {
          const int idx = first + l + r * T::kThreads;
          return T::a_offset(idx % (T::kBK / 4) * 4 + c, idx / (T::kBK / 4));
        }, 4));
    for (int r = 0; r < T::kBK * T::kBN / 4 / T::kThreads; ++r)
      p.st.add(words([&](int l) {
        const int idx = first + l + r * T::kThreads;
        return T::b_offset(idx / (T::kBN / 4), idx % (T::kBN / 4) * 4);
      }, 16));
  }
  return p;
}

// Steps 12-13: no shared stores; the cp.async copies of every K-tile, summed over the launch.
template <class S>
BankPrediction multistage_prediction(int M, int N, int K) {
  BankPrediction p;
  add_fragment_reads<S>(p.ld);
  Tally copies;
  auto copy = [](auto&& word_of_lane, int width) {
    return smem::bank::copy_cost_of([&](int l) { return 4LL * word_of_lane(l); }, width).wavefronts;
  };
  for (int w = 0; w < S::kThreads / 32; ++w) {
    auto t = [&](int l) { return 32 * w + l; };
    for (int a = 0; a < S::kAPasses; ++a)
      for (int c = 0; c < S::kAChunks; ++c)
        copies.add(copy([&](int l) { return S::a_offset(S::a_copy_k(t(l), c), S::a_copy_row(t(l), a)); }, 4));
    for (int q = 0; q < S::kBPasses; ++q)
      copies.add(copy([&](int l) { return S::b_offset(S::b_copy_row(t(l), q), S::b_copy_col(t(l))); }, 16));
  }
  p.ldgsts_wavefronts = copies.wavefronts * double(M / S::kBM) * (N / S::kBN) * (K / S::kBK);
  return p;
}

// The shape the autotuned step picks on `gpu` for an M x N output (sgemm_13_tuned_config.cuh).
BankPrediction autotuned_prediction(const char* gpu, int M, int N, int K) {
  const long long mn = static_cast<long long>(M) * N;
#define SMEM_SGEMM_TUNED_CASE(name, max_mn, BM, BN, BK, WM, WN, TM, TN, S) \
  if (std::strcmp(gpu, name) == 0 && mn <= (long long)(max_mn))          \
    return multistage_prediction<gm::MultistageShape<BM, BN, BK, WM, WN, TM, TN, S>>(M, N, K);
  SMEM_SGEMM_TUNED_TABLE(SMEM_SGEMM_TUNED_CASE)
#undef SMEM_SGEMM_TUNED_CASE
  return multistage_prediction<gm::MultistageDefault>(M, N, K);
}

std::optional<BankPrediction> gemm_bank_prediction(const std::string& variant, const char* gpu, int M, int N,
                                                   int K) {
  if (variant == "naive" || variant == "coalesced") return BankPrediction{};
  if (variant == "full_k_strip") return full_k_strip_prediction(K);
  if (variant == "tiled_16") return tiled_prediction<16, 0>();
  if (variant == "tiled_32" || variant == "double_buffered") return tiled_prediction<32, 0>();
  if (variant == "tiled_32_padded") return tiled_prediction<32, 1>();
  if (variant == "blocktile_1d") return blocktile_1d_prediction();
  if (variant == "blocktile_2d") return blocktile_2d_prediction();
  if (variant == "vectorized") return vectorized_prediction([](int k, int m) { return gm::vec::a_offset(k, m); });
  if (variant == "conflict_free") return vectorized_prediction([](int k, int m) { return gm::cf::a_offset(k, m); });
  if (variant == "warptiled") return warptiled_prediction<gm::WarptiledShape>();
  if (variant == "multistage") return multistage_prediction<gm::MultistageDefault>(M, N, K);
  if (variant == "autotuned") return autotuned_prediction(gpu, M, N, K);
  return std::nullopt;
}

}  // namespace

TEST_SUITE("host") {
  // Host pointers: a launch attempt would fail with a device error, not cudaErrorInvalidValue,
  // so these prove that the launcher rejected the arguments before any CUDA call.
  TEST_CASE("bad arguments are rejected before any CUDA call, C untouched") {
    const int M = 8, N = 12, K = 10;
    std::vector<float> buf(M * K + K * N + M * N + 64, 7.0f);
    float* A = buf.data();
    float* B = A + M * K;
    float* C = B + K * N;
    for (auto v : gm::kAllVariants) {
      CAPTURE(gm::name(v));
      auto run = [&](int m, int n, int k, const float* a, int lda, const float* b, int ldb, float* c, int ldc) {
        return gm::run(v, m, n, k, 1.0f, a, lda, b, ldb, 0.0f, c, ldc);
      };
      CHECK(run(-1, N, K, A, K, B, N, C, N) == cudaErrorInvalidValue);
      CHECK(run(M, -3, K, A, K, B, N, C, N) == cudaErrorInvalidValue);
      CHECK(run(M, N, -1, A, K, B, N, C, N) == cudaErrorInvalidValue);
      CHECK(run(M, N, K, nullptr, K, B, N, C, N) == cudaErrorInvalidValue);
      CHECK(run(M, N, K, A, K, nullptr, N, C, N) == cudaErrorInvalidValue);
      CHECK(run(M, N, K, A, K, B, N, nullptr, N) == cudaErrorInvalidValue);
      CHECK(run(M, N, K, A, K - 1, B, N, C, N) == cudaErrorInvalidValue);
      CHECK(run(M, N, K, A, K, B, N - 1, C, N) == cudaErrorInvalidValue);
      CHECK(run(M, N, K, A, K, B, N, C, N - 1) == cudaErrorInvalidValue);
      CHECK(run(M, N, K, A, K, B, N, A + 3, N) == cudaErrorInvalidValue);          // C overlaps A
      CHECK(run(M, N, K, A, K, B, N, B + K * N - 1, N) == cudaErrorInvalidValue);  // C overlaps B's end
      CHECK(run(M, N, K, A, K, C - 1, N, C, N) == cudaErrorInvalidValue);          // B overlaps C's start
      CHECK(run(0, N, K, nullptr, K, nullptr, N, nullptr, N) == cudaSuccess);      // empty: no-op
      CHECK(run(M, 0, K, A, K, B, 1, C, 1) == cudaSuccess);
    }
    for (auto x : buf) REQUIRE(x == 7.0f);
  }

  TEST_CASE("check_args: degenerate cases and adjacency") {
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

  // Lane l of warp w is thread tid = 32 w + l; for a 2D block, tx = tid % T, ty = tid / T.
  template <int T, int Pad>
  void check_tiled_banks() {
    using L = gm::TileLayout<T, Pad>;
    for (int w = 0; w < T * T / 32; ++w) {
      auto tx = [&](int l) { return (32 * w + l) % T; };
      auto ty = [&](int l) { return (32 * w + l) / T; };
      CAPTURE(w);
      // Tile stores As[ty][tx], Bs[ty][tx].
      CHECK(wavefronts_of([&](int l) { return L::offset(ty(l), tx(l)) * 4; }, 4) == 1);
      for (int k = 0; k < T; ++k) {
        CAPTURE(k);
        CHECK(wavefronts_of([&](int l) { return L::offset(ty(l), k) * 4; }, 4) == 1);  // As[ty][k]
        CHECK(wavefronts_of([&](int l) { return L::offset(k, tx(l)) * 4; }, 4) == 1);  // Bs[k][tx]
      }
    }
  }

  TEST_CASE("tiled kernels: As[ty][k] broadcast and Bs[k][tx] are conflict-free, padded or not") {
    check_tiled_banks<16, 0>();
    check_tiled_banks<32, 0>();
    check_tiled_banks<32, 1>();  // step 5: the pad removes no wavefront, there is none to remove
    // 32 lanes of a T = 32 warp share ty: As[ty][k] is one word, a broadcast.
    std::set<int> words;
    for (int l = 0; l < 32; ++l) words.insert(gm::TileLayout<32, 0>::offset(l / 32, 5));
    CHECK(words.size() == 1);
  }

  TEST_CASE("full-K strip: the +1 row stride keeps the two rows of a warp in different banks") {
    for (int K : {64, 1024, 1815, 1001}) {
      CAPTURE(K);
      for (int k = 0; k < K; k += 97) {
        // Warp 0 of the 16 x 16 block: lanes 0-15 row ty = 0, lanes 16-31 row ty = 1.
        CHECK(wavefronts_of([&](int l) { return gm::strip_a_offset(K, l / 16, k) * 4; }, 4) == 1);
        CHECK(wavefronts_of([&](int l) { return gm::strip_b_offset(K, k, l % 16) * 4; }, 4) == 1);
      }
    }
    // Without the +1, K = 1024 puts both rows in one bank: 2 wavefronts.
    CHECK(wavefronts_of([&](int l) { return (l / 16 * 1024 + 3) * 4; }, 4) == 2);
  }

  TEST_CASE("vectorized kernel: transposed A store 2-way, float4 B store and fragment reads conflict-free") {
    namespace v = gm::vec;
    for (int w = 0; w < v::kThreads / 32; ++w) {
      CAPTURE(w);
      auto tid = [&](int l) { return 32 * w + l; };
      for (int i = 0; i < 4; ++i) {
        CAPTURE(i);
        // As[a_col + i][a_row] = a[i]: lanes 2j and 2j + 1 share a_row (same bank), 4 rows of As
        // (512 words) apart: two distinct words per bank, 2 wavefronts for 1.
        CHECK(wavefronts_of([&](int l) { return v::a_offset(v::a_col(tid(l)) + i, v::a_row(tid(l))) * 4; }, 4) ==
              2);
      }
      // Bs[b_row][b_col .. + 3] = float4: 32 consecutive float4, 4 wavefronts (the ideal for 16 B).
      CHECK(wavefronts_of([&](int l) { return v::b_offset(v::b_row(tid(l)), v::b_col(tid(l))) * 4; }, 16) ==
            ideal_wavefronts(16));
      const int tpr = v::BN / v::TN;  // 16 threads per row of the thread grid
      for (int k = 0; k < v::BK; ++k)
        for (int h : {0, 4}) {
          CAPTURE(k);
          // A: lanes 0-15 read one float4, lanes 16-31 the next; lanes pair, 2 wavefronts.
          CHECK(wavefronts_of([&](int l) { return v::a_offset(k, v::frag(tid(l) / tpr, h)) * 4; }, 16) == 2);
          CHECK(wavefronts_of([&](int l) { return v::b_offset(k, v::frag(tid(l) % tpr, h)) * 4; }, 16) ==
                ideal_wavefronts(16));
        }
    }
    // Step 8's B fragment, 8 consecutive words per thread at an 8-word stride, read as float4,
    // takes twice the ideal: lanes 4 apart in a quarter-warp hit the same 4 banks.
    CHECK(wavefronts_of([&](int l) { return (3 * 128 + l % 16 * 8) * 4; }, 16) == 2 * ideal_wavefronts(16));
  }

  TEST_CASE("bank model agrees with Nsight Compute's measured wavefronts (results/*/banks.json)") {
    const auto not_modelled = smem::test::check_bank_evidence("gemm", [](const std::string& variant,
                                                                         const smem::test::BankMeasurement& m) {
      int M = 0, N = 0, K = 0;
      REQUIRE(std::sscanf(m.benchmark.c_str() + m.benchmark.rfind('/') + 1, "%dx%dx%d", &M, &N, &K) == 3);
      return gemm_bank_prediction(variant, m.gpu_name.c_str(), M, N, K);
    });
    CHECK(not_modelled.empty());
  }
}

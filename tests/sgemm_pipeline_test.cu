// SGEMM steps 10-13. Host: the bank model (common/bank_model.hpp) on their shared-memory index
// functions: the padded transposed A store of step 10 against step 9's, and every warp-level
// access of the warptiled and multistage kernels for a selection of the tuner's shapes. GPU: the
// shapes that compute-sanitizer racecheck and synccheck run on (129x127x131, 1000x999x1001),
// against a float64 reference, with odd leading dimensions, alpha/beta and a NaN-poisoned C:
//   SMEM_SMALL=1 compute-sanitizer --tool racecheck build/gpu/tests/sgemm_pipeline_test --test-suite=gpu
// (or ./cookbook sanitize sgemm_pipeline_test: memcheck, racecheck, synccheck and initcheck).
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include <gemm/sgemm_10_conflict_free.cuh>
#include <gemm/sgemm_11_warptiled.cuh>
#include <gemm/sgemm_12_multistage.cuh>
#include <gemm/sgemm_13_autotuned.cuh>

#include "bank_model.hpp"
#include "compare.hpp"
#include "device_buffer.hpp"
#include "random.hpp"

using smem::bank::copy_cost_of;
using smem::bank::wavefronts_of;
namespace g = smem::gemm;

namespace {

// Byte address of word offset w.
constexpr long long bytes(int w) { return 4LL * w; }

// Every warp-level shared-memory access of WarpTiling T: fragment reads (float4) of A and B for
// every warp and k, the register-staged stores of step 11 and the cp.async copies of step 12.
template <class T>
void check_warptiling(bool check_staged_store) {
  const int shape[] = {T::kBM, T::kBN, T::kBK, T::kWM, T::kWN, T::kTM, T::kTN};
  INFO("BM BN BK WM WN TM TN = " << shape[0] << " " << shape[1] << " " << shape[2] << " " << shape[3]
                                 << " " << shape[4] << " " << shape[5] << " " << shape[6]);
  const int warps = T::kThreads / 32;
  for (int w = 0; w < warps; ++w)
    for (int k = 0; k < T::kBK; ++k) {
      // Lanes l and l ^ 2 share an A float4, l and l ^ 1 a B float4: both reads pair, 2 wavefronts.
      for (int gi = 0; gi < T::kTM / 4; ++gi)
        CHECK(wavefronts_of([&](int l) { return bytes(T::a_offset(k, T::thread_row(w, l, gi))); }, 16) == 2);
      for (int gj = 0; gj < T::kTN / 4; ++gj)
        CHECK(wavefronts_of([&](int l) { return bytes(T::b_offset(k, T::thread_col(w, l, gj))); }, 16) == 2);
    }
  // Step 12: 4-byte copies of A into As[k][m] (4 rows x 8 k per warp), 16-byte copies of B;
  // cp.async writes 8 lanes per wavefront, so both take 4 when conflict-free.
  using S = g::MultistageShape<T::kBM, T::kBN, T::kBK, T::kWM, T::kWN, T::kTM, T::kTN, 3>;
  for (int w = 0; w < warps; ++w) {
    for (int p = 0; p < S::kAPasses; ++p)
      for (int c = 0; c < S::kAChunks; ++c)
        CHECK(copy_cost_of([&](int l) {
                const int t = 32 * w + l;
                return bytes(S::a_offset(S::a_copy_k(t, c), S::a_copy_row(t, p)));
              }, 4).wavefronts == 4);
    for (int q = 0; q < S::kBPasses; ++q)
      CHECK(copy_cost_of([&](int l) {
              const int t = 32 * w + l;
              return bytes(S::b_offset(S::b_copy_row(t, q), S::b_copy_col(t)));
            }, 16).wavefronts == 4);
  }
  // Every lane has its own place in the lane grid.
  std::vector<int> place(32);
  for (int l = 0; l < 32; ++l) {
    REQUIRE(T::lane_m(l) < T::kLanesM);
    REQUIRE(T::lane_n(l) < T::kLanesN);
    ++place[T::lane_m(l) * T::kLanesN + T::lane_n(l)];
  }
  CHECK(std::count(place.begin(), place.end(), 1) == 32);
  // Every element of both tiles is copied exactly once per K-tile.
  std::vector<int> a_hits(T::kBM * T::kBK), b_hits(T::kBK * T::kBN);
  for (int t = 0; t < T::kThreads; ++t) {
    for (int p = 0; p < S::kAPasses; ++p)
      for (int c = 0; c < S::kAChunks; ++c) ++a_hits[S::a_copy_row(t, p) * T::kBK + S::a_copy_k(t, c)];
    for (int q = 0; q < S::kBPasses; ++q)
      for (int c = 0; c < 4; ++c) ++b_hits[S::b_copy_row(t, q) * T::kBN + S::b_copy_col(t) + c];
  }
  CHECK(std::count(a_hits.begin(), a_hits.end(), 1) == T::kBM * T::kBK);
  CHECK(std::count(b_hits.begin(), b_hits.end(), 1) == T::kBK * T::kBN);
  // Step 11: float4 of A (row idx / (BK / 4), K-quad idx % (BK / 4)) stored as 4 words down As.
  if (check_staged_store)
    for (int first = 0; first < T::kBM * T::kBK / 4; first += 32)
      for (int c = 0; c < 4; ++c)
        CHECK(wavefronts_of([&](int l) {
                const int idx = first + l;
                return bytes(T::a_offset(idx % (T::kBK / 4) * 4 + c, idx / (T::kBK / 4)));
              }, 4) == 1);
}

}  // namespace

TEST_SUITE("host") {
  TEST_CASE("step 10: the padded transposed A store is conflict-free where step 9's is 2-way") {
    for (int warp = 0; warp < g::cf::kThreads / 32; ++warp)
      for (int c = 0; c < 4; ++c) {
        auto store = [&](auto a_offset) {
          return wavefronts_of([&](int l) {
            const int t = warp * 32 + l;
            return bytes(a_offset(g::cf::a_col(t) + c, g::cf::a_row(t)));
          }, 4);
        };
        CHECK(store([](int k, int m) { return g::vec::a_offset(k, m); }) == 2);
        CHECK(store([](int k, int m) { return g::cf::a_offset(k, m); }) == 1);
      }
    // The pad keeps every row 16-byte aligned, so the float4 fragment reads stay legal.
    for (int k = 0; k < g::cf::BK; ++k) CHECK(g::cf::a_offset(k, 0) % 4 == 0);
  }

  TEST_CASE("steps 11 and 12: fragment reads, staged stores and cp.async copies conflict-free") {
    check_warptiling<g::WarptiledShape>(true);
    check_warptiling<g::MultistageDefault>(false);
    // A selection of the tuner's shapes (bench/gemm_tune_candidates.cuh).
    check_warptiling<g::WarpTiling<128, 256, 8, 64, 64, 8, 16>>(true);
    check_warptiling<g::WarpTiling<256, 128, 16, 64, 64, 16, 8>>(false);
    check_warptiling<g::WarpTiling<128, 128, 16, 64, 32, 8, 8>>(false);
    check_warptiling<g::WarpTiling<64, 64, 8, 32, 32, 4, 8>>(true);
    check_warptiling<g::WarpTiling<64, 128, 8, 32, 64, 8, 8>>(true);
    check_warptiling<g::WarpTiling<128, 64, 8, 64, 32, 8, 8>>(true);
  }
}

namespace {

using Launch = cudaError_t (*)(int, int, int, float, const float*, int, const float*, int, float, float*,
                               int, cudaStream_t);
struct Step {
  const char* name;
  Launch launch;
};
const Step kSteps[] = {{"conflict_free", g::sgemm_conflict_free},
                       {"warptiled", g::sgemm_warptiled},
                       {"multistage", g::sgemm_multistage},
                       {"autotuned", g::sgemm_autotuned}};

}  // namespace

TEST_SUITE("gpu") {
  TEST_CASE("steps 10-13 on the sanitizer shapes: float64 reference, odd ld, alpha/beta, NaN C") {
    struct Case {
      int M, N, K, pad;  // pad: added to every leading dimension (1: odd strides, scalar paths)
      float alpha, beta;
    };
    const Case cases[] = {{129, 127, 131, 0, 1.0f, 0.0f},     {129, 127, 131, 1, 1.5f, -0.5f},
                          {1000, 999, 1001, 0, 1.0f, 0.0f},  {1000, 999, 1001, 1, -0.75f, 2.0f},
                          {1000, 999, 1001, 3, 1.0f, 0.0f}};
    for (const auto& c : cases) {
      INFO(c.M << "x" << c.N << "x" << c.K << " ld pad " << c.pad << " alpha " << c.alpha << " beta " << c.beta);
      const int lda = c.K + c.pad, ldb = c.N + c.pad, ldc = c.N + c.pad;
      auto rng = smem::test::rng(std::uint64_t(c.M) * 7919 + c.K * 31 + c.pad);
      const auto A = smem::test::random_vector<float>(std::size_t(c.M) * lda, rng);
      const auto B = smem::test::random_vector<float>(std::size_t(c.K) * ldb, rng);
      std::vector<float> C0 = smem::test::random_vector<float>(std::size_t(c.M) * ldc, rng);
      if (c.beta == 0.0f) std::memset(C0.data(), 0xFF, C0.size() * sizeof(float));  // NaN must not leak
      std::vector<double> ref(std::size_t(c.M) * c.N);
      for (int m = 0; m < c.M; ++m) {
        std::vector<double> row(c.N, 0.0);
        for (int k = 0; k < c.K; ++k) {
          const double a = A[std::size_t(m) * lda + k];
          const float* b = &B[std::size_t(k) * ldb];
          for (int n = 0; n < c.N; ++n) row[n] += a * b[n];
        }
        for (int n = 0; n < c.N; ++n)
          ref[std::size_t(m) * c.N + n] =
              c.alpha * row[n] + (c.beta == 0.0f ? 0.0 : double(c.beta) * C0[std::size_t(m) * ldc + n]);
      }
      smem::test::DeviceBuffer<float> dA(A), dB(B), dC(C0.size());
      for (const auto& s : kSteps) {
        CAPTURE(s.name);
        dC.upload(C0);
        REQUIRE(s.launch(c.M, c.N, c.K, c.alpha, dA.get(), lda, dB.get(), ldb, c.beta, dC.get(), ldc, nullptr) ==
                cudaSuccess);
        SMEM_CUDA_CHECK(cudaDeviceSynchronize());
        const auto out = dC.download();
        std::vector<float> got(ref.size());
        bool padding_kept = true;
        for (int m = 0; m < c.M; ++m) {
          for (int n = 0; n < c.N; ++n) got[std::size_t(m) * c.N + n] = out[std::size_t(m) * ldc + n];
          for (int n = c.N; n < ldc; ++n)
            padding_kept &= std::memcmp(&out[std::size_t(m) * ldc + n], &C0[std::size_t(m) * ldc + n], 4) == 0;
        }
        const double err = smem::test::relative_error(got, ref);
        CAPTURE(err);
        CHECK(err < 8 * 1.1920929e-7 * std::sqrt(double(c.K)));
        CHECK(padding_kept);
      }
    }
  }
}

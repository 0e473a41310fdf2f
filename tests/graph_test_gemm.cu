// graph_test's second file: the tensor-core families (the two GEMMs, attention) in a graph on a
// non-default stream. It includes every family's header, as graph_test.cu does (see there).
#include <doctest/doctest.h>

#include <attention/attention.cuh>
#include <gemm/gemm.cuh>
#include <histogram/histogram.cuh>
#include <reduction/reduction.cuh>
#include <scan/scan.cuh>
#include <stencil/stencil.cuh>
#include <tc_gemm/tc_gemm.cuh>
#include <transpose/transpose.cuh>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "compare.hpp"
#include "device_buffer.hpp"
#include "gemm_reference.cuh"
#include "graph_capture.hpp"
#include "random.hpp"

using smem::test::capture_and_replay;
using smem::test::DeviceBuffer;

namespace {
/// An attention launcher's run on the default stream, then captured in a graph and replayed on a
/// non-default stream into poisoned O and lse: the replay gives bit for bit the eager O and LSE.
template <class Run>
void check_graph_as_eager(DeviceBuffer<smem::attention::bf16>& O, DeviceBuffer<float>& lse, Run run) {
  REQUIRE(run(cudaStream_t{}) == cudaSuccess);
  SMEM_CUDA_CHECK(cudaDeviceSynchronize());
  const auto eager_o = O.download();
  const auto eager_l = lse.download();
  O.poison();
  lse.poison();
  capture_and_replay(run);
  CHECK(smem::test::first_bit_mismatch(O.download(), eager_o) == -1);
  CHECK(smem::test::first_bit_mismatch(lse.download(), eager_l) == -1);
}
}  // namespace

TEST_SUITE("gpu") {
  TEST_CASE("gemm: every variant in a graph on a non-default stream") {
    namespace gm = smem::gemm;
    const int M = 129, N = 127, K = 131, lda = K + 3, ldb = N + 1, ldc = N + 5;
    const float alpha = 0.5f, beta = 2.0f;
    auto g = smem::test::rng(3);
    const auto A = smem::test::random_vector<float>(std::size_t(M) * lda, g);
    const auto B = smem::test::random_vector<float>(std::size_t(K) * ldb, g);
    const auto C0 = smem::test::random_vector<float>(std::size_t(M) * ldc, g);
    std::vector<double> R, S;
    smem::test::gemm_reference_cpu(M, N, K, alpha, A, lda, B, ldb, beta, C0, ldc, R, S);
    DeviceBuffer<float> dA(A), dB(B), dC(C0.size());
    for (auto v : gm::kAllVariants) {
      CAPTURE(std::string(gm::name(v)));
      dC.upload(C0);
      // Replayed twice, the graph computes C = alpha A B + beta (alpha A B + beta C0).
      capture_and_replay([&](cudaStream_t s) {
        return gm::run(v, M, N, K, alpha, dA.get(), lda, dB.get(), ldb, beta, dC.get(), ldc, s);
      });
      const auto C = dC.download();
      double worst = 0;
      for (int i = 0; i < M; ++i)
        for (int j = 0; j < N; ++j) {
          const std::size_t r = std::size_t(i) * N + j;
          const double once = R[r], twice = once - double(beta) * C0[std::size_t(i) * ldc + j] + double(beta) * once;
          const double scale = S[r] * (1 + std::fabs(double(beta))) + 1e-30;
          worst = std::max(worst, std::fabs(double(C[std::size_t(i) * ldc + j]) - twice) / scale);
        }
      CHECK(worst < 64 * K * 1.2e-7);
    }
  }

  TEST_CASE("tc_gemm: every variant in a graph on a non-default stream") {
    namespace tc = smem::tc_gemm;
    using bf16 = tc::bf16;
    const int M = 129, N = 136, K = 72;
    auto g = smem::test::rng(4);
    const auto f = smem::test::random_vector<float>(std::size_t(M) * K + std::size_t(K) * N, g);
    std::vector<bf16> A(std::size_t(M) * K), B(std::size_t(K) * N);
    for (std::size_t i = 0; i < A.size(); ++i) A[i] = __float2bfloat16_rn(f[i]);
    for (std::size_t i = 0; i < B.size(); ++i) B[i] = __float2bfloat16_rn(f[A.size() + i]);
    std::vector<double> R(std::size_t(M) * N, 0.0), S(R.size(), 0.0);
    for (int i = 0; i < M; ++i)
      for (int k = 0; k < K; ++k)
        for (int j = 0; j < N; ++j) {
          const double p = double(__bfloat162float(A[std::size_t(i) * K + k])) * __bfloat162float(B[std::size_t(k) * N + j]);
          R[std::size_t(i) * N + j] += p;
          S[std::size_t(i) * N + j] += std::fabs(p);
        }
    DeviceBuffer<bf16> dA(A), dB(B), dD(R.size());
    for (auto v : tc::kAllVariants) {
      CAPTURE(std::string(tc::name(v)));
      dD.poison();
      capture_and_replay([&](cudaStream_t s) {
        return tc::run(v, M, N, K, 1.0f, dA.get(), K, dB.get(), N, 0.0f, nullptr, N, dD.get(), N, s);
      });
      const auto D = dD.download();
      bool ok = true;
      for (std::size_t i = 0; i < R.size(); ++i) {
        const double x = __bfloat162float(D[i]);
        ok = ok && std::fabs(x - R[i]) <= std::ldexp(std::fabs(R[i]), -8) + (K + 4) * std::ldexp(S[i], -22);
      }
      CHECK(ok);
    }
  }

  TEST_CASE("attention: every variant in a graph on a non-default stream") {
    namespace at = smem::attention;
    // A problem every step takes (head_dim 64, seq_q <= 16 for the decode steps, 16-byte rows), with the
    // causal mask and without; each variant's graph gives bit for bit its eager result.
    const int B = 2, Hq = 4, Hkv = 2, Nq = 13, Nkv = 300, d = 64;
    auto g = smem::test::rng(7);
    const auto f = smem::test::random_vector<float>(std::size_t(B) * (Nq * Hq + 2 * Nkv * Hkv) * d, g);
    std::vector<at::bf16> h(f.size());
    for (std::size_t i = 0; i < f.size(); ++i) h[i] = __float2bfloat16_rn(f[i]);
    DeviceBuffer<at::bf16> qkv(h), O(std::size_t(B) * Nq * Hq * d);
    DeviceBuffer<float> lse(std::size_t(B) * Hq * Nq);
    const at::bf16* Q = qkv.get();
    const at::bf16* K = Q + std::size_t(B) * Nq * Hq * d;
    const at::bf16* V = K + std::size_t(B) * Nkv * Hkv * d;
    for (const bool causal : {false, true})
      for (auto v : at::kAllVariants) {
        CAPTURE(std::string(at::name(v)));
        CAPTURE(causal);
        at::Problem p{B, Hq, Hkv, Nq, Nkv, d, 0.125f, causal};
        p.q = at::bshd(Nq, Hq, d), p.k = p.v = at::bshd(Nkv, Hkv, d), p.o = at::bshd(Nq, Hq, d);
        DeviceBuffer<unsigned char> ws(std::max<std::size_t>(at::workspace(v, p), 16));
        check_graph_as_eager(O, lse, [&](cudaStream_t s) {
          return at::run(v, p, Q, K, V, O.get(), lse.get(), ws.get(), ws.size(), s);
        });
      }
  }
#if defined(SMEM_ATTENTION_SM90A)
  TEST_CASE("attention step 14 (FP8) in a graph on a non-default stream") {
    namespace at = smem::attention;
    // head_dim 128 (the step's), e4m3 inputs of scale 1 / 400; the graph gives bit for bit the eager result.
    const int B = 2, Hq = 4, Hkv = 2, Nq = 13, Nkv = 300, d = 128;
    auto g = smem::test::rng(14);
    const auto f = smem::test::random_vector<float>(std::size_t(B) * (Nq * Hq + 2 * Nkv * Hkv) * d, g);
    std::vector<at::e4m3> h(f.size());
    for (std::size_t i = 0; i < f.size(); ++i) h[i] = at::e4m3(400.0f * f[i]);
    DeviceBuffer<at::e4m3> qkv(h);
    DeviceBuffer<at::bf16> O(std::size_t(B) * Nq * Hq * d);
    DeviceBuffer<float> lse(std::size_t(B) * Hq * Nq);
    const at::e4m3* Q = qkv.get();
    const at::e4m3* K = Q + std::size_t(B) * Nq * Hq * d;
    const at::e4m3* V = K + std::size_t(B) * Nkv * Hkv * d;
    const at::Fp8Scales sc{1.0f / 400, 1.0f / 400, 1.0f / 400};
    for (const bool causal : {false, true}) {
      CAPTURE(causal);
      at::Problem p{B, Hq, Hkv, Nq, Nkv, d, 0.125f, causal};
      p.q = at::bshd(Nq, Hq, d), p.k = p.v = at::bshd(Nkv, Hkv, d), p.o = at::bshd(Nq, Hq, d);
      check_graph_as_eager(O, lse, [&](cudaStream_t s) { return at::fp8(p, sc, Q, K, V, O.get(), lse.get(), s); });
    }
  }
#endif
}

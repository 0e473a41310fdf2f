// The bad-input matrix, the project's one place for bad arguments: every launcher of every family
// (through the families' run() dispatchers) against every kind of bad argument.
// - gpu suite, device buffers: each case returns cudaErrorInvalidValue with no output byte
//   changed and no CUDA error left behind, or the documented result (empty sizes, K == 0,
//   n == 0), or, for a precondition a variant may lift (alignment, large K), what the variant's
//   launch plan says: the correct result when it has a kernel for the case, the error with the
//   output untouched when it has none. With SMEM_BAD_INPUT_TABLE=<file>, the matrix is written
//   there as a markdown table (tools/report.py puts it in the docs).
// - host suite, host pointers: a launch attempt would fail with a device error, not
//   cudaErrorInvalidValue, so these prove that every launcher rejects its arguments before any
//   CUDA call (and that a reduction's size query needs none).
#include <cuda/std/functional>
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
#include <cstdlib>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <limits>
#include <map>
#include <string>
#include <type_traits>
#include <vector>

#include "compare.hpp"
#include "device_buffer.hpp"
#include "gemm_reference.cuh"
#include "gpu.hpp"
#include "random.hpp"

using smem::test::DeviceBuffer;

namespace {

constexpr unsigned char kPoison = 0x5A;

// (family, case) -> variant -> outcome, in insertion order of cases.
struct Matrix {
  std::vector<std::pair<std::string, std::string>> cases;
  std::map<std::pair<std::string, std::string>, std::vector<std::pair<std::string, std::string>>> cells;
  void add(const std::string& family, const std::string& c, const std::string& variant, const std::string& outcome) {
    const auto key = std::make_pair(family, c);
    if (!cells.count(key)) cases.push_back(key);
    cells[key].push_back({variant, outcome});
  }
} matrix;

template <class T>
bool untouched(const DeviceBuffer<T>& b) {
  SMEM_CUDA_CHECK(cudaDeviceSynchronize());
  const auto h = b.download();
  const auto* p = reinterpret_cast<const unsigned char*>(h.data());
  for (std::size_t i = 0; i < h.size() * sizeof(T); ++i)
    if (p[i] != kPoison) return false;
  return true;
}

// A case that must be rejected: the error, nothing written, no error left behind.
template <class T>
void expect_rejected(const char* family, const char* c, const char* variant, cudaError_t e, const DeviceBuffer<T>& out) {
  CAPTURE(c);
  CHECK(e == cudaErrorInvalidValue);
  CHECK(untouched(out));
  CHECK(cudaGetLastError() == cudaSuccess);
  matrix.add(family, c, variant, e == cudaErrorInvalidValue ? "invalid" : cudaGetErrorName(e));
}

// A precondition a variant may lift: when its plan has a kernel for the case (`planned`), the
// correct result; otherwise rejected like any bad argument.
template <class T, class Correct>
void expect_as_planned(const char* family, const char* c, const char* variant, bool planned, cudaError_t e,
                       const DeviceBuffer<T>& out, Correct correct) {
  if (!planned) return expect_rejected(family, c, variant, e, out);
  CAPTURE(c);
  REQUIRE(e == cudaSuccess);
  SMEM_CUDA_CHECK(cudaDeviceSynchronize());
  const bool ok = correct();
  CHECK(ok);
  matrix.add(family, c, variant, ok ? "handled" : "wrong");
}

}  // namespace

TEST_SUITE("gpu") {
  TEST_CASE("transpose: bad inputs") {
    namespace tr = smem::transpose;
    const int rows = 33, cols = 65;
    const std::size_t n = std::size_t(rows) * cols;
    auto g = smem::test::rng(11);
    const auto h = smem::test::random_vector<float>(n + 1, g);
    DeviceBuffer<float> in(h), out(n + 1);
    for (auto v : tr::kAllVariants) {
      const char* name = tr::name(v);
      CAPTURE(name);
      auto run = [&](int r, int c, const float* i, float* o) {
        out.poison(kPoison);
        return tr::run(v, r, c, i, o);
      };
      expect_rejected("transpose", "rows < 0", name, run(-1, cols, in.get(), out.get()), out);
      expect_rejected("transpose", "cols < 0", name, run(rows, -1, in.get(), out.get()), out);
      expect_rejected("transpose", "in == nullptr", name, run(rows, cols, nullptr, out.get()), out);
      expect_rejected("transpose", "out == nullptr", name, run(rows, cols, in.get(), nullptr), out);
      expect_rejected("transpose", "in == out", name, run(rows, cols, out.get(), out.get()), out);
      expect_rejected("transpose", "in overlaps out", name, run(rows, cols, out.get() + 7, out.get()), out);
      for (int which = 0; which < 2; ++which) {
        const cudaError_t e = which == 0 ? run(0, cols, in.get(), out.get()) : run(rows, 0, in.get(), out.get());
        CHECK(e == cudaSuccess);
        CHECK(untouched(out));
        matrix.add("transpose", which == 0 ? "rows == 0" : "cols == 0", name,
                   e == cudaSuccess ? "no-op" : cudaGetErrorName(e));
      }
      expect_as_planned("transpose", "in, out misaligned (+4 bytes)", name,
                        tr::plan(v, rows, cols, in.get() + 1, out.get() + 1).kernel != nullptr,
                        run(rows, cols, in.get() + 1, out.get() + 1), out, [&] {
        const auto o = out.download();
        for (int r = 0; r < rows; ++r)
          for (int c = 0; c < cols; ++c) {
            const float want = h[1 + std::size_t(r) * cols + c];
            const float got = o[1 + (tr::transposes(v) ? std::size_t(c) * rows + r
                                                       : std::size_t(r) * cols + c)];
            if (std::memcmp(&want, &got, sizeof(float)) != 0) return false;
          }
        return true;
      });
    }
  }

  TEST_CASE("gemm: bad inputs") {
    namespace gm = smem::gemm;
    const int M = 33, N = 65, K = 17;
    auto g = smem::test::rng(12);
    const auto A = smem::test::random_vector<float>(std::size_t(M) * K + 1, g);
    const auto B = smem::test::random_vector<float>(std::size_t(K) * N + 1, g);
    const auto C0 = smem::test::random_vector<float>(std::size_t(M) * N + 1, g);
    DeviceBuffer<float> dA(A), dB(B), dC(C0.size());
    for (auto v : gm::kAllVariants) {
      const char* name = gm::name(v);
      CAPTURE(name);
      auto run = [&](int m, int n, int k, float alpha, const float* a, int lda, const float* b, int ldb,
                     float beta, float* c, int ldc) {
        dC.poison(kPoison);
        return gm::run(v, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
      };
      const float* a = dA.get();
      const float* b = dB.get();
      float* c = dC.get();
      expect_rejected("gemm", "M < 0", name, run(-1, N, K, 1, a, K, b, N, 0, c, N), dC);
      expect_rejected("gemm", "N < 0", name, run(M, -1, K, 1, a, K, b, N, 0, c, N), dC);
      expect_rejected("gemm", "K < 0", name, run(M, N, -1, 1, a, K, b, N, 0, c, N), dC);
      expect_rejected("gemm", "A == nullptr", name, run(M, N, K, 1, nullptr, K, b, N, 0, c, N), dC);
      expect_rejected("gemm", "B == nullptr", name, run(M, N, K, 1, a, K, nullptr, N, 0, c, N), dC);
      expect_rejected("gemm", "C == nullptr", name, run(M, N, K, 1, a, K, b, N, 0, nullptr, N), dC);
      expect_rejected("gemm", "lda < K", name, run(M, N, K, 1, a, K - 1, b, N, 0, c, N), dC);
      expect_rejected("gemm", "ldb < N", name, run(M, N, K, 1, a, K, b, N - 1, 0, c, N), dC);
      expect_rejected("gemm", "ldc < N", name, run(M, N, K, 1, a, K, b, N, 0, c, N - 1), dC);
      expect_rejected("gemm", "C == A", name, run(M, N, K, 1, c, K, b, N, 0, c, N), dC);
      expect_rejected("gemm", "C overlaps A", name, run(M, N, K, 1, c + 5, K, b, N, 0, c, N), dC);
      expect_rejected("gemm", "C overlaps B", name, run(M, N, K, 1, a, K, c + 5, N, 0, c, N), dC);
      for (int which = 0; which < 2; ++which) {
        const cudaError_t e = which == 0 ? run(0, N, K, 1, a, K, b, N, 0, c, N) : run(M, 0, K, 1, a, K, b, N, 0, c, N);
        CHECK(e == cudaSuccess);
        CHECK(untouched(dC));
        matrix.add("gemm", which == 0 ? "M == 0" : "N == 0", name, e == cudaSuccess ? "no-op" : cudaGetErrorName(e));
      }
      for (int which = 0; which < 2; ++which) {  // K == 0 and alpha == 0: C = beta * C
        dC.upload(C0);
        const cudaError_t e = which == 0 ? gm::run(v, M, N, 0, 1, a, K, b, N, 2, c, N)
                                         : gm::run(v, M, N, K, 0, a, K, b, N, 2, c, N);
        REQUIRE(e == cudaSuccess);
        const auto got = dC.download();
        bool ok = true;
        for (std::size_t i = 0; i < std::size_t(M) * N; ++i) ok = ok && got[i] == 2 * C0[i];
        CHECK(ok);
        matrix.add("gemm", which == 0 ? "K == 0 (C = beta C)" : "alpha == 0 (C = beta C)", name,
                   ok ? "beta C" : "wrong");
      }
      auto matches_reference = [&](int m, int n, int k, const std::vector<float>& hA, int lda, int off_a,
                                   const std::vector<float>& hB, int ldb) {
        return [=, &dC] {
          std::vector<float> a0(hA.begin() + off_a, hA.end()), c0;
          std::vector<double> R, S;
          smem::test::gemm_reference_cpu(m, n, k, 1.0f, a0, lda, hB, ldb, 0.0f, c0, n, R, S);
          const auto got = dC.download();
          for (std::size_t i = 0; i < R.size(); ++i)
            if (!(std::fabs(got[i] - R[i]) <= 4 * k * 1.2e-7 * S[i] + 1e-30)) return false;
          return true;
        };
      };
      expect_as_planned("gemm", "A misaligned (+4 bytes)", name,
                        gm::plan(v, M, N, K, a + 1, K, b, N, c, N).kernel != nullptr,
                        run(M, N, K, 1, a + 1, K, b, N, 0, c, N), dC, matches_reference(M, N, K, A, K, 1, B, N));
      {  // A K far beyond what a full-K shared-memory strip can hold (1 x 1 output)
        // 2^12 under SMEM_SMALL (compute-sanitizer runs): still beyond a full-K strip (1815 on
        // an H200), and short enough for racecheck, which follows every shared access.
        const int big_k = smem::test::small_shapes_only() ? 1 << 12 : 1 << 20;
        auto g2 = smem::test::rng(13);
        const auto bA = smem::test::random_vector<float>(big_k, g2), bB = smem::test::random_vector<float>(big_k, g2);
        DeviceBuffer<float> dbA(bA), dbB(bB);
        expect_as_planned("gemm", "K = 2^20 (beyond a full-K strip)", name,
                          gm::plan(v, 1, 1, big_k, dbA.get(), big_k, dbB.get(), 1, c, 1).kernel != nullptr,
                          run(1, 1, big_k, 1, dbA.get(), big_k, dbB.get(), 1, 0, c, 1), dC,
                          matches_reference(1, 1, big_k, bA, big_k, 0, bB, 1));
      }
    }
  }

  TEST_CASE("reduction: bad inputs") {
    namespace rd = smem::reduction;
    const long long n = 100003;
    auto g = smem::test::rng(14);
    const auto h = smem::test::random_vector<float>(std::size_t(n) + 1, g);
    DeviceBuffer<float> in(h), out(1);
    for (auto v : rd::kAllVariants) {
      const char* name = rd::name(v);
      CAPTURE(name);
      std::size_t bytes = 0;
      REQUIRE(rd::run<float>(v, nullptr, bytes, in.get(), n, out.get(), rd::Sum{}, 0.0f) == cudaSuccess);
      DeviceBuffer<unsigned char> temp(bytes + 16);
      temp.poison(0xA5);  // contents the launcher must not rely on
      auto run = [&](const float* i, long long m, float* o, std::size_t b) {
        out.poison(kPoison);
        return rd::run<float>(v, temp.get(), b, i, m, o, rd::Sum{}, 0.0f);
      };
      expect_rejected("reduction", "n < 0", name, run(in.get(), -1, out.get(), bytes), out);
      expect_rejected("reduction", "in == nullptr", name, run(nullptr, n, out.get(), bytes), out);
      expect_rejected("reduction", "out == nullptr", name, run(in.get(), n, nullptr, bytes), out);
      {
        out.poison(kPoison);
        const cudaError_t e = rd::run<float>(v, static_cast<char*>(static_cast<void*>(temp.get())) + 4, bytes,
                                             in.get(), n, out.get(), rd::Sum{}, 0.0f);
        expect_rejected("reduction", "workspace misaligned (+4 bytes)", name, e, out);
      }
      {
        const auto* odd = reinterpret_cast<const float*>(reinterpret_cast<const char*>(in.get()) + 2);
        expect_rejected("reduction", "in not float-aligned (+2 bytes)", name, run(odd, n - 1, out.get(), bytes), out);
      }
      if (bytes > 0) {
        expect_rejected("reduction", "workspace too small", name, run(in.get(), n, out.get(), bytes - 1), out);
      } else {
        matrix.add("reduction", "workspace too small", name, "needs none");
      }
      {
        const cudaError_t e = run(in.get(), 0, out.get(), bytes);
        CHECK(e == cudaSuccess);
        SMEM_CUDA_CHECK(cudaDeviceSynchronize());
        const bool identity = out.download()[0] == 0.0f;
        CHECK(identity);
        matrix.add("reduction", "n == 0 (identity)", name, identity ? "identity" : "wrong");
      }
      expect_as_planned("reduction", "in misaligned (+4 bytes)", name,
                        rd::plan<float, rd::Sum>(v, n).kernel != nullptr, run(in.get() + 1, n, out.get(), bytes), out,
                        [&] {
        double sum = 0, mag = 0;
        for (long long i = 1; i <= n; ++i) sum += h[i], mag += std::fabs(h[i]);
        return std::fabs(out.download()[0] - sum) <= 2 * 1.2e-7 * std::log2(double(n)) * mag;
      });
    }
  }

  TEST_CASE("scan: bad inputs") {
    namespace sc = smem::scan;
    using Plus = cuda::std::plus<float>;
    const long long n = 100003;
    auto g = smem::test::rng(16);
    const auto h = smem::test::random_vector<float>(std::size_t(n) + 1, g, -100.f, 100.f);
    std::vector<float> hi(h.size());  // small integers: every prefix exact, compared bit for bit
    for (std::size_t i = 0; i < h.size(); ++i) hi[i] = std::round(h[i]);
    DeviceBuffer<float> in(hi), out(std::size_t(n) + 1);
    for (auto v : sc::kAllVariants) {
      const char* name = sc::name(v);
      CAPTURE(name);
      std::size_t bytes = 0;
      REQUIRE(sc::run<float>(v, nullptr, bytes, in.get(), out.get(), n, Plus{}, 0.0f, sc::Kind::inclusive) ==
              cudaSuccess);
      DeviceBuffer<unsigned char> temp(bytes + 16);
      auto run = [&](const float* i, float* o, long long m, std::size_t b, sc::Kind kind = sc::Kind::inclusive,
                     void* t = nullptr) {
        out.poison(kPoison);
        return sc::run<float>(v, t ? t : temp.get(), b, i, o, m, Plus{}, 0.0f, kind);
      };
      float* o = out.get();
      expect_rejected("scan", "n < 0", name, run(in.get(), o, -1, bytes), out);
      expect_rejected("scan", "kind out of range", name, run(in.get(), o, n, bytes, sc::Kind(2)), out);
      expect_rejected("scan", "in == nullptr", name, run(nullptr, o, n, bytes), out);
      expect_rejected("scan", "out == nullptr", name, run(in.get(), nullptr, n, bytes), out);
      expect_rejected("scan", "in overlaps out, not equal", name, run(o + 1, o, n - 1, bytes), out);
      expect_rejected("scan", "workspace misaligned (+4 bytes)", name,
                      run(in.get(), o, n, bytes, sc::Kind::inclusive, temp.get() + 4), out);
      expect_rejected("scan", "in not float-aligned (+2 bytes)", name,
                      run(reinterpret_cast<const float*>(reinterpret_cast<const char*>(in.get()) + 2), o, n - 1, bytes),
                      out);
      expect_rejected("scan", "workspace too small", name, run(in.get(), o, n, bytes - 1), out);
      {
        const cudaError_t e = run(in.get(), o, 0, bytes);
        CHECK(e == cudaSuccess);
        CHECK(untouched(out));
        matrix.add("scan", "n == 0", name, e == cudaSuccess ? "no-op" : cudaGetErrorName(e));
      }
      expect_as_planned("scan", "in, out misaligned (+4 bytes)", name, sc::plan<float, Plus>(v, n).kernel != nullptr,
                        run(in.get() + 1, o + 1, n, bytes), out, [&] {
        const auto got = out.download();
        float acc = 0;
        for (long long i = 0; i < n; ++i)
          if (got[i + 1] != (acc += hi[i + 1])) return false;
        return true;
      });
    }
  }

  TEST_CASE("histogram: bad inputs") {
    namespace hg = smem::histogram;
    const long long n = 100003;
    auto g = smem::test::rng(17);
    const auto h = smem::test::random_vector<float>(std::size_t(n) + 1, g, -0.5f, 1.5f);
    DeviceBuffer<float> in(h);
    DeviceBuffer<std::uint8_t> bytes{std::size_t(n)};
    const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
    DeviceBuffer<hg::Counter> out(1024), big(65536);
    for (auto v : hg::kAllVariants) {
      const char* name = hg::name(v);
      CAPTURE(name);
      const int bins = hg::fits<float>(v, 1024) ? 1024 : 256;  // step 7 holds 256
      auto run = [&](const float* i, long long m, hg::Counter* o, int b, float lo, float up) {
        out.poison(kPoison);
        return hg::run<float>(v, i, m, o, b, lo, up);
      };
      hg::Counter* o = out.get();
      expect_rejected("histogram", "n < 0", name, run(in.get(), -1, o, bins, 0.f, 1.f), out);
      expect_rejected("histogram", "samples == nullptr", name, run(nullptr, n, o, bins, 0.f, 1.f), out);
      expect_rejected("histogram", "counts == nullptr", name, run(in.get(), n, nullptr, bins, 0.f, 1.f), out);
      expect_rejected("histogram", "bins < 1", name, run(in.get(), n, o, 0, 0.f, 1.f), out);
      expect_rejected("histogram", "lower == upper", name, run(in.get(), n, o, bins, 1.f, 1.f), out);
      expect_rejected("histogram", "lower > upper", name, run(in.get(), n, o, bins, 1.f, 0.f), out);
      expect_rejected("histogram", "lower is NaN", name, run(in.get(), n, o, bins, nan, 1.f), out);
      expect_rejected("histogram", "upper is +inf", name, run(in.get(), n, o, bins, 0.f, inf), out);
      expect_rejected("histogram", "samples not float-aligned (+2 bytes)", name,
                      run(reinterpret_cast<const float*>(reinterpret_cast<const char*>(in.get()) + 2), n - 1, o, bins,
                          0.f, 1.f),
                      out);
      expect_rejected("histogram", "counts not aligned (+2 bytes)", name,
                      run(in.get(), n, reinterpret_cast<hg::Counter*>(reinterpret_cast<char*>(o) + 2), 4, 0.f, 1.f),
                      out);
      expect_rejected("histogram", "uint8: lower >= upper", name,
                      (out.poison(kPoison), hg::run<std::uint8_t>(v, bytes.get(), n, o, 16, 7, 7)), out);
      {
        const cudaError_t e = run(in.get(), 0, o, bins, 0.f, 1.f);
        CHECK(e == cudaSuccess);
        const auto got = out.download();
        CHECK(std::vector<hg::Counter>(got.begin(), got.begin() + bins) == std::vector<hg::Counter>(std::size_t(bins), 0));
        matrix.add("histogram", "n == 0", name, e == cudaSuccess ? "counts zeroed" : cudaGetErrorName(e));
      }
      big.poison(kPoison);
      expect_as_planned("histogram", "65536 float bins", name, hg::fits<float>(v, 65536),
                        hg::run<float>(v, in.get(), n, big.get(), 65536, 0.f, 1.f), big, [&] {
        std::vector<hg::Counter> want(65536, 0);
        for (long long i = 0; i < n; ++i)
          if (const int b = hg::Even<float>::make(65536, 0.f, 1.f).bin(h[std::size_t(i)]); b >= 0) ++want[std::size_t(b)];
        return big.download() == want;
      });
    }
    DeviceBuffer<float> levels(std::vector<float>{0.f, 0.5f, 1.f});
    auto range = [&](const float* i, long long m, hg::Counter* o, int b, const float* l) {
      out.poison(kPoison);
      return hg::shared_atomics_range<float>(i, m, o, b, l);
    };
    const char* name = "shared_atomics_range";
    expect_rejected("histogram", "n < 0", name, range(in.get(), -1, out.get(), 2, levels.get()), out);
    expect_rejected("histogram", "samples == nullptr", name, range(nullptr, n, out.get(), 2, levels.get()), out);
    expect_rejected("histogram", "counts == nullptr", name, range(in.get(), n, nullptr, 2, levels.get()), out);
    expect_rejected("histogram", "bins < 1", name, range(in.get(), n, out.get(), 0, levels.get()), out);
    expect_rejected("histogram", "levels == nullptr", name, range(in.get(), n, out.get(), 2, nullptr), out);
    expect_rejected("histogram", "65536 float bins", name, range(in.get(), n, out.get(), 65536, levels.get()), out);
  }

  TEST_CASE("stencil: bad inputs") {
    namespace st = smem::stencil;
    const char* conv = "stencil (convolution)";
    const int h = 33, w = 65, r = 2;
    const std::size_t n = std::size_t(h) * w;
    auto g = smem::test::rng(17);
    const auto img = smem::test::random_vector<float>(n + 1, g);
    const auto taps = smem::test::random_vector<float>(25, g);
    DeviceBuffer<float> in(img), filter(taps), out(n + 1);
    for (auto v : st::kConv2dVariants) {
      const char* name = st::name(v);
      CAPTURE(name);
      auto run = [&](const float* i, float* o, int hh, int ww, const float* f, int rr) {
        out.poison(kPoison);
        return st::run_conv2d(v, i, o, hh, ww, f, rr);
      };
      float* o = out.get();
      const float* i = in.get();
      expect_rejected(conv, "height < 0", name, run(i, o, -1, w, filter.get(), r), out);
      expect_rejected(conv, "width < 0", name, run(i, o, h, -1, filter.get(), r), out);
      expect_rejected(conv, "radius 0", name, run(i, o, h, w, filter.get(), 0), out);
      expect_rejected(conv, "radius 9 (> kMaxRadius)", name, run(i, o, h, w, filter.get(), st::kMaxRadius + 1), out);
      expect_rejected(conv, "in == nullptr", name, run(nullptr, o, h, w, filter.get(), r), out);
      expect_rejected(conv, "out == nullptr", name, run(i, nullptr, h, w, filter.get(), r), out);
      expect_rejected(conv, "filter == nullptr", name, run(i, o, h, w, nullptr, r), out);
      expect_rejected(conv, "in == out", name, run(o, o, h, w, filter.get(), r), out);
      expect_rejected(conv, "in overlaps out", name, run(o + 7, o, h - 1, w, filter.get(), r), out);
      expect_rejected(conv, "filter overlaps out", name, run(i, o, h, w, o + 100, r), out);
      expect_rejected(conv, "in not float-aligned (+2 bytes)", name,
                      run(reinterpret_cast<const float*>(reinterpret_cast<const char*>(i) + 2), o, h, w - 1,
                          filter.get(), r), out);
      for (int which = 0; which < 2; ++which) {
        const cudaError_t e = which == 0 ? run(i, o, 0, w, filter.get(), r) : run(i, o, h, 0, filter.get(), r);
        CHECK(e == cudaSuccess);
        CHECK(untouched(out));
        matrix.add(conv, which == 0 ? "height == 0" : "width == 0", name,
                   e == cudaSuccess ? "no-op" : cudaGetErrorName(e));
      }
      expect_as_planned(conv, "in, out misaligned (+4 bytes)", name, st::plan_conv2d(v, h, w, r).kernel != nullptr,
                        run(i + 1, o + 1, h, w, filter.get(), r), out, [&] {
        const auto got = out.download();
        for (int y = 0; y < h; ++y)
          for (int x = 0; x < w; ++x) {
            double s = 0, m = 0;
            for (int a = 0; a < 5; ++a)
              for (int b = 0; b < 5; ++b) {
                const int yy = y + a - r, xx = x + b - r;
                if (yy < 0 || yy >= h || xx < 0 || xx >= w) continue;
                const double t = double(taps[a * 5 + b]) * img[1 + std::size_t(yy) * w + xx];
                s += t, m += std::fabs(t);
              }
            if (!(std::fabs(got[1 + std::size_t(y) * w + x] - s) <= 50 * 1.2e-7 * m + 1e-30)) return false;
          }
        return true;
      });
    }

    const char* st7 = "stencil (7-point)";
    const int nx = 36, ny = 9, nz = 11;
    const std::size_t m = std::size_t(nx) * ny * nz;
    const auto grid_h = smem::test::random_vector<float>(m + 1, g);
    DeviceBuffer<float> grid(grid_h), gout(m + 1);
    const st::Coefficients c{-6.0f / 7, 0.75f, 1.25f, 0.5f};
    for (auto v : st::kStencil7Variants) {
      const char* name = st::name(v);
      CAPTURE(name);
      auto run = [&](const float* i, float* o, int x, int y, int z) {
        gout.poison(kPoison);
        return st::run_7point(v, i, o, x, y, z, c);
      };
      float* o = gout.get();
      const float* i = grid.get();
      expect_rejected(st7, "nx < 0", name, run(i, o, -1, ny, nz), gout);
      expect_rejected(st7, "ny < 0", name, run(i, o, nx, -1, nz), gout);
      expect_rejected(st7, "nz < 0", name, run(i, o, nx, ny, -1), gout);
      expect_rejected(st7, "in == nullptr", name, run(nullptr, o, nx, ny, nz), gout);
      expect_rejected(st7, "out == nullptr", name, run(i, nullptr, nx, ny, nz), gout);
      expect_rejected(st7, "in == out", name, run(o, o, nx, ny, nz), gout);
      expect_rejected(st7, "in overlaps out", name, run(o + 5, o, nx, ny, nz - 1), gout);
      expect_rejected(st7, "in not float-aligned (+2 bytes)", name,
                      run(reinterpret_cast<const float*>(reinterpret_cast<const char*>(i) + 2), o, nx - 1, ny, nz),
                      gout);
      for (int which = 0; which < 3; ++which) {
        const cudaError_t e = run(i, o, which == 0 ? 0 : nx, which == 1 ? 0 : ny, which == 2 ? 0 : nz);
        CHECK(e == cudaSuccess);
        CHECK(untouched(gout));
        matrix.add(st7, which == 0 ? "nx == 0" : which == 1 ? "ny == 0" : "nz == 0", name,
                   e == cudaSuccess ? "no-op" : cudaGetErrorName(e));
      }
      expect_as_planned(st7, "in, out misaligned (+4 bytes)", name, st::plan_7point(v, nx, ny, nz).kernel != nullptr,
                        run(i + 1, o + 1, nx, ny, nz), gout, [&] {
        const auto got = gout.download();
        const auto u = [&](int x, int y, int z) {
          return x < 0 || x >= nx || y < 0 || y >= ny || z < 0 || z >= nz
                     ? 0.0
                     : double(grid_h[1 + (std::size_t(z) * ny + y) * nx + x]);
        };
        for (int z = 0; z < nz; ++z)
          for (int y = 0; y < ny; ++y)
            for (int x = 0; x < nx; ++x) {
              const double want = c.center * u(x, y, z) + c.x * (u(x - 1, y, z) + u(x + 1, y, z)) +
                                  c.y * (u(x, y - 1, z) + u(x, y + 1, z)) + c.z * (u(x, y, z - 1) + u(x, y, z + 1));
              if (!(std::fabs(got[1 + (std::size_t(z) * ny + y) * nx + x] - want) <= 1e-5)) return false;
            }
        return true;
      });
    }
  }

  TEST_CASE("attention: bad inputs") {
    namespace at = smem::attention;
    const int B = 2, Hq = 4, Hkv = 2, N = 77, d = 64;
    const std::size_t q_elems = std::size_t(B) * N * Hq * d, kv_elems = std::size_t(B) * N * Hkv * d;
    auto g = smem::test::rng(21);
    const auto f = smem::test::random_vector<float>(q_elems + 2 * kv_elems + 8, g, -1.f, 1.f);
    std::vector<at::bf16> h(f.size());
    for (std::size_t i = 0; i < f.size(); ++i) h[i] = __float2bfloat16_rn(f[i]);
    DeviceBuffer<at::bf16> in(h), out(q_elems + 8);
    DeviceBuffer<float> lse(std::size_t(B) * Hq * N);
    const at::bf16* Q = in.get();
    const at::bf16* K = Q + q_elems;
    const at::bf16* V = K + kv_elems;
    at::Problem good{B, Hq, Hkv, N, N, d, 0.125f, false};
    good.q = good.o = at::bshd(N, Hq, d), good.k = good.v = at::bshd(N, Hkv, d);
    for (auto v : at::kAllVariants) {
      const char* name = at::name(v);
      const std::string variant = name;
      CAPTURE(variant);
      at::Problem one = good;
      one.seq_q = variant.find("decode") != std::string::npos ? 13 : N;  // the decode steps: seq_q <= 16
      DeviceBuffer<unsigned char> ws(std::max<std::size_t>(at::workspace(v, one), 16) + 16);
      auto run = [&](at::Problem p, const at::bf16* q, at::bf16* o, float* l = nullptr, void* w = nullptr) {
        out.poison(kPoison);
        return at::run(v, p, q, K, V, o, l, w ? w : ws.get(), ws.size() - 16);
      };
      at::bf16* o = out.get();
      auto with = [&](auto edit) {
        at::Problem p = one;
        edit(p);
        return p;
      };
      expect_rejected("attention", "batch < 0", name, run(with([](at::Problem& p) { p.batch = -1; }), Q, o), out);
      expect_rejected("attention", "heads_kv does not divide heads_q", name,
                      run(with([](at::Problem& p) { p.heads_kv = 3; }), Q, o), out);
      expect_rejected("attention", "head_dim 12", name, run(with([](at::Problem& p) { p.head_dim = 12; }), Q, o), out);
      expect_rejected("attention", "scale NaN", name, run(with([](at::Problem& p) { p.scale = NAN; }), Q, o), out);
      expect_rejected("attention", "Q == nullptr", name, run(one, nullptr, o), out);
      expect_rejected("attention", "O == nullptr", name, run(one, Q, nullptr), out);
      expect_rejected("attention", "O overlaps Q", name, run(one, Q, const_cast<at::bf16*>(Q) + 8), out);
      expect_rejected("attention", "two elements of O coincide", name,
                      run(with([](at::Problem& p) { p.o.seq = 0; }), Q, o), out);
      expect_rejected("attention", "lse overlaps O", name, run(one, Q, o, reinterpret_cast<float*>(o)), out);
      if (at::workspace(v, one) > 0)
        expect_rejected("attention", "workspace misaligned (+4 bytes)", name, run(one, Q, o, nullptr, ws.get() + 4),
                        out);
      {
        const cudaError_t e = run(with([](at::Problem& p) { p.seq_q = 0; }), Q, o);
        CHECK(e == cudaSuccess);
        CHECK(untouched(out));
        matrix.add("attention", "seq_q == 0", name, e == cudaSuccess ? "no-op" : cudaGetErrorName(e));
      }
      {  // no keys: O = 0 (K and V null)
        at::Problem p = with([](at::Problem& x) { x.seq_kv = 0; });
        out.poison(kPoison);
        const cudaError_t e = at::run(v, p, Q, nullptr, nullptr, o, nullptr, ws.get(), ws.size() - 16);
        CHECK(e == cudaSuccess);
        SMEM_CUDA_CHECK(cudaDeviceSynchronize());
        const auto got = out.download();
        bool zero = true;  // every element of O (decode's seq_q of 13 under the strides of 77 rows)
        for (long long b = 0; b < p.batch; ++b)
          for (long long i = 0; i < p.seq_q; ++i)
            for (long long hq = 0; hq < p.heads_q; ++hq)
              for (long long c = 0; c < p.head_dim; ++c)
                zero = zero && __bfloat162float(got[std::size_t(at::at(p.o, b, i, hq) + c)]) == 0.0f;
        CHECK(zero);
        matrix.add("attention", "seq_kv == 0 (O = 0)", name, e == cudaSuccess && zero ? "zeros" : "wrong");
      }
      // Q two bytes off 16-byte alignment (its rows then too): steps 1 to 3 read elements, steps 4 to
      // 7 copy 16-byte chunks and refuse. Handled: the same O as from an aligned copy of Q.
      const bool chunked = std::string(name) != "naive" && std::string(name) != "two_pass" &&
                           std::string(name) != "online";
      DeviceBuffer<at::bf16> shifted(q_elems + 8);
      SMEM_CUDA_CHECK(cudaMemcpy(shifted.get() + 1, Q, q_elems * sizeof(at::bf16), cudaMemcpyDeviceToDevice));
      REQUIRE(run(one, Q, o) == cudaSuccess);
      SMEM_CUDA_CHECK(cudaDeviceSynchronize());
      const auto aligned_o = out.download();
      expect_as_planned("attention", "Q misaligned (+2 bytes)", name, !chunked, run(one, shifted.get() + 1, o), out,
                        [&] { return smem::test::first_bit_mismatch(out.download(), aligned_o) == -1; });
    }
  }

  TEST_CASE("tc_gemm: bad inputs") {
    namespace tc = smem::tc_gemm;
    using bf16 = tc::bf16;
    const int M = 33, N = 65, K = 17;
    std::vector<bf16> A(std::size_t(M) * K + 8), B(std::size_t(K) * N + 8), C0(std::size_t(M) * N + 8);
    auto g = smem::test::rng(15);
    const auto fa = smem::test::random_vector<float>(A.size() + B.size() + C0.size(), g);
    for (std::size_t i = 0; i < A.size(); ++i) A[i] = __float2bfloat16_rn(fa[i]);
    for (std::size_t i = 0; i < B.size(); ++i) B[i] = __float2bfloat16_rn(fa[A.size() + i]);
    for (std::size_t i = 0; i < C0.size(); ++i) C0[i] = __float2bfloat16_rn(fa[A.size() + B.size() + i]);
    DeviceBuffer<bf16> dA(A), dB(B), dC(C0), dD(C0.size());
    for (auto v : tc::kAllVariants) {
      const char* name = tc::name(v);
      CAPTURE(name);
      auto run = [&](int m, int n, int k, const bf16* a, int lda, const bf16* b, int ldb, const bf16* c, int ldc,
                     bf16* d, int ldd) {
        dD.poison(kPoison);
        return tc::run(v, m, n, k, 1.0f, a, lda, b, ldb, 1.0f, c, ldc, d, ldd);
      };
      const bf16 *a = dA.get(), *b = dB.get(), *c = dC.get();
      bf16* d = dD.get();
      expect_rejected("tc_gemm", "M < 0", name, run(-1, N, K, a, K, b, N, c, N, d, N), dD);
      expect_rejected("tc_gemm", "N < 0", name, run(M, -1, K, a, K, b, N, c, N, d, N), dD);
      expect_rejected("tc_gemm", "K < 0", name, run(M, N, -1, a, K, b, N, c, N, d, N), dD);
      expect_rejected("tc_gemm", "A == nullptr", name, run(M, N, K, nullptr, K, b, N, c, N, d, N), dD);
      expect_rejected("tc_gemm", "B == nullptr", name, run(M, N, K, a, K, nullptr, N, c, N, d, N), dD);
      expect_rejected("tc_gemm", "C == nullptr, beta != 0", name, run(M, N, K, a, K, b, N, nullptr, N, d, N), dD);
      expect_rejected("tc_gemm", "D == nullptr", name, run(M, N, K, a, K, b, N, c, N, nullptr, N), dD);
      expect_rejected("tc_gemm", "lda < K", name, run(M, N, K, a, K - 1, b, N, c, N, d, N), dD);
      expect_rejected("tc_gemm", "ldb < N", name, run(M, N, K, a, K, b, N - 1, c, N, d, N), dD);
      expect_rejected("tc_gemm", "ldd < N", name, run(M, N, K, a, K, b, N, c, N, d, N - 1), dD);
      expect_rejected("tc_gemm", "D == A", name, run(M, N, K, d, K, b, N, c, N, d, N), dD);
      expect_rejected("tc_gemm", "D overlaps A", name, run(M, N, K, d + 3, K, b, N, c, N, d, N), dD);
      expect_rejected("tc_gemm", "D overlaps C, not equal", name, run(M, N, K, a, K, b, N, d + 1, N, d, N), dD);
      {
        const auto* odd = reinterpret_cast<const bf16*>(reinterpret_cast<const char*>(a) + 1);
        expect_rejected("tc_gemm", "A not bf16-aligned (+1 byte)", name, run(M, N, K, odd, K, b, N, c, N, d, N), dD);
      }
      {
        const cudaError_t e = run(0, N, K, a, K, b, N, c, N, d, N);
        CHECK(e == cudaSuccess);
        CHECK(untouched(dD));
        matrix.add("tc_gemm", "M == 0", name, e == cudaSuccess ? "no-op" : cudaGetErrorName(e));
      }
      {  // K == 0: D = beta C
        dD.poison(kPoison);
        const cudaError_t e = tc::run(v, M, N, 0, 1.0f, a, K, b, N, 2.0f, c, N, d, N);
        REQUIRE(e == cudaSuccess);
        const auto got = dD.download();
        bool ok = true;
        for (std::size_t i = 0; i < std::size_t(M) * N; ++i)
          ok = ok && __bfloat162float(got[i]) == __bfloat162float(__float2bfloat16_rn(2.0f * __bfloat162float(C0[i])));
        CHECK(ok);
        matrix.add("tc_gemm", "K == 0 (D = beta C)", name, ok ? "beta C" : "wrong");
      }
      // D = A B + C from A and B starting `offset` elements into their buffers.
      auto matches = [&](int offset) {
        return [&, offset] {
          const auto got = dD.download();
          for (int i = 0; i < M; ++i)
            for (int j = 0; j < N; ++j) {
              double r = __bfloat162float(C0[std::size_t(i) * N + j]), s = std::fabs(r);
              for (int k = 0; k < K; ++k) {
                const double p = double(__bfloat162float(A[offset + std::size_t(i) * K + k])) *
                                 __bfloat162float(B[offset + std::size_t(k) * N + j]);
                r += p, s += std::fabs(p);
              }
              const double x = __bfloat162float(got[std::size_t(i) * N + j]);
              if (!(std::fabs(x - r) <= std::ldexp(std::fabs(r), -8) + 1e-5 * s)) return false;
            }
          return true;
        };
      };
      expect_as_planned("tc_gemm", "A, B 2-byte aligned (+2 bytes)", name,
                        tc::plan(v, M, N, K, a + 1, K, b + 1, N, c, N, d, N).kernel != nullptr,
                        run(M, N, K, a + 1, K, b + 1, N, c, N, d, N), dD, matches(1));
      // K = 17 and N = 65: rows of A and B that are not whole 16-byte chunks, which TMA's tensor
      // maps cannot describe (the Hopper steps' documented refusal).
      expect_as_planned("tc_gemm", "lda, ldb not multiples of 8", name,
                        tc::plan(v, M, N, K, a, K, b, N, c, N, d, N).kernel != nullptr,
                        run(M, N, K, a, K, b, N, c, N, d, N), dD, matches(0));
    }
  }

  TEST_CASE("transpose: more than 2^31 elements") {
    namespace tr = smem::transpose;
    if (smem::test::small_shapes_only()) return;
    const int rows = 65536, cols = 32769;  // 2^31 + 2^16 elements, 8 GiB per matrix
    const std::size_t n = std::size_t(rows) * cols;
    DeviceBuffer<int> in(n), out(n);
    // Every 4096th row of in holds 0 .. cols-1; the transposed columns are checked for it.
    std::vector<int> row(cols);
    for (int c = 0; c < cols; ++c) row[c] = c;
    for (int r = 0; r < rows; r += 4096)
      SMEM_CUDA_CHECK(cudaMemcpy(in.get() + std::size_t(r) * cols, row.data(), cols * sizeof(int), cudaMemcpyHostToDevice));
    for (auto v : {tr::Variant::naive, tr::Variant::padded, tr::Variant::vectorized}) {
      CAPTURE(tr::name(v));
      out.poison(kPoison);
      REQUIRE(tr::run(v, rows, cols, in.get(), out.get()) == cudaSuccess);
      SMEM_CUDA_CHECK(cudaDeviceSynchronize());
      // Row r of in (r multiple of 4096) holds 0..cols-1: column r of out must hold it.
      bool ok = true;
      for (int c = cols - 3; c < cols; ++c)
        for (int r = 0; r < rows; r += 4096) {
          int x = -1;
          SMEM_CUDA_CHECK(cudaMemcpy(&x, out.get() + std::size_t(c) * rows + r, sizeof(int), cudaMemcpyDeviceToHost));
          ok = ok && x == c;
        }
      CHECK(ok);
      matrix.add("transpose", "2^31 + 2^16 elements", tr::name(v), ok ? "handled" : "wrong");
    }
  }

  TEST_CASE("write the bad-input matrix") {
    const char* path = std::getenv("SMEM_BAD_INPUT_TABLE");
    if (path == nullptr) return;
    std::ofstream f(path);
    std::string family;
    std::vector<std::string> columns;  // the family's variants, in order of first appearance
    for (std::size_t i = 0; i < matrix.cases.size(); ++i) {
      const auto& key = matrix.cases[i];
      if (key.first != family) {
        family = key.first;
        columns.clear();
        for (std::size_t j = i; j < matrix.cases.size() && matrix.cases[j].first == family; ++j)
          for (const auto& cell : matrix.cells[matrix.cases[j]])
            if (std::find(columns.begin(), columns.end(), cell.first) == columns.end()) columns.push_back(cell.first);
        f << "\n#### " << family << "\n\n| case |";
        for (const auto& v : columns) f << " `" << v << "` |";
        f << "\n| --- |";
        for (std::size_t j = 0; j < columns.size(); ++j) f << " --- |";
        f << "\n";
      }
      f << "| " << key.second << " |";
      for (const auto& v : columns) {  // a case that does not apply to a variant: a dash
        std::string outcome = "-";
        for (const auto& cell : matrix.cells[key])
          if (cell.first == v) outcome = cell.second;
        f << " " << outcome << " |";
      }
      f << "\n";
    }
  }
}

TEST_SUITE("host") {
  TEST_CASE_TEMPLATE("transpose: bad arguments are rejected before any CUDA call", T, float, double) {
    namespace tr = smem::transpose;
    std::vector<T> buf(2 * 64 * 64, T(7));
    T* a = buf.data();
    T* b = buf.data() + 64 * 64;
    for (auto v : tr::kAllVariants) {
      CAPTURE(tr::name(v));
      CHECK(tr::run<T>(v, -1, 4, a, b) == cudaErrorInvalidValue);
      CHECK(tr::run<T>(v, 4, -5, a, b) == cudaErrorInvalidValue);
      CHECK(tr::run<T>(v, 4, 4, nullptr, b) == cudaErrorInvalidValue);
      CHECK(tr::run<T>(v, 4, 4, a, nullptr) == cudaErrorInvalidValue);
      CHECK(tr::run<T>(v, 64, 64, a, a) == cudaErrorInvalidValue);      // in place
      CHECK(tr::run<T>(v, 64, 64, a + 1, a) == cudaErrorInvalidValue);  // overlap
      CHECK(tr::run<T>(v, 64, 64, b - 1, a) == cudaErrorInvalidValue);  // overlap by one
      CHECK(tr::run<T>(v, 0, 4, nullptr, nullptr) == cudaSuccess);     // empty: no-op
      CHECK(tr::run<T>(v, 4, 0, a, b) == cudaSuccess);
    }
    for (auto x : buf) REQUIRE(x == T(7));
    // Adjacent but not overlapping is valid (checked at the contract level: no launch here).
    CHECK(tr::check_args<T>(64, 64, a, b) == tr::Args::launch);
  }

  TEST_CASE("gemm: bad arguments are rejected before any CUDA call, C untouched") {
    namespace gm = smem::gemm;
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
      CHECK(run(M, N, K, A, K, B, N, A, N) == cudaErrorInvalidValue);              // C == A
      CHECK(run(M, N, K, A, K, B, N, A + 3, N) == cudaErrorInvalidValue);          // C overlaps A
      CHECK(run(M, N, K, A, K, B, N, B + K * N - 1, N) == cudaErrorInvalidValue);  // C overlaps B's end
      CHECK(run(M, N, K, A, K, C - 1, N, C, N) == cudaErrorInvalidValue);          // B overlaps C's start
      CHECK(run(0, N, K, nullptr, K, nullptr, N, nullptr, N) == cudaSuccess);      // empty: no-op
      CHECK(run(M, 0, K, A, K, B, 1, C, 1) == cudaSuccess);
    }
    for (auto x : buf) REQUIRE(x == 7.0f);
  }

  TEST_CASE("tc_gemm: bad arguments are rejected before any CUDA call, D untouched") {
    namespace tc = smem::tc_gemm;
    using bf16 = tc::bf16;
    const int M = 8, N = 12, K = 10;
    std::vector<bf16> buf(M * K + K * N + 2 * M * N + 64, __float2bfloat16_rn(7.0f));
    bf16* A = buf.data();
    bf16* B = A + M * K;
    bf16* C = B + K * N;
    bf16* D = C + M * N;
    for (auto v : tc::kAllVariants) {
      CAPTURE(tc::name(v));
      auto run = [&](int m, int n, int k, const bf16* a, int lda, const bf16* b, int ldb, const bf16* c, int ldc,
                     bf16* d, int ldd) { return tc::run(v, m, n, k, 1.0f, a, lda, b, ldb, 1.0f, c, ldc, d, ldd); };
      CHECK(run(-1, N, K, A, K, B, N, C, N, D, N) == cudaErrorInvalidValue);
      CHECK(run(M, -64, K, A, K, B, N, C, N, D, N) == cudaErrorInvalidValue);
      CHECK(run(M, N, -1, A, K, B, N, C, N, D, N) == cudaErrorInvalidValue);
      CHECK(run(M, N, K, nullptr, K, B, N, C, N, D, N) == cudaErrorInvalidValue);
      CHECK(run(M, N, K, A, K, nullptr, N, C, N, D, N) == cudaErrorInvalidValue);
      CHECK(run(M, N, K, A, K, B, N, nullptr, N, D, N) == cudaErrorInvalidValue);
      CHECK(run(M, N, K, A, K, B, N, C, N, nullptr, N) == cudaErrorInvalidValue);
      CHECK(run(M, N, K, A, K - 1, B, N, C, N, D, N) == cudaErrorInvalidValue);
      CHECK(run(M, N, K, A, K, B, N - 1, C, N, D, N) == cudaErrorInvalidValue);
      CHECK(run(M, N, K, A, K, B, N, C, N, D, N - 1) == cudaErrorInvalidValue);
      CHECK(run(M, N, K, A, K, B, N, C, N, A, N) == cudaErrorInvalidValue);      // D == A
      CHECK(run(M, N, K, A, K, B, N, C, N, A + 3, N) == cudaErrorInvalidValue);  // D overlaps A
      CHECK(run(M, N, K, A, K, B, N, D - 1, N, D, N) == cudaErrorInvalidValue);  // D overlaps C
      CHECK(run(0, N, K, nullptr, K, nullptr, N, nullptr, N, nullptr, N) == cudaSuccess);
    }
    for (auto x : buf) REQUIRE(__bfloat162float(x) == 7.0f);
  }

  TEST_CASE("stencil: bad arguments are rejected before any CUDA call") {
    namespace st = smem::stencil;
    alignas(16) static float buf[3 * 4096];
    for (auto& x : buf) x = 7.0f;
    float* a = buf;
    float* b = buf + 4096;
    const float* f = buf + 8192;
    for (auto v : st::kConv2dVariants) {
      CAPTURE(st::name(v));
      const auto run = [&](const float* i, float* o, int h, int w, const float* ff, int r) {
        return st::run_conv2d(v, i, o, h, w, ff, r);
      };
      CHECK(run(a, b, -1, 4, f, 2) == cudaErrorInvalidValue);
      CHECK(run(a, b, 4, -5, f, 2) == cudaErrorInvalidValue);
      CHECK(run(a, b, 4, 4, f, 0) == cudaErrorInvalidValue);
      CHECK(run(a, b, 4, 4, f, st::kMaxRadius + 1) == cudaErrorInvalidValue);
      CHECK(run(a, b, 4, 4, f, -3) == cudaErrorInvalidValue);
      CHECK(run(nullptr, b, 4, 4, f, 2) == cudaErrorInvalidValue);
      CHECK(run(a, nullptr, 4, 4, f, 2) == cudaErrorInvalidValue);
      CHECK(run(a, b, 4, 4, nullptr, 2) == cudaErrorInvalidValue);
      CHECK(run(a, a, 64, 64, f, 2) == cudaErrorInvalidValue);      // in place
      CHECK(run(a + 1, a, 64, 64, f, 2) == cudaErrorInvalidValue);  // overlap
      CHECK(run(b - 1, a, 64, 64, f, 2) == cudaErrorInvalidValue);  // overlap by one
      CHECK(run(a, b, 64, 64, b + 4095, 1) == cudaErrorInvalidValue);  // the filter's last taps in out
      CHECK(run(a, b, 4, 4, reinterpret_cast<const float*>(reinterpret_cast<const char*>(f) + 1), 1) ==
            cudaErrorInvalidValue);
      CHECK(run(nullptr, nullptr, 0, 4, nullptr, 2) == cudaSuccess);  // empty: no-op
      CHECK(run(a, b, 4, 0, f, 2) == cudaSuccess);
      CHECK(run(a, b, 0, 0, f, 0) == cudaErrorInvalidValue);  // the radius is checked even then
    }
    for (auto v : st::kStencil7Variants) {
      CAPTURE(st::name(v));
      const auto run = [&](const float* i, float* o, int x, int y, int z) {
        return st::run_7point(v, i, o, x, y, z, st::Coefficients{1, 1, 1, 1});
      };
      CHECK(run(a, b, -1, 4, 4) == cudaErrorInvalidValue);
      CHECK(run(a, b, 4, -1, 4) == cudaErrorInvalidValue);
      CHECK(run(a, b, 4, 4, -1) == cudaErrorInvalidValue);
      CHECK(run(nullptr, b, 4, 4, 4) == cudaErrorInvalidValue);
      CHECK(run(a, nullptr, 4, 4, 4) == cudaErrorInvalidValue);
      CHECK(run(a, a, 16, 16, 16) == cudaErrorInvalidValue);
      CHECK(run(a + 1, a, 16, 16, 16) == cudaErrorInvalidValue);
      CHECK(run(reinterpret_cast<const float*>(reinterpret_cast<const char*>(a) + 2), b, 4, 4, 4) ==
            cudaErrorInvalidValue);
      CHECK(run(nullptr, nullptr, 0, 4, 4) == cudaSuccess);
      CHECK(run(a, b, 4, 4, 0) == cudaSuccess);
    }
    // Adjacent but not overlapping is valid (checked at the contract level: no launch here).
    CHECK(st::check_conv2d_args(a, b, 64, 64, f, 8) == st::Args::launch);
    CHECK(st::check_7point_args(a, b, 16, 16, 16) == st::Args::launch);
    for (float x : buf) REQUIRE(x == 7.0f);
  }

  TEST_CASE_TEMPLATE("scan: bad arguments are rejected before any CUDA call; the size query needs none", T, float,
                     double, int, long long) {
    namespace sc = smem::scan;
    using Plus = cuda::std::plus<T>;
    alignas(16) static T buf[96];
    alignas(16) static unsigned char temp[1 << 16];
    for (auto& x : buf) x = T(7);
    T* in = buf;
    T* out = buf + 64;
    const auto inc = sc::Kind::inclusive;
    for (auto v : sc::kAllVariants) {
      CAPTURE(sc::name(v));
      for (long long n : {0LL, 1LL, 64LL, 1LL << 20, (1LL << 31) + 3, 1LL << 40})
        for (sc::Kind kind : {sc::Kind::inclusive, sc::Kind::exclusive}) {
          std::size_t q = 0;
          CHECK(sc::run<T>(v, nullptr, q, nullptr, nullptr, n, Plus{}, T(0), kind) == cudaSuccess);
          CHECK(q > 0);
          CHECK(q % sc::kTempAlign == 0);
        }
      std::size_t q = 0;
      CHECK(sc::run<T>(v, nullptr, q, in, out, -1, Plus{}, T(0), inc) == cudaErrorInvalidValue);
      CHECK(sc::run<T>(v, nullptr, q, in, out, 8, Plus{}, T(0), sc::Kind(7)) == cudaErrorInvalidValue);
      CHECK(q == 0);
      std::size_t bytes = 0;
      REQUIRE(sc::run<T>(v, nullptr, bytes, in, out, 32, Plus{}, T(0), inc) == cudaSuccess);
      REQUIRE(bytes <= sizeof(temp) - 16);
      CHECK(sc::run<T>(v, temp, bytes, in, out, -1, Plus{}, T(0), inc) == cudaErrorInvalidValue);
      CHECK(sc::run<T>(v, temp, bytes, in, out, 32, Plus{}, T(0), sc::Kind(-1)) == cudaErrorInvalidValue);
      CHECK(sc::run<T>(v, temp, bytes, nullptr, out, 32, Plus{}, T(0), inc) == cudaErrorInvalidValue);
      CHECK(sc::run<T>(v, temp, bytes, in, nullptr, 32, Plus{}, T(0), inc) == cudaErrorInvalidValue);
      std::size_t small = bytes - 1;
      CHECK(sc::run<T>(v, temp, small, in, out, 32, Plus{}, T(0), inc) == cudaErrorInvalidValue);
      CHECK(sc::run<T>(v, temp + 8, bytes, in, out, 32, Plus{}, T(0), inc) == cudaErrorInvalidValue);
      CHECK(sc::run<T>(v, temp, bytes, in + 1, in, 32, Plus{}, T(0), inc) == cudaErrorInvalidValue);  // overlap
      CHECK(sc::run<T>(v, temp, bytes, in, in + 31, 32, Plus{}, T(0), inc) == cudaErrorInvalidValue);
      const T* odd = reinterpret_cast<const T*>(reinterpret_cast<const char*>(in) + 1);
      CHECK(sc::run<T>(v, temp, bytes, odd, out, 16, Plus{}, T(0), inc) == cudaErrorInvalidValue);
      T* odd_out = reinterpret_cast<T*>(reinterpret_cast<char*>(out) + 2);
      CHECK(sc::run<T>(v, temp, bytes, in, odd_out, 16, Plus{}, T(0), inc) == cudaErrorInvalidValue);
      CHECK(sc::run<T>(v, temp, bytes, in, out, 0, Plus{}, T(0), inc) == cudaSuccess);  // n == 0: nothing
    }
    for (auto x : buf) REQUIRE(x == T(7));
  }

  TEST_CASE_TEMPLATE("histogram: bad arguments are rejected before any CUDA call, counts untouched", T, float,
                     std::uint8_t) {
    namespace hg = smem::histogram;
    using L = hg::Level<T>;
    alignas(16) static T in[64];
    alignas(16) static hg::Counter counts[70000];
    alignas(16) static L levels[3] = {L(0), L(1), L(2)};
    for (auto& c : counts) c = 9u;
    const L lo = L(0), hi = L(200);
    for (auto v : hg::kAllVariants) {
      CAPTURE(hg::name(v));
      CHECK(hg::run<T>(v, in, -1, counts, 4, lo, hi) == cudaErrorInvalidValue);
      CHECK(hg::run<T>(v, nullptr, 64, counts, 4, lo, hi) == cudaErrorInvalidValue);
      CHECK(hg::run<T>(v, in, 64, nullptr, 4, lo, hi) == cudaErrorInvalidValue);
      CHECK(hg::run<T>(v, nullptr, 0, nullptr, 4, lo, hi) == cudaErrorInvalidValue);  // counts are always written
      CHECK(hg::run<T>(v, in, 64, counts, 0, lo, hi) == cudaErrorInvalidValue);
      CHECK(hg::run<T>(v, in, 64, counts, -3, lo, hi) == cudaErrorInvalidValue);
      CHECK(hg::run<T>(v, in, 64, counts, 4, hi, lo) == cudaErrorInvalidValue);
      CHECK(hg::run<T>(v, in, 64, counts, 4, lo, lo) == cudaErrorInvalidValue);
      auto* odd_counts = reinterpret_cast<hg::Counter*>(reinterpret_cast<char*>(counts) + 2);
      CHECK(hg::run<T>(v, in, 64, odd_counts, 4, lo, hi) == cudaErrorInvalidValue);
      if constexpr (std::is_same_v<T, float>) {
        const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
        CHECK(hg::run<T>(v, in, 64, counts, 4, nan, 1.f) == cudaErrorInvalidValue);
        CHECK(hg::run<T>(v, in, 64, counts, 4, 0.f, nan) == cudaErrorInvalidValue);
        CHECK(hg::run<T>(v, in, 64, counts, 4, -inf, 1.f) == cudaErrorInvalidValue);
        CHECK(hg::run<T>(v, in, 64, counts, 4, -3e38f, 3e38f) == cudaErrorInvalidValue);  // upper - lower overflows
        const T* odd = reinterpret_cast<const T*>(reinterpret_cast<const char*>(in) + 1);
        CHECK(hg::run<T>(v, odd, 32, counts, 4, lo, hi) == cudaErrorInvalidValue);
        if (!hg::fits<T>(v, 65536)) CHECK(hg::run<T>(v, in, 64, counts, 65536, lo, hi) == cudaErrorInvalidValue);
      }
    }
    CHECK(hg::shared_atomics_range<T>(in, -1, counts, 2, levels) == cudaErrorInvalidValue);
    CHECK(hg::shared_atomics_range<T>(nullptr, 64, counts, 2, levels) == cudaErrorInvalidValue);
    CHECK(hg::shared_atomics_range<T>(in, 64, nullptr, 2, levels) == cudaErrorInvalidValue);
    CHECK(hg::shared_atomics_range<T>(in, 64, counts, 0, levels) == cudaErrorInvalidValue);
    CHECK(hg::shared_atomics_range<T>(in, 64, counts, 2, nullptr) == cudaErrorInvalidValue);
    for (auto c : counts) REQUIRE(c == 9u);
  }

  TEST_CASE_TEMPLATE("reduction: bad arguments are rejected before any CUDA call; the size query needs none", T,
                     float, double, int, long long) {
    namespace rd = smem::reduction;
    alignas(16) static T in[64];
    alignas(16) static T out[2];
    alignas(16) static unsigned char temp[1 << 16];
    for (auto& x : in) x = T(7);
    out[0] = out[1] = T(9);
    const auto id = T(0);
    for (auto v : rd::kAllVariants) {
      CAPTURE(rd::name(v));
      for (long long n : {0LL, 1LL, 64LL, 1LL << 20, (1LL << 31) + 3}) {
        std::size_t q = 0;
        CHECK(rd::run<T>(v, nullptr, q, nullptr, n, nullptr, rd::Sum{}, id) == cudaSuccess);
        CHECK(q > 0);
        CHECK(q % rd::kTempAlign == 0);
      }
      std::size_t q = 0;
      CHECK(rd::run<T>(v, nullptr, q, in, -1, out, rd::Sum{}, id) == cudaErrorInvalidValue);
      CHECK(q == 0);
      std::size_t bytes = 0;
      REQUIRE(rd::run<T>(v, nullptr, bytes, in, 64, out, rd::Sum{}, id) == cudaSuccess);
      REQUIRE(bytes <= sizeof(temp) - 16);
      CHECK(rd::run<T>(v, temp, bytes, in, -1, out, rd::Sum{}, id) == cudaErrorInvalidValue);
      CHECK(rd::run<T>(v, temp, bytes, nullptr, 64, out, rd::Sum{}, id) == cudaErrorInvalidValue);
      CHECK(rd::run<T>(v, temp, bytes, in, 64, nullptr, rd::Sum{}, id) == cudaErrorInvalidValue);
      std::size_t small = bytes - 1;
      CHECK(rd::run<T>(v, temp, small, in, 64, out, rd::Sum{}, id) == cudaErrorInvalidValue);
      CHECK(rd::run<T>(v, temp + 8, bytes, in, 64, out, rd::Sum{}, id) == cudaErrorInvalidValue);
      const T* odd = reinterpret_cast<const T*>(reinterpret_cast<const char*>(in) + 1);
      CHECK(rd::run<T>(v, temp, bytes, odd, 32, out, rd::Sum{}, id) == cudaErrorInvalidValue);
      T* odd_out = reinterpret_cast<T*>(reinterpret_cast<char*>(out) + 2);
      CHECK(rd::run<T>(v, temp, bytes, in, 64, odd_out, rd::Sum{}, id) == cudaErrorInvalidValue);
      CHECK(rd::run<T>(v, temp, bytes, in, -5, out, rd::Max{}, rd::Max::identity<T>()) == cudaErrorInvalidValue);
    }
    for (auto x : in) REQUIRE(x == T(7));
    CHECK(out[0] == T(9));
    CHECK(out[1] == T(9));
  }
}

// The project's one graph-capture test: every variant of every family, captured into a CUDA
// graph on a non-default stream (global capture mode, so a launcher that synchronized or
// allocated would break the capture), replayed twice, and checked. Its two files (this one, and
// graph_test_gemm.cu for the two GEMM families) both include every family's header: the build
// proves that the recipes can be included by several files of one program.
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

#include <cmath>
#include <numeric>
#include <string>
#include <vector>

#include "compare.hpp"
#include "device_buffer.hpp"
#include "graph_capture.hpp"
#include "random.hpp"

using smem::test::capture_and_replay;
using smem::test::DeviceBuffer;

TEST_SUITE("gpu") {
  TEST_CASE("transpose: every variant in a graph on a non-default stream") {
    namespace tr = smem::transpose;
    const int rows = 333, cols = 517;
    auto g = smem::test::rng(1);
    const auto h = smem::test::random_vector<float>(std::size_t(rows) * cols, g);
    std::vector<float> expect(h.size());
    for (int r = 0; r < rows; ++r)
      for (int c = 0; c < cols; ++c) expect[std::size_t(c) * rows + r] = h[std::size_t(r) * cols + c];
    DeviceBuffer<float> in(h), out(h.size());
    for (auto v : tr::kAllVariants) {
      CAPTURE(std::string(tr::name(v)));
      out.poison();
      capture_and_replay([&](cudaStream_t s) { return tr::run(v, rows, cols, in.get(), out.get(), s); });
      CHECK(smem::test::first_bit_mismatch(out.download(), tr::transposes(v) ? expect : h) == -1);
    }
  }

  TEST_CASE("reduction: every variant in a graph on a non-default stream") {
    namespace rd = smem::reduction;
    const long long n = 1000003;
    auto g = smem::test::rng(2);
    // int: the exact sum; float: bit for bit the result of the same call made eagerly (a fixed
    // reduction order).
    const auto h = smem::test::random_vector<int>(std::size_t(n), g, -1000, 1000);
    const long long expect = std::accumulate(h.begin(), h.end(), 0LL);
    DeviceBuffer<int> in(h), out(1);
    DeviceBuffer<float> fin(smem::test::random_vector<float>(std::size_t(n), g)), fout(1);
    for (auto v : rd::kAllVariants) {
      CAPTURE(std::string(rd::name(v)));
      std::size_t bytes = 0, fbytes = 0;
      REQUIRE(rd::run<int>(v, nullptr, bytes, in.get(), n, out.get(), rd::Sum{}, 0) == cudaSuccess);
      REQUIRE(rd::run<float>(v, nullptr, fbytes, fin.get(), n, fout.get(), rd::Sum{}, 0.0f) == cudaSuccess);
      DeviceBuffer<unsigned char> temp(bytes), ftemp(fbytes);
      temp.poison(0xA5);  // contents the launcher must not rely on (step 10 reads its counter word)
      ftemp.poison(0xA5);
      out.poison();
      capture_and_replay([&](cudaStream_t s) {
        return rd::run<int>(v, temp.get(), bytes, in.get(), n, out.get(), rd::Sum{}, 0, s);
      });
      CHECK(out.download()[0] == expect);

      fout.poison();
      REQUIRE(rd::run<float>(v, ftemp.get(), fbytes, fin.get(), n, fout.get(), rd::Sum{}, 0.0f) == cudaSuccess);
      SMEM_CUDA_CHECK(cudaDeviceSynchronize());
      const auto eager = fout.download();
      REQUIRE(!std::isnan(eager[0]));
      fout.poison();
      capture_and_replay([&](cudaStream_t s) {
        return rd::run<float>(v, ftemp.get(), fbytes, fin.get(), n, fout.get(), rd::Sum{}, 0.0f, s);
      });
      CHECK(smem::test::first_bit_mismatch(fout.download(), eager) == -1);
    }
  }

  TEST_CASE("scan: every variant in a graph on a non-default stream") {
    namespace sc = smem::scan;
    const long long n = 1000003;
    auto g = smem::test::rng(5);
    // The workspace is reused by both replays: the launchers must reset what they rely on.
    const auto h = smem::test::random_vector<int>(std::size_t(n), g, -1000, 1000);
    for (sc::Kind kind : {sc::Kind::inclusive, sc::Kind::exclusive}) {
      std::vector<int> expect(h.size());
      int acc = 0;
      for (std::size_t i = 0; i < h.size(); ++i) {
        if (kind == sc::Kind::exclusive) expect[i] = acc;
        acc += h[i];
        if (kind == sc::Kind::inclusive) expect[i] = acc;
      }
      DeviceBuffer<int> in(h), out(h.size());
      for (auto v : sc::kAllVariants) {
        CAPTURE(std::string(sc::name(v)));
        std::size_t bytes = 0;
        REQUIRE(sc::run<int>(v, nullptr, bytes, in.get(), out.get(), n, cuda::std::plus<int>{}, 0, kind) ==
                cudaSuccess);
        DeviceBuffer<unsigned char> temp(bytes);
        temp.poison(0xA5);
        out.poison();
        capture_and_replay([&](cudaStream_t s) {
          return sc::run<int>(v, temp.get(), bytes, in.get(), out.get(), n, cuda::std::plus<int>{}, 0, kind, s);
        });
        CHECK(out.download() == expect);
      }
    }
  }

  TEST_CASE("histogram: every variant in a graph on a non-default stream") {
    namespace hg = smem::histogram;
    const long long n = 1000003;
    auto g = smem::test::rng(6);
    // The counts start poisoned and each replay must zero them itself: two replays, one result.
    const auto h = smem::test::random_vector<float>(std::size_t(n), g, -0.1f, 1.1f);
    const auto host_counts = [&](int bins) {
      std::vector<hg::Counter> c(std::size_t(bins), 0);
      const auto rule = hg::Even<float>::make(bins, 0.f, 1.f);
      for (float x : h)
        if (const int b = rule.bin(x); b >= 0) ++c[std::size_t(b)];
      return c;
    };
    const auto expect = host_counts(1024);
    DeviceBuffer<float> in(h);
    DeviceBuffer<hg::Counter> out(1024), small(256);
    for (auto v : hg::kAllVariants) {
      CAPTURE(std::string(hg::name(v)));
      const bool wide = hg::fits<float>(v, 1024);  // step 7 holds 256 bins
      DeviceBuffer<hg::Counter>& o = wide ? out : small;
      o.poison();
      capture_and_replay(
          [&](cudaStream_t s) { return hg::run<float>(v, in.get(), n, o.get(), wide ? 1024 : 256, 0.f, 1.f, s); });
      CHECK(o.download() == (wide ? expect : host_counts(256)));
    }
    std::vector<float> levels(1025);
    for (int k = 0; k <= 1024; ++k) levels[std::size_t(k)] = float(k) / 1024;
    DeviceBuffer<float> dl(levels);
    out.poison();
    capture_and_replay(
        [&](cudaStream_t s) { return hg::shared_atomics_range<float>(in.get(), n, out.get(), 1024, dl.get(), s); });
    CHECK(out.download() == expect);  // edges k / 1024: the same bins as the even rule
  }
  TEST_CASE("stencil: every variant in a graph on a non-default stream") {
    namespace st = smem::stencil;
    // Bit for bit the result of the same call made eagerly (every step sums in a fixed order).
    // The convolution runs twice in the graph with different filters and outputs: each launch's
    // filter copy is ordered with its kernel.
    const int h = 333, w = 517, nx = 132, ny = 35, nz = 41;
    auto g = smem::test::rng(6);
    DeviceBuffer<float> img(smem::test::random_vector<float>(std::size_t(h) * w, g));
    DeviceBuffer<float> f2(smem::test::random_vector<float>(25, g)), f1(smem::test::random_vector<float>(9, g));
    DeviceBuffer<float> out2(std::size_t(h) * w), out1(std::size_t(h) * w);
    for (auto v : st::kConv2dVariants) {
      CAPTURE(std::string(st::name(v)));
      REQUIRE(st::run_conv2d(v, img.get(), out2.get(), h, w, f2.get(), 2) == cudaSuccess);
      REQUIRE(st::run_conv2d(v, img.get(), out1.get(), h, w, f1.get(), 1) == cudaSuccess);
      SMEM_CUDA_CHECK(cudaDeviceSynchronize());
      const auto eager2 = out2.download(), eager1 = out1.download();
      out2.poison();
      out1.poison();
      capture_and_replay([&](cudaStream_t s) {
        const cudaError_t e = st::run_conv2d(v, img.get(), out2.get(), h, w, f2.get(), 2, s);
        return e != cudaSuccess ? e : st::run_conv2d(v, img.get(), out1.get(), h, w, f1.get(), 1, s);
      });
      CHECK(smem::test::first_bit_mismatch(out2.download(), eager2) == -1);
      CHECK(smem::test::first_bit_mismatch(out1.download(), eager1) == -1);
    }
    DeviceBuffer<float> grid(smem::test::random_vector<float>(std::size_t(nx) * ny * nz, g)), out(grid.size());
    const st::Coefficients c{-6.0f / 7, 0.75f, 1.25f, 0.5f};
    for (auto v : st::kStencil7Variants) {
      CAPTURE(std::string(st::name(v)));
      REQUIRE(st::run_7point(v, grid.get(), out.get(), nx, ny, nz, c) == cudaSuccess);
      SMEM_CUDA_CHECK(cudaDeviceSynchronize());
      const auto eager = out.download();
      out.poison();
      capture_and_replay([&](cudaStream_t s) { return st::run_7point(v, grid.get(), out.get(), nx, ny, nz, c, s); });
      CHECK(smem::test::first_bit_mismatch(out.download(), eager) == -1);
    }
  }
}

// Stencil: every variant of both ladders against a float64 CPU reference (zero padding), on fresh
// random data with the output poisoned (NaN) and a guard after it checked untouched; shapes that
// are not tile multiples, 1 x N and N x 1 images, radii larger than the image, every radius from
// 1 to 8, pointers off a 16-byte boundary (the scalar paths), NaN and infinities; the step lists;
// the steps' shared-memory maps; the bank model on every warp request of the kernels
// (common/stencil_bank_access.hpp, from the kernels' own maps), held against Nsight Compute's
// counters once results/*/banks.json has stencil kernels. (Bad arguments: bad_input_test.cu;
// graph capture: graph_test.cu.)
#include <doctest/doctest.h>

#include <stencil/stencil.cuh>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <iterator>
#include <limits>
#include <optional>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

#include "bank_evidence.hpp"
#include "bank_model.hpp"
#include "device_buffer.hpp"
#include "gpu.hpp"
#include "random.hpp"
#include "stencil_bank_access.hpp"

namespace st = smem::stencil;
namespace sa = smem::test::stencil_access;
using smem::test::DeviceBuffer;

namespace {

constexpr int kGuard = 37;  // poisoned elements after the output that must stay untouched
constexpr double kEps = std::numeric_limits<float>::epsilon();

/// A float64 result and, per point, the sum of |weight x input| of its terms: the scale of the
/// rounding error of any float evaluation order.
struct Reference {
  std::vector<double> value, magnitude;
};

/// The 2D convolution in float64: out[y][x] = sum f[i][j] in[y + i - r][x + j - r], 0 outside.
Reference conv2d_reference(const std::vector<float>& in, int h, int w, const std::vector<float>& f, int r) {
  const int k = 2 * r + 1;
  Reference ref{std::vector<double>(std::size_t(h) * w), std::vector<double>(std::size_t(h) * w)};
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      double s = 0, m = 0;
      for (int i = 0; i < k; ++i) {
        const int yy = y + i - r;
        if (yy < 0 || yy >= h) continue;
        for (int j = 0; j < k; ++j) {
          const int xx = x + j - r;
          if (xx < 0 || xx >= w) continue;
          const double t = double(f[i * k + j]) * in[std::size_t(yy) * w + xx];
          s += t, m += std::fabs(t);
        }
      }
      ref.value[std::size_t(y) * w + x] = s, ref.magnitude[std::size_t(y) * w + x] = m;
    }
  return ref;
}

/// The 7-point stencil in float64, 0 outside the grid.
Reference st7_reference(const std::vector<float>& in, int nx, int ny, int nz, st::Coefficients c) {
  const std::size_t n = std::size_t(nx) * ny * nz;
  Reference ref{std::vector<double>(n), std::vector<double>(n)};
  const auto u = [&](long long x, long long y, long long z) {
    return x < 0 || x >= nx || y < 0 || y >= ny || z < 0 || z >= nz ? 0.0 : double(in[(z * ny + y) * nx + x]);
  };
  for (int z = 0; z < nz; ++z)
    for (int y = 0; y < ny; ++y)
      for (int x = 0; x < nx; ++x) {
        const double t[4] = {c.center * u(x, y, z), c.x * (u(x - 1, y, z) + u(x + 1, y, z)),
                             c.y * (u(x, y - 1, z) + u(x, y + 1, z)), c.z * (u(x, y, z - 1) + u(x, y, z + 1))};
        const double m = std::fabs(c.center * u(x, y, z)) +
                         std::fabs(c.x) * (std::fabs(u(x - 1, y, z)) + std::fabs(u(x + 1, y, z))) +
                         std::fabs(c.y) * (std::fabs(u(x, y - 1, z)) + std::fabs(u(x, y + 1, z))) +
                         std::fabs(c.z) * (std::fabs(u(x, y, z - 1)) + std::fabs(u(x, y, z + 1)));
        const std::size_t i = (std::size_t(z) * ny + y) * nx + x;
        ref.value[i] = t[0] + t[1] + t[2] + t[3], ref.magnitude[i] = m;
      }
  return ref;
}

/// Points outside |got - ref| <= terms x eps x magnitude (a NaN in the reference must be a NaN,
/// an infinity the same infinity).
long long outside(const std::vector<float>& got, const Reference& ref, double terms) {
  long long bad = 0;
  for (std::size_t i = 0; i < got.size(); ++i) {
    const double r = ref.value[i], g = got[i];
    if (std::isnan(r) || std::isinf(r)) bad += !(std::isnan(r) ? std::isnan(g) : g == r);
    else bad += !(std::fabs(g - r) <= terms * kEps * ref.magnitude[i] + 1e-37);
  }
  return bad;
}

/// A random filter with no zero tap (so that a NaN reaches every output in its window).
std::vector<float> random_filter(int r, std::mt19937_64& g) {
  auto f = smem::test::random_vector<float>(std::size_t(2 * r + 1) * (2 * r + 1), g, 0.1f, 1.0f);
  std::uniform_int_distribution<int> sign(0, 1);
  for (auto& x : f) x = sign(g) ? x : -x;
  return f;
}

/// Runs variant v on d_in into a poisoned buffer `offset` elements in, with kGuard poisoned
/// elements after; checks the launch, the guard; returns the output.
template <class Run>
std::vector<float> run_poisoned(std::size_t n, int offset, Run&& run) {
  DeviceBuffer<float> out(n + offset + kGuard);
  out.poison();
  REQUIRE(run(out.get() + offset) == cudaSuccess);
  SMEM_CUDA_CHECK(cudaDeviceSynchronize());
  const auto all = out.download();
  std::vector<unsigned char> guard(kGuard * sizeof(float));
  std::memcpy(guard.data(), all.data() + offset + n, guard.size());
  CHECK(std::all_of(guard.begin(), guard.end(), [](unsigned char b) { return b == 0xFF; }));
  return {all.begin() + offset, all.begin() + offset + std::ptrdiff_t(n)};
}

/// Every convolution variant on an h x w image with radius r, input and output `offset`
/// elements off an aligned allocation; `h_in` given or random.
void check_conv2d(int h, int w, int r, int offset = 0, std::vector<float> h_in = {}) {
  CAPTURE(h);
  CAPTURE(w);
  CAPTURE(r);
  CAPTURE(offset);
  const std::size_t n = std::size_t(h) * w;
  auto g = smem::test::rng(std::uint64_t(h) * 7919 + std::uint64_t(w) * 31 + r + offset);
  if (h_in.empty()) h_in = smem::test::random_vector<float>(n, g);
  const auto f = random_filter(r, g);
  const Reference ref = conv2d_reference(h_in, h, w, f, r);
  DeviceBuffer<float> in(n + offset), filter(f);
  SMEM_CUDA_CHECK(cudaMemcpy(in.get() + offset, h_in.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  for (auto v : st::kConv2dVariants) {
    CAPTURE(st::name(v));
    const auto got = run_poisoned(n, offset, [&](float* o) {
      return st::run_conv2d(v, in.get() + offset, o, h, w, filter.get(), r);
    });
    CHECK(outside(got, ref, 2.0 * (2 * r + 1) * (2 * r + 1)) == 0);
  }
}

/// Every 7-point variant on an nx x ny x nz grid, pointers `offset` elements off.
void check_7point(int nx, int ny, int nz, int offset = 0, std::vector<float> h_in = {}) {
  CAPTURE(nx);
  CAPTURE(ny);
  CAPTURE(nz);
  CAPTURE(offset);
  const std::size_t n = std::size_t(nx) * ny * nz;
  auto g = smem::test::rng(std::uint64_t(nx) * 7919 + std::uint64_t(ny) * 31 + nz + offset);
  if (h_in.empty()) h_in = smem::test::random_vector<float>(n, g);
  const st::Coefficients c{-6.0f / 7, 0.75f, 1.25f, 0.5f};
  const Reference ref = st7_reference(h_in, nx, ny, nz, c);
  DeviceBuffer<float> in(n + offset);
  SMEM_CUDA_CHECK(cudaMemcpy(in.get() + offset, h_in.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  for (auto v : st::kStencil7Variants) {
    CAPTURE(st::name(v));
    const auto got =
        run_poisoned(n, offset, [&](float* o) { return st::run_7point(v, in.get() + offset, o, nx, ny, nz, c); });
    CHECK(outside(got, ref, 16) == 0);
  }
}

template <class Walk>
bool conflict_free(Walk&& walk) {
  bool ok = true;
  walk([&](const smem::test::Request& r) { ok = ok && r.cost().conflict_free(); });
  return ok;
}

/// The bank model's prediction for each variant's kernel at the profiled shapes (the convolution
/// at radius 2, the 7-point over full slabs).
std::optional<smem::test::BankPrediction> stencil_bank_prediction(const std::string& variant) {
  using smem::test::predict;
  if (variant == "conv2d_halo_tile") return predict([](auto&& v) { sa::halo_tile(2, v); });
  if (variant == "conv2d_cached_halo") return predict([](auto&& v) { sa::cached_halo(2, v); });
  if (variant == "conv2d_coarsened") return predict([](auto&& v) { sa::coarsened<2>(v); });
  if (variant == "st7_smem_3d") return predict([](auto&& v) { sa::smem_3d(v); });
  if (variant == "st7_planes") return predict([](auto&& v) { sa::planes_step(v); });
  if (variant == "st7_registers") return predict([](auto&& v) { sa::registers_step(v); });
  if (variant == "st7_cluster") return predict([](auto&& v) { sa::cluster(v); });
  if (variant == "st7_tma") return predict([](auto&& v) { sa::tma_slab_step(v); });
  if (variant == "conv2d_tma") return predict([](auto&& v) { sa::tma_tile<2>(v); });
  if (variant.find("naive") != std::string::npos || variant == "conv2d_constant")
    return smem::test::BankPrediction{};  // no shared memory
  return std::nullopt;
}

bool stencil_measured() {
  for (const auto& m : smem::test::load_bank_measurements(SMEM_RESULTS_DIR))
    if (m.benchmark.rfind("stencil/", 0) == 0) return true;
  return false;
}

}  // namespace

TEST_SUITE("host") {
  TEST_CASE("the step lists: two ladders, one table") {
    CHECK(std::size(st::kSteps) == std::size(st::kConv2dSteps) + std::size(st::kStencil7Steps));
    for (auto v : st::kConv2dVariants) CHECK(std::string(st::name(v)).rfind("conv2d_", 0) == 0);
    for (auto v : st::kStencil7Variants) CHECK(std::string(st::name(v)).rfind("st7_", 0) == 0);
    float a[4] = {}, b[4] = {}, f[9] = {};
    // A variant of the other ladder is rejected by each dispatcher, before any CUDA call.
    CHECK(st::run_conv2d(st::Variant::st7_naive, a, b, 2, 2, f, 1) == cudaErrorInvalidValue);
    CHECK(st::run_7point(st::Variant::conv2d_naive, a, b, 2, 2, 1, {}) == cudaErrorInvalidValue);
    CHECK(st::plan_conv2d(st::Variant::st7_naive, 8, 8, 1).kernel == nullptr);
    CHECK(st::plan_7point(st::Variant::conv2d_naive, 8, 8, 8).kernel == nullptr);
  }

  TEST_CASE("the float64 references: zero padding, a radius larger than the image") {
    // A 1 x 1 image: only the centre tap sees a pixel, whatever the radius.
    for (int r : {1, 4, 8}) {
      std::vector<float> f((2 * r + 1) * (2 * r + 1), 1.0f);
      f[r * (2 * r + 1) + r] = 3.0f;
      CHECK(conv2d_reference({2.0f}, 1, 1, f, r).value[0] == 6.0);
    }
    // 1 x 3 image, 3 x 3 box filter: each output sums its row neighbours.
    const auto row = conv2d_reference({1.f, 2.f, 4.f}, 1, 3, std::vector<float>(9, 1.0f), 1);
    CHECK(row.value == std::vector<double>{3, 7, 6});
    // Asymmetric filter: tap (i, j) multiplies in[y + i - r][x + j - r] (not flipped).
    std::vector<float> shift(9, 0.0f);
    shift[1 * 3 + 2] = 1.0f;  // reads x + 1
    CHECK(conv2d_reference({1.f, 2.f, 4.f}, 1, 3, shift, 1).value == std::vector<double>{2, 4, 0});
    // 7-point on 2 x 1 x 1: the x neighbours only.
    const auto s = st7_reference({1.f, 10.f}, 2, 1, 1, {2.f, 3.f, 5.f, 7.f});
    CHECK(s.value == std::vector<double>{2 + 30, 20 + 3});
    const auto z = st7_reference({1.f, 10.f}, 1, 1, 2, {2.f, 3.f, 5.f, 7.f});
    CHECK(z.value == std::vector<double>{2 + 70, 20 + 7});
  }

  TEST_CASE("step 5 of the convolution: each thread's windows hold its taps, the tile is loaded once") {
    const auto check = [](auto radius) {
      constexpr int R = decltype(radius)::value;
      using S = st::CoarseShape<R>;
      CAPTURE(R);
      CHECK(S::kPad % 4 == 0);
      CHECK(S::kPad >= R);
      for (int c = 0; c < S::kCols; ++c)
        for (int j = 0; j < 2 * R + 1; ++j) {
          CHECK(c + j + S::kPad - R >= 0);
          CHECK(c + j + S::kPad - R < 4 * S::kWindow);
        }
      // Window vector q of thread tx starts at tile column 4 (tx + q): every tap column is in it,
      // and the last thread's window stays inside the row.
      CHECK(4 * (S::kThreadsX - 1 + S::kWindow) <= S::kPitch);
      std::vector<int> seen(S::kInRows * S::kPitch, 0);
      for (int e = 0; e < S::kVecs; ++e)
        for (int k = 0; k < 4; ++k) ++seen[S::load_offset(e) + k];
      CHECK(std::count(seen.begin(), seen.end(), 1) == int(seen.size()));
      CHECK(S::kInRows * S::kPitch * sizeof(float) <= 48 * 1024);  // static shared memory
    };
    check(std::integral_constant<int, 1>{});
    check(std::integral_constant<int, 2>{});
    check(std::integral_constant<int, 3>{});
    check(std::integral_constant<int, 4>{});
    check(std::integral_constant<int, 8>{});
  }

  TEST_CASE("the 7-point plane of steps 4 and 5: aligned vectors, distinct words, halo in place") {
    using P = st::RegisterPlane;
    std::vector<int> seen(P::kWords, 0);
    for (int row = -1; row <= P::kTileY; ++row)
      for (int col = -1; col <= P::kTileX; ++col) ++seen[P::offset(row, col)];
    CHECK(std::count(seen.begin(), seen.end(), 1) == (P::kTileY + 2) * (P::kTileX + 2));
    for (int tx = 0; tx < P::kThreadsX; ++tx)
      for (int dy : {-1, 0, 1}) CHECK(P::vector_offset(tx, 3, dy) % 4 == 0);
    for (int t = 0; t < P::kXHaloThreads; ++t) {
      CHECK(P::x_halo_row(t) == t / 2);
      CHECK((P::x_halo_col(t) == -1 || P::x_halo_col(t) == P::kTileX));
    }
    CHECK(st::halo_offset(2, 1, 0) == 36);
    CHECK(st::box3d_offset(1, 0, 0) == (st::kBox3dY + 2) * (st::kBox3dX + 2));
  }

  TEST_CASE("bank model: every shared access of both ladders is conflict-free but the x-halo stores") {
    CHECK(conflict_free([](auto&& v) { sa::halo_tile(2, v); }));
    CHECK(conflict_free([](auto&& v) { sa::halo_tile(8, v); }));
    CHECK(conflict_free([](auto&& v) { sa::cached_halo(2, v); }));
    CHECK(conflict_free([](auto&& v) { sa::coarsened<2>(v); }));
    CHECK(conflict_free([](auto&& v) { sa::coarsened<4>(v); }));
    CHECK(conflict_free([](auto&& v) { sa::coarsened<8>(v); }));
    CHECK(conflict_free([](auto&& v) { sa::smem_3d(v); }));
    CHECK(conflict_free([](auto&& v) { sa::planes_step(v); }));
    CHECK(conflict_free([](auto&& v) { sa::tma_slab_step(v); }));
    CHECK(conflict_free([](auto&& v) { sa::update4("rows", v); }));
    // The x halo's 16 words: rows r at r * kPitch + 3 and r * kPitch + 132, kPitch = 136 = 8 mod 32:
    // rows r and r + 4 share a bank.
    const auto worst = smem::test::worst_by_access([](auto&& v) { sa::stage_slice(v); });
    REQUIRE(worst.size() == 3);
    CHECK(worst[0].cost.conflict_free());
    CHECK(worst[1].cost.conflict_free());
    CHECK(worst[2].cost.wavefronts == 2);
  }

  TEST_CASE("bank model agrees with Nsight Compute's measured wavefronts (results/*/banks.json)" *
            doctest::skip(!stencil_measured())) {
    const auto not_modelled = smem::test::check_bank_evidence(
        "stencil", [](const std::string& v, const smem::test::BankMeasurement&) { return stencil_bank_prediction(v); });
    CHECK(not_modelled.empty());
  }
}

TEST_SUITE("gpu") {
  TEST_CASE("convolution: every variant, shapes that are not tile multiples, 1 x N and N x 1") {
    for (auto [h, w] : {std::pair{1, 1}, {1, 7}, {7, 1}, {1, 1000}, {1000, 1}, {37, 1001}, {64, 128}, {65, 132},
                        {130, 260}})
      for (int r : {1, 2, 4})
        check_conv2d(h, w, r);
    if (!smem::test::small_shapes_only()) {
      check_conv2d(1000, 1003, 2);
      check_conv2d(1000, 1003, 4);
      check_conv2d(1024, 2048, 2);
    }
  }

  TEST_CASE("convolution: every radius from 1 to 8, and radii larger than the image") {
    for (int r = 1; r <= st::kMaxRadius; ++r) check_conv2d(67, 131, r);
    for (auto [h, w] : {std::pair{1, 1}, {2, 3}, {3, 2}, {5, 5}, {1, 9}, {9, 1}}) check_conv2d(h, w, st::kMaxRadius);
  }

  TEST_CASE("convolution: pointers off a 16-byte boundary take the scalar path") {
    for (int offset : {1, 2, 3}) {
      check_conv2d(70, 132, 2, offset);
      check_conv2d(33, 129, 4, offset);
    }
  }

  TEST_CASE("7-point: every variant, odd sizes, a 128^3 grid") {
    for (auto [nx, ny, nz] : {std::tuple{1, 1, 1}, {3, 5, 7}, {33, 17, 65}, {1, 1, 100}, {100, 1, 1}, {1, 100, 1},
                              {132, 9, 70}, {129, 8, 33}, {128, 16, 64}, {260, 35, 5}})
      check_7point(nx, ny, nz);
    if (!smem::test::small_shapes_only()) {
      check_7point(128, 128, 128);
      check_7point(260, 37, 129);
    }
  }

  TEST_CASE("7-point: pointers off a 16-byte boundary take the scalar path") {
    for (int offset : {1, 2, 3}) check_7point(132, 9, 70, offset);
  }

  TEST_CASE("NaN and infinities propagate to exactly the points the reference has them") {
    const int h = 70, w = 260;
    auto g = smem::test::rng(99);
    auto img = smem::test::random_vector<float>(std::size_t(h) * w, g);
    img[5 * w + 7] = std::numeric_limits<float>::quiet_NaN();  // near a corner
    img[40 * w + 128] = std::numeric_limits<float>::infinity();  // on a tile boundary of step 5
    img[69 * w + 259] = -std::numeric_limits<float>::infinity();
    check_conv2d(h, w, 2, 0, img);
    const int nx = 132, ny = 9, nz = 40;
    auto grid = smem::test::random_vector<float>(std::size_t(nx) * ny * nz, g);
    grid[(std::size_t(16) * ny + 8) * nx + 127] = std::numeric_limits<float>::quiet_NaN();  // slab and tile edges
    grid[(std::size_t(31) * ny + 0) * nx + 0] = std::numeric_limits<float>::infinity();
    grid[(std::size_t(32) * ny + 4) * nx + 64] = -std::numeric_limits<float>::infinity();
    check_7point(nx, ny, nz, 0, grid);
  }

  TEST_CASE("a launch does not depend on what the previous one left in constant memory") {
    const int h = 45, w = 77;
    auto g = smem::test::rng(7);
    const auto img = smem::test::random_vector<float>(std::size_t(h) * w, g);
    const auto f2 = random_filter(2, g), f1 = random_filter(1, g);
    DeviceBuffer<float> in(img), d2(f2), d1(f1), out(img.size());
    const Reference ref = conv2d_reference(img, h, w, f1, 1);
    for (auto v : st::kConv2dVariants) {
      CAPTURE(st::name(v));
      REQUIRE(st::run_conv2d(v, in.get(), out.get(), h, w, d2.get(), 2) == cudaSuccess);
      out.poison();
      REQUIRE(st::run_conv2d(v, in.get(), out.get(), h, w, d1.get(), 1) == cudaSuccess);
      CHECK(outside(out.download(), ref, 18) == 0);
    }
  }
}

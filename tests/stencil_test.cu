// Stencil: every variant of both ladders against a float64 CPU reference (zero padding), on fresh
// random data with the output poisoned (NaN) and a guard after it checked untouched; shapes that
// are not tile multiples, 1 x N and N x 1 images, radii larger than the image, every radius from
// 1 to 8, pointers off a 16-byte boundary (the scalar paths), NaN and infinities; the step lists;
// the steps' shared-memory maps; the bank model on every warp request of the kernels
// (support/stencil_bank_access.hpp, from the kernels' own maps), held against Nsight Compute's
// counters once results/*/banks.json has stencil kernels; every step's plan and refusals at sizes up
// to INT_MAX (host), and in the "large" suite every step on images and grids of 2^31 - 1 points and
// more, checked exactly on the GPU with the output's guards. (Bad arguments: bad_input_test.cu;
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
#include "limits.cuh"
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

constexpr int kIntMax = std::numeric_limits<int>::max();

long long ceil_div(long long n, long long t) { return (n + t - 1) / t; }

/// A convolution step's blocks on an h x w image, one per tile (README.md, "Accepted sizes").
long long conv2d_blocks(st::Variant v, long long h, long long w) {
  switch (v) {
    case st::Variant::conv2d_naive:
    case st::Variant::conv2d_constant: return ceil_div(h, 8) * ceil_div(w, 32);
    case st::Variant::conv2d_halo_tile:
    case st::Variant::conv2d_cached_halo: return ceil_div(h, 32) * ceil_div(w, 32);
    default: return ceil_div(h, 64) * ceil_div(w, 128);
  }
}

/// A 7-point step's blocks on an nx x ny x nz grid: one per tile, but step 1 holds as many planes
/// of tiles as 2^31 - 1 blocks do (README.md, "Accepted sizes").
long long st7_blocks(st::Variant v, long long nx, long long ny, long long nz) {
  switch (v) {
    case st::Variant::st7_naive: {
      const long long plane = ceil_div(nx, 32) * ceil_div(ny, 8);
      return plane > kIntMax ? plane : plane * std::min(nz, kIntMax / plane);
    }
    case st::Variant::st7_smem_3d: return ceil_div(nx, 32) * ceil_div(ny, 4) * ceil_div(nz, 4);
    case st::Variant::st7_planes: return ceil_div(nx, 32) * ceil_div(ny, 8) * ceil_div(nz, 32);
    case st::Variant::st7_registers: return ceil_div(nx, 128) * ceil_div(ny, 8) * ceil_div(nz, 32);
    case st::Variant::st7_cluster: return 4 * ceil_div(nx, 128) * ceil_div(ny, 8) * ceil_div(nz, 64);
    default: return ceil_div(nx, 256) * ceil_div(ny, 32) * ceil_div(nz, 3);
  }
}

/// True when the launcher refuses the grid: its own grid does not fit, and step 6, which runs step 4
/// where its grid does not fit, only when neither fits.
bool st7_refused(st::Variant v, long long nx, long long ny, long long nz) {
  const bool own = st7_blocks(v, nx, ny, nz) > kIntMax;
  return v == st::Variant::st7_tma ? own && st7_blocks(st::Variant::st7_registers, nx, ny, nz) > kIntMax : own;
}

/// Two arrays of `points` floats, adjacent, aligned and never dereferenced: arguments for the checks
/// at sizes no device holds.
std::pair<float*, float*> dummy_arrays(unsigned long long points) {
  const std::uintptr_t a = 256, b = a + points * sizeof(float);
  return {reinterpret_cast<float*>(a), reinterpret_cast<float*>(b)};
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

  TEST_CASE("sizes up to INT_MAX: tile counts, every step's plan, refusals before any CUDA call") {
    CHECK(st::tiles_along(kIntMax, 32) == 1 << 26);
    CHECK(st::tiles_along(kIntMax - 31, 32) == (1 << 26) - 1);  // 2^31 - 32: whole tiles
    CHECK(st::tiles_along(kIntMax, 3) == 715827883);
    CHECK(st::tiles_along(kIntMax, 1) == kIntMax);
    CHECK(st::tiles_along(1, 256) == 1);
    CHECK(st::tiles_along(0, 8) == 0);
    CHECK(st::tile_count(kIntMax, kIntMax, 1, 1) == (long long)kIntMax * kIntMax);
    CHECK(st::tile_count(kIntMax, kIntMax, 64, 128) == 1LL << 49);

    // Every plan: one block per tile where that fits 2^31 - 1, null (refused) where it does not; on
    // the large suite's shapes, and on pairs of shapes on either side of each step's limit.
    const std::pair<int, int> images[] = {
        {1, kIntMax},          {kIntMax, 1},          {1, kIntMax - 3},      {kIntMax, 4},     {46341, 46344},
        {2147483641, 224},     {2147483641, 225},     {992, 2147483617},     {993, 2147483617},
        {2147483585, 8064},    {2147483585, 8065},    {kIntMax, kIntMax}};
    for (const auto& image : images)
      for (auto v : st::kConv2dVariants) {
        const int h = image.first, w = image.second;
        CAPTURE(st::name(v));
        CAPTURE(h);
        CAPTURE(w);
        const long long blocks = conv2d_blocks(v, h, w);
        const auto plan = st::plan_conv2d(v, h, w, 2);
        CHECK((plan.kernel != nullptr) == (blocks <= kIntMax));
        if (plan.kernel != nullptr) CHECK(plan.grid.x == unsigned(blocks));
        if (blocks <= kIntMax || (long long)h * w > st::kMaxPoints) continue;
        const auto [in, out] = dummy_arrays((unsigned long long)h * w);
        CHECK(st::run_conv2d(v, in, out, h, w, reinterpret_cast<const float*>(std::uintptr_t(16)), 2) ==
              cudaErrorInvalidValue);
      }
    const std::tuple<int, int, int> grids[] = {
        {kIntMax, 1, 1},          {1, kIntMax, 1},          {1, 1, kIntMax},          {kIntMax - 3, 1, 1},
        {4, kIntMax, 1},          {1292, 1292, 1287},       {46344, 46341, 1},        {1, 9, 1 << 30},
        {224, 2147483641, 1},     {225, 2147483641, 1},     {1, 13, 2147483644},      {1, 13, 2147483645},
        {1, 248, 2147483617},     {1, 249, 2147483617},     {1, 120, 2147483585},     {1, 121, 2147483585},
        {4, 64, kIntMax},         {4, 65, kIntMax},         {1 << 20, 1 << 20, (1 << 21) - 1}};
    for (const auto& grid : grids)
      for (auto v : st::kStencil7Variants) {
        const int nx = std::get<0>(grid), ny = std::get<1>(grid), nz = std::get<2>(grid);
        CAPTURE(st::name(v));
        CAPTURE(nx);
        CAPTURE(ny);
        CAPTURE(nz);
        const long long blocks = st7_blocks(v, nx, ny, nz);
        const auto plan = st::plan_7point(v, nx, ny, nz);
        CHECK((plan.kernel != nullptr) == (blocks <= kIntMax));
        if (plan.kernel != nullptr) CHECK(plan.grid.x == unsigned(blocks));
        if (!st7_refused(v, nx, ny, nz)) continue;
        const auto [in, out] = dummy_arrays((unsigned long long)nx * ny * nz);
        CHECK(st::run_7point(v, in, out, nx, ny, nz, st::Coefficients{1, 1, 1, 1}) == cudaErrorInvalidValue);
      }
    // Step 1 of the 7-point stencil on 1 x 9 x 2^30 (2^31 blocks of one plane each): a grid of
    // 2^30 - 1 planes of 2 tiles; the blocks of plane 0 also take the last plane.
    CHECK(st::st7_naive_plan(1, 9, 1 << 30).grid.x == 2u * ((1u << 30) - 1));

    // Arrays of more than kMaxPoints = 2^61 - 1 floats are invalid; at the limit the checks pass
    // (the grids are then refused: see above).
    const float* f = reinterpret_cast<const float*>(std::uintptr_t(16));
    {
      const auto [in, out] = dummy_arrays((1ULL << 30) * kIntMax);
      CHECK(st::check_conv2d_args(in, out, 1 << 30, kIntMax, f, 2) == st::Args::launch);
      const auto [in2, out2] = dummy_arrays(((1ULL << 30) + 1) * kIntMax);
      CHECK(st::check_conv2d_args(in2, out2, (1 << 30) + 1, kIntMax, f, 2) == st::Args::invalid);
    }
    {
      const auto [in, out] = dummy_arrays(st::kMaxPoints);
      CHECK(st::check_7point_args(in, out, 1 << 20, 1 << 20, (1 << 21) - 1) == st::Args::launch);
      CHECK(st::check_7point_args(in, out, 1 << 20, 1 << 20, 1 << 21) == st::Args::invalid);
    }
    alignas(16) static float buf[64];
    for (auto v : st::kConv2dVariants)
      CHECK(st::run_conv2d(v, buf, buf + 32, kIntMax, kIntMax, buf + 48, 1) == cudaErrorInvalidValue);
    for (auto v : st::kStencil7Variants) {
      CHECK(st::run_7point(v, buf, buf + 32, kIntMax, kIntMax, kIntMax, {}) == cudaErrorInvalidValue);
      CHECK(st::run_7point(v, buf, buf + 32, 1 << 20, 1 << 20, 1 << 21, {}) == cudaErrorInvalidValue);
    }
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

  TEST_CASE("7-point step 1 on a grid of fewer blocks than tiles and planes walks the planes") {
    // The grid st7_naive_plan launches where one block per tile and plane would pass 2^31 - 1
    // blocks (1 x 9 x 2^30 points and more), here on a small grid.
    const int nx = 33, ny = 9, nz = 11;  // 2 x 2 tiles a plane
    const std::size_t n = std::size_t(nx) * ny * nz;
    auto g = smem::test::rng(1101);
    const auto h_in = smem::test::random_vector<float>(n, g);
    const st::Coefficients c{-6.0f / 7, 0.75f, 1.25f, 0.5f};
    const Reference ref = st7_reference(h_in, nx, ny, nz, c);
    DeviceBuffer<float> in(h_in);
    auto plan = st::st7_naive_plan(nx, ny, nz);
    REQUIRE(plan.grid.x == 4u * nz);
    for (unsigned planes : {1u, 2u, 3u, 10u}) {
      CAPTURE(planes);
      plan.grid.x = 4 * planes;
      const auto got =
          run_poisoned(n, 0, [&](float* o) { return st::launch(plan, nullptr, in.get(), o, nx, ny, nz, c); });
      CHECK(outside(got, ref, 16) == 0);
    }
  }
}

namespace {

/// The large tests' coefficients and taps: small integers, as the inputs (SmallIntOfIndex), so that
/// every product and sum is an integer far below 2^24 and exact in float, in any order.
constexpr st::Coefficients kIntCoefficients{-6.0f, 1.0f, 2.0f, 3.0f};
constexpr int kInputRange = 8;
struct Taps {
  float v[st::kMaxTaps];
};

/// Outputs that differ from the expected value, and the first of them (~0 if none).
struct Mismatches {
  unsigned long long count, first;
};

__device__ void record_mismatches(unsigned long long bad, unsigned long long first, Mismatches* m) {
  if (bad == 0) return;
  atomicAdd(&m->count, bad);
  atomicMin(&m->first, first);
}

/// The convolution of an h x w image evaluated directly, one thread per output, compared with `out`.
__global__ void conv2d_mismatches(const float* in, const float* out, long long h, long long w, Taps taps, int r,
                                  Mismatches* m) {
  unsigned long long bad = 0, first = ~0ull;
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < h * w;
       i += (long long)gridDim.x * blockDim.x) {
    const long long y = i / w, x = i % w;
    float want = 0.0f;
    for (int a = -r; a <= r; ++a)
      for (int b = -r; b <= r; ++b)
        if (y + a >= 0 && y + a < h && x + b >= 0 && x + b < w)
          want += taps.v[(a + r) * (2 * r + 1) + b + r] * in[i + a * w + b];
    if (!(out[i] == want)) first = bad++ == 0 ? i : first;
  }
  record_mismatches(bad, first, m);
}

/// The 7-point stencil of an nx x ny x nz grid evaluated directly, one thread per point, compared
/// with `out`.
__global__ void st7_mismatches(const float* in, const float* out, long long nx, long long ny, long long nz,
                               st::Coefficients c, Mismatches* m) {
  unsigned long long bad = 0, first = ~0ull;
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < nx * ny * nz;
       i += (long long)gridDim.x * blockDim.x) {
    const long long x = i % nx, y = i / nx % ny, z = i / (nx * ny);
    const auto u = [&](long long dx, long long dy, long long dz) {
      const bool inside = x + dx >= 0 && x + dx < nx && y + dy >= 0 && y + dy < ny && z + dz >= 0 && z + dz < nz;
      return inside ? in[i + (dz * ny + dy) * nx + dx] : 0.0f;
    };
    const float want = c.center * u(0, 0, 0) + c.x * (u(-1, 0, 0) + u(1, 0, 0)) + c.y * (u(0, -1, 0) + u(0, 1, 0)) +
                       c.z * (u(0, 0, -1) + u(0, 0, 1));
    if (!(out[i] == want)) first = bad++ == 0 ? i : first;
  }
  record_mismatches(bad, first, m);
}

/// Runs a checking kernel launched by `launch(m)` and returns its mismatches.
template <class Launch>
Mismatches mismatches(Launch&& launch) {
  DeviceBuffer<Mismatches> m(std::vector<Mismatches>{{0, ~0ull}});
  launch(m.get());
  SMEM_CUDA_CHECK(cudaGetLastError());
  SMEM_CUDA_CHECK(cudaDeviceSynchronize());
  return m.download()[0];
}

/// Every convolution step on an h x w image of small integers (radius 2, integer taps), into one
/// guarded output: each output checked exactly on the GPU, the guards on both sides intact.
void check_conv2d_large(int h, int w) {
  CAPTURE(h);
  CAPTURE(w);
  const std::size_t n = std::size_t(h) * w;
  if (!smem::test::device_can_hold(2 * n * sizeof(float))) return;
  auto g = smem::test::rng(std::uint64_t(h) * 7919 + std::uint64_t(w));
  const int r = 2, k = 2 * r + 1;
  Taps taps{};
  const auto t = smem::test::random_vector<int>(std::size_t(k) * k, g, -3, 3);
  std::transform(t.begin(), t.end(), taps.v, [](int x) { return float(x == 0 ? 4 : x); });  // no zero tap
  DeviceBuffer<float> in(n), filter(std::vector<float>(taps.v, taps.v + k * k));
  smem::test::fill_by_index(in.get(), n, smem::test::SmallIntOfIndex{g(), kInputRange});
  smem::test::GuardedBuffer<float> out(n);
  for (auto v : st::kConv2dVariants) {
    CAPTURE(st::name(v));
    out.poison();
    REQUIRE(st::run_conv2d(v, in.get(), out.get(), h, w, filter.get(), r) == cudaSuccess);
    SMEM_CUDA_CHECK(cudaDeviceSynchronize());
    CHECK(out.guards_intact());
    const Mismatches m =
        mismatches([&](Mismatches* d) { conv2d_mismatches<<<4096, 256>>>(in.get(), out.get(), h, w, taps, r, d); });
    CAPTURE(m.first);
    CHECK(m.count == 0);
  }
}

/// Every 7-point step on an nx x ny x nz grid of small integers, as check_conv2d_large.
void check_7point_large(int nx, int ny, int nz) {
  CAPTURE(nx);
  CAPTURE(ny);
  CAPTURE(nz);
  const std::size_t n = std::size_t(nx) * ny * nz;
  if (!smem::test::device_can_hold(2 * n * sizeof(float))) return;
  auto g = smem::test::rng(std::uint64_t(nx) * 7919 + std::uint64_t(ny) * 31 + nz);
  DeviceBuffer<float> in(n);
  smem::test::fill_by_index(in.get(), n, smem::test::SmallIntOfIndex{g(), kInputRange});
  smem::test::GuardedBuffer<float> out(n);
  for (auto v : st::kStencil7Variants) {
    CAPTURE(st::name(v));
    out.poison();
    REQUIRE(st::run_7point(v, in.get(), out.get(), nx, ny, nz, kIntCoefficients) == cudaSuccess);
    SMEM_CUDA_CHECK(cudaDeviceSynchronize());
    CHECK(out.guards_intact());
    const Mismatches m = mismatches(
        [&](Mismatches* d) { st7_mismatches<<<4096, 256>>>(in.get(), out.get(), nx, ny, nz, kIntCoefficients, d); });
    CAPTURE(m.first);
    CHECK(m.count == 0);
  }
}

}  // namespace

TEST_SUITE("large") {
  TEST_CASE("convolution: 1 x (2^31 - 1) and (2^31 - 1) x 1 images, and more than 2^31 points") {
    check_conv2d_large(1, kIntMax);
    check_conv2d_large(kIntMax, 1);
    check_conv2d_large(1, kIntMax - 3);  // a multiple of 4: the 16-byte paths, TMA's boxes at x near 2^31
    check_conv2d_large(46341, 46344);    // more than 2^31 points, neither dimension near it; TMA
  }

  TEST_CASE("convolution: a (2^31 - 1) x 4 image: TMA's boxes at y near 2^31, indices past 2^32") {
    check_conv2d_large(kIntMax, 4);  // 32 GiB each, in and out
  }

  TEST_CASE("7-point: lines of 2^31 - 1 points along x, y and z, and more than 2^31 points") {
    check_7point_large(kIntMax, 1, 1);
    check_7point_large(1, kIntMax, 1);
    check_7point_large(1, 1, kIntMax);
    check_7point_large(kIntMax - 3, 1, 1);  // a multiple of 4: the 16-byte paths, TMA's boxes at x near 2^31
    check_7point_large(1292, 1292, 1287);   // more than 2^31 points, no dimension near it; TMA
    check_7point_large(46344, 46341, 1);    // a plane of more than 2^31 points
  }

  TEST_CASE("7-point: a 4 x (2^31 - 1) x 1 grid: TMA's boxes at y near 2^31, indices past 2^32") {
    check_7point_large(4, kIntMax, 1);  // 32 GiB each, in and out
  }
}

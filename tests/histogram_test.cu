// Histogram: every variant x sample type x bins x uniform/skewed input against an exact host
// reference and cub::DeviceHistogram in the same test, on fresh random data with the output
// poisoned; n = 0, 1, odd n, samples off a 16-byte boundary, samples on every bin edge, NaN,
// infinities and out-of-range samples (dropped, as in CUB), bin counts that are not powers of two;
// the bin-edge launcher against std::upper_bound and HistogramRange; n = 2^31 + 5 bytes checked on
// the device; the bin rules, the maps, the bank model and the accepted sizes on the host; in the
// large suite, n > 2^32 with exact counts, a count that wraps modulo 2^32, and every step at the
// most bins it accepts. (Bad arguments: bad_input_test.cu; graph capture: graph_test.cu.)
#include <cub/device/device_histogram.cuh>
#include <doctest/doctest.h>

#include <histogram/histogram.cuh>

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "bank_evidence.hpp"
#include "bank_model.hpp"
#include "device_buffer.hpp"
#include "gpu.hpp"
#include "histogram_bank_access.hpp"
#include "limits.cuh"
#include "random.hpp"

namespace hg = smem::histogram;
namespace ha = smem::test::histogram_access;
using smem::test::DeviceBuffer;
using Counts = std::vector<hg::Counter>;

namespace {

constexpr unsigned char kPoison = 0xAB;

/// One problem: bins and levels.
template <class T>
struct Shape {
  int bins;
  hg::Level<T> lower, upper;
};

/// CUB's HistogramEven rule, written out on the host from its source (ScaleTransform): float,
/// scale = bins / (upper - lower) in float, bin = int((x - lower) * scale); uint8, the 64-bit
/// integer formula. `clamped` counts the float samples below upper whose product rounds to bins
/// (counted in the last bin here; see histogram_common.cuh).
int cpu_bin(float x, const Shape<float>& s, long long* clamped = nullptr) {
  if (!(x >= s.lower && x < s.upper)) return -1;
  const float scale = float(s.bins) / (s.upper - s.lower);
  const volatile float d = x - s.lower;  // two roundings, never one fused
  const int b = int(d * scale);
  if (b >= s.bins) {
    if (clamped) ++*clamped;
    return s.bins - 1;
  }
  return b;
}
int cpu_bin(std::uint8_t x, const Shape<std::uint8_t>& s, long long* = nullptr) {
  if (int(x) < s.lower || int(x) >= s.upper) return -1;
  return int(std::uint64_t(int(x) - s.lower) * std::uint64_t(s.bins) / std::uint64_t((long long)s.upper - s.lower));
}

template <class T>
Counts cpu_histogram(const std::vector<T>& x, const Shape<T>& s, long long* clamped = nullptr) {
  Counts c(std::size_t(s.bins), 0);
  for (T v : x)
    if (const int b = cpu_bin(v, s, clamped); b >= 0) ++c[std::size_t(b)];
  return c;
}

/// HistogramRange on the host: bin = upper_bound(levels, x) - 1, dropped outside [levels[0], levels[bins]).
template <class T>
Counts cpu_range_histogram(const std::vector<T>& x, const std::vector<hg::Level<T>>& levels) {
  Counts c(levels.size() - 1, 0);
  for (T v : x) {
    const auto b = std::upper_bound(levels.begin(), levels.end(), hg::Level<T>(v)) - levels.begin() - 1;
    if (b >= 0 && b < (long long)c.size()) ++c[std::size_t(b)];
  }
  return c;
}

/// Uniform samples, 10% of them outside [lower, upper) (5% each side); for float also one NaN,
/// +inf and -inf per 997 samples, when `specials`.
template <class T>
std::vector<T> uniform(std::size_t n, const Shape<T>& s, std::uint64_t salt, bool specials = true) {
  auto g = smem::test::rng(salt);
  std::vector<T> x(n);
  if constexpr (std::is_same_v<T, std::uint8_t>) {
    for (auto& v : x) v = std::uint8_t(g() % 256);
  } else {
    const double w = double(s.upper) - s.lower;
    std::uniform_real_distribution<double> d(s.lower - 0.05 * w, s.upper + 0.05 * w);
    for (auto& v : x) v = float(d(g));
    if (specials)
      for (std::size_t i = 0; i < n; i += 997) {
        x[i] = std::numeric_limits<float>::quiet_NaN();
        if (i + 1 < n) x[i + 1] = std::numeric_limits<float>::infinity();
        if (i + 2 < n) x[i + 2] = -std::numeric_limits<float>::infinity();
      }
  }
  return x;
}

/// 90% of the samples in one bin (the one a third of the way up), the rest uniform.
template <class T>
std::vector<T> skewed(std::size_t n, const Shape<T>& s, std::uint64_t salt) {
  auto x = uniform<T>(n, s, salt);
  auto g = smem::test::rng(salt + 1);
  double hot = s.lower + (double(s.upper) - s.lower) * (s.bins / 3 + 0.5) / s.bins;
  if constexpr (std::is_same_v<T, std::uint8_t>) hot = std::clamp(hot, std::max(0.0, double(s.lower)), 255.0);
  for (auto& v : x)
    if (g() % 10 != 0) v = T(hot);
  return x;
}

/// Every sample on a bin edge: lower + k (upper - lower) / bins for k = 0 .. bins (rounded to T),
/// and the floats either side of each edge; and lower, upper, NaN, the infinities.
std::vector<float> edges(const Shape<float>& s) {
  std::vector<float> x;
  for (int k = 0; k <= s.bins; ++k) {
    const float e = float(double(s.lower) + (double(s.upper) - s.lower) * k / s.bins);
    x.insert(x.end(), {e, std::nextafter(e, -INFINITY), std::nextafter(e, INFINITY)});
  }
  x.insert(x.end(), {s.lower, s.upper, std::numeric_limits<float>::quiet_NaN(), INFINITY, -INFINITY});
  return x;
}

template <class T>
Counts cub_histogram(const T* d, long long n, const Shape<T>& s) {
  DeviceBuffer<hg::Counter> out(std::size_t(s.bins));
  std::size_t bytes = 0;
  SMEM_CUDA_CHECK(cub::DeviceHistogram::HistogramEven(nullptr, bytes, d, out.get(), s.bins + 1, s.lower, s.upper, n));
  DeviceBuffer<unsigned char> temp(bytes);
  SMEM_CUDA_CHECK(
      cub::DeviceHistogram::HistogramEven(temp.get(), bytes, d, out.get(), s.bins + 1, s.lower, s.upper, n));
  SMEM_CUDA_CHECK(cudaDeviceSynchronize());
  return out.download();
}

/// Variant v on d[0, n) into a buffer poisoned with kPoison; returns the counts.
template <class T>
Counts run_variant(hg::Variant v, const T* d, long long n, const Shape<T>& s) {
  DeviceBuffer<hg::Counter> out(std::size_t(s.bins));
  out.poison(kPoison);
  REQUIRE(hg::run<T>(v, d, n, out.get(), s.bins, s.lower, s.upper) == cudaSuccess);
  SMEM_CUDA_CHECK(cudaDeviceSynchronize());
  return out.download();
}

/// Every variant that holds the bins on h (copied `offset` elements into a device buffer), equal
/// to the host and to CUB; the others reject the bins with the output untouched.
template <class T>
void check_all(const std::vector<T>& h, const Shape<T>& s, int offset = 0) {
  const long long n = (long long)h.size();
  CAPTURE(n);
  CAPTURE(s.bins);
  CAPTURE(offset);
  DeviceBuffer<T> buf(h.size() + std::size_t(offset) + 1);
  if (n > 0) SMEM_CUDA_CHECK(cudaMemcpy(buf.get() + offset, h.data(), h.size() * sizeof(T), cudaMemcpyHostToDevice));
  const T* d = buf.get() + offset;
  long long clamped = 0;
  const Counts ref = cpu_histogram(h, s, &clamped);
  if (clamped == 0) CHECK(cub_histogram(d, n, s) == ref);  // CUB loses those (see histogram_common.cuh)
  for (auto v : hg::kAllVariants) {
    CAPTURE(hg::name(v));
    if (!hg::fits<T>(v, s.bins)) {
      DeviceBuffer<hg::Counter> out(std::size_t(s.bins));
      out.poison(kPoison);
      CHECK(hg::run<T>(v, d, n, out.get(), s.bins, s.lower, s.upper) == cudaErrorInvalidValue);
      CHECK(out.download() == Counts(std::size_t(s.bins), 0xABABABABu));
      continue;
    }
    CHECK(run_variant(v, d, n, s) == ref);
  }
}

const std::vector<Shape<std::uint8_t>> kByteShapes = {{256, 0, 256}, {100, 3, 250}, {7, -20, 1000}, {1, 0, 1}};
const std::vector<Shape<float>> kFloatShapes = {
    {1024, 0.f, 1.f}, {65536, -1.f, 3.f}, {1000, -1.f, 2.f}, {3, 0.f, 1e-3f}, {1, -5.f, 5.f}};

std::vector<long long> sizes() {
  std::vector<long long> n = {1, 2, 15, 17, 31, 33, 255, 4097, 65537};
  if (!smem::test::small_shapes_only()) n.insert(n.end(), {1000003, (1LL << 24) + 1});
  return n;
}

/// x[i] = i mod 251, on the device.
__global__ void fill_mod(std::uint8_t* x, long long n) {
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x)
    x[i] = std::uint8_t(i % 251);
}

using smem::test::device_sum;
using smem::test::GuardedBuffer;

/// How many j in [a, b) have j mod m == v.
std::uint64_t residues(std::uint64_t a, std::uint64_t b, std::uint64_t m, std::uint64_t v) {
  const auto below = [&](std::uint64_t x) { return x / m + (x % m > v ? 1 : 0); };
  return below(b) - below(a);
}

/// x[i] = (i + salt) mod 251: every byte value below 251, in runs of one sample.
struct ModByte {
  std::uint64_t salt;
  __device__ std::uint8_t operator()(std::size_t i) const { return std::uint8_t((i + salt) % 251); }
};

/// x[i] = 200 where i mod 2^24 == at, else 7: all but about n / 2^24 samples in one bin.
struct MostlySeven {
  std::uint64_t at;
  __device__ std::uint8_t operator()(std::size_t i) const { return i % (1u << 24) == at ? 200 : 7; }
};

/// levels[k] = k - shift: the bin-edge launcher puts byte x in bin x + shift.
struct ShiftedLevels {
  long long shift;
  __device__ int operator()(std::size_t k) const { return int((long long)k - shift); }
};

/// Runs `launch(counts)`, a launcher call that must succeed, into `out` poisoned with kPoison; the
/// guards around `out` must be intact after it.
template <class Launch>
void launch_into(GuardedBuffer<hg::Counter>& out, Launch&& launch) {
  out.poison(kPoison);
  REQUIRE(launch(out.get()) == cudaSuccess);
  SMEM_CUDA_CHECK(cudaDeviceSynchronize());
  CHECK(out.guards_intact());
}

/// Checks counters against `expect` (bin -> count, every other bin zero): each listed bin and both
/// ends are read back, every other bin through the sum of all the counters, taken on the GPU.
void check_sparse(const GuardedBuffer<hg::Counter>& out, const std::map<int, hg::Counter>& expect) {
  unsigned long long total = 0;
  for (const auto& e : expect) {
    CAPTURE(e.first);
    CHECK(out.at(std::size_t(e.first)) == e.second);
    total += e.second;
  }
  for (std::size_t end : {std::size_t(0), out.size() - 1})
    if (expect.count(int(end)) == 0) CHECK(out.at(end) == 0u);
  CHECK(device_sum(out.get(), out.size()) == total);
}

/// The bank model's prediction for each variant of the profiled shape (uint8, 256 bins): the
/// zeroing stores and the merge's loads, which are what the counters count.
std::optional<smem::test::BankPrediction> histogram_bank_prediction(const std::string& variant) {
  for (auto v : hg::kAllVariants)
    if (variant == hg::name(v))
      return smem::test::predict([v](auto&& visit) { ha::walk(v, 256, ha::Pattern::distinct, visit); });
  return std::nullopt;
}

bool histogram_measured() {
  for (const auto& m : smem::test::load_bank_measurements(SMEM_RESULTS_DIR))
    if (m.benchmark.rfind("histogram/", 0) == 0) return true;
  return false;
}

template <class Walk>
int worst_of(const char* what_prefix, Walk&& walk) {
  int worst = 0;
  walk([&](const smem::test::Request& r) {
    if (std::string(r.what).rfind(what_prefix, 0) == 0) worst = std::max(worst, r.cost().wavefronts);
  });
  return worst;
}

/// The most bins variant v holds for samples of type T (the largest `fits`).
template <class T>
int most_bins(hg::Variant v) {
  for (int bins : {INT_MAX, hg::kMaxCluster * hg::kMaxSharedBins, hg::kMaxSharedBins})
    if (hg::fits<T>(v, bins)) return bins;
  return 0;
}

}  // namespace

TEST_SUITE("host") {
  TEST_CASE("the float rule: CUB's two roundings, edges, NaN, infinities, out of range") {
    const auto rule = hg::Even<float>::make(1024, 0.f, 1.f);
    REQUIRE(rule.valid);
    CHECK(rule.bin(0.f) == 0);
    CHECK(rule.bin(-0.f) == 0);
    CHECK(rule.bin(1.f) == -1);  // upper is outside
    CHECK(rule.bin(std::nextafter(1.f, 0.f)) == 1023);
    CHECK(rule.bin(std::nextafter(0.f, -1.f)) == -1);
    CHECK(rule.bin(0.5f) == 512);
    CHECK(rule.bin(std::numeric_limits<float>::quiet_NaN()) == -1);
    CHECK(rule.bin(INFINITY) == -1);
    CHECK(rule.bin(-INFINITY) == -1);
    for (int k = 0; k < 1024; ++k) CHECK(rule.bin(float(k) / 1024) == k);  // exact edges open their bin
    // Not a power of two: the host reference (CUB's formula) on every edge and its neighbours.
    for (const auto& s : kFloatShapes) {
      const auto r = hg::Even<float>::make(s.bins, s.lower, s.upper);
      for (float x : edges(s)) CHECK(r.bin(x) == cpu_bin(x, s));
    }
    // A sample below upper whose product rounds up to bins is in the last bin.
    const Shape<float> odd{1000, 0.f, 3.f};
    long long clamped = 0;
    for (float x = std::nextafter(3.f, 0.f); x > 2.999f; x = std::nextafter(x, 0.f))
      CHECK(cpu_bin(x, odd, &clamped) == hg::Even<float>::make(1000, 0.f, 3.f).bin(x));
    CHECK(cpu_bin(std::nextafter(3.f, 0.f), odd) == 999);
    CHECK(!hg::Even<float>::make(0, 0.f, 1.f).valid);
    CHECK(!hg::Even<float>::make(4, 1.f, 1.f).valid);
    CHECK(!hg::Even<float>::make(4, 2.f, 1.f).valid);
    CHECK(!hg::Even<float>::make(4, 0.f, INFINITY).valid);
    CHECK(!hg::Even<float>::make(4, std::numeric_limits<float>::quiet_NaN(), 1.f).valid);
    CHECK(!hg::Even<float>::make(4, -3e38f, 3e38f).valid);  // upper - lower overflows
  }

  TEST_CASE("the uint8 rule: exact integer bins, privatized by byte value") {
    for (const auto& s : kByteShapes) {
      const auto r = hg::Even<std::uint8_t>::make(s.bins, s.lower, s.upper);
      REQUIRE(r.valid);
      CHECK(r.privatized_bins() == 256);
      for (int x = 0; x < 256; ++x) {
        const int want = x < s.lower || x >= s.upper ? -1 : int(std::floor(double(x - s.lower) * s.bins / (s.upper - s.lower)));
        CHECK(r.bin(std::uint8_t(x)) == want);
        CHECK(r.output(r.privatized(std::uint8_t(x))) == want);
      }
    }
    CHECK(!hg::Even<std::uint8_t>::make(4, 5, 5).valid);
    CHECK(!hg::Even<std::uint8_t>::make(-1, 0, 256).valid);
    CHECK(hg::Even<std::uint8_t>::make(3, INT_MIN, INT_MAX).bin(255) == 1);
  }

  TEST_CASE("the host references: edges land where CUB's formula puts them, upper_bound for levels") {
    const Shape<float> s{4, 0.f, 1.f};
    CHECK(cpu_histogram<float>({0.f, 0.25f, 0.5f, 0.75f, 1.f, -0.1f, NAN, 0.2499f}, s) == Counts{2, 1, 1, 1});
    const std::vector<float> levels{-1.f, 0.f, 0.5f, 4.f};
    CHECK(cpu_range_histogram<float>({-1.f, -0.5f, 0.f, 0.5f, 3.9f, 4.f, -2.f, NAN}, levels) == Counts{2, 1, 2});
    const std::vector<int> ilevels{0, 10, 11, 256};
    CHECK(cpu_range_histogram<std::uint8_t>({0, 9, 10, 11, 255}, ilevels) == Counts{2, 1, 2});
  }

  TEST_CASE("shapes: copies, clusters and what each step holds") {
    CHECK(hg::copies_that_fit(256, 32) == 32);
    CHECK(hg::copies_that_fit(1024, 32) == 16);
    CHECK(hg::copies_that_fit(16384, 32) == 1);
    CHECK(hg::sub_histogram_copies(hg::Copies::per_warp, 256) == 8);
    CHECK(hg::cluster_blocks(256) == 2);
    CHECK(hg::cluster_blocks(65536) == 4);
    CHECK(hg::cluster_blocks(131072) == 8);
    CHECK(hg::cluster_slice(65536, 4) == hg::kMaxSharedBins);
    for (auto v : hg::kAllVariants) {
      CAPTURE(hg::name(v));
      CHECK(hg::fits<std::uint8_t>(v, 256));
      CHECK(hg::fits<std::uint8_t>(v, 100000));  // uint8 privatizes 256 byte values whatever the bins
      CHECK(hg::fits<float>(v, 1024));
      CHECK(hg::fits<float>(v, 65536) == (v == hg::Variant::global_atomics || v == hg::Variant::cluster));
      CHECK(!hg::fits<float>(v, 0));
    }
  }

  TEST_CASE("accepted sizes: grids for any n, each step's most bins, the next refused before any CUDA call") {
    CHECK(hg::grid_blocks(0, 4096, 528) == 1);
    CHECK(hg::grid_blocks(4096, 4096, 528) == 1);
    CHECK(hg::grid_blocks(4097, 4096, 528) == 2);
    CHECK(hg::grid_blocks(LLONG_MAX, 4096, 528) == 528);  // (n + 4095) / 4096 would overflow
    CHECK(hg::grid_blocks(LLONG_MAX, 1, 0) == hg::kMaxGrid);
    CHECK(hg::grid_blocks(LLONG_MAX - 1, LLONG_MAX, 0) == 1);
    for (int c = 2; c <= hg::kMaxCluster; c *= 2) CHECK(hg::kMaxGrid % c == 0);
    CHECK(hg::cluster_slice(INT_MAX, 2) == 1 << 30);
    CHECK(hg::cluster_slice(hg::kMaxCluster * hg::kMaxSharedBins, hg::kMaxCluster) == hg::kMaxSharedBins);
    alignas(16) static float in[64];
    alignas(16) static hg::Counter counts[4];
    alignas(16) static float levels[4];
    for (auto& c : counts) c = 9u;
    for (auto v : hg::kAllVariants) {
      CAPTURE(hg::name(v));
      CHECK(hg::fits<std::uint8_t>(v, INT_MAX));  // 256 privatized counters whatever the bins
      const int most = most_bins<float>(v);
      CHECK(most == (v == hg::Variant::global_atomics ? INT_MAX
                     : v == hg::Variant::cluster      ? hg::kMaxCluster * hg::kMaxSharedBins
                                                      : hg::kMaxSharedBins));
      if (most < INT_MAX) {
        CHECK(!hg::fits<float>(v, most + 1));
        CHECK(hg::run<float>(v, in, 64, counts, most + 1, 0.f, 1.f) == cudaErrorInvalidValue);
        CHECK(hg::plan<float>(v, 64, most + 1).kernel == nullptr);
      }
      // The plans at n = LLONG_MAX: a grid a launch takes (the resident grid on a GPU, else kMaxGrid).
      for (int bins : {1, 256, most}) {
        const auto p = hg::plan<float>(v, LLONG_MAX, bins);
        CHECK(p.kernel != nullptr);
        CHECK(p.grid.x >= 1);
        CHECK(p.grid.x <= unsigned(hg::kMaxGrid));
      }
      CHECK(hg::plan<std::uint8_t>(v, LLONG_MAX, INT_MAX).kernel != nullptr);
    }
    CHECK(hg::shared_atomics_range<float>(in, 64, counts, hg::kMaxSharedBins + 1, levels) == cudaErrorInvalidValue);
    for (auto c : counts) CHECK(c == 9u);
  }

  TEST_CASE("the maps: per-lane copies in the lane's bank, the merge's rotation, the cluster's slices") {
    for (int copies : {1, 2, 4, 8, 16, 32})
      for (int bin = 0; bin < 64; ++bin) {
        std::vector<int> seen(std::size_t(copies), 0);
        for (int r = 0; r < copies; ++r) ++seen[std::size_t(hg::lane_merge_copy(bin, r, copies))];
        CHECK(std::count(seen.begin(), seen.end(), 1) == copies);  // every copy once
      }
    for (int l = 0; l < 32; ++l) CHECK(hg::lane_copy_offset(77, l, 32) % 32 == l);
    for (int pbins : {256, 1000, 65536}) {
      const int cluster = hg::cluster_blocks(pbins), slice = hg::cluster_slice(pbins, cluster);
      for (int b = 0; b < pbins; b += 7) {
        CHECK(hg::cluster_rank(b, slice) < cluster);
        CHECK(hg::cluster_rank(b, slice) * slice + hg::cluster_word(b, slice) == b);
      }
    }
  }

  TEST_CASE("bank model: zeroing and merges conflict-free; the atomics' banks by data pattern") {
    for (int pbins : {256, 1024, 1000})
      for (auto v : hg::kAllVariants) {
        CAPTURE(hg::name(v));
        CAPTURE(pbins);
        bool ok = true;
        ha::walk(v, pbins, ha::Pattern::distinct, [&](const smem::test::Request& r) {
          if (r.kind != smem::test::Access::atomic) ok = ok && r.cost().conflict_free();
        });
        CHECK(ok);
      }
    const auto atom = [](hg::Variant v, int pbins, ha::Pattern p) {
      return worst_of("atomicAdd", [&](auto&& visit) { ha::walk(v, pbins, p, visit); });
    };
    // One copy: lanes on bins 32 apart share a bank; per-lane copies give each lane its own bank.
    CHECK(atom(hg::Variant::shared_atomics, 256, ha::Pattern::strided) == 8);  // 8 distinct words per bank
    CHECK(atom(hg::Variant::per_warp, 256, ha::Pattern::strided) == 8);
    CHECK(atom(hg::Variant::per_lane, 256, ha::Pattern::strided) == 1);
    CHECK(atom(hg::Variant::vectorized, 256, ha::Pattern::strided) == 1);
    CHECK(atom(hg::Variant::vectorized, 1024, ha::Pattern::strided) == 2);  // 16 copies: lanes l, l + 16 pair up
    // Consecutive bins are conflict-free everywhere; one bin for every lane is one word, one
    // wavefront in the model (the atomic unit still serializes the lanes: not modelled).
    for (auto v : hg::kAllVariants) {
      CHECK(atom(v, 256, ha::Pattern::distinct) <= 1);
      CHECK(atom(v, 256, ha::Pattern::same) <= 1);
    }
  }

  TEST_CASE("bank model agrees with Nsight Compute's measured wavefronts (results/*/banks.json)" *
            doctest::skip(!histogram_measured())) {
    const auto not_modelled = smem::test::check_bank_evidence(
        "histogram", [](const std::string& v, const smem::test::BankMeasurement&) { return histogram_bank_prediction(v); });
    CHECK(not_modelled.empty());
  }
}

TEST_SUITE("gpu") {
  TEST_CASE("uint8: every variant, bins, n, uniform and skewed: exact against the host and CUB") {
    for (const auto& s : kByteShapes)
      for (long long n : sizes()) {
        check_all(uniform<std::uint8_t>(std::size_t(n), s, std::uint64_t(n) * 7 + s.bins), s);
        check_all(skewed<std::uint8_t>(std::size_t(n), s, std::uint64_t(n) * 11 + s.bins), s);
      }
  }

  TEST_CASE("float: every variant, bins, n, uniform and skewed, NaN and infinities: exact against the host and CUB") {
    for (const auto& s : kFloatShapes)
      for (long long n : sizes()) {
        check_all(uniform<float>(std::size_t(n), s, std::uint64_t(n) * 13 + s.bins), s);
        check_all(skewed<float>(std::size_t(n), s, std::uint64_t(n) * 17 + s.bins), s);
      }
  }

  TEST_CASE("samples off a 16-byte boundary: every offset of a vector") {
    for (long long n : {1LL, 20LL, 4099LL, 65537LL}) {
      for (int offset = 1; offset < 16; ++offset)
        check_all(uniform<std::uint8_t>(std::size_t(n), kByteShapes[0], std::uint64_t(n) + offset), kByteShapes[0],
                  offset);
      for (int offset = 1; offset < 4; ++offset)
        check_all(uniform<float>(std::size_t(n), kFloatShapes[0], std::uint64_t(n) + offset), kFloatShapes[0], offset);
    }
  }

  TEST_CASE("samples on every bin edge and either side of it, lower, upper, NaN, infinities") {
    for (const auto& s : kFloatShapes) {
      auto x = edges(s);
      const auto once = x;
      const int repeats = smem::test::small_shapes_only() ? 1 : 40;  // long enough for every grid
      for (int r = 0; r < repeats; ++r) x.insert(x.end(), once.begin(), once.end());
      check_all(x, s);
    }
    std::vector<std::uint8_t> all(256 * 41);
    for (std::size_t i = 0; i < all.size(); ++i) all[i] = std::uint8_t(i);
    for (const auto& s : kByteShapes) check_all(all, s);
  }

  TEST_CASE("n = 0: the counts are zeroed, nothing else happens") {
    DeviceBuffer<float> f(1);
    DeviceBuffer<std::uint8_t> b(1);
    for (auto v : hg::kAllVariants) {
      CAPTURE(hg::name(v));
      if (hg::fits<float>(v, 1024)) CHECK(run_variant<float>(v, f.get(), 0, kFloatShapes[0]) == Counts(1024, 0));
      if (hg::fits<float>(v, 1000)) CHECK(run_variant<float>(v, nullptr, 0, kFloatShapes[2]) == Counts(1000, 0));
      CHECK(run_variant<std::uint8_t>(v, b.get(), 0, kByteShapes[0]) == Counts(256, 0));
    }
  }

  TEST_CASE("the bin-edge launcher: upper_bound over the levels, equal to HistogramRange") {
    auto g = smem::test::rng(99);
    for (int bins : {1, 7, 1000, 4096}) {
      std::vector<float> levels(std::size_t(bins) + 1);
      std::uniform_real_distribution<float> d(-10.f, 10.f);
      for (auto& l : levels) l = d(g);
      std::sort(levels.begin(), levels.end());
      levels.erase(std::unique(levels.begin(), levels.end()), levels.end());
      const int nb = int(levels.size()) - 1;
      if (nb < 1) continue;
      CAPTURE(nb);
      auto x = uniform<float>(300007, Shape<float>{nb, -11.f, 11.f}, std::uint64_t(bins));
      for (std::size_t i = 0; i < levels.size(); i += 3) x[i * 5] = levels[i];  // samples on the levels
      const auto ref = cpu_range_histogram(x, levels);
      DeviceBuffer<float> dx(x), dl(levels);
      DeviceBuffer<hg::Counter> out{std::size_t(nb)};
      out.poison(kPoison);
      REQUIRE(hg::shared_atomics_range<float>(dx.get(), (long long)x.size(), out.get(), nb, dl.get()) == cudaSuccess);
      CHECK(out.download() == ref);
      std::size_t bytes = 0;
      SMEM_CUDA_CHECK(cub::DeviceHistogram::HistogramRange(nullptr, bytes, dx.get(), out.get(), nb + 1, dl.get(),
                                                           (long long)x.size()));
      DeviceBuffer<unsigned char> temp(bytes);
      SMEM_CUDA_CHECK(cub::DeviceHistogram::HistogramRange(temp.get(), bytes, dx.get(), out.get(), nb + 1, dl.get(),
                                                           (long long)x.size()));
      CHECK(out.download() == ref);
    }
    const std::vector<int> ilevels{-5, 0, 1, 17, 100, 101, 255, 300};
    const auto bx = uniform<std::uint8_t>(100003, kByteShapes[0], 5);
    DeviceBuffer<std::uint8_t> dbx(bx);
    DeviceBuffer<int> dil(ilevels);
    DeviceBuffer<hg::Counter> out(ilevels.size() - 1);
    out.poison(kPoison);
    REQUIRE(hg::shared_atomics_range<std::uint8_t>(dbx.get() + 1, (long long)bx.size() - 1, out.get(),
                                                   int(ilevels.size()) - 1, dil.get()) == cudaSuccess);
    CHECK(out.download() == cpu_range_histogram(std::vector<std::uint8_t>(bx.begin() + 1, bx.end()), ilevels));
  }

  TEST_CASE("n = 2^31 + 5 bytes: 64-bit indices, counted on the device") {
    if (smem::test::small_shapes_only()) return;
    const long long n = (1LL << 31) + 5;
    DeviceBuffer<std::uint8_t> x(static_cast<std::size_t>(n));
    fill_mod<<<4096, 256>>>(x.get(), n);
    SMEM_CUDA_CHECK(cudaDeviceSynchronize());
    Counts expect(256, 0);
    for (int v = 0; v < 251; ++v) expect[std::size_t(v)] = hg::Counter(n / 251 + (v < n % 251 ? 1 : 0));
    const Shape<std::uint8_t> thirds{3, 0, 251};  // x + 1: one sample of value 0 fewer
    Counts expect_thirds(3, 0);
    for (int v = 0; v < 251; ++v) expect_thirds[std::size_t(cpu_bin(std::uint8_t(v), thirds))] += expect[std::size_t(v)];
    --expect_thirds[0];
    for (auto v : hg::kAllVariants) {
      CAPTURE(hg::name(v));
      CHECK(run_variant<std::uint8_t>(v, x.get(), n, kByteShapes[0]) == expect);
      CHECK(run_variant<std::uint8_t>(v, x.get() + 1, n - 1, thirds) == expect_thirds);
    }
  }
}

TEST_SUITE("large") {
  TEST_CASE("uint8, n = 2^32 + 2^16 + 7 samples off a 16-byte boundary: every variant, exact counts") {
    const long long n = (1LL << 32) + (1LL << 16) + 7;
    if (!smem::test::device_can_hold(std::size_t(n) + 16)) return;
    DeviceBuffer<std::uint8_t> buf(std::size_t(n) + 3);
    const std::uint8_t* x = buf.get() + 3;  // steps 5 and 6 have a head and a tail to read one by one
    const std::uint64_t salt = smem::test::rng(251)() % 251;
    CAPTURE(salt);
    smem::test::fill_by_index(buf.get() + 3, std::size_t(n), ModByte{salt});
    std::vector<std::uint64_t> per_value(256, 0);  // closed form: the residues of [salt, salt + n)
    for (int v = 0; v < 251; ++v) per_value[std::size_t(v)] = residues(salt, salt + std::uint64_t(n), 251, v);
    for (const auto& s : {Shape<std::uint8_t>{256, 0, 256}, Shape<std::uint8_t>{7, -20, 1000}}) {
      CAPTURE(s.bins);
      Counts expect(std::size_t(s.bins), 0);
      for (int v = 0; v < 256; ++v)
        if (const int b = cpu_bin(std::uint8_t(v), s); b >= 0)
          expect[std::size_t(b)] += hg::Counter(per_value[std::size_t(v)]);
      GuardedBuffer<hg::Counter> out{std::size_t(s.bins)};
      for (auto v : hg::kAllVariants) {
        CAPTURE(hg::name(v));
        launch_into(out, [&](hg::Counter* c) { return hg::run<std::uint8_t>(v, x, n, c, s.bins, s.lower, s.upper); });
        CHECK(out.download(0, out.size()) == expect);
      }
    }
    const std::vector<int> levels{-5, 0, 1, 17, 100, 101, 250, 300};  // the bin-edge launcher
    Counts expect(levels.size() - 1, 0);
    for (int v = 0; v < 256; ++v) {
      const auto b = std::upper_bound(levels.begin(), levels.end(), v) - levels.begin() - 1;
      if (b >= 0 && b < (long long)expect.size()) expect[std::size_t(b)] += hg::Counter(per_value[std::size_t(v)]);
    }
    DeviceBuffer<int> dl(levels);
    GuardedBuffer<hg::Counter> out(expect.size());
    launch_into(out, [&](hg::Counter* c) {
      return hg::shared_atomics_range<std::uint8_t>(x, n, c, int(expect.size()), dl.get());
    });
    CHECK(out.download(0, out.size()) == expect);
  }

  TEST_CASE("uint8, 2^32 + 2^20 + 3 samples, all but about 2^8 in one bin: that count wraps modulo 2^32") {
    // The counters are 32-bit (CUB's): every count is exact modulo 2^32, whichever counter wrapped.
    const long long n = (1LL << 32) + (1LL << 20) + 3;
    if (!smem::test::device_can_hold(std::size_t(n))) return;
    DeviceBuffer<std::uint8_t> x{std::size_t(n)};
    const std::uint64_t at = smem::test::rng(24)() % (1u << 24);
    CAPTURE(at);
    smem::test::fill_by_index(x.get(), std::size_t(n), MostlySeven{at});
    const std::uint64_t others = residues(0, std::uint64_t(n), 1u << 24, at);
    REQUIRE(std::uint64_t(n) - others > (1ull << 32));
    Counts expect(256, 0);
    expect[7] = hg::Counter(std::uint64_t(n) - others);  // modulo 2^32
    expect[200] = hg::Counter(others);
    GuardedBuffer<hg::Counter> out(256);
    for (auto v : hg::kAllVariants) {
      CAPTURE(hg::name(v));
      launch_into(out, [&](hg::Counter* c) { return hg::run<std::uint8_t>(v, x.get(), n, c, 256, 0, 256); });
      CHECK(out.download(0, out.size()) == expect);
    }
  }

  TEST_CASE("every step at the most bins it accepts: INT_MAX for uint8 and step 1, then 16384 or 131072 floats") {
    // Samples from a few values, so that few bins are hit (check_sparse()); 2^20 + 3 of them.
    const long long n = (1 << 20) + 3;
    auto g = smem::test::rng(std::uint64_t(n));
    const std::size_t most = std::size_t(INT_MAX);
    if (!smem::test::device_can_hold(2 * (most + 1) * sizeof(int) + 2 * GuardedBuffer<hg::Counter>::kGuard)) return;
    {
      // uint8: INT_MAX bins over a range of INT_MAX, so byte x is in bin x + shift: the first 256
      // bins, then the last 256; every step, and the bin-edge launcher with INT_MAX + 1 levels.
      std::vector<std::uint8_t> bytes(static_cast<std::size_t>(n));
      std::vector<hg::Counter> per_value(256, 0);
      for (auto& b : bytes) {
        b = std::uint8_t(g());
        ++per_value[b];
      }
      DeviceBuffer<std::uint8_t> x(bytes);
      GuardedBuffer<hg::Counter> out(most);
      DeviceBuffer<int> levels(most + 1);
      for (long long shift : {0LL, (long long)INT_MAX - 256}) {
        CAPTURE(shift);
        const Shape<std::uint8_t> s{INT_MAX, int(-shift), int(INT_MAX - shift)};
        std::map<int, hg::Counter> expect;
        for (int v = 0; v < 256; ++v) {
          REQUIRE(cpu_bin(std::uint8_t(v), s) == v + shift);
          if (per_value[std::size_t(v)]) expect[int(v + shift)] = per_value[std::size_t(v)];
        }
        for (auto v : hg::kAllVariants) {
          CAPTURE(hg::name(v));
          launch_into(out, [&](hg::Counter* c) {
            return hg::run<std::uint8_t>(v, x.get(), n, c, INT_MAX, s.lower, s.upper);
          });
          check_sparse(out, expect);
        }
        smem::test::fill_by_index(levels.get(), most + 1, ShiftedLevels{shift});
        launch_into(out, [&](hg::Counter* c) {
          return hg::shared_atomics_range<std::uint8_t>(x.get(), n, c, INT_MAX, levels.get());
        });
        check_sparse(out, expect);
      }
    }
    // float: each step's most bins over [0, bins) (scale 1: x is in bin int(x)), integer samples from
    // a palette with both ends, and samples that are dropped.
    for (auto v : hg::kAllVariants) {
      CAPTURE(hg::name(v));
      const int bins = most_bins<float>(v);
      const Shape<float> s{bins, 0.f, float(bins)};  // float(INT_MAX) is 2^31
      std::vector<float> palette{0.f, 1.f, float(bins / 2), std::nextafter(s.upper, 0.f), -1.f, s.upper,
                                 std::numeric_limits<float>::quiet_NaN()};
      while (palette.size() < 64) palette.push_back(float(g() % std::uint64_t(bins)));
      std::vector<float> h(static_cast<std::size_t>(n));
      std::map<int, hg::Counter> expect;
      for (auto& f : h) {
        f = palette[g() % palette.size()];
        if (const int b = cpu_bin(f, s); b >= 0) ++expect[b];
      }
      REQUIRE(expect.count(0));
      REQUIRE(expect.rbegin()->first >= bins - 128);  // the last float below 2^31 is 2^31 - 128
      DeviceBuffer<float> x(h);
      GuardedBuffer<hg::Counter> out{std::size_t(bins)};
      launch_into(out, [&](hg::Counter* c) { return hg::run<float>(v, x.get(), n, c, bins, s.lower, s.upper); });
      check_sparse(out, expect);
      if (v == hg::Variant::shared_atomics) {  // the bin-edge launcher: levels 0, 1, ..., bins
        std::vector<float> levels(std::size_t(bins) + 1);
        for (std::size_t k = 0; k < levels.size(); ++k) levels[k] = float(k);
        DeviceBuffer<float> dl(levels);
        const Counts dense = cpu_range_histogram(h, levels);
        std::map<int, hg::Counter> expect_range;
        for (std::size_t b = 0; b < dense.size(); ++b)
          if (dense[b]) expect_range[int(b)] = dense[b];
        REQUIRE(expect_range == expect);
        launch_into(out, [&](hg::Counter* c) {
          return hg::shared_atomics_range<float>(x.get(), n, c, bins, dl.get());
        });
        check_sparse(out, expect_range);
      }
    }
  }
}

// Scan: every variant x type x kind x n against an exact host reference and cub::DeviceScan:
// integers, and floats drawn as small integers (every partial sum exact, so any lost, doubled or
// misplaced element shows bitwise), then fractional floats within a derived error bound; max; a
// non-commutative operator (composition of affine maps); in place; inputs and outputs off a
// 16-byte boundary; NaN and infinities, in sums and in Max (bit for bit with the sequential scan);
// determinism of steps 1 to 5; n = 2^31 + 3 in place; the host-side layouts and the size limits;
// the bank model on every warp request of the kernels (support/scan_bank_access.hpp, from the
// kernels' own index maps), held against Nsight Compute's counters once results/*/banks.json has
// scan kernels. The "large" suite: every step at n = 2^32 + 2^20 + 7, every prefix checked.
// (Bad arguments: bad_input_test.cu; graph capture: graph_test.cu.)
#include <cub/device/device_scan.cuh>
#include <cuda/functional>
#include <cuda/std/functional>
#include <doctest/doctest.h>

#include <scan/scan.cuh>

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "bank_evidence.hpp"
#include "bank_model.hpp"
#include "compare.hpp"
#include "device_buffer.hpp"
#include "gpu.hpp"
#include "limits.cuh"
#include "random.hpp"
#include "scan_bank_access.hpp"

namespace sc = smem::scan;
using smem::test::DeviceBuffer;
using smem::test::GuardedBuffer;

namespace {

constexpr long long kSizes[] = {1, 2, 31, 32, 33, 1023, 1024, 1025, 2047, 2049, 4095, 4096, 4097, 65537,
                                1000003, (1LL << 24) + 1};
constexpr sc::Kind kKinds[] = {sc::Kind::inclusive, sc::Kind::exclusive};
constexpr int kGuard = 37;  // poisoned elements after out[n - 1] that must stay untouched

const char* kind_name(sc::Kind k) { return k == sc::Kind::inclusive ? "inclusive" : "exclusive"; }

/// The scan on the host, sequential, in T.
template <class T, class Op>
std::vector<T> host_scan(const std::vector<T>& x, Op op, T identity, sc::Kind kind) {
  std::vector<T> out(x.size());
  T acc = identity;
  for (std::size_t i = 0; i < x.size(); ++i) {
    if (kind == sc::Kind::exclusive) out[i] = acc;
    acc = op(acc, x[i]);
    if (kind == sc::Kind::inclusive) out[i] = acc;
  }
  return out;
}

/// Composition of affine maps x -> a x + b (mod 2^32), a and b packed as (a << 32 | b): apply
/// the left map, then the right one. Associative, with identity (1, 0), and not commutative.
struct Compose {
  __host__ __device__ long long operator()(long long f, long long g) const {
    const auto fa = std::uint32_t(std::uint64_t(f) >> 32), fb = std::uint32_t(f);
    const auto ga = std::uint32_t(std::uint64_t(g) >> 32), gb = std::uint32_t(g);
    return (long long)(std::uint64_t(ga * fa) << 32 | std::uint32_t(ga * fb + gb));
  }
};
constexpr long long kComposeIdentity = 1LL << 32;

/// Runs variant v once: a fresh workspace poisoned with 0xA5 (the launcher must not rely on its
/// contents), `out` as given (the caller poisons it); returns the launcher's result.
template <class T, class Op>
cudaError_t run_variant(sc::Variant v, const T* in, T* out, long long n, Op op, T identity, sc::Kind kind,
                        cudaStream_t s = nullptr) {
  std::size_t bytes = 0;
  REQUIRE(sc::run<T>(v, nullptr, bytes, in, out, n, op, identity, kind) == cudaSuccess);
  REQUIRE(bytes > 0);
  DeviceBuffer<unsigned char> temp(bytes);
  temp.poison(0xA5);
  const cudaError_t e = sc::run<T>(v, temp.get(), bytes, in, out, n, op, identity, kind, s);
  SMEM_CUDA_CHECK(cudaDeviceSynchronize());
  return e;
}

template <class T, class Op>
std::vector<T> cub_scan(const T* d_in, long long n, Op op, T identity, sc::Kind kind) {
  DeviceBuffer<T> out(static_cast<std::size_t>(n));
  std::size_t bytes = 0;
  const auto call = [&](void* temp) {
    return kind == sc::Kind::inclusive
               ? cub::DeviceScan::InclusiveScan(temp, bytes, d_in, out.get(), op, n)
               : cub::DeviceScan::ExclusiveScan(temp, bytes, d_in, out.get(), op, identity, n);
  };
  SMEM_CUDA_CHECK(call(nullptr));
  DeviceBuffer<unsigned char> temp(bytes);
  SMEM_CUDA_CHECK(call(temp.get()));
  SMEM_CUDA_CHECK(cudaDeviceSynchronize());
  return out.download();
}

/// Runs v on d_in[0, n) into a poisoned buffer of n + kGuard elements starting `out_offset`
/// elements in; checks the guard is untouched; returns out[0, n).
template <class T, class Op>
std::vector<T> scan_on_device(sc::Variant v, const T* d_in, long long n, Op op, T identity, sc::Kind kind,
                              int out_offset = 0) {
  DeviceBuffer<T> out(std::size_t(n) + kGuard + out_offset);
  out.poison();
  REQUIRE(run_variant(v, d_in, out.get() + out_offset, n, op, identity, kind) == cudaSuccess);
  auto all = out.download();
  std::vector<unsigned char> guard(kGuard * sizeof(T));
  std::memcpy(guard.data(), all.data() + out_offset + n, guard.size());
  CHECK(std::all_of(guard.begin(), guard.end(), [](unsigned char b) { return b == 0xFF; }));
  return {all.begin() + out_offset, all.begin() + out_offset + n};
}

/// Data whose every partial sum, in any grouping, is exact in T: integers in [-100, 100]
/// (a random walk of n <= 2^24 + 1 such steps stays far below 2^24, asserted below).
template <class T>
std::vector<T> exact_data(std::size_t n, std::uint64_t salt) {
  auto g = smem::test::rng(salt);
  const auto ints = smem::test::random_vector<int>(n, g, -100, 100);
  std::vector<T> x(ints.begin(), ints.end());
  if constexpr (std::is_same_v<T, float>) {  // the largest range sum must be exact in float
    long long s = 0, lo = 0, hi = 0;
    for (int v : ints) s += v, lo = std::min(lo, s), hi = std::max(hi, s);
    REQUIRE(hi - lo < (1LL << 24));
  }
  return x;
}

/// Every variant and kind on exact data: bitwise equal to the host and to CUB, for sum and max.
template <class T>
void check_exact(long long n, int in_offset = 0, int out_offset = 0) {
  CAPTURE(n);
  CAPTURE(in_offset);
  CAPTURE(out_offset);
  const auto h = exact_data<T>(std::size_t(n), std::uint64_t(n) * 131 + sizeof(T) + in_offset);
  DeviceBuffer<T> buf(std::size_t(n) + in_offset);
  SMEM_CUDA_CHECK(cudaMemcpy(buf.get() + in_offset, h.data(), n * sizeof(T), cudaMemcpyHostToDevice));
  const T* in = buf.get() + in_offset;
  for (sc::Kind kind : kKinds) {
    CAPTURE(kind_name(kind));
    const auto sum = host_scan(h, cuda::std::plus<T>{}, T(0), kind);
    const auto max = host_scan(h, sc::Max{}, sc::Max::identity<T>(), kind);
    REQUIRE(smem::test::first_bit_mismatch(cub_scan(in, n, cuda::std::plus<T>{}, T(0), kind), sum) == -1);
    for (auto v : sc::kAllVariants) {
      CAPTURE(sc::name(v));
      CHECK(smem::test::first_bit_mismatch(scan_on_device(v, in, n, cuda::std::plus<T>{}, T(0), kind, out_offset),
                                           sum) == -1);
      CHECK(smem::test::first_bit_mismatch(
                scan_on_device(v, in, n, sc::Max{}, sc::Max::identity<T>(), kind, out_offset), max) == -1);
    }
  }
}

/// Data whose every prefix is known without a scan: x[i] = p(i) - p(i - 1), with p(i) =
/// scale h(i) for a hash h of the index into [-range, range] and p(-1) = 0. The inclusive prefix
/// of i is p(i) and the exclusive one p(i - 1); every partial sum of any grouping is a range sum,
/// p(b) - p(a - 1), so it is exact whenever 2 scale range fits T. A lost, doubled or misplaced
/// element or tile carry changes a prefix (h differs between neighbours).
template <class T>
struct Telescoping {
  smem::test::SmallIntOfIndex h;
  T scale;
  __host__ __device__ T prefix(long long i) const { return i < 0 ? T(0) : scale * T(h(std::size_t(i))); }
  __host__ __device__ T operator()(std::size_t i) const { return prefix((long long)i) - prefix((long long)i - 1); }
  /// out[i] of the scan of this data.
  __host__ __device__ T expected(long long i, sc::Kind kind) const {
    return prefix(kind == sc::Kind::inclusive ? i : i - 1);
  }
};

template <class T>
__global__ void count_wrong_kernel(const T* out, long long n, Telescoping<T> f, sc::Kind kind,
                                   unsigned long long* wrong) {
  unsigned long long count = 0;
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x)
    count += out[i] != f.expected(i, kind);
  if (count) atomicAdd(wrong, count);
}

/// How many of out[0, n) differ from the scan of f's data, counted on the device.
template <class T>
unsigned long long wrong_prefixes(const T* out, long long n, Telescoping<T> f, sc::Kind kind) {
  DeviceBuffer<unsigned long long> wrong(1);
  SMEM_CUDA_CHECK(cudaMemset(wrong.get(), 0, sizeof(unsigned long long)));
  count_wrong_kernel<<<4096, 256>>>(out, n, f, kind, wrong.get());
  SMEM_CUDA_CHECK(cudaGetLastError());
  SMEM_CUDA_CHECK(cudaDeviceSynchronize());
  return wrong.download()[0];
}

/// A quiet NaN of T with `payload` in its low mantissa bits, negative if asked: NaNs that differ in
/// their bits, so that a bitwise comparison shows which one a step kept.
template <class T>
T nan_with(unsigned payload, bool negative = false) {
  using Bits = std::conditional_t<sizeof(T) == 4, std::uint32_t, std::uint64_t>;
  T x = std::numeric_limits<T>::quiet_NaN();
  Bits b;
  std::memcpy(&b, &x, sizeof b);
  b |= Bits(payload) | Bits(negative) << (8 * sizeof(T) - 1);
  std::memcpy(&x, &b, sizeof b);
  return x;
}

/// The inputs of the Max tests at size n, by name: a rising ramp (i / 4 plus an integer in
/// [-50, 50], zeros of either sign: the running maximum changes every few elements) with NaNs of
/// different bits and infinities at the borders of the steps' tiles and elsewhere.
template <class T>
std::vector<std::pair<const char*, std::vector<T>>> max_cases(long long n, std::uint64_t salt) {
  auto g = smem::test::rng(salt);
  const auto r = smem::test::random_vector<int>(std::size_t(n), g, -50, 50);
  std::vector<T> ramp(static_cast<std::size_t>(n));
  for (long long i = 0; i < n; ++i) {
    ramp[i] = T(r[i] + i / 4);
    if (ramp[i] == 0 && g() % 2) ramp[i] = -T(0);
  }
  const T inf = std::numeric_limits<T>::infinity();
  const long long tile = sc::kTileElems<T>, last_tile = (n - 1) / tile * tile;
  std::vector<std::pair<const char*, std::vector<T>>> cases;
  const auto with = [&](const char* name, auto edit) {
    auto x = ramp;
    edit(x);
    cases.emplace_back(name, std::move(x));
  };
  with("NaN first", [&](std::vector<T>& x) { x[0] = nan_with<T>(1); });
  with("NaN last", [&](std::vector<T>& x) { x[n - 1] = nan_with<T>(2, true); });
  with("NaNs in the middle: tile borders of every step", [&](std::vector<T>& x) {
    unsigned payload = 3;
    for (long long i : {1023LL, 1024LL, tile, n / 2, last_tile})
      if (i > 0 && i < n) x[i] = nan_with<T>(payload, payload % 2), ++payload;
  });
  with("all NaN", [&](std::vector<T>& x) {
    for (long long i = 0; i < n; ++i) x[i] = nan_with<T>(1 + i % 5, i % 2);
  });
  with("infinities of both signs around a NaN", [&](std::vector<T>& x) {
    for (long long i = 0; i < n; i += 3) x[i] = -inf;
    x[n / 3] = inf;
    x[2 * n / 3] = nan_with<T>(9);
  });
  with("infinities of both signs, no NaN", [&](std::vector<T>& x) {
    for (long long i = 0; i < n; i += 5) x[i] = -inf;
    x[n / 2] = inf;
  });
  return cases;
}

/// The large suite's n: above 2^32, so that 32-bit element, byte or tile arithmetic would wrap.
constexpr long long kLargeN = (1LL << 32) + (1LL << 20) + 7;

/// Checks a scan of f's data in out[offset, offset + n): every prefix on the device; on the
/// host, the first and the last three tiles of every step, the elements around 2^31 and 2^32, a
/// random sample; the guards on both sides of out.
template <class T>
void check_large(const GuardedBuffer<T>& out, std::size_t offset, long long n, const Telescoping<T>& f,
                 sc::Kind kind, std::mt19937_64& g) {
  CHECK(wrong_prefixes(out.get() + offset, n, f, kind) == 0);
  long long wrong = 0;
  const auto range = [&](long long first, long long count) {
    const auto h = out.download(offset + std::size_t(first), std::size_t(count));
    for (long long k = 0; k < count; ++k) wrong += h[k] != f.expected(first + k, kind);
  };
  const long long edge = 3 * sc::kTileElems<T>;
  range(0, edge);
  range(n - edge, edge);
  for (long long around : {1LL << 31, 1LL << 32}) range(around - 8, 16);
  std::uniform_int_distribution<long long> any(0, n - 1);
  for (int k = 0; k < 256; ++k) range(any(g), 1);
  CHECK(wrong == 0);
  CHECK(out.guards_intact());
}

/// Each step's largest n as the contract states it (T of 4 or 8 bytes).
template <class T>
long long stated_max_n(sc::Variant v) {
  if (v != sc::Variant::reduce_then_scan && v != sc::Variant::decoupled_look_back) return 2199023254528LL;
  return sizeof(T) == 4 ? 17592186036224LL : 8796093018112LL;
}

namespace sa = smem::test::scan_access;

/// The worst request of a kernel's walk.
template <class Walk>
smem::bank::Cost worst(Walk&& walk) {
  return smem::test::worst_request(walk);
}

/// Every request of the walk conflict-free: no more wavefronts than its phases.
template <class Walk>
bool conflict_free(Walk&& walk) {
  bool ok = true;
  walk([&](const smem::test::Request& r) { ok = ok && r.cost().conflict_free(); });
  return ok;
}

/// The bank model's prediction for the first kernel of each variant over full tiles (what the
/// profiled launch runs: inclusive float, 2^24 elements; step 6's first tile, which skips the
/// look-back, is one of 2^24 / (kTileThreads kTileItems<float>).
std::optional<smem::test::BankPrediction> scan_bank_prediction(const std::string& variant) {
  using smem::test::predict;
  using T = float;
  if (variant == "kogge_stone") return predict([](auto&& v) { sa::kogge_stone<T>(v); });
  if (variant == "brent_kung") return predict([](auto&& v) { sa::brent_kung<sc::DenseLayout, T>(v); });
  if (variant == "padded") return predict([](auto&& v) { sa::brent_kung<sc::PaddedLayout, T>(v); });
  if (variant == "warp_shuffle") return predict([](auto&& v) { sa::warp_shuffle<T>(v); });
  if (variant == "reduce_then_scan") return predict([](auto&& v) { sa::tile_totals<T>(v); });
  if (variant == "decoupled_look_back") return predict([](auto&& v) { sa::decoupled_look_back<T>(v); });
  return std::nullopt;
}

bool scan_measured() {
  for (const auto& m : smem::test::load_bank_measurements(SMEM_RESULTS_DIR))
    if (m.benchmark.rfind("scan/", 0) == 0) return true;
  return false;
}

}  // namespace

TEST_SUITE("host") {
  TEST_CASE_TEMPLATE("bank model: Kogge-Stone, the warp totals and the tile transposes are conflict-free", T, float,
                     double) {
    CHECK(conflict_free([](auto&& v) { sa::kogge_stone<T>(v); }));
    CHECK(conflict_free([](auto&& v) { sa::warp_shuffle<T>(v); }));
    CHECK(conflict_free([](auto&& v) { sa::tile_totals<T>(v); }));
    CHECK(conflict_free([](auto&& v) { sa::decoupled_look_back<T>(v); }));
  }

  TEST_CASE("bank model: Brent-Kung's strided rounds conflict, the padding removes most of it") {
    const auto dense = [](auto&& v) { sa::brent_kung<sc::DenseLayout, float>(v); };
    const auto padded = [](auto&& v) { sa::brent_kung<sc::PaddedLayout, float>(v); };
    CHECK(worst(dense).wavefronts == 32);  // lanes 32 elements apart in one bank
    CHECK(worst(padded).wavefronts <= 2);
    const auto dense_ld = smem::test::predict(dense).ld.per_request();
    const auto padded_ld = smem::test::predict(padded).ld.per_request();
    CHECK(dense_ld > 3 * padded_ld);
    // The up-sweep round of stride 16, warp 0: lanes k = 32 t + 31, one bank without padding.
    const auto up16 = [](auto layout) {
      return [](auto&& visit) {
        using L = decltype(layout);
        visit(smem::test::request("up-sweep", smem::test::Access::load, 4, 4,
                                  [](int t) { return L::offset(sc::brent_kung_index(16, t)); }));
      };
    };
    CHECK(worst(up16(sc::DenseLayout{})).wavefronts == 32);
    CHECK(worst(up16(sc::PaddedLayout{})).wavefronts == 1);
  }

  TEST_CASE("bank model agrees with Nsight Compute's measured wavefronts (results/*/banks.json)" *
            doctest::skip(!scan_measured())) {
    const auto not_modelled = smem::test::check_bank_evidence(
        "scan", [](const std::string& v, const smem::test::BankMeasurement&) { return scan_bank_prediction(v); });
    CHECK(not_modelled.empty());
  }

  TEST_CASE("the host reference and the test operator") {
    const std::vector<int> x{3, -1, 4, 1, -5};
    CHECK(host_scan(x, cuda::std::plus<int>{}, 0, sc::Kind::inclusive) == std::vector<int>{3, 2, 6, 7, 2});
    CHECK(host_scan(x, cuda::std::plus<int>{}, 0, sc::Kind::exclusive) == std::vector<int>{0, 3, 2, 6, 7});
    CHECK(host_scan(x, sc::Max{}, sc::Max::identity<int>(), sc::Kind::inclusive) == std::vector<int>{3, 3, 4, 4, 4});
    const auto affine = [](std::uint32_t a, std::uint32_t b) { return (long long)(std::uint64_t(a) << 32 | b); };
    const long long f = affine(2, 3), g = affine(5, 7);  // g(f(x)) = 10 x + 22, f(g(x)) = 10 x + 17
    CHECK(Compose{}(f, g) == affine(10, 22));
    CHECK(Compose{}(g, f) == affine(10, 17));
    CHECK(Compose{}(kComposeIdentity, f) == f);
    CHECK(Compose{}(f, kComposeIdentity) == f);
    const long long h = affine(0xFFFFFFFFu, 9);
    CHECK(Compose{}(Compose{}(f, g), h) == Compose{}(f, Compose{}(g, h)));
  }

  TEST_CASE_TEMPLATE("Max: a NaN operand wins; associative and an identity bit for bit, unlike cuda::maximum", T,
                     float, double) {
    const T inf = std::numeric_limits<T>::infinity(), id = sc::Max::identity<T>();
    const std::vector<T> values{nan_with<T>(1), nan_with<T>(2, true), -inf, T(-1), -T(0), T(0), T(1), inf};
    const auto same = [](T a, T b) { return std::memcmp(&a, &b, sizeof(T)) == 0; };
    const sc::Max max;
    CHECK(same(id, -inf));
    for (T a : values) {
      CHECK(same(max(id, a), a));
      CHECK(same(max(a, id), a));
      for (T b : values) {
        CHECK(std::isnan(max(a, b)) == (std::isnan(a) || std::isnan(b)));
        for (T c : values) CHECK(same(max(max(a, b), c), max(a, max(b, c))));
      }
    }
    CHECK(same(max(nan_with<T>(1), nan_with<T>(2, true)), nan_with<T>(2, true)));  // the last NaN
    CHECK(same(max(-T(0), T(0)), -T(0)));                                          // the first of the largest
    CHECK(sc::Max::identity<int>() == std::numeric_limits<int>::lowest());
    const cuda::maximum<T> plain;  // drops a NaN on its right, and what the NaN was combined with
    const T nan = std::numeric_limits<T>::quiet_NaN();
    CHECK(plain(plain(T(1), nan), T(2)) == T(2));
    CHECK(plain(T(1), plain(nan, T(2))) == T(1));
  }

  TEST_CASE("layouts: levels of the scan-then-propagate steps, the look-back workspace") {
    const auto w = sc::tree_layout<float>(1LL << 30, 1024);
    REQUIRE(w.levels == 3);  // 2^30 -> 2^20 tile totals -> 2^10 -> one tile
    CHECK(w.count[1] == 1LL << 20);
    CHECK(w.count[2] == 1LL << 10);
    CHECK(w.offset[2] == (std::size_t(1) << 20) * sizeof(float));
    CHECK(w.bytes == w.offset[2] + 1024 * sizeof(float));
    CHECK(sc::tree_layout<double>(1024, 1024).levels == 1);
    CHECK(sc::tree_layout<double>(1025, 1024).count[1] == 2);
    CHECK(sc::max_n(1024) == 2199023254528LL);  // 1024 (2^31 - 1)
    CHECK(sc::kTileMaxN<float> == 17592186036224LL);
    CHECK(sc::kTileMaxN<double> == 8796093018112LL);
    const auto top = sc::tree_layout<double>(sc::max_n(1024), 1024);  // 2^31 - 1 tiles, then 2^21, 2^11, 2
    REQUIRE(top.levels == sc::kMaxLevels);
    CHECK(top.count[1] == INT_MAX);
    CHECK(top.count[2] == 1LL << 21);
    CHECK(top.count[3] == 1LL << 11);
    CHECK(top.count[4] == 2);
    constexpr long long tf = sc::kTileElems<float>, td = sc::kTileElems<double>;
    const auto lb = sc::look_back_layout<float>(tf * 3 + 1);  // 4 tiles
    CHECK(lb.counter == 32);
    CHECK(lb.zeroed == 48);
    CHECK(lb.bytes == 48);
    const auto lbd = sc::look_back_layout<double>(td * 3 + 1);  // 4 tiles
    CHECK(lbd.counter == 16);
    CHECK(lbd.bytes == 32 + 64);
  }

  TEST_CASE_TEMPLATE("limits: each step's largest n is queried and planned, above it refused before any CUDA call", T,
                     int, float, double, long long) {
    using Plus = cuda::std::plus<T>;
    alignas(16) static T buf[64];  // host memory: a launch that got past the checks would fail
    alignas(16) static unsigned char temp[64];
    const auto al = [](std::size_t x) { return (x + 15) / 16 * 16; };
    const std::size_t s = sizeof(T), tiles = INT_MAX;
    for (auto v : sc::kAllVariants) {
      CAPTURE(sc::name(v));
      const long long max = stated_max_n<T>(v);
      std::size_t workspace = al(tiles * s) + al((1u << 21) * s) + al((1u << 11) * s) + al(2 * s);  // 4 levels
      if (v == sc::Variant::reduce_then_scan) workspace = al(tiles * s);  // one partial per tile
      if (v == sc::Variant::decoupled_look_back)  // the states (packed, or flags and 2 values), the counter
        workspace = s == 4 ? al(tiles * 8) + 16 : al(tiles * 4) + 16 + al(2 * tiles * s);
      const auto p = sc::plan<T, Plus>(v, max);
      CHECK(p.kernel != nullptr);
      CHECK(p.grid.x == unsigned(INT_MAX));
      for (long long n : {max + 1, max + 1024, LLONG_MAX - 1, LLONG_MAX})
        CHECK(sc::plan<T, Plus>(v, n).kernel == nullptr);
      for (sc::Kind kind : kKinds) {
        std::size_t q = 0;
        CHECK(sc::run<T>(v, nullptr, q, nullptr, nullptr, max, Plus{}, T(0), kind) == cudaSuccess);
        CHECK(q == workspace);
        for (long long n : {max + 1, max + 1024, LLONG_MAX - 1, LLONG_MAX}) {
          CAPTURE(n);
          std::size_t unchanged = 7, any = SIZE_MAX;
          CHECK(sc::run<T>(v, nullptr, unchanged, nullptr, nullptr, n, Plus{}, T(0), kind) == cudaErrorInvalidValue);
          CHECK(unchanged == 7);
          CHECK(sc::run<T>(v, temp, any, buf, buf, n, Plus{}, T(0), kind) == cudaErrorInvalidValue);  // in place
        }
      }
    }
    for (T x : buf) REQUIRE(x == T(0));
  }

  TEST_CASE("the tile map: a permutation of 16-byte vectors, each row of 8 kept in place") {
    using Map = sc::TileMap<float, sc::kTileItems<float>>;
    std::vector<int> seen(Map::kSize, 0);
    for (int t = 0; t < 32; ++t)
      for (int c = 0; c < Map::kLaneVecs; ++c) {
        const int o = Map::vector_offset(Map::blocked(t, c));
        CHECK(o % Map::kVec == 0);
        CHECK(o / Map::kVec / 8 == t);  // lane t's row
        for (int k = 0; k < Map::kVec; ++k) ++seen[o + k];
      }
    CHECK(std::count(seen.begin(), seen.end(), 1) == Map::kTile);
    for (int e = 0; e < Map::kTile; ++e) CHECK(Map::offset(e) == Map::vector_offset(e / 4) + e % 4);
    CHECK(Map::vector_offset(Map::vectorized(1, 2)) == (34 ^ 4) * 4);
    CHECK(Map::striped(3, 5) == 3 * 32 + 5);
  }
}

TEST_SUITE("gpu") {
  TEST_CASE_TEMPLATE("every variant, kind and n, sum and max: exact against the host and CUB", T, int, float,
                     double, long long) {
    for (long long n : kSizes)
      if (n <= 65537 || !smem::test::small_shapes_only()) check_exact<T>(n);
  }

  TEST_CASE_TEMPLATE("inputs and outputs off a 16-byte boundary", T, int, float, double) {
    for (int in_offset : {0, 1, 3})
      for (int out_offset : {0, 1, 2})
        if (in_offset || out_offset)
          for (long long n : {5LL, 4097LL, 65537LL}) check_exact<T>(n, in_offset, out_offset);
  }

  TEST_CASE("n = 0 launches nothing and writes nothing") {
    DeviceBuffer<float> in(1), out(4);
    out.poison();
    for (auto v : sc::kAllVariants)
      for (sc::Kind kind : kKinds) {
        CAPTURE(sc::name(v));
        CHECK(run_variant(v, in.get(), out.get(), 0, cuda::std::plus<float>{}, 0.f, kind) == cudaSuccess);
        CHECK(run_variant(v, static_cast<const float*>(nullptr), static_cast<float*>(nullptr), 0,
                          cuda::std::plus<float>{}, 0.f, kind) == cudaSuccess);
      }
    const auto h = out.download();
    CHECK(std::all_of(h.begin(), h.end(), [](float x) { return std::isnan(x); }));
  }

  TEST_CASE_TEMPLATE("fractional floats: within the error bound of each grouping", T, float, double) {
    for (long long n : {1000003LL, (1LL << 24) + 1}) {
      if (smem::test::small_shapes_only()) n = n % 100000;
      CAPTURE(n);
      auto g = smem::test::rng(std::uint64_t(n) + 77);
      const auto h = smem::test::random_vector<T>(std::size_t(n), g);  // [-1, 1]
      DeviceBuffer<T> in(h);
      std::vector<double> ref(h.size()), abs(h.size());  // inclusive prefix in float64, and of |x|
      double s = 0, a = 0;
      for (std::size_t i = 0; i < h.size(); ++i) ref[i] = s += h[i], abs[i] = a += std::fabs(double(h[i]));
      // Every step's grouping of prefix i has depth below log2(tile) x levels + items per thread +
      // the tiles it chains (steps 5 and 6: up to n / 2048): |error| <= depth x eps x sum |x|.
      const double depth = 64 + 4 * std::log2(double(n)) + double(n) / 2048;
      for (auto v : sc::kAllVariants) {
        CAPTURE(sc::name(v));
        const auto got = scan_on_device(v, in.get(), n, cuda::std::plus<T>{}, T(0), sc::Kind::inclusive);
        long long outside = 0;
        for (std::size_t i = 0; i < h.size(); ++i)
          outside += !(std::fabs(double(got[i]) - ref[i]) <= depth * std::numeric_limits<T>::epsilon() * abs[i]);
        CHECK(outside == 0);
      }
    }
  }

  TEST_CASE("a non-commutative operator: every step combines in index order") {
    for (long long n : {33LL, 4097LL, 65537LL, 1000003LL}) {
      CAPTURE(n);
      auto g = smem::test::rng(std::uint64_t(n) + 3);
      auto h = smem::test::random_vector<long long>(std::size_t(n), g, 0, std::numeric_limits<long long>::max());
      for (auto& x : h) x |= 1LL << 32;  // odd slopes: the maps stay invertible, nothing collapses to 0
      DeviceBuffer<long long> in(h);
      for (sc::Kind kind : kKinds) {
        CAPTURE(kind_name(kind));
        const auto ref = host_scan(h, Compose{}, kComposeIdentity, kind);
        REQUIRE(ref != host_scan(std::vector<long long>(h.rbegin(), h.rend()), Compose{}, kComposeIdentity, kind));
        for (auto v : sc::kAllVariants) {
          CAPTURE(sc::name(v));
          CHECK(scan_on_device(v, in.get(), n, Compose{}, kComposeIdentity, kind) == ref);
        }
      }
    }
  }

  TEST_CASE("in place: in == out") {
    for (long long n : {1LL, 1025LL, 65537LL, 1000003LL}) {
      CAPTURE(n);
      const auto h = exact_data<float>(std::size_t(n), std::uint64_t(n) + 11);
      for (sc::Kind kind : kKinds) {
        const auto ref = host_scan(h, cuda::std::plus<float>{}, 0.f, kind);
        for (auto v : sc::kAllVariants) {
          CAPTURE(sc::name(v));
          CAPTURE(kind_name(kind));
          DeviceBuffer<float> x(h);
          REQUIRE(run_variant(v, x.get(), x.get(), n, cuda::std::plus<float>{}, 0.f, kind) == cudaSuccess);
          CHECK(smem::test::first_bit_mismatch(x.download(), ref) == -1);
        }
      }
    }
  }

  TEST_CASE("NaN and infinities propagate from where they enter") {
    const long long n = 100003;
    const float inf = std::numeric_limits<float>::infinity();
    std::vector<float> h(n, 1.f);
    h[5000] = inf;  // prefixes from 5000 on: +inf; from 70000 on (+inf + -inf): NaN
    h[70000] = -inf;
    std::vector<float> nan(n, 1.f);
    constexpr long long tile = sc::kTileElems<float>;
    static_assert(tile < 70000, "the NaN starts a tile after the first");
    nan[tile] = std::numeric_limits<float>::quiet_NaN();  // the first element of a tile of steps 5-6
    DeviceBuffer<float> in(h), in_nan(nan);
    for (auto v : sc::kAllVariants) {
      CAPTURE(sc::name(v));
      const auto got = scan_on_device(v, in.get(), n, cuda::std::plus<float>{}, 0.f, sc::Kind::inclusive);
      for (long long i : {0LL, 4999LL}) CHECK(got[i] == float(i + 1));
      for (long long i : {5000LL, 5001LL, 69999LL}) CHECK(got[i] == inf);
      for (long long i : {70000LL, n - 1}) CHECK(std::isnan(got[i]));
      const auto got_nan = scan_on_device(v, in_nan.get(), n, cuda::std::plus<float>{}, 0.f, sc::Kind::exclusive);
      CHECK(got_nan[tile] == float(tile));
      CHECK(std::count_if(got_nan.begin(), got_nan.end(), [](float x) { return std::isnan(x); }) == n - tile - 1);
    }
  }

  TEST_CASE_TEMPLATE("Max: NaN from the first NaN on, bit for bit the sequential scan, in every step", T, float,
                     double) {
    const long long tile = sc::kTileElems<T>;
    // one tile to many: 3 levels of totals for steps 1 to 4, 130 or 260 tiles (look-back windows) for 5 and 6
    for (long long n : {1LL, 1000LL, 1025LL, tile, 3 * tile + 5, (1LL << 20) + 12345}) {
      if (n > 65537 && smem::test::small_shapes_only()) continue;
      CAPTURE(n);
      for (const auto& c : max_cases<T>(n, std::uint64_t(n) * 7 + sizeof(T))) {
        const char* name = c.first;
        const auto& h = c.second;
        CAPTURE(name);
        const long long first_nan = std::find_if(h.begin(), h.end(), [](T x) { return std::isnan(x); }) - h.begin();
        DeviceBuffer<T> in(h);
        for (sc::Kind kind : kKinds) {
          CAPTURE(kind_name(kind));
          const auto ref = host_scan(h, sc::Max{}, sc::Max::identity<T>(), kind);
          for (auto v : sc::kAllVariants) {
            CAPTURE(sc::name(v));
            const auto got = scan_on_device(v, in.get(), n, sc::Max{}, sc::Max::identity<T>(), kind);
            long long misplaced = 0;  // NaN exactly from the first NaN on (after it for an exclusive scan)
            for (long long i = 0; i < n; ++i)
              misplaced += std::isnan(got[i]) != (kind == sc::Kind::inclusive ? i >= first_nan : i > first_nan);
            CHECK(misplaced == 0);
            CHECK(smem::test::first_bit_mismatch(got, ref) == -1);
          }
        }
      }
    }
  }

  TEST_CASE("steps 1 to 5 are bitwise identical run to run; step 6 within the bound") {
    const long long n = smem::test::small_shapes_only() ? 70001 : (1LL << 22) + 5;
    auto g = smem::test::rng(std::uint64_t(n));
    DeviceBuffer<float> in(smem::test::random_vector<float>(std::size_t(n), g));
    for (auto v : sc::kAllVariants) {
      CAPTURE(sc::name(v));
      std::size_t bytes = 0;
      REQUIRE(sc::run<float>(v, nullptr, bytes, in.get(), nullptr, n, cuda::std::plus<float>{}, 0.f,
                             sc::Kind::inclusive) == cudaSuccess);
      DeviceBuffer<unsigned char> temp(bytes);  // one workspace reused by every run
      DeviceBuffer<float> a(static_cast<std::size_t>(n)), b(static_cast<std::size_t>(n));
      const auto once = [&](DeviceBuffer<float>& out) {
        out.poison();
        REQUIRE(sc::run(v, temp.get(), bytes, in.get(), out.get(), n, cuda::std::plus<float>{}, 0.f,
                        sc::Kind::inclusive) == cudaSuccess);
        SMEM_CUDA_CHECK(cudaDeviceSynchronize());
        return out.download();
      };
      const auto first = once(a);
      for (int r = 0; r < 4; ++r) {
        const auto again = once(b);
        if (v != sc::Variant::decoupled_look_back) CHECK(smem::test::first_bit_mismatch(again, first) == -1);
        else CHECK(smem::test::relative_error(again, first) < 1e-5);
      }
    }
  }

  TEST_CASE("n = 2^31 + 3 in place: 64-bit indices, checked on the device") {
    if (smem::test::small_shapes_only()) return;
    const long long n = (1LL << 31) + 3;
    DeviceBuffer<int> x(static_cast<std::size_t>(n));
    auto g = smem::test::rng(31);
    const Telescoping<int> f{{g(), 1 << 20}, 1};
    for (auto v : sc::kAllVariants)
      for (sc::Kind kind : kKinds) {
        CAPTURE(sc::name(v));
        CAPTURE(kind_name(kind));
        smem::test::fill_by_index(x.get(), std::size_t(n), f);
        REQUIRE(run_variant(v, x.get(), x.get(), n, cuda::std::plus<int>{}, 0, kind) == cudaSuccess);
        CHECK(wrong_prefixes(x.get(), n, f, kind) == 0);
      }
  }
}

TEST_SUITE("large") {
  TEST_CASE("every step at n = 2^32 + 2^20 + 7 ints, both kinds: every prefix exact, nothing written outside") {
    using T = int;
    const long long n = kLargeN;
    std::size_t most = 0;  // the largest workspace of any step
    for (auto v : sc::kAllVariants) {
      std::size_t q = 0;
      REQUIRE(sc::run<T>(v, nullptr, q, nullptr, nullptr, n, cuda::std::plus<T>{}, 0, sc::Kind::inclusive) ==
              cudaSuccess);
      most = std::max(most, q);
    }
    if (!smem::test::device_can_hold(2 * std::size_t(n) * sizeof(T) + most)) return;
    GuardedBuffer<T> in(static_cast<std::size_t>(n)), out(static_cast<std::size_t>(n));
    auto g = smem::test::rng(32);
    const Telescoping<T> f{{g(), 1 << 20}, 1};
    smem::test::fill_by_index(in.get(), std::size_t(n), f);
    for (auto v : sc::kAllVariants)
      for (sc::Kind kind : kKinds) {
        CAPTURE(sc::name(v));
        CAPTURE(kind_name(kind));
        std::size_t bytes = 0;
        REQUIRE(sc::run<T>(v, nullptr, bytes, in.get(), out.get(), n, cuda::std::plus<T>{}, 0, kind) == cudaSuccess);
        GuardedBuffer<unsigned char> temp(bytes);
        temp.poison(0x5A);  // the launcher must not rely on the workspace's contents
        out.poison(0x7F);   // 0x7F7F7F7F: no prefix of f
        REQUIRE(sc::run<T>(v, temp.get(), bytes, in.get(), out.get(), n, cuda::std::plus<T>{}, 0, kind) ==
                cudaSuccess);
        SMEM_CUDA_CHECK(cudaDeviceSynchronize());
        check_large(out, 0, n, f, kind, g);
        CHECK(temp.guards_intact());
        CHECK(in.guards_intact());
      }
  }

  TEST_CASE("every step at n = 2^32 + 2^20 + 7 long longs in place, 8 bytes off a 16-byte boundary: every prefix "
            "exact") {
    using T = long long;
    const long long n = kLargeN;
    std::size_t most = 0;
    for (auto v : sc::kAllVariants) {
      std::size_t q = 0;
      REQUIRE(sc::run<T>(v, nullptr, q, nullptr, nullptr, n, cuda::std::plus<T>{}, 0LL, sc::Kind::inclusive) ==
              cudaSuccess);
      most = std::max(most, q);
    }
    if (!smem::test::device_can_hold((std::size_t(n) + 1) * sizeof(T) + most)) return;
    GuardedBuffer<T> x(static_cast<std::size_t>(n) + 1);  // the scan at x + 1: element-wide accesses
    x.poison(0x7F);
    auto g = smem::test::rng(64);
    const Telescoping<T> f{{g(), 1 << 30}, (1LL << 31) + 1};  // prefixes up to 2^61: the high words count
    for (auto v : sc::kAllVariants)
      for (sc::Kind kind : kKinds) {
        CAPTURE(sc::name(v));
        CAPTURE(kind_name(kind));
        T* in_out = x.get() + 1;
        smem::test::fill_by_index(in_out, std::size_t(n), f);
        std::size_t bytes = 0;
        REQUIRE(sc::run<T>(v, nullptr, bytes, in_out, in_out, n, cuda::std::plus<T>{}, 0LL, kind) == cudaSuccess);
        GuardedBuffer<unsigned char> temp(bytes);
        temp.poison(0x5A);
        REQUIRE(sc::run<T>(v, temp.get(), bytes, in_out, in_out, n, cuda::std::plus<T>{}, 0LL, kind) ==
                cudaSuccess);
        SMEM_CUDA_CHECK(cudaDeviceSynchronize());
        check_large(x, 1, n, f, kind, g);
        CHECK(x.at(0) == 0x7F7F7F7F7F7F7F7FLL);  // the element before the scan untouched
        CHECK(temp.guards_intact());
      }
  }
}

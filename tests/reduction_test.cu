// Reduction: every variant x type x n, sum and max, against a compensated float64 CPU reference
// and cub::DeviceReduce; NaN and infinities (NaN propagates); determinism; n = 2^31 + 3; the bank
// model on every warp request of the kernels (support/reduction_bank_access.hpp, from the kernels'
// own index functions; docs/bank_tables.cu prints the same requests), held against Nsight
// Compute's counters; the accepted sizes on the host (size queries at LLONG_MAX and at each step's
// limit), and every variant beyond 2^32 elements, exactly, in the large suite. (Bad arguments:
// bad_input_test.cu; graph capture: graph_test.cu.)
#include <cub/device/device_reduce.cuh>
#include <doctest/doctest.h>

#include <reduction/reduction.cuh>

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "bank_evidence.hpp"
#include "bank_model.hpp"
#include "compare.hpp"
#include "device_buffer.hpp"
#include "gpu.hpp"
#include "limits.cuh"
#include "random.hpp"
#include "reduction_bank_access.hpp"

namespace rd = smem::reduction;
using smem::test::DeviceBuffer;
using smem::test::device_sum;

namespace {

constexpr long long kSizes[] = {0, 1, 2, 31, 32, 33, 1023, 1025, 65537, 1000003, (1LL << 24) + 1};

template <class T>
std::vector<T> make_data(std::size_t n, std::uint64_t salt) {
  auto g = smem::test::rng(salt);
  if constexpr (std::is_floating_point_v<T>) return smem::test::random_vector<T>(n, g);  // [-1, 1]
  // |partial sums| <= 100 n < 2^31 for int at n <= 2^24 + 1: no overflow in any grouping.
  else if constexpr (sizeof(T) == 4) return smem::test::random_vector<T>(n, g, T(-100), T(100));
  else return smem::test::random_vector<T>(n, g, T(-1000000000), T(1000000000));
}

struct HostRef {
  double sum = 0, abs_sum = 0;  // sum: Neumaier-compensated float64 (exact for integers here)
  long long isum = 0;           // integers: the exact sum
};

template <class T>
HostRef host_sum(const std::vector<T>& x) {
  HostRef r;
  double c = 0;
  for (const T& v : x) {
    const double d = double(v);
    const double t = r.sum + d;
    c += std::fabs(r.sum) >= std::fabs(d) ? (r.sum - t) + d : (d - t) + r.sum;
    r.sum = t;
    r.abs_sum += std::fabs(d);
    if constexpr (std::is_integral_v<T>) r.isum += (long long)v;
  }
  r.sum += c;
  return r;
}

template <class T>
T host_max(const std::vector<T>& x) {
  T m = rd::Max::identity<T>();
  for (const T& v : x) m = rd::Max{}(m, v);
  return m;
}

/// Error bound for a float sum of n terms in some tree order: depth x eps x sum|x|, with a
/// depth bound generous for every variant here (log2 n for the trees, the grid-stride chains
/// far below sqrt n) and small enough that a lost or doubled element of size ~1 fails.
template <class T>
double tolerance(long long n, double abs_sum) {
  const double depth = 2 * std::ceil(std::log2(double(n) + 1)) + std::sqrt(double(n)) + 8;
  return depth * std::numeric_limits<T>::epsilon() * abs_sum;
}

template <class T, class Op>
T cub_reduce(const T* d_in, long long n, Op op, T identity) {
  std::size_t bytes = 0;
  DeviceBuffer<T> out(1);
  SMEM_CUDA_CHECK(cub::DeviceReduce::Reduce(nullptr, bytes, d_in, out.get(), n, op, identity));
  DeviceBuffer<unsigned char> temp(bytes);
  SMEM_CUDA_CHECK(cub::DeviceReduce::Reduce(temp.get(), bytes, d_in, out.get(), n, op, identity));
  SMEM_CUDA_CHECK(cudaDeviceSynchronize());
  return out.download()[0];
}

/// Runs variant v once with a fresh workspace that is poisoned (the launcher must not rely on
/// its contents) and an output poisoned with NaN / all-ones bits; returns *out.
template <class T, class Op>
T run_variant(rd::Variant v, const T* d_in, long long n, Op op, T identity, cudaStream_t s = nullptr) {
  std::size_t bytes = 0;
  REQUIRE(rd::run<T>(v, nullptr, bytes, d_in, n, nullptr, op, identity) == cudaSuccess);
  REQUIRE(bytes > 0);
  DeviceBuffer<unsigned char> temp(bytes);
  temp.poison(0xA5);
  DeviceBuffer<T> out(1);
  out.poison();
  REQUIRE(rd::run<T>(v, temp.get(), bytes, d_in, n, out.get(), op, identity, s) == cudaSuccess);
  SMEM_CUDA_CHECK(cudaDeviceSynchronize());
  return out.download()[0];
}

template <class T>
void check_sum(T got, T vendor, const HostRef& ref, long long n) {
  if constexpr (std::is_integral_v<T>) {
    CHECK((long long)got == ref.isum);
    CHECK(vendor == got);
  } else {
    REQUIRE(std::isfinite(double(got)));
    const double tol = tolerance<T>(n, ref.abs_sum);
    CHECK(std::fabs(double(got) - ref.sum) <= tol);
    CHECK(std::fabs(double(got) - double(vendor)) <= 2 * tol);
    if (n == 0) CHECK(smem::test::first_bit_mismatch(std::vector<T>{got}, std::vector<T>{T(0)}) == -1);
  }
}

/// Every variant on one input (in starts `offset` elements into its buffer: misaligned for
/// the 16-byte path when offset * sizeof(T) is not a multiple of 16).
template <class T>
void check_all_variants(long long n, int offset = 0) {
  CAPTURE(n);
  CAPTURE(offset);
  const auto h = make_data<T>(std::size_t(n), std::uint64_t(n) * 977 + offset + sizeof(T));
  DeviceBuffer<T> buf(std::size_t(n) + offset + 1);
  if (n) SMEM_CUDA_CHECK(cudaMemcpy(buf.get() + offset, h.data(), n * sizeof(T), cudaMemcpyHostToDevice));
  const T* in = buf.get() + offset;
  const HostRef ref = host_sum(h);
  const T mx = host_max(h);
  const T vendor_sum = cub_reduce(in, n, rd::Sum{}, T(0));
  const T vendor_max = cub_reduce(in, n, rd::Max{}, rd::Max::identity<T>());
  REQUIRE(smem::test::first_bit_mismatch(std::vector<T>{vendor_max}, std::vector<T>{mx}) == -1);
  for (auto v : rd::kAllVariants) {
    CAPTURE(rd::name(v));
    check_sum(run_variant(v, in, n, rd::Sum{}, T(0)), vendor_sum, ref, n);
    const T got_max = run_variant(v, in, n, rd::Max{}, rd::Max::identity<T>());
    CHECK(smem::test::first_bit_mismatch(std::vector<T>{got_max}, std::vector<T>{mx}) == -1);
  }
}

/// True for the steps that launch a fixed grid (7 to 10); steps 1 to 6 launch one block per tile.
bool fixed_grid(rd::Variant v) {
  return v == rd::Variant::grid_stride || v == rd::Variant::single_pass || v == rd::Variant::cub_block ||
         v == rd::Variant::tagged_counter;
}

/// x[i] = 1000 + f(i): integers from 0 to 2000.
template <class T>
struct SmallOfIndex {
  smem::test::SmallIntOfIndex f;
  __device__ T operator()(std::size_t i) const { return T(1000 + f(i)); }
};

/// run_variant with the workspace and the output between guards, which must be intact after it.
template <class T, class Op>
T run_guarded(rd::Variant v, const T* d_in, long long n, Op op, T identity) {
  std::size_t bytes = 0;
  REQUIRE(rd::run<T>(v, nullptr, bytes, d_in, n, nullptr, op, identity) == cudaSuccess);
  smem::test::GuardedBuffer<unsigned char> temp(bytes);
  temp.poison(0x5C);
  smem::test::GuardedBuffer<T> out(1);
  out.poison();
  REQUIRE(rd::run<T>(v, temp.get(), bytes, d_in, n, out.get(), op, identity) == cudaSuccess);
  SMEM_CUDA_CHECK(cudaDeviceSynchronize());
  CHECK(temp.guards_intact());
  CHECK(out.guards_intact());
  return out.at(0);
}

__global__ void fill_pattern(int* x, long long n) {  // x[i] = i mod 7 - 3
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x)
    x[i] = int(i % 7) - 3;
}

}  // namespace

TEST_SUITE("gpu") {
  TEST_CASE_TEMPLATE("every variant, every n, sum and max, against float64 and CUB", T, float, double, int,
                     long long) {
    for (long long n : kSizes)
      if (n <= 65537 || !smem::test::small_shapes_only()) check_all_variants<T>(n);
  }

  TEST_CASE_TEMPLATE("inputs that start off a 16-byte boundary", T, float, double, int, long long) {
    for (int offset : {1, 2, 3})
      for (long long n : {1LL, 5LL, 1025LL, 65537LL}) check_all_variants<T>(n, offset);
  }

  TEST_CASE_TEMPLATE("bitwise identical results run to run", T, float, double) {
    for (long long n : {1000003LL, (1LL << 24) + 1}) {
      if (smem::test::small_shapes_only()) n = n % 100000;  // small sizes under compute-sanitizer
      CAPTURE(n);
      DeviceBuffer<T> in(make_data<T>(std::size_t(n), std::uint64_t(n) + 5));
      for (auto v : rd::kAllVariants) {
        CAPTURE(rd::name(v));
        std::size_t bytes = 0;
        REQUIRE(rd::run<T>(v, nullptr, bytes, in.get(), n, nullptr, rd::Sum{}, T(0)) == cudaSuccess);
        DeviceBuffer<unsigned char> temp(bytes);  // one workspace reused by every run
        temp.poison(0xA5);
        constexpr int kRuns = 6;
        DeviceBuffer<T> out(kRuns);
        out.poison();
        for (int r = 0; r < kRuns; ++r)
          REQUIRE(rd::run(v, temp.get(), bytes, in.get(), n, out.get() + r, rd::Sum{}, T(0)) == cudaSuccess);
        SMEM_CUDA_CHECK(cudaDeviceSynchronize());
        const auto got = out.download();
        const T fresh = run_variant(v, in.get(), n, rd::Sum{}, T(0));  // and a fresh workspace
        for (int r = 0; r < kRuns; ++r)
          CHECK(smem::test::first_bit_mismatch(std::vector<T>{got[r]}, std::vector<T>{fresh}) == -1);
      }
    }
  }

  TEST_CASE("step 10 on stale workspaces: any word it finds, then the word it leaves") {
    // A word is current only with the tag and a count below the grid. Zeros, ones, the poison,
    // random bytes, the tag with a count of the whole grid, and a word one add below the tag
    // (its count full, so the first add carries into the tag) are all stale.
    using TC = rd::TaggedCounter;
    const long long n = smem::test::small_shapes_only() ? 65537 : (1LL << 24) + 7;
    const auto h = make_data<float>(std::size_t(n), 41);
    DeviceBuffer<float> in(h);
    const HostRef ref = host_sum(h);
    const float vendor = cub_reduce(in.get(), n, rd::Sum{}, 0.f);
    const unsigned grid = rd::tagged_counter_plan<float, rd::Sum>(n).grid.x;
    REQUIRE(grid > 1);
    std::size_t bytes = 0;
    REQUIRE(rd::tagged_counter(nullptr, bytes, in.get(), n, static_cast<float*>(nullptr), rd::Sum{}, 0.f) ==
            cudaSuccess);
    const std::size_t at = rd::single_pass_layout<float, rd::kStrideThreads>(n).counter;
    const unsigned long long stale[] = {0ull,
                                        ~0ull,
                                        0xA5A5A5A5A5A5A5A5ull,
                                        smem::test::rng(7)(),
                                        TC::kReady + grid,
                                        ((TC::kTag - 1) << TC::kCountBits) | TC::kCountMask};
    for (unsigned long long word : stale) {
      CAPTURE(word);
      DeviceBuffer<unsigned char> temp(bytes);
      temp.poison(0x5C);
      SMEM_CUDA_CHECK(cudaMemcpy(temp.get() + at, &word, sizeof word, cudaMemcpyHostToDevice));
      constexpr int kRuns = 3;  // the first on the stale word, then on the word the last one left
      DeviceBuffer<float> out(kRuns + 1);
      out.poison();
      for (int r = 0; r < kRuns; ++r)
        REQUIRE(rd::tagged_counter(temp.get(), bytes, in.get(), n, out.get() + r, rd::Sum{}, 0.f) == cudaSuccess);
      // A smaller input on the same workspace: another grid, the counter at another offset.
      const long long small = 5 * rd::kStrideThreads * 4 + 3;
      REQUIRE(rd::tagged_counter(temp.get(), bytes, in.get(), small, out.get() + kRuns, rd::Sum{}, 0.f) ==
              cudaSuccess);
      SMEM_CUDA_CHECK(cudaDeviceSynchronize());
      const auto got = out.download();
      for (int r = 0; r < kRuns; ++r) {
        check_sum(got[r], vendor, ref, n);
        CHECK(smem::test::first_bit_mismatch(std::vector<float>{got[r]}, std::vector<float>{got[0]}) == -1);
      }
      const std::vector<float> head(h.begin(), h.begin() + small);
      check_sum(got[kRuns], cub_reduce(in.get(), small, rd::Sum{}, 0.f), host_sum(head), small);
      unsigned long long left = 0;
      SMEM_CUDA_CHECK(cudaMemcpy(&left, temp.get() + at, sizeof left, cudaMemcpyDeviceToHost));
      CHECK(left == TC::kReady);
    }
  }

  TEST_CASE("n = 2^31 + 3: 64-bit indices, exact sum of a pattern filled on the device") {
    if (smem::test::small_shapes_only()) return;
    const long long n = (1LL << 31) + 3;
    DeviceBuffer<int> in(std::size_t(n) + 0);
    fill_pattern<<<4096, 256>>>(in.get(), n);
    SMEM_CUDA_CHECK(cudaGetLastError());
    SMEM_CUDA_CHECK(cudaDeviceSynchronize());
    long long expect = 0;  // whole periods of 0..6 - 3 sum to 0
    for (long long r = 0; r < n % 7; ++r) expect += r - 3;
    REQUIRE(expect == -5);
    for (auto v : rd::kAllVariants) {
      CAPTURE(rd::name(v));
      CHECK(run_variant(v, in.get(), n, rd::Sum{}, 0) == expect);
    }
    CHECK(run_variant(rd::Variant::single_pass, in.get(), n, rd::Max{}, rd::Max::identity<int>()) == 3);
    CHECK(run_variant(rd::Variant::single_pass, in.get() + 1, n - 1, rd::Sum{}, 0) == expect + 3);
  }

  TEST_CASE_TEMPLATE("NaN and infinities: NaN propagates through sum and max, inf + -inf is NaN", T, float,
                     double) {
    // The documented rule (reduction_common.cuh, as numpy and torch): a NaN anywhere makes the sum
    // and the max NaN; a sum with both infinities is NaN, with one of them that infinity; the max
    // of NaN-free data is its largest value. Every variant and CUB (with the same ops) against it.
    const T inf = std::numeric_limits<T>::infinity(), nan = std::numeric_limits<T>::quiet_NaN();
    const long long big = smem::test::small_shapes_only() ? 4099 : 1000003;
    for (long long n : {37LL, big}) {  // one block, and many (with a tail after the vectors)
      CAPTURE(n);
      auto g = smem::test::rng(77 + std::uint64_t(n));
      const auto base = smem::test::random_vector<T>(std::size_t(n), g);
      struct Case {
        const char* what;
        std::vector<std::pair<long long, T>> set;  // (index, value) written over the random data
        T fill;                                    // 0: keep the random data; else every element
        double sum;                                // NaN, +-inf, or 0: finite
        double max;                                // NaN, +-inf, or 0: finite
      };
      const Case cases[] = {
          {"NaN first", {{0, nan}}, 0, NAN, NAN},
          {"NaN in the middle", {{n / 2 + 1, nan}}, 0, NAN, NAN},
          {"NaN last", {{n - 1, nan}}, 0, NAN, NAN},
          {"all NaN", {}, nan, NAN, NAN},
          {"+inf", {{n / 3, inf}}, 0, INFINITY, INFINITY},
          {"-inf", {{n / 5, -inf}}, 0, -INFINITY, 0},
          {"all -inf", {}, -inf, -INFINITY, -INFINITY},
          {"+inf first and last", {{0, inf}, {n - 1, inf}}, 0, INFINITY, INFINITY},
          {"+inf and -inf", {{7, inf}, {n - 2, -inf}}, 0, NAN, INFINITY},
          {"-inf and NaN", {{3, -inf}, {n - 5, nan}}, 0, NAN, NAN},
          {"+inf and NaN last", {{1, inf}, {n - 1, nan}}, 0, NAN, NAN},
      };
      for (const auto& c : cases) {
        CAPTURE(c.what);
        std::vector<T> h = base;
        if (c.fill != T(0)) std::fill(h.begin(), h.end(), c.fill);
        for (auto [i, x] : c.set) h[std::size_t(i)] = x;
        // The float64 reference, by the rule and without the recipe's ops.
        bool any_nan = false, pos_inf = false, neg_inf = false;
        T largest = -inf;
        std::vector<T> finite;
        for (T x : h) {
          if (std::isnan(x)) {
            any_nan = true;
            continue;
          }
          largest = std::max(largest, x);
          if (x == inf) pos_inf = true;
          else if (x == -inf) neg_inf = true;
          else finite.push_back(x);
        }
        const HostRef finite_sum = host_sum(finite);
        const double want_sum = any_nan || (pos_inf && neg_inf) ? NAN : pos_inf ? INFINITY : neg_inf ? -INFINITY
                                                                                              : finite_sum.sum;
        const double want_max = any_nan ? NAN : double(largest);
        // The table states the rule's answer; the reference must agree with it.
        REQUIRE(std::isnan(want_sum) == std::isnan(c.sum));
        REQUIRE(std::isnan(want_max) == std::isnan(c.max));
        if (std::isinf(c.sum)) REQUIRE(want_sum == c.sum);
        if (std::isinf(c.max)) REQUIRE(want_max == c.max);
        if (c.max == 0) REQUIRE(std::isfinite(want_max));
        auto check_rule = [&](const char* who, T sum, T mx) {
          CAPTURE(who);
          CAPTURE(double(sum));
          CAPTURE(double(mx));
          if (std::isnan(want_sum)) CHECK(std::isnan(sum));
          else if (std::isinf(want_sum)) CHECK(double(sum) == want_sum);
          else CHECK(std::fabs(double(sum) - want_sum) <= tolerance<T>(n, finite_sum.abs_sum));
          if (std::isnan(want_max)) CHECK(std::isnan(mx));
          else CHECK(smem::test::first_bit_mismatch(std::vector<T>{mx}, std::vector<T>{T(want_max)}) == -1);
        };
        DeviceBuffer<T> in(h);
        check_rule("cub::DeviceReduce", cub_reduce(in.get(), n, rd::Sum{}, T(0)),
                   cub_reduce(in.get(), n, rd::Max{}, rd::Max::identity<T>()));
        for (auto v : rd::kAllVariants)
          check_rule(rd::name(v), run_variant(v, in.get(), n, rd::Sum{}, T(0)),
                     run_variant(v, in.get(), n, rd::Max{}, rd::Max::identity<T>()));
      }
    }
  }
}

TEST_SUITE("large") {
  TEST_CASE_TEMPLATE("every variant, n = 2^32 + 2^12 + 3 elements one off a 16-byte boundary: exact sum and max", T,
                     unsigned, long long) {
    // Integers from 0 to 2000: the long long sum is exact, the unsigned one exact modulo 2^32 (in
    // every grouping); the reference is a plain sum on the GPU. Then a maximum planted at the first
    // element (read one by one before the 16-byte boundary), then a larger one at the last.
    const long long n = (1LL << 32) + (1LL << 12) + 3;
    if (!smem::test::device_can_hold((std::size_t(n) + 1) * sizeof(T) + (64 << 20))) return;
    DeviceBuffer<T> buf(std::size_t(n) + 1);
    T* in = buf.get() + 1;
    smem::test::fill_by_index(in, std::size_t(n), SmallOfIndex<T>{{smem::test::rng(sizeof(T))(), 1000}});
    const T sum = T(device_sum(in, std::size_t(n)));
    for (auto v : rd::kAllVariants) {
      CAPTURE(rd::name(v));
      CHECK(run_guarded(v, in, n, rd::Sum{}, T(0)) == sum);
    }
    for (long long at : {0LL, n - 1}) {
      CAPTURE(at);
      const T top = T(at == 0 ? 2001 : 2002);
      SMEM_CUDA_CHECK(cudaMemcpy(in + at, &top, sizeof(T), cudaMemcpyHostToDevice));
      for (auto v : rd::kAllVariants) {
        CAPTURE(rd::name(v));
        CHECK(run_guarded(v, in, n, rd::Max{}, rd::Max::identity<T>()) == top);
      }
    }
  }
}

namespace {

namespace ra = smem::test::reduction_access;
using smem::test::Request;

// The bank model's prediction for each kernel of one block (the profiled launch's blocks are all
// full), from every warp request of support/reduction_bank_access.hpp. T is float: the profiled
// type.
std::optional<smem::test::BankPrediction> reduction_bank_prediction(const std::string& variant) {
  using smem::test::predict;
  using T = float;
  if (variant == "interleaved_divergent") return predict([](auto&& v) { ra::interleaved_divergent<T>(v); });
  if (variant == "interleaved_strided") return predict([](auto&& v) { ra::interleaved_strided<T>(v); });
  if (variant == "sequential" || variant == "first_add") return predict([](auto&& v) { ra::sequential<T>(1, v); });
  if (variant == "warp_shuffle" || variant == "unrolled") return predict([](auto&& v) { ra::sequential<T>(64, v); });
  if (variant == "grid_stride") return predict([](auto&& v) { ra::grid_stride<T>(false, v); });
  if (variant == "single_pass" || variant == "tagged_counter") return predict([](auto&& v) { ra::grid_stride<T>(true, v); });
  return std::nullopt;  // cub_block
}

// The worst request of a round of warp w (its two loads s[k], s[k + stride] and the store).
template <class T>
smem::bank::Cost strided_round(unsigned stride, int w) {
  return smem::test::worst_request([&](auto&& v) { ra::strided_round<T>(w, stride, v); });
}
template <class T>
smem::bank::Cost sequential_round(unsigned stride, int w) {
  return smem::test::worst_request([&](auto&& v) { ra::sequential_round<T>(w, stride, v); });
}

// Conflict-free for a request: no more wavefronts than its active lanes' bytes need at 128 bytes
// per wavefront, e.g. 2 for 32 lanes of 8 bytes, 1 for 8 lanes of 8 bytes.
template <class T>
void check_sequential_conflict_free() {
  for (unsigned s = rd::kTreeThreads / 2; s > 0; s /= 2)
    for (int w = 0; unsigned(32 * w) < s; ++w) {
      CAPTURE(s);
      CAPTURE(w);
      ra::sequential_round<T>(w, s, [](const Request& r) {
        CAPTURE(r.what);
        const int fewest = (__builtin_popcount(r.active) * int(sizeof(T)) + 127) / 128;
        CHECK(fewest >= 1);
        CHECK(r.cost().wavefronts == fewest);
      });
    }
}

}  // namespace

TEST_SUITE("host") {
  TEST_CASE("workspace sizes") {
    // Steps 1-6: ping-pong buffers for the first two passes; 2^31 + 3 floats at 256 per block.
    auto blocks = [](long long n) { return rd::sequential_plan<float, rd::Sum>(n).grid.x; };
    CHECK(blocks(0) == 1);
    CHECK(blocks(256) == 1);
    CHECK(blocks(257) == 2);
    const auto w = rd::multi_pass_layout<float>((1LL << 31) + 3, rd::sequential_plan<float, rd::Sum>);
    CHECK(w.second == rd::align_up(((1LL << 23) + 1) * 4));
    CHECK(w.bytes == rd::align_up(((1LL << 23) + 1) * 4) + rd::align_up(((1LL << 15) + 1) * 4));
    CHECK(rd::multi_pass_layout<float>(100, rd::sequential_plan<float, rd::Sum>).bytes == rd::kTempAlign);
    // Steps 7-10: one partial per block, never more than kMaxGridBlocks; plus the counter.
    CHECK(rd::stride_tiles<float, 256>(0) == 1);
    CHECK(rd::stride_tiles<float, 256>(1024) == 1);
    CHECK(rd::stride_tiles<float, 256>(1025) == 2);
    CHECK(rd::stride_tiles<double, 256>(1LL << 40) == rd::kMaxGridBlocks);
    CHECK(rd::single_pass_layout<double, 256>(1LL << 40).bytes == rd::kMaxGridBlocks * 8 + rd::kTempAlign);
    CHECK(rd::single_pass_layout<double, 256>(1LL << 40).counter == rd::kMaxGridBlocks * 8);
  }

  TEST_CASE_TEMPLATE("accepted sizes: size queries at LLONG_MAX and at each step's limit, the next n refused "
                     "before any CUDA call", T, float, long long) {
    alignas(16) static T in[64];
    alignas(16) static T out[1];
    alignas(16) static unsigned char temp[64];
    out[0] = T(9);
    CHECK(rd::stride_tiles<T, rd::kStrideThreads>(LLONG_MAX) == rd::kMaxGridBlocks);  // n + per_block - 1 overflows
    CHECK(rd::stride_tiles<T, rd::kStrideThreads>(LLONG_MAX - 1) == rd::kMaxGridBlocks);
    for (auto v : rd::kAllVariants) {
      CAPTURE(rd::name(v));
      std::size_t q = 12345;
      if (fixed_grid(v)) {
        // Any n: at most kMaxGridBlocks partials, and steps 8 to 10's counter.
        REQUIRE(rd::run<T>(v, nullptr, q, nullptr, LLONG_MAX, nullptr, rd::Sum{}, T(0)) == cudaSuccess);
        CHECK(q == rd::align_up(rd::kMaxGridBlocks * sizeof(T)) + (v == rd::Variant::grid_stride ? 0 : rd::kTempAlign));
        const auto p = rd::plan<T, rd::Sum>(v, LLONG_MAX);
        CHECK(p.kernel != nullptr);
        CHECK(p.grid.x >= 1);
        CHECK(p.grid.x <= unsigned(rd::kMaxGridBlocks));
        continue;
      }
      // One block per tile: at most 2^31 - 1 blocks in the first pass.
      const long long per_block = (1LL << 30) / rd::plan<T, rd::Sum>(v, 1LL << 30).grid.x;
      CHECK((per_block == rd::kTreeThreads || per_block == 2 * rd::kTreeThreads));
      const long long most = INT_MAX * per_block;
      CHECK(rd::plan<T, rd::Sum>(v, most).grid.x == unsigned(INT_MAX));
      CHECK(rd::plan<T, rd::Sum>(v, most + 1).kernel == nullptr);
      CHECK(rd::plan<T, rd::Sum>(v, LLONG_MAX).kernel == nullptr);
      REQUIRE(rd::run<T>(v, nullptr, q, nullptr, most, nullptr, rd::Sum{}, T(0)) == cudaSuccess);
      const long long second = (INT_MAX - 1) / per_block + 1;  // the second pass's blocks
      CHECK(q == rd::align_up(std::size_t(INT_MAX) * sizeof(T)) + rd::align_up(std::size_t(second) * sizeof(T)));
      for (long long n : {most + 1, LLONG_MAX}) {
        CAPTURE(n);
        std::size_t refused = 12345;
        CHECK(rd::run<T>(v, nullptr, refused, nullptr, n, nullptr, rd::Sum{}, T(0)) == cudaErrorInvalidValue);
        CHECK(refused == 12345);
        std::size_t plenty = SIZE_MAX;
        CHECK(rd::run<T>(v, temp, plenty, in, n, out, rd::Sum{}, T(0)) == cudaErrorInvalidValue);
      }
    }
    CHECK(out[0] == T(9));
  }

  TEST_CASE("ops and identities") {
    CHECK(rd::Max::identity<float>() == -std::numeric_limits<float>::infinity());
    CHECK(rd::Max::identity<int>() == std::numeric_limits<int>::lowest());
    CHECK(rd::Max{}(3, 5) == 5);
    // NaN wins from either side (numpy.max, torch.max): every grouping of a reduction agrees.
    const float nan = std::numeric_limits<float>::quiet_NaN();
    CHECK(std::isnan(rd::Max{}(nan, 1.0f)));
    CHECK(std::isnan(rd::Max{}(1.0f, nan)));
    CHECK(std::isnan(rd::Max{}(-std::numeric_limits<float>::infinity(), nan)));
    CHECK(rd::Max{}(-std::numeric_limits<double>::infinity(), 2.0) == 2.0);
    CHECK(rd::Sum{}(2.5, 1.0) == 3.5);
    CHECK(rd::Sum::identity<long long>() == 0);
  }

  // The bank model on every warp request of the trees (support/reduction_bank_access.hpp, from the
  // kernels' own index functions): a thread takes part in a round when its index is inside the
  // 256-value block (step 2) or tid < stride (steps 3-6).
  TEST_CASE("bank model: the strided index 2*s*tid conflicts, sequential addressing does not") {
    // 4-byte values: rounds s = 1, 2, 4, ..., 128 of warp 0 (the one warp busy in every round).
    const int expect4[] = {2, 4, 8, 8, 8, 4, 2, 1};
    const int expect8[] = {4, 8, 16, 16, 8, 4, 2, 1};  // 8-byte values: ideal is 2
    int r = 0;
    for (unsigned s = 1; s < unsigned(rd::kTreeThreads); s *= 2, ++r) {
      CAPTURE(s);
      CHECK(strided_round<float>(s, 0).wavefronts == expect4[r]);
      CHECK(strided_round<double>(s, 0).wavefronts == expect8[r]);
    }
    check_sequential_conflict_free<float>();
    check_sequential_conflict_free<double>();
    check_sequential_conflict_free<int>();
    check_sequential_conflict_free<long long>();
  }

  TEST_CASE("bank model: step 1 is conflict-free but divergent") {
    // Round s of step 1: lanes with tid % (2 s) == 0 read s[tid + s]: one wavefront, but only
    // 32 / (2 s) lanes of each warp do work while every warp issues the instruction.
    for (unsigned s = 1; s <= 16; s *= 2) {
      CAPTURE(s);
      ra::divergent_round<float>(0, s, [&](const Request& r) {
        CAPTURE(r.what);
        CHECK(__builtin_popcount(r.active) == int(32 / (2 * s)));
        CHECK(r.cost().wavefronts == 1);
      });
    }
  }

  TEST_CASE("bank model agrees with Nsight Compute's measured wavefronts (results/*/banks.json)") {
    const auto not_modelled = smem::test::check_bank_evidence(
        "reduction", [](const std::string& v, const smem::test::BankMeasurement&) { return reduction_bank_prediction(v); });
    CHECK(not_modelled == std::vector<std::string>{"cub_block"});
  }
}

// Reduction: every variant x type x n, sum and max, against a compensated float64 CPU reference
// and cub::DeviceReduce; NaN and infinities; determinism; n = 2^31 + 3; the bank model on the
// kernels' own shared-memory index functions (bad arguments: bad_input_test.cu; graph capture:
// graph_test.cu).
#include <cub/device/device_reduce.cuh>
#include <doctest/doctest.h>

#include <reduction/reduction.cuh>

#include <cmath>
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
#include "random.hpp"

namespace rd = smem::reduction;
using smem::bank::wavefronts_of;
using smem::test::DeviceBuffer;

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
    const T inf = std::numeric_limits<T>::infinity(), nan = std::numeric_limits<T>::quiet_NaN();
    const long long n = smem::test::small_shapes_only() ? 4099 : 1000003;
    auto g = smem::test::rng(77);
    const auto base = smem::test::random_vector<T>(std::size_t(n), g);
    struct Case {
      const char* what;
      std::vector<std::pair<long long, T>> set;  // (index, value) written over the random data
      bool all_nan;
      double sum;  // NaN: the sum is NaN; +-inf: that infinity; 0: finite (checked elsewhere)
      double max;  // NaN, +inf, or 0: finite
    };
    const Case cases[] = {
        {"NaN first", {{0, nan}}, false, NAN, NAN},
        {"NaN in the middle", {{n / 2 + 1, nan}}, false, NAN, NAN},
        {"NaN last", {{n - 1, nan}}, false, NAN, NAN},
        {"all NaN", {}, true, NAN, NAN},
        {"+inf", {{n / 3, inf}}, false, INFINITY, INFINITY},
        {"-inf", {{n / 5, -inf}}, false, -INFINITY, 0},
        {"+inf and -inf", {{7, inf}, {n - 2, -inf}}, false, NAN, INFINITY},
        {"-inf and NaN", {{3, -inf}, {n - 5, nan}}, false, NAN, NAN},
    };
    for (const auto& c : cases) {
      CAPTURE(c.what);
      std::vector<T> h = base;
      if (c.all_nan) std::fill(h.begin(), h.end(), nan);
      for (auto [i, x] : c.set) h[std::size_t(i)] = x;
      DeviceBuffer<T> in(h);
      for (auto v : rd::kAllVariants) {
        CAPTURE(rd::name(v));
        const double sum = double(run_variant(v, in.get(), n, rd::Sum{}, T(0)));
        const double mx = double(run_variant(v, in.get(), n, rd::Max{}, rd::Max::identity<T>()));
        if (std::isnan(c.sum)) CHECK(std::isnan(sum));
        else if (std::isinf(c.sum)) CHECK(sum == c.sum);
        if (std::isnan(c.max)) CHECK(std::isnan(mx));
        else if (std::isinf(c.max)) CHECK(mx == c.max);
        else CHECK((std::isfinite(mx) && mx <= 1.0));
      }
    }
  }
}

namespace {

// The bank model's prediction for each kernel of one block (the profiled launch's blocks are all
// full), request by request: a request whose lanes are all inactive is not counted, as in
// Nsight Compute's SASS-level counters. T is float: the profiled type.
using smem::bank::Tally;
using smem::test::BankPrediction;
constexpr int kTreeWarps = rd::kTreeThreads / 32;

// One access of every warp of a tree block: word(tid) is the float offset thread tid touches
// when take(tid) holds.
template <class Take, class Word>
void tree_access(Tally& t, Take&& take, Word&& word, int width = 4) {
  for (int w = 0; w < kTreeWarps; ++w) {
    std::uint32_t active = 0;
    for (int l = 0; l < 32; ++l)
      if (take(32 * w + l)) active |= 1u << l;
    t.add(wavefronts_of([&](int l) { return 4 * word(32 * w + l); }, width, active));
  }
}

// s[tid] = value, by every thread, before the tree.
void tree_fill(BankPrediction& p) {
  tree_access(p.st, [](int) { return true; }, [](int t) { return t; });
}

// A round s[k] = op(s[k], s[k + stride]) by the threads with take(tid), at k = index(tid).
template <class Take, class Index>
void tree_round(BankPrediction& p, unsigned stride, Take&& take, Index&& index) {
  tree_access(p.ld, take, index);
  tree_access(p.ld, take, [&](int t) { return index(t) + int(stride); });
  tree_access(p.st, take, index);
}

BankPrediction divergent_prediction() {
  BankPrediction p;
  tree_fill(p);
  for (unsigned s = 1; s < unsigned(rd::kTreeThreads); s *= 2)
    tree_round(p, s, [&](int t) { return t % (2 * s) == 0; }, [](int t) { return t; });
  p.ld.add(1);  // thread 0 reads s[0]
  return p;
}

// In the first round (stride 1) the compiler reads s[k] and s[k + 1] as one 8-byte load
// (SASS: LDS.64): k = 2 tid is even.
BankPrediction strided_prediction() {
  BankPrediction p;
  tree_fill(p);
  auto take = [](unsigned s) { return [s](int t) { return rd::strided_index(s, t) < unsigned(rd::kTreeThreads); }; };
  auto index = [](unsigned s) { return [s](int t) { return int(rd::strided_index(s, t)); }; };
  tree_access(p.ld, take(1), index(1), 8);
  tree_access(p.st, take(1), index(1));
  for (unsigned s = 2; s < unsigned(rd::kTreeThreads); s *= 2) tree_round(p, s, take(s), index(s));
  p.ld.add(1);
  return p;
}

// Steps 3-4: every round down to stride 1, then thread 0 reads s[0]. Steps 5-6 stop at stride 64
// and the first warp reads s[tid] and s[tid + 32] into registers.
BankPrediction sequential_prediction(unsigned last_stride) {
  BankPrediction p;
  tree_fill(p);
  for (unsigned s = rd::kTreeThreads / 2; s >= last_stride; s /= 2)
    tree_round(p, s, [s](int t) { return t < int(s); }, [](int t) { return t; });
  if (last_stride == 1) {
    p.ld.add(1);
  } else {
    tree_access(p.ld, [](int t) { return t < 32; }, [](int t) { return t; });
    tree_access(p.ld, [](int t) { return t < 32; }, [](int t) { return t + 32; });
  }
  return p;
}

// Steps 7-9 with 1024 threads: lane 0 of each warp stores its warp's value, warp 0 reads them
// back; the single-pass steps add the `last` flag (one byte: thread 0 writes it, every warp reads
// it). Step 9's block reduction is cub::BlockReduce, whose shared layout is CUB's.
BankPrediction stride_prediction(bool single_pass) {
  BankPrediction p;
  constexpr int kWarps = rd::kStrideThreads / 32;
  p.st.add(wavefronts_of([](int) { return 0; }, 4, 1u), kWarps);   // warp_results[warp], lane 0
  p.ld.add(wavefronts_of([](int l) { return 4 * (l % kWarps); }, 4));  // warp_results[lane % kWarps]
  if (single_pass) {
    p.st.add(wavefronts_of([](int) { return 0; }, 1, 1u));
    p.ld.add(wavefronts_of([](int) { return 0; }, 1), kWarps);
  }
  return p;
}

std::optional<BankPrediction> reduction_bank_prediction(const std::string& variant) {
  if (variant == "interleaved_divergent") return divergent_prediction();
  if (variant == "interleaved_strided") return strided_prediction();
  if (variant == "sequential" || variant == "first_add") return sequential_prediction(1);
  if (variant == "warp_shuffle" || variant == "unrolled") return sequential_prediction(64);
  if (variant == "grid_stride") return stride_prediction(false);
  if (variant == "single_pass") return stride_prediction(true);
  return std::nullopt;  // cub_block
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
    // Steps 7-9: one partial per block, never more than kMaxGridBlocks; plus the counter.
    CHECK(rd::stride_tiles<float, 256>(0) == 1);
    CHECK(rd::stride_tiles<float, 256>(1024) == 1);
    CHECK(rd::stride_tiles<float, 256>(1025) == 2);
    CHECK(rd::stride_tiles<double, 256>(1LL << 40) == rd::kMaxGridBlocks);
    CHECK(rd::single_pass_layout<double, 256>(1LL << 40).bytes == rd::kMaxGridBlocks * 8 + rd::kTempAlign);
    CHECK(rd::single_pass_layout<double, 256>(1LL << 40).counter == rd::kMaxGridBlocks * 8);
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

  // The bank model on the kernels' index functions: lane l of warp 0 is thread l; a thread
  // takes part in a round when its index is inside the 256-value block (step 2) or tid < stride
  // (steps 3-6). Both accesses of a round are checked: s[k] and s[k + stride].
  template <class T>
  int strided_round(unsigned stride, unsigned warp) {
    std::uint32_t active = 0;
    for (unsigned l = 0; l < 32; ++l)
      if (rd::strided_index(stride, 32 * warp + l) < unsigned(rd::kTreeThreads)) active |= 1u << l;
    if (!active) return 0;
    const int a = wavefronts_of([&](int l) { return rd::strided_index(stride, 32 * warp + l) * sizeof(T); },
                                sizeof(T), active);
    const int b = wavefronts_of(
        [&](int l) { return (rd::strided_index(stride, 32 * warp + l) + stride) * sizeof(T); }, sizeof(T), active);
    return a > b ? a : b;
  }
  // Conflict-free for a request: no more wavefronts than its active lanes' bytes need at 128
  // bytes per wavefront, e.g. 2 for 32 lanes of 8 bytes, 1 for 8 lanes of 8 bytes.
  template <class T>
  int sequential_round(unsigned stride, unsigned warp, int* fewest) {
    std::uint32_t active = 0;
    for (unsigned l = 0; l < 32; ++l)
      if (32 * warp + l < stride) active |= 1u << l;
    *fewest = (__builtin_popcount(active) * int(sizeof(T)) + 127) / 128;
    if (!active) return 0;
    const int a = wavefronts_of([&](int l) { return (32 * warp + l) * sizeof(T); }, sizeof(T), active);
    const int b = wavefronts_of([&](int l) { return rd::sequential_partner(stride, 32 * warp + l) * sizeof(T); },
                                sizeof(T), active);
    return a > b ? a : b;
  }
  template <class T>
  void check_sequential_conflict_free() {
    for (unsigned s = rd::kTreeThreads / 2; s > 0; s /= 2)
      for (unsigned w = 0; w * 32 < s; ++w) {
        CAPTURE(s);
        CAPTURE(w);
        int fewest = 0;
        CHECK(sequential_round<T>(s, w, &fewest) == fewest);
        CHECK(fewest >= 1);
      }
  }

  TEST_CASE("bank model: the strided index 2*s*tid conflicts, sequential addressing does not") {
    // 4-byte values: rounds s = 1, 2, 4, ..., 128 of warp 0 (the one warp busy in every round).
    const int expect4[] = {2, 4, 8, 8, 8, 4, 2, 1};
    const int expect8[] = {4, 8, 16, 16, 8, 4, 2, 1};  // 8-byte values: ideal is 2
    int r = 0;
    for (unsigned s = 1; s < unsigned(rd::kTreeThreads); s *= 2, ++r) {
      CAPTURE(s);
      CHECK(strided_round<float>(s, 0) == expect4[r]);
      CHECK(strided_round<double>(s, 0) == expect8[r]);
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
      std::uint32_t active = 0;
      for (unsigned l = 0; l < 32; ++l)
        if (l % (2 * s) == 0) active |= 1u << l;
      CHECK(__builtin_popcount(active) == int(32 / (2 * s)));
      CHECK(wavefronts_of([&](int l) { return (l + s) * 4; }, 4, active) == 1);
    }
  }

  TEST_CASE("bank model agrees with Nsight Compute's measured wavefronts (results/*/banks.json)") {
    const auto not_modelled = smem::test::check_bank_evidence(
        "reduction", [](const std::string& v, const smem::test::BankMeasurement&) { return reduction_bank_prediction(v); });
    CHECK(not_modelled == std::vector<std::string>{"cub_block"});
  }
}

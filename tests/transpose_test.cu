// Transpose: every variant on odd shapes, float and double, bit-exact, NaN-poisoned output; the
// bank model on every warp request of the kernels (support/transpose_bank_access.hpp, from the
// kernels' own index functions; docs/bank_tables.cu prints the same requests), held against
// Nsight Compute's counters; the accepted sizes (tile counts at INT_MAX, the grid's limit) on the
// host, and every variant at INT_MAX rows or columns and beyond 2^31 elements in the large suite.
// (Bad arguments: bad_input_test.cu; graph capture: graph_test.cu.)
#include <doctest/doctest.h>

#include <transpose/transpose.cuh>

#include <climits>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "bank_evidence.hpp"
#include "bank_model.hpp"
#include "compare.hpp"
#include "device_buffer.hpp"
#include "gpu.hpp"
#include "limits.cuh"
#include "random.hpp"
#include "transpose_bank_access.hpp"

namespace tr = smem::transpose;
using smem::test::DeviceBuffer;

namespace {

struct Shape {
  int rows, cols;
};
constexpr Shape kShapes[] = {{1, 1},       {1, 37},      {37, 1},      {31, 97},
                             {1000, 1},    {1023, 1025}, {4096, 4096}, {8192, 2048}};

template <class T>
std::vector<T> host_transpose(const std::vector<T>& in, int rows, int cols) {
  std::vector<T> out(in.size());
  for (int r = 0; r < rows; ++r)
    for (int c = 0; c < cols; ++c) out[std::size_t(c) * rows + r] = in[std::size_t(r) * cols + c];
  return out;
}

// Runs variant v on a fresh random rows x cols matrix (in starts `offset` elements into its
// buffer) with a NaN-poisoned output, and checks the output bit for bit.
template <class T>
void check_variant(tr::Variant v, int rows, int cols, int offset = 0) {
  CAPTURE(tr::name(v));
  CAPTURE(rows);
  CAPTURE(cols);
  CAPTURE(offset);
  const std::size_t n = std::size_t(rows) * cols;
  auto g = smem::test::rng(n * 131 + offset);
  const auto h_in = smem::test::random_vector<T>(n, g);
  DeviceBuffer<T> in(n + offset), out(n + offset);
  SMEM_CUDA_CHECK(cudaMemcpy(in.get() + offset, h_in.data(), n * sizeof(T), cudaMemcpyHostToDevice));
  out.poison();
  REQUIRE(tr::run(v, rows, cols, in.get() + offset, out.get() + offset) == cudaSuccess);
  SMEM_CUDA_CHECK(cudaDeviceSynchronize());
  std::vector<T> got(n);
  SMEM_CUDA_CHECK(cudaMemcpy(got.data(), out.get() + offset, n * sizeof(T), cudaMemcpyDeviceToHost));
  const auto expect = tr::transposes(v) ? host_transpose(h_in, rows, cols) : h_in;
  CHECK(smem::test::first_bit_mismatch(got, expect) == -1);
}

}  // namespace

TEST_SUITE("gpu") {
  TEST_CASE_TEMPLATE("every variant, every shape, bit-exact", T, float, double) {
    for (auto s : kShapes) {
      if (smem::test::small_shapes_only() && std::size_t(s.rows) * s.cols > (1u << 20)) continue;
      for (auto v : tr::kAllVariants) check_variant<T>(v, s.rows, s.cols);
    }
  }

  TEST_CASE_TEMPLATE("vectorized step: scalar path on misaligned pointers", T, float, double) {
    check_variant<T>(tr::Variant::vectorized, 64, 128, 1);
    check_variant<T>(tr::Variant::vectorized, 300, 44, 3);
  }
}

namespace {

/// in[i] = f(i), a small integer, as a float.
struct FloatOfIndex {
  smem::test::SmallIntOfIndex f;
  __device__ float operator()(std::size_t i) const { return float(f(i)); }
};

/// Elements of out (rows x cols in, so cols x rows out) that differ from in[i] = f(i) transposed
/// (out[c rows + r] = in[r cols + c]), or copied when `transposed` is false; every element, on the GPU.
__global__ void count_wrong(const float* out, int rows, int cols, bool transposed, smem::test::SmallIntOfIndex f,
                            unsigned long long* wrong) {
  unsigned long long w = 0;
  const std::size_t n = std::size_t(rows) * cols;
  const std::size_t stride = std::size_t(gridDim.x) * blockDim.x;
  for (std::size_t o = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; o < n; o += stride)
    w += out[o] != float(f(transposed ? o % std::size_t(rows) * cols + o / std::size_t(rows) : o));
  if (w) atomicAdd(wrong, w);
}

unsigned long long wrong_elements(const float* out, int rows, int cols, bool transposed,
                                  smem::test::SmallIntOfIndex f) {
  DeviceBuffer<unsigned long long> wrong(1);
  SMEM_CUDA_CHECK(cudaMemset(wrong.get(), 0, sizeof(unsigned long long)));
  count_wrong<<<4096, 256>>>(out, rows, cols, transposed, f, wrong.get());
  SMEM_CUDA_CHECK(cudaGetLastError());
  SMEM_CUDA_CHECK(cudaDeviceSynchronize());
  return wrong.download()[0];
}

}  // namespace

TEST_SUITE("large") {
  TEST_CASE("every variant at INT_MAX rows or columns and beyond 2^31 elements: every element, guards intact") {
    // Shapes of one size share the buffers: INT_MAX elements (1 x INT_MAX and its transpose, 8 GiB
    // per matrix); 2^31 + 838851 with no dimension a multiple of 4 (the scalar path of step 6);
    // 2^31 + 393232, multiples of 4 (its 16-byte path), both ways; 4 x (INT_MAX - 3) and its
    // transpose, the 16-byte path next to INT_MAX (32 GiB per matrix).
    const std::vector<std::vector<std::pair<int, int>>> groups = {
        {{1, INT_MAX}, {INT_MAX, 1}},
        {{46349, 46351}},
        {{65540, 32772}, {32772, 65540}},
        {{4, INT_MAX - 3}, {INT_MAX - 3, 4}}};
    for (const auto& shapes : groups) {
      const std::size_t n = std::size_t(shapes[0].first) * std::size_t(shapes[0].second);
      CAPTURE(n);
      using Buffer = smem::test::GuardedBuffer<float>;
      if (!smem::test::device_can_hold(2 * (n * sizeof(float) + 2 * Buffer::kGuard + 256))) continue;
      Buffer in(n), out(n);
      const smem::test::SmallIntOfIndex f{smem::test::rng(n)(), 1000};
      smem::test::fill_by_index(in.get(), n, FloatOfIndex{f});
      out.poison();
      REQUIRE(wrong_elements(out.get(), shapes[0].first, shapes[0].second, false, f) == n);  // the check sees NaN
      for (const auto& shape : shapes) {
        const int rows = shape.first, cols = shape.second;
        REQUIRE(std::size_t(rows) * std::size_t(cols) == n);
        for (auto v : tr::kAllVariants) {
          CAPTURE(tr::name(v));
          CAPTURE(rows);
          CAPTURE(cols);
          out.poison();
          REQUIRE(tr::run(v, rows, cols, in.get(), out.get()) == cudaSuccess);
          SMEM_CUDA_CHECK(cudaDeviceSynchronize());
          CHECK(wrong_elements(out.get(), rows, cols, tr::transposes(v), f) == 0);
          CHECK(out.guards_intact());
        }
      }
    }
  }
}

namespace {

namespace ta = smem::test::transpose_access;
using smem::test::Access;
using smem::test::Request;

// The model's prediction for each kernel: every warp request of one tile (every warp, every j).
template <class T>
std::optional<smem::test::BankPrediction> predicted(const std::string& variant) {
  if (variant == "smem_copy") return smem::test::predict([](auto&& v) { ta::smem_copy<T>(v); });
  if (variant == "smem_tile") return smem::test::predict([](auto&& v) { ta::tile<tr::UnpaddedLayout, T>(v); });
  if (variant == "padded") return smem::test::predict([](auto&& v) { ta::tile<tr::PaddedLayout, T>(v); });
  if (variant == "swizzled") return smem::test::predict([](auto&& v) { ta::tile<tr::SwizzledLayout, T>(v); });
  if (variant == "vectorized") return smem::test::predict([](auto&& v) { ta::vectorized<T, 16 / sizeof(T)>(v); });
  if (variant == "copy" || variant == "naive") return smem::test::BankPrediction{};  // no shared memory
  return std::nullopt;
}

// Every request of a walk takes `ways` times the wavefronts of a conflict-free one.
template <class Walk>
void check_ways(Walk&& walk, int ways) {
  walk([&](const Request& r) {
    CAPTURE(r.what);
    const auto c = r.cost();
    CHECK(c.phases == smem::bank::ideal_wavefronts(r.width));
    CHECK(c.wavefronts == ways * c.phases);
  });
}

}  // namespace

TEST_SUITE("host") {
  // The bank model on every warp request of the kernels (support/transpose_bank_access.hpp, from
  // the layouts' own offset functions).
  TEST_CASE_TEMPLATE("32x32 tile: column read 32-way; 32x33 and swizzled conflict-free", T, float, double) {
    // A column of the unpadded tile sits in one bank (one pair of banks for double): every lane
    // of a phase asks it for a different word, 32 wavefronts in all.
    ta::tile<tr::UnpaddedLayout, T>([](const Request& r) {
      CAPTURE(r.what);
      CHECK(r.cost().wavefronts == (r.kind == Access::load ? 32 : smem::bank::ideal_wavefronts(sizeof(T))));
    });
    check_ways([](auto&& v) { ta::tile<tr::PaddedLayout, T>(v); }, 1);
    check_ways([](auto&& v) { ta::tile<tr::SwizzledLayout, T>(v); }, 1);
    check_ways([](auto&& v) { ta::smem_copy<T>(v); }, 1);
  }

  TEST_CASE("vectorized tile: swizzled 16-byte chunks are conflict-free, scalar fallback too") {
    // vectorized_kernel's transposed stores and read-back, every warp of the block, every j.
    check_ways([](auto&& v) { ta::vectorized<float, 4>(v); }, 1);
    check_ways([](auto&& v) { ta::vectorized<double, 2>(v); }, 1);
    check_ways([](auto&& v) { ta::vectorized<float, 1>(v); }, 1);
    check_ways([](auto&& v) { ta::vectorized<double, 1>(v); }, 1);
  }

  TEST_CASE("vectorized tile without the swizzle would conflict") {
    // The same stores with the chunks row-major: the 8 lanes of a phase write rows V b + j,
    // b = 0..7, all 256 bytes apart -- one group of 4 banks, 8-way.
    check_ways([](auto&& v) { ta::vectorized_stores_without_swizzle<float, 4>(v); }, 8);
    check_ways([](auto&& v) { ta::vectorized_stores_without_swizzle<double, 2>(v); }, 8);
  }

  TEST_CASE("tile counts: exact at INT_MAX") {
    CHECK(tr::tiles(0, 32) == 0);
    CHECK(tr::tiles(1, 32) == 1);
    CHECK(tr::tiles(32, 32) == 1);
    CHECK(tr::tiles(33, 32) == 2);
    CHECK(tr::tiles(INT_MAX, 32) == 1 << 26);  // (INT_MAX + 31) / 32 would overflow
    CHECK(tr::tiles(INT_MAX, 256) == 1 << 23);
    CHECK(tr::tiles(INT_MAX, 16) == 1 << 27);
    CHECK(tr::tile_count(INT_MAX, INT_MAX, 32) == 1LL << 52);
    CHECK(tr::tile_count(1, INT_MAX, 64) == 1LL << 25);
  }

  TEST_CASE_TEMPLATE("accepted sizes: 1 x INT_MAX and INT_MAX x 1 plan; a tile row past the grid's limit is refused "
                     "before any CUDA call", T, float, double) {
    // Dummy pointers 2^60 bytes apart: no overlap at any size, never dereferenced (every call here
    // only plans, or is refused before any CUDA call).
    const T* in = reinterpret_cast<const T*>(std::uintptr_t(1) << 12);
    T* out = reinterpret_cast<T*>(std::uintptr_t(1) << 60);
    for (auto v : tr::kAllVariants) {
      CAPTURE(tr::name(v));
      const int edge = v == tr::Variant::vectorized ? tr::kVecTile<T> : tr::kTile;
      for (const auto& [rows, cols] : {std::pair{1, INT_MAX}, std::pair{INT_MAX, 1}}) {
        const auto p = tr::plan<T>(v, rows, cols, in, out);
        CHECK(p.kernel != nullptr);
        CHECK(p.grid.x == unsigned(tr::tiles(INT_MAX, edge)));
      }
      // Next to INT_MAX columns (or rows), the most tile rows a grid of 2^31 - 1 blocks holds.
      const int most = int(0x7fffffffLL / tr::tiles(INT_MAX, edge)) * edge;
      CHECK(tr::plan<T>(v, most, INT_MAX, in, out).kernel != nullptr);
      CHECK(tr::plan<T>(v, INT_MAX, most, in, out).kernel != nullptr);
      CHECK(tr::plan<T>(v, most + 1, INT_MAX, in, out).kernel == nullptr);
      CHECK(tr::plan<T>(v, INT_MAX, most + 1, in, out).kernel == nullptr);
      CHECK(tr::run<T>(v, most + 1, INT_MAX, in, out) == cudaErrorInvalidValue);
      CHECK(tr::run<T>(v, INT_MAX, most + 1, in, out) == cudaErrorInvalidValue);
      CHECK(tr::run<T>(v, INT_MAX, INT_MAX, in, out) == cudaErrorInvalidValue);
    }
    CHECK(tr::tiles(993, 32) * (long long)tr::tiles(INT_MAX, 32) == 1LL << 31);  // the page's example
    // The arguments themselves are valid there (the grid refuses them); the overlap check holds
    // at sizes whose byte count is near 2^64.
    CHECK(tr::check_args<T>(INT_MAX, 993, in, out) == tr::Args::launch);
    const T* near = reinterpret_cast<const T*>((std::uintptr_t(1) << 60) - (std::uintptr_t(1) << 40));
    CHECK(tr::check_args<T>(INT_MAX, 993, near, out) == tr::Args::invalid);
    CHECK(tr::check_args<T>(INT_MAX, INT_MAX, in, out) == tr::Args::invalid);  // 2^62 elements: beyond 2^60 bytes apart
  }

  TEST_CASE("vector width: 16-byte path only when sizes and pointers allow it") {
    alignas(16) static float f[64];
    CHECK(tr::vector_width<float>(64, 64, f, f + 16) == 4);
    CHECK(tr::vector_width<float>(64, 62, f, f + 16) == 1);
    CHECK(tr::vector_width<float>(66, 64, f, f + 16) == 1);
    CHECK(tr::vector_width<float>(64, 64, f + 1, f + 16) == 1);
    alignas(16) static double d[64];
    CHECK(tr::vector_width<double>(2, 6, d, d + 2) == 2);
    CHECK(tr::vector_width<double>(2, 6, d, d + 1) == 1);
    CHECK(tr::vector_width<double>(3, 6, d, d) == 1);
  }

  TEST_CASE("bank model agrees with Nsight Compute's measured wavefronts (results/*/banks.json)") {
    // Every profiled shape has full tiles.
    const auto not_modelled = smem::test::check_bank_evidence(
        "transpose", [](const std::string& v, const smem::test::BankMeasurement& m) {
          return m.benchmark.find("/double/") != std::string::npos ? predicted<double>(v) : predicted<float>(v);
        });
    CHECK(not_modelled.empty());
  }
}

// Transpose: every variant on odd shapes, float and double, bit-exact, NaN-poisoned output; the
// bank model on every warp request of the kernels (common/transpose_bank_access.hpp, from the
// kernels' own index functions; docs/bank_tables.cu prints the same requests), held against
// Nsight Compute's counters. (Bad arguments: bad_input_test.cu; graph capture: graph_test.cu.)
#include <doctest/doctest.h>

#include <transpose/transpose.cuh>

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
  // The bank model on every warp request of the kernels (common/transpose_bank_access.hpp, from
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

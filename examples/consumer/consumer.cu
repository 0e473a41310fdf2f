// A program that uses smem_cookbook as a CMake package would: it links every family's target
// (smem::transpose, smem::reduction, smem::gemm, smem::tc_gemm, smem::scan, smem::histogram,
// smem::stencil), includes the family headers as <family>/<family>.cuh, and calls every launcher of
// every family through its dispatcher with a negative size. Each must return
// cudaErrorInvalidValue before any CUDA call, so this runs (and passes) without a GPU.
#include <cuda/std/functional>
#include <gemm/gemm.cuh>
#include <histogram/histogram.cuh>
#include <reduction/reduction.cuh>
#include <scan/scan.cuh>
#include <stencil/stencil.cuh>
#include <tc_gemm/tc_gemm.cuh>
#include <transpose/transpose.cuh>

#include <cstddef>
#include <cstdio>

namespace {

int failures = 0;

int calls = 0;

void expect_invalid(const char* family, int variant, cudaError_t e) {
  ++calls;
  if (e == cudaErrorInvalidValue) return;
  std::printf("%s variant %d with a negative size: %s, expected cudaErrorInvalidValue\n", family, variant,
              cudaGetErrorName(e));
  ++failures;
}

}  // namespace

int main() {
  int i = 0;
  for (auto v : smem::transpose::kAllVariants)
    expect_invalid("transpose", i++, smem::transpose::run<float>(v, -1, 4, nullptr, nullptr));
  i = 0;
  for (auto v : smem::gemm::kAllVariants)
    expect_invalid("gemm", i++, smem::gemm::run(v, -1, 4, 4, 1.0f, nullptr, 4, nullptr, 4, 0.0f, nullptr, 4));
  i = 0;
  for (auto v : smem::reduction::kAllVariants) {
    std::size_t temp_bytes = 0;
    expect_invalid("reduction", i++,
                   smem::reduction::run(v, nullptr, temp_bytes, static_cast<const float*>(nullptr), -1LL,
                                        static_cast<float*>(nullptr), smem::reduction::Sum{}, 0.0f));
  }
  i = 0;
  for (auto v : smem::tc_gemm::kAllVariants)
    expect_invalid("tc_gemm", i++,
                   smem::tc_gemm::run(v, -1, 8, 8, 1.0f, nullptr, 8, nullptr, 8, 0.0f, nullptr, 8, nullptr, 8));
  i = 0;
  for (auto v : smem::scan::kAllVariants) {
    std::size_t temp_bytes = 0;
    expect_invalid("scan", i++,
                   smem::scan::run(v, nullptr, temp_bytes, static_cast<const int*>(nullptr), static_cast<int*>(nullptr),
                                   -1LL, cuda::std::plus<int>{}, 0, smem::scan::Kind::inclusive));
  }
  i = 0;
  for (auto v : smem::histogram::kAllVariants)
    expect_invalid("histogram", i++,
                   smem::histogram::run<float>(v, nullptr, -1LL, nullptr, 16, 0.0f, 1.0f));
  i = 0;
  for (auto v : smem::stencil::kConv2dVariants)
    expect_invalid("stencil conv2d", i++, smem::stencil::run_conv2d(v, nullptr, nullptr, -1, 4, nullptr, 1));
  i = 0;
  for (auto v : smem::stencil::kStencil7Variants)
    expect_invalid("stencil 7-point", i++,
                   smem::stencil::run_7point(v, nullptr, nullptr, -1, 4, 4, smem::stencil::Coefficients{}));
  if (failures) return 1;
  std::printf("consumer: all %d launchers returned cudaErrorInvalidValue for a negative size\n", calls);
  return 0;
}

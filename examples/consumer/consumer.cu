// A program that uses smem_cookbook as a CMake package would: it links smem::transpose,
// smem::reduction and smem::gemm, includes the family headers as <family>/<family>.cuh, and calls
// every launcher of every family through its dispatcher with a negative size. Each must return
// cudaErrorInvalidValue before any CUDA call, so this runs (and passes) without a GPU.
#include <gemm/gemm.cuh>
#include <reduction/reduction.cuh>
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
  if (failures) return 1;
  std::printf("consumer: all %d launchers returned cudaErrorInvalidValue for a negative size\n", calls);
  return 0;
}

// Tests and benchmarks only: recipes never include support/.
#pragma once
#include <cuda_runtime.h>

#include <cstdlib>

namespace smem::test {

/// True when a CUDA device is present and usable.
inline bool gpu_available() {
  static const bool ok = [] {
    int n = 0;
    const bool has = cudaGetDeviceCount(&n) == cudaSuccess && n > 0;
    cudaGetLastError();  // clear the error a machine without a driver leaves behind
    return has;
  }();
  return ok;
}

/// True when SMEM_SMALL is set (./cookbook sanitize sets it): GPU tests then skip their large
/// shapes, which under compute-sanitizer would take minutes, and keep every small and odd one.
inline bool small_shapes_only() {
  const char* s = std::getenv("SMEM_SMALL");
  return s != nullptr && *s != '\0' && *s != '0';
}

/// The line a GPU test binary prints when it has no device; CTest's SKIP_REGULAR_EXPRESSION
/// turns it into "Skipped".
inline constexpr const char* kNoGpuMarker = "SMEM_NO_CUDA_DEVICE: GPU tests skipped";

}  // namespace smem::test

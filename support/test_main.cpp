// doctest main for every suite. Test cases live in the test suites "host" (no GPU needed), "gpu"
// and "large" (the boundary tests: tens of GiB of device memory, run by CTest's `large` label).
// Without a CUDA device the gpu and large suites are excluded and, when one of them was asked for,
// the marker line is printed so that CTest reports the test as Skipped rather than passed.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <cstdio>
#include <cstring>

#include "gpu.hpp"
#include "random.hpp"

int main(int argc, char** argv) {
  doctest::Context ctx;
  ctx.applyCommandLine(argc, argv);
  std::printf("seed %llu (set SMEM_SEED to reproduce)\n",
              (unsigned long long)smem::test::run_seed());
  if (!smem::test::gpu_available()) {
    bool gpu_asked = false;
    for (int i = 1; i < argc; ++i)
      for (const char* suite : {"test-suite=gpu", "ts=gpu", "test-suite=large", "ts=large"})
        if (std::strstr(argv[i], suite)) gpu_asked = true;
    ctx.addFilter("test-suite-exclude", "gpu");
    ctx.addFilter("test-suite-exclude", "large");
    if (gpu_asked) std::printf("%s\n", smem::test::kNoGpuMarker);
  }
  return ctx.run();
}

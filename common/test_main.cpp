// doctest main for every suite. Test cases live in the test suites "host" (no GPU needed) and
// "gpu". Without a CUDA device the gpu suite is excluded and, when it was asked for, the marker
// line is printed so that CTest reports the test as Skipped rather than passed.
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
      if (std::strstr(argv[i], "test-suite=gpu") || std::strstr(argv[i], "ts=gpu")) gpu_asked = true;
    ctx.addFilter("test-suite-exclude", "gpu");
    if (gpu_asked) std::printf("%s\n", smem::test::kNoGpuMarker);
  }
  return ctx.run();
}

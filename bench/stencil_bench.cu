// Stencil benchmarks: every variant of both ladders and the baseline, a device-to-device copy of
// the same bytes (`copy`: no vendor library has these stencils), in one process. Names:
// stencil/<variant>/conv2d_<k>x<k>/float/<height>x<width> and
// stencil/<variant>/7point/float/<nx>x<ny>x<nz>. GB/s counts the minimum traffic, every point
// read once and written once (the copy's traffic), so a variant's GB/s and ratio compare directly
// with the copy's; `flops` records the arithmetic per launch (2 (2r + 1)^2 per output for the
// convolution). The convolution runs 5 x 5 and 9 x 9 at four sizes, and its fastest step at
// 8192^2 for filters from 3 x 3 to 17 x 17, where the arithmetic passes the GPU's ridge. The L2 is
// flushed before every timed launch; the time covers everything a launch puts on the stream (the
// filter's copy into constant memory included).
#include <benchmark/benchmark.h>

#include <stencil/stencil.cuh>

#include <functional>
#include <map>
#include <iterator>
#include <string>
#include <vector>

#include "bench_util.hpp"
#include "device_buffer.hpp"
#include "random.hpp"

namespace st = smem::stencil;
using smem::test::DeviceBuffer;

namespace {

// launch(in, out): one call of a variant or the copy on the default stream.
using Launch = std::function<cudaError_t(const float*, float*)>;

/// `points` random floats in [-1, 1] on the device, one array per count (images, grids, filters),
/// drawn on first use and kept.
const float* input(std::size_t points) {
  static std::map<std::size_t, DeviceBuffer<float>> cache;
  auto it = cache.find(points);
  if (it == cache.end()) {
    auto g = smem::test::rng(points);
    it = cache.emplace(points, DeviceBuffer<float>(smem::test::random_vector<float>(points, g))).first;
  }
  return it->second.get();
}

void register_one(const std::string& name, std::size_t points, double flops, Launch launch,
                  std::function<st::Plan<const void*>()> plan) {
  benchmark::RegisterBenchmark(name.c_str(), [=](benchmark::State& state) {
    const float* in = input(points);
    DeviceBuffer<float> out(points);
    const double secs = smem::bench::time_kernel(state, [&] { return launch(in, out.get()); }, true);
    const double bytes = 2.0 * double(points) * sizeof(float);
    smem::bench::set_rate(state, "GB/s", bytes, secs, 1e-9);
    state.counters["bytes"] = bytes;
    state.counters["flops"] = flops;
    if (plan) smem::bench::set_kernel_counters(state, plan());
  })->UseManualTime()->Iterations(points >= (1u << 26) ? 30 : 100)->Unit(benchmark::kMicrosecond);
}

cudaError_t copy(const float* in, float* out, std::size_t points) {
  return cudaMemcpyAsync(out, in, points * sizeof(float), cudaMemcpyDeviceToDevice);
}

/// The copy and `variants` (every convolution step by default) for one filter and image size.
void register_conv2d(int radius, int height, int width, std::vector<st::Variant> variants = {}) {
  const int k = 2 * radius + 1;
  const std::string shape = "/conv2d_" + std::to_string(k) + "x" + std::to_string(k) + "/float/" +
                            std::to_string(height) + "x" + std::to_string(width);
  const std::size_t points = std::size_t(height) * width;
  register_one("stencil/copy" + shape, points, 0, [=](const float* in, float* out) { return copy(in, out, points); },
               nullptr);
  if (variants.empty()) variants.assign(std::begin(st::kConv2dVariants), std::end(st::kConv2dVariants));
  for (auto v : variants)
    register_one(std::string("stencil/") + st::name(v) + shape, points, 2.0 * k * k * double(points),
                 [=](const float* in, float* out) {
                   return st::run_conv2d(v, in, out, height, width, input(std::size_t(k) * k), radius);
                 },
                 [=] { return st::plan_conv2d(v, height, width, radius); });
}

void register_7point(int n) {
  const std::string shape = "/7point/float/" + std::to_string(n) + "x" + std::to_string(n) + "x" + std::to_string(n);
  const std::size_t points = std::size_t(n) * n * n;
  const st::Coefficients c{-6.0f / 7, 1.0f / 7, 1.0f / 7, 1.0f / 7};
  register_one("stencil/copy" + shape, points, 0, [=](const float* in, float* out) { return copy(in, out, points); },
               nullptr);
  for (auto v : st::kStencil7Variants)
    register_one(std::string("stencil/") + st::name(v) + shape, points, 10.0 * double(points),
                 [=](const float* in, float* out) { return st::run_7point(v, in, out, n, n, n, c); },
                 [=] { return st::plan_7point(v, n, n, n); });
}

const bool registered = [] {
  smem::bench::add_steps_context(
      "stencil", "copy",
      smem::bench::step_infos(
          {{"copy", -1, "", "cudaMemcpyAsync device to device of the same bytes: the roof (no vendor stencil)."}},
          st::kSteps));
  for (int radius : {2, 4})
    for (int n : {1024, 2048, 4096, 8192}) register_conv2d(radius, n, n);
  // Where the convolution turns compute-bound: steps 5 and 6 (the fastest) at 8192^2 for filters
  // from 3 x 3 to 17 x 17 (2 (2r + 1)^2 FLOP per 8 bytes).
  for (int radius : {1, 3, 6, 8})
    register_conv2d(radius, 8192, 8192, {st::Variant::conv2d_coarsened, st::Variant::conv2d_tma});
  for (int n : {256, 512}) register_7point(n);
  return true;
}();

}  // namespace

// Tests and benchmarks only: recipes never include support/.
#pragma once
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <random>
#include <type_traits>
#include <vector>

namespace smem::test {

/// The run's seed: SMEM_SEED from the environment if set, else fresh from std::random_device.
/// Chosen once per process; the test main prints it so that a failure can be reproduced.
inline std::uint64_t run_seed() {
  static const std::uint64_t seed = []() -> std::uint64_t {
    if (const char* s = std::getenv("SMEM_SEED")) return std::strtoull(s, nullptr, 0);
    std::random_device rd;
    return (std::uint64_t(rd()) << 32) ^ rd();
  }();
  return seed;
}

/// A generator for one test: the run seed mixed with a per-use salt (e.g. a hash of the shape).
inline std::mt19937_64 rng(std::uint64_t salt = 0) {
  std::seed_seq seq{run_seed(), salt, salt >> 32};
  return std::mt19937_64(seq);
}

/// n values uniform in [lo, hi] (integers: inclusive range).
template <class T>
std::vector<T> random_vector(std::size_t n, std::mt19937_64& g, T lo = T(-1), T hi = T(1)) {
  std::vector<T> v(n);
  if constexpr (std::is_floating_point_v<T>) {
    std::uniform_real_distribution<T> d(lo, hi);
    for (auto& x : v) x = d(g);
  } else {
    std::uniform_int_distribution<T> d(lo, hi);
    for (auto& x : v) x = d(g);
  }
  return v;
}

/// The inputs of the GEMM accuracy measures: uniform(-1, 1), normal(0, 1), and +-m 2^e with m
/// uniform in [1, 2) and e in [-20, 19] (magnitudes from 2^-20 to 2^20).
enum class Spread { uniform, normal, exp20 };
inline std::vector<float> spread_vector(std::size_t n, Spread d, std::mt19937_64& g) {
  if (d == Spread::uniform) return random_vector<float>(n, g);
  std::vector<float> v(n);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::uniform_real_distribution<float> mantissa(1.0f, 2.0f);
  std::uniform_int_distribution<int> exponent(-20, 19), sign(0, 1);
  for (auto& x : v)
    x = d == Spread::normal ? normal(g) : (sign(g) ? -1.0f : 1.0f) * std::ldexp(mantissa(g), exponent(g));
  return v;
}

}  // namespace smem::test

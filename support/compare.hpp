// Tests and benchmarks only: recipes never include support/.
#pragma once
#include <cmath>
#include <cstddef>
#include <limits>
#include <vector>

namespace smem::test {

/// ||got - ref||_F / ||ref||_F in float64; +inf if got holds a NaN or infinity, or sizes differ.
/// If ref is all zeros, returns ||got||_F (an absolute error).
template <class T, class R>
double relative_error(const std::vector<T>& got, const std::vector<R>& ref) {
  if (got.size() != ref.size()) return std::numeric_limits<double>::infinity();
  double num = 0, den = 0;
  for (std::size_t i = 0; i < got.size(); ++i) {
    const double g = double(got[i]), r = double(ref[i]);
    if (!std::isfinite(g)) return std::numeric_limits<double>::infinity();
    num += (g - r) * (g - r);
    den += r * r;
  }
  return den > 0 ? std::sqrt(num / den) : std::sqrt(num);
}

/// Index of the first element whose bits differ, or -1 when equal bit for bit.
template <class T>
long long first_bit_mismatch(const std::vector<T>& a, const std::vector<T>& b) {
  if (a.size() != b.size()) return 0;
  const auto* pa = reinterpret_cast<const unsigned char*>(a.data());
  const auto* pb = reinterpret_cast<const unsigned char*>(b.data());
  for (std::size_t i = 0; i < a.size(); ++i)
    for (std::size_t k = 0; k < sizeof(T); ++k)
      if (pa[i * sizeof(T) + k] != pb[i * sizeof(T) + k]) return (long long)i;
  return -1;
}

}  // namespace smem::test

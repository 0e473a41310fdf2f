// The float64 attention reference of one query row, for the attention tests (every row) and the
// benchmark's sampled error of step 14 (64 rows). Tests and benchmarks only: recipes never include
// support/.
#pragma once
#include <attention/attention_common.cuh>

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

namespace smem::test {

/// O and LSE of query row i of head h, batch b, in float64 from host bf16 tensors laid out by p's
/// strides: o[0] to o[head_dim - 1] (overwritten), the LSE returned. Bottom-right causal mask: row
/// i sees keys 0 to i + seq_kv - seq_q; a row that sees no key gets O = 0 and LSE = -inf; a NaN
/// score makes the row NaN. s: scratch of at least seq_kv scores.
inline double attention_reference_row(const attention::Problem& p, const attention::bf16* Q,
                                      const attention::bf16* K, const attention::bf16* V, long long b, long long i,
                                      long long h, double* o, std::vector<double>& s) {
  const auto val = [](attention::bf16 x) { return double(__bfloat162float(x)); };
  const long long Sq = p.seq_q, Skv = p.seq_kv, d = p.head_dim, hk = h / (p.heads_q / p.heads_kv);
  const long long last = p.causal ? std::min(Skv - 1, i + Skv - Sq) : Skv - 1;
  std::fill(o, o + d, 0.0);
  if (last < 0) return -std::numeric_limits<double>::infinity();  // no key: O stays 0
  const attention::bf16* q = Q + attention::at(p.q, b, i, h);
  double m = -std::numeric_limits<double>::infinity();
  bool nan = false;
  for (long long j = 0; j <= last; ++j) {
    const attention::bf16* k = K + attention::at(p.k, b, j, hk);
    double dot = 0;
    for (long long c = 0; c < d; ++c) dot += val(q[c]) * val(k[c]);
    s[std::size_t(j)] = double(p.scale) * dot;
    if (std::isnan(s[std::size_t(j)]))
      nan = true;
    else
      m = std::max(m, s[std::size_t(j)]);
  }
  if (nan) {
    std::fill(o, o + d, std::numeric_limits<double>::quiet_NaN());
    return std::numeric_limits<double>::quiet_NaN();
  }
  double l = 0;
  for (long long j = 0; j <= last; ++j) {
    const attention::bf16* v = V + attention::at(p.v, b, j, hk);
    const double w = std::exp(s[std::size_t(j)] - m);
    l += w;
    for (long long c = 0; c < d; ++c) o[c] += w * val(v[c]);
  }
  for (long long c = 0; c < d; ++c) o[c] /= l;
  return m + std::log(l);
}

}  // namespace smem::test

// Attention forward (bf16 Q, K, V and O; fp32 scores, softmax and LSE): every variant against a
// float64 host reference computed from the same bf16 inputs, element by element, with O and LSE
// NaN-poisoned and guarded on both sides, on sequence lengths 1, 7, 129 and 1000 (seq_q != seq_kv
// both ways), the bottom-right causal mask including rows that see no key (O exactly 0, LSE
// exactly -inf), grouped- and multi-query heads, head_dim 8 to 256, the [b, h, s, d] layout,
// padded and odd strides, K and V shared across the batch, scores of magnitude 1e4, all-equal
// scores, a NaN in one query row, seq_kv == 0 and no LSE. The inputs' elements outside the tensors
// are NaN (a kernel that reads them shows) and O's must keep their poison. Host suite: the
// reference on hand-computed cases, what check_args() makes of every argument the contract names,
// every launcher refusing bad arguments before any CUDA call, its outputs untouched, the family's
// work order (every query tile once, the longest first with the mask; the key tiles walked and
// masked; step 12's units of equal work) and the bank model on the kernels' own shared-memory
// maps (support/attention_bank_access.hpp).
#include <doctest/doctest.h>

#include <attention/attention.cuh>

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "attention_bank_access.hpp"
#include "attention_reference.hpp"
#include "bank_evidence.hpp"
#include "cuda_check.hpp"
#include "device_buffer.hpp"
#include "gpu.hpp"
#include "limits.cuh"
#include "random.hpp"

namespace att = smem::attention;
using smem::test::DeviceBuffer;
using smem::test::GuardedBuffer;
using bf16 = att::bf16;
using att::Args;

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

double val(bf16 x) { return double(__bfloat162float(x)); }
bf16 to_bf16(double x) { return __float2bfloat16_rn(float(x)); }

/// Elements from a tensor's first element to one past its last, 0 for a tensor with no element.
long long extent(long long batch, long long seq, long long heads, long long d, const att::Strides& t) {
  if (batch == 0 || seq == 0 || heads == 0 || d == 0) return 0;
  return (batch - 1) * t.batch + (seq - 1) * t.seq + (heads - 1) * t.head + d;
}

/// The float64 reference: O = softmax(scale Q K^T + mask) V and LSE per query row, from host
/// tensors laid out by p's strides. Bottom-right causal mask: row i sees keys 0 to
/// i + seq_kv - seq_q; a row that sees no key gets O = 0 and LSE = -inf; a NaN score makes its row
/// NaN.
struct Reference {
  long long seq_q, heads_q, d;
  std::vector<double> o;    ///< [batch, seq_q, heads_q, head_dim], packed
  std::vector<double> lse;  ///< [batch, heads_q, seq_q], packed
  double O(long long b, long long i, long long h, long long c) const {
    return o[std::size_t(((b * seq_q + i) * heads_q + h) * d + c)];
  }
  double L(long long b, long long h, long long i) const { return lse[std::size_t((b * heads_q + h) * seq_q + i)]; }
};

Reference reference(const att::Problem& p, const bf16* Q, const bf16* K, const bf16* V) {
  const long long B = p.batch, Hq = p.heads_q, Sq = p.seq_q, d = p.head_dim;
  Reference r{Sq, Hq, d, std::vector<double>(std::size_t(B * Sq * Hq * d), 0.0),
              std::vector<double>(std::size_t(B * Hq * Sq))};
  std::vector<double> s(std::size_t(std::max<long long>(p.seq_kv, 1)));
  for (long long b = 0; b < B; ++b)
    for (long long h = 0; h < Hq; ++h)
      for (long long i = 0; i < Sq; ++i)
        r.lse[std::size_t((b * Hq + h) * Sq + i)] = smem::test::attention_reference_row(
            p, Q, K, V, b, i, h, &r.o[std::size_t(((b * Sq + i) * Hq + h) * d)], s);
  return r;
}

/// A bf16 tensor [batch, seq, heads, d] of the tests, on the host: `offset` elements into its
/// buffer, strides t; the buffer's other elements are NaN.
struct HostTensor {
  long long batch, seq, heads, d;
  att::Strides t;
  long long offset;
  std::vector<bf16> buf;
  HostTensor(long long batch_, long long seq_, long long heads_, long long d_, att::Strides t_, long long offset_)
      : batch(batch_), seq(seq_), heads(heads_), d(d_), t(t_), offset(offset_),
        buf(std::size_t(offset_ + std::max(extent(batch_, seq_, heads_, d_, t_), 1LL)), to_bf16(kNaN)) {}
  bf16* at(long long b, long long s, long long h) { return buf.data() + offset + b * t.batch + s * t.seq + h * t.head; }
  const bf16* first() const { return buf.data() + offset; }
  /// f(b, s, h, c, element) for every element of the tensor.
  template <class F>
  void each(F&& f) {
    for (long long b = 0; b < batch; ++b)
      for (long long s = 0; s < seq; ++s)
        for (long long h = 0; h < heads; ++h)
          for (long long c = 0; c < d; ++c) f(b, s, h, c, at(b, s, h)[c]);
  }
  /// Every element (b, s, h, c) set to f(b, s, h, c), rounded to bf16.
  template <class F>
  void fill(F&& f) {
    each([&](long long b, long long s, long long h, long long c, bf16& x) { x = to_bf16(f(b, s, h, c)); });
  }
  double max_abs() {
    double m = 0;
    each([&](long long, long long, long long, long long, bf16& x) { m = std::max(m, std::fabs(val(x))); });
    return m;
  }
};

/// Q, K and V of a problem on the host, each `offset` elements into its buffer.
struct Inputs {
  HostTensor q, k, v;
  Inputs(const att::Problem& p, long long offset)
      : q(p.batch, p.seq_q, p.heads_q, p.head_dim, p.q, offset),
        k(p.batch, p.seq_kv, p.heads_kv, p.head_dim, p.k, offset),
        v(p.batch, p.seq_kv, p.heads_kv, p.head_dim, p.v, offset) {}
};

Reference reference(const att::Problem& p, const Inputs& in) {
  return reference(p, in.q.first(), in.k.first(), in.v.first());
}

/// A problem of packed [batch, seq, heads, head_dim] tensors.
att::Problem packed(int batch, int heads_q, int heads_kv, int seq_q, int seq_kv, int d, float scale,
                    bool causal = false) {
  att::Problem p;
  p.batch = batch, p.heads_q = heads_q, p.heads_kv = heads_kv, p.seq_q = seq_q, p.seq_kv = seq_kv, p.head_dim = d;
  p.scale = scale, p.causal = causal;
  p.q = p.o = att::bshd(seq_q, heads_q, d);
  p.k = p.v = att::bshd(seq_kv, heads_kv, d);
  return p;
}

/// The tests' layouts: packed [b, s, h, d] and [b, h, s, d], both padded (16-byte rows), odd
/// strides (2-byte rows), [b, s, h, d] with batch stride 0 (K and V shared by the batch), and
/// [b, s, h, d] with batches 2^31 + 8 elements apart (offsets past 32 bits).
enum class Layout { bshd, bhsd, padded, padded_bhsd, odd, broadcast, far };

att::Strides strides(Layout l, int seq, int heads, int d) {
  const long long s = seq, h = heads;
  switch (l) {
    case Layout::bshd: return att::bshd(seq, heads, d);
    case Layout::bhsd: return att::bhsd(seq, heads, d);
    case Layout::padded: {
      const long long head = d + 8, row = h * head + 24;
      return {s * row + 40, row, head};
    }
    case Layout::padded_bhsd: {
      const long long row = d + 16, head = s * row + 8;
      return {h * head + 56, row, head};
    }
    case Layout::odd: {
      const long long head = d + 3, row = h * head + 5;
      return {s * row + 1, row, head};
    }
    case Layout::broadcast: return {0, h * d, d};
    case Layout::far: return {(1LL << 31) + 8, h * d, d};
  }
  return {};
}

/// What the inputs hold: uniform in [-1, 1]; Q and K small integers (scores exact in fp32, with
/// scale 128 of magnitude 1e4); all keys of a head equal (all scores of a row equal); uniform with
/// one NaN in query row (batch - 1, seq_q / 2 + 1, 1); scores that rise along the keys (rising:
/// with scale 1, by 0.02 a key, about 1.8 in base 2 per 64 keys, and by 6 more every 97th key), so
/// that a running max is passed by less than kMaxSlack on most tiles; the first jump (key 96) passes
/// it by more where it is not in the row's first tile (64-key tiles).
enum class Fill { random, integer, equal_keys, nan_row, rising };

constexpr float kDefaultScale = std::numeric_limits<float>::quiet_NaN();  // 1 / sqrt(head_dim)

struct Case {
  int batch, heads_q, heads_kv, seq_q, seq_kv, head_dim;
  bool causal = false;
  Layout q = Layout::bshd, kv = Layout::bshd, o = Layout::bshd;
  int offset = 0;  // elements before each tensor's first element (1: 2-byte aligned)
  Fill fill = Fill::random;
  float scale = kDefaultScale;
  bool with_lse = true;
};

att::Problem problem(const Case& c) {
  att::Problem p = packed(c.batch, c.heads_q, c.heads_kv, c.seq_q, c.seq_kv, c.head_dim,
                          std::isnan(c.scale) ? float(1.0 / std::sqrt(double(c.head_dim))) : c.scale, c.causal);
  p.q = strides(c.q, c.seq_q, c.heads_q, c.head_dim);
  p.k = p.v = strides(c.kv, c.seq_kv, c.heads_kv, c.head_dim);
  p.o = strides(c.o, c.seq_q, c.heads_q, c.head_dim);
  return p;
}

void fill(Inputs& in, Fill f, std::mt19937_64& g) {
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  std::uniform_int_distribution<int> n(-4, 4);
  const auto uniform = [&](long long, long long, long long, long long) { return u(g); };
  const auto integer = [&](long long, long long, long long, long long) { return double(n(g)); };
  in.v.fill(uniform);
  switch (f) {
    case Fill::random:
    case Fill::nan_row:
      in.q.fill(uniform);
      in.k.fill(uniform);
      if (f == Fill::nan_row) in.q.at(in.q.batch - 1, in.q.seq / 2 + 1, 1)[in.q.d / 2] = to_bf16(kNaN);
      break;
    case Fill::integer:
      in.q.fill(integer);
      in.k.fill(integer);
      break;
    case Fill::rising:
      in.q.fill([&](long long, long long, long long, long long c) { return c == 0 ? 1.0 : 0.1 * u(g); });
      in.k.fill([&](long long, long long j, long long, long long c) {
        return c == 0 ? 0.02 * double(j) + (j % 97 == 96 ? 6.0 : 0.0) : 0.1 * u(g);
      });
      break;
    case Fill::equal_keys: {
      in.q.fill(uniform);
      std::vector<double> rows(std::size_t(in.k.batch * in.k.heads * in.k.d));
      for (double& x : rows) x = u(g);
      in.k.fill([&](long long b, long long, long long h, long long c) {
        return rows[std::size_t((b * in.k.heads + h) * in.k.d + c)];
      });
      break;
    }
  }
}

std::string describe(const char* what, long long b, long long i, long long h, long long c, double got, double ref) {
  std::ostringstream s;
  s << what << "[b " << b << ", row " << i << ", head " << h << ", col " << c << "] = " << got << ", reference " << ref;
  return s.str();
}

bool poisoned(bf16 x) {
  std::uint16_t bits;
  std::memcpy(&bits, &x, sizeof bits);
  return bits == 0xFFFF;
}

/// How many of x[0, n) no longer hold the poison 0xFFFF, counted on the GPU.
__global__ void unpoisoned_kernel(const std::uint16_t* x, std::size_t n, unsigned long long* count) {
  unsigned long long k = 0;
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n;
       i += std::size_t(gridDim.x) * blockDim.x)
    k += x[i] != 0xFFFF;
  atomicAdd(count, k);
}
long long count_unpoisoned(const bf16* x, std::size_t n) {
  DeviceBuffer<unsigned long long> count(1);
  SMEM_CUDA_CHECK(cudaMemset(count.get(), 0, sizeof(unsigned long long)));
  unpoisoned_kernel<<<1024, 256>>>(reinterpret_cast<const std::uint16_t*>(x), n, count.get());
  SMEM_CUDA_CHECK(cudaGetLastError());
  return (long long)count.download()[0];
}

/// O after a run, as the checks read it: the tensor's elements (row (b, i, h) at ((b seq_q + i)
/// heads_q + h) head_dim), and `stray`, the elements of O's buffer outside the tensor that are no
/// longer poisoned. A buffer of up to 2^26 elements is copied whole and scanned on the host; the
/// large suite's (4 GiB between two batches) is copied row by row, and its stray writes are counted
/// on the GPU: all its unpoisoned elements less the tensor's.
struct Output {
  std::vector<bf16> rows;
  long long stray = 0;
};
Output read_output(const att::Problem& p, const GuardedBuffer<bf16>& O, long long offset) {
  const long long d = p.head_dim;
  Output out;
  out.rows.resize(std::size_t(1LL * p.batch * p.seq_q * p.heads_q * d));
  const bool whole = O.size() <= (std::size_t(1) << 26);
  std::vector<bf16> o = whole ? O.download(0, O.size()) : std::vector<bf16>();
  std::vector<char> inside(o.size(), 0);
  for (long long b = 0; b < p.batch; ++b)
    for (long long i = 0; i < p.seq_q; ++i)
      for (long long h = 0; h < p.heads_q; ++h) {
        const long long row = offset + b * p.o.batch + i * p.o.seq + h * p.o.head;
        bf16* dst = out.rows.data() + ((b * p.seq_q + i) * p.heads_q + h) * d;
        if (!whole) {
          SMEM_CUDA_CHECK(cudaMemcpy(dst, O.get() + row, std::size_t(d) * sizeof(bf16), cudaMemcpyDeviceToHost));
          continue;
        }
        std::copy(o.begin() + row, o.begin() + row + d, dst);
        std::fill(inside.begin() + row, inside.begin() + row + d, char(1));
      }
  if (whole) {
    for (std::size_t e = 0; e < o.size(); ++e) out.stray += !inside[e] && !poisoned(o[e]);
  } else {
    out.stray = count_unpoisoned(O.get(), O.size()) -
                std::count_if(out.rows.begin(), out.rows.end(), [](bf16 x) { return !poisoned(x); });
  }
  return out;
}

/// The failures of one run: O (read_output()) and, unless null, lse against r. Where r is NaN,
/// NaN; a row without keys, O exactly 0 and LSE exactly -inf; else |O - ref| <= atol + 1e-2 |ref|
/// and |LSE - ref| <= 1e-3 (1 + |ref|) (plus lse_slack[row] where given, row as the LSE's index).
/// The elements of O's buffer outside the tensor must still be poisoned (0xFFFF). The first failure
/// is described in `first`.
long long count_bad(const att::Problem& p, const Reference& r, const Output& o, const float* lse, double atol,
                    std::string& first, const std::vector<double>* lse_slack = nullptr) {
  long long bad = 0;
  const auto fail = [&](std::string what) {
    if (bad++ == 0) first = std::move(what);
  };
  for (long long b = 0; b < p.batch; ++b)
    for (long long h = 0; h < p.heads_q; ++h)
      for (long long i = 0; i < p.seq_q; ++i) {
        const double lref = r.L(b, h, i);
        const bool no_key = lref == -kInf;
        if (lse != nullptr) {
          const long long at = (b * p.heads_q + h) * p.seq_q + i;
          const double got = lse[at], slack = lse_slack != nullptr ? (*lse_slack)[std::size_t(at)] : 0.0;
          const bool ok = std::isnan(lref) ? std::isnan(got)
                          : no_key         ? got == -kInf
                                           : std::fabs(got - lref) <= 1e-3 * (1.0 + std::fabs(lref)) + slack;
          if (!ok) fail(describe("LSE", b, i, h, 0, got, lref));
        }
        const long long row = ((b * p.seq_q + i) * p.heads_q + h) * p.head_dim;
        for (long long c = 0; c < p.head_dim; ++c) {
          const double got = val(o.rows[std::size_t(row + c)]), ref = r.O(b, i, h, c);
          const bool ok = std::isnan(ref) ? std::isnan(got)
                          : no_key        ? got == 0.0
                                          : std::fabs(got - ref) <= atol + 1e-2 * std::fabs(ref);
          if (!ok) fail(describe("O", b, i, h, c, got, ref));
        }
      }
  if (o.stray != 0) fail("O's buffer written outside the tensor: " + std::to_string(o.stray) + " elements");
  return bad;
}

std::uint64_t salt(const Case& c) {
  std::uint64_t h = 1469598103934665603ull;
  for (long long x : {c.batch, c.heads_q, c.heads_kv, c.seq_q, c.seq_kv, c.head_dim, int(c.causal), int(c.q),
                      int(c.kv), int(c.o), c.offset, int(c.fill)})
    h = (h ^ std::uint64_t(x)) * 1099511628211ull;
  return h;
}

/// Whether variant v takes p with these tensors: its plan has a kernel and, from step 4 on (the
/// tensor-core steps copy rows in 16-byte chunks), every tensor's rows are 16-byte aligned. A
/// variant may refuse, with cudaErrorInvalidValue and nothing written, only what it does not take.
bool takes(att::Variant v, const att::Problem& p, const bf16* Q, const bf16* K, const bf16* V, const bf16* O) {
  if (att::plan(v, p).kernel == nullptr) return false;
  return att::kSteps[int(v)].step < 4 ||
         (att::rows16(Q, p.q) && att::rows16(K, p.k) && att::rows16(V, p.v) && att::rows16(O, p.o));
}

bool all_nan(const std::vector<float>& x) {
  return std::all_of(x.begin(), x.end(), [](float f) { return std::isnan(f); });
}

/// A launcher under test: its name, whether it takes p at these pointers (Q, K, V, O), its
/// workspace's bytes for p, and the launch (p, Q, K, V, O, lse, workspace, bytes).
struct Launcher {
  std::string name;
  std::function<bool(const att::Problem&, const bf16*, const bf16*, const bf16*, const bf16*)> takes;
  std::function<std::size_t(const att::Problem&)> workspace;
  std::function<cudaError_t(const att::Problem&, const bf16*, const bf16*, const bf16*, bf16*, float*, void*,
                            std::size_t)>
      run;
};

/// Every variant of the step list.
const std::vector<Launcher>& variants() {
  static const std::vector<Launcher> all = [] {
    std::vector<Launcher> v;
    for (auto x : att::kAllVariants)
      v.push_back({att::name(x),
                   [x](const att::Problem& p, const bf16* Q, const bf16* K, const bf16* V, const bf16* O) {
                     return takes(x, p, Q, K, V, O);
                   },
                   [x](const att::Problem& p) { return att::workspace(x, p); },
                   [x](const att::Problem& p, const bf16* Q, const bf16* K, const bf16* V, bf16* O, float* lse,
                       void* w, std::size_t bytes) { return att::run(x, p, Q, K, V, O, lse, w, bytes); }});
    return v;
  }();
  return all;
}

/// Every launcher (by default every variant) on case c: fresh inputs, one float64 reference, and
/// per launcher a NaN-poisoned, guarded O and LSE and a NaN-poisoned workspace of its bytes. K and
/// V are null when seq_kv == 0. A launcher that does not take the case must refuse it and write
/// nothing.
void check_case(const Case& c, const std::vector<Launcher>& launchers = variants()) {
  CAPTURE(c.batch);
  CAPTURE(c.heads_q);
  CAPTURE(c.heads_kv);
  CAPTURE(c.seq_q);
  CAPTURE(c.seq_kv);
  CAPTURE(c.head_dim);
  CAPTURE(c.causal);
  CAPTURE(int(c.q));
  CAPTURE(int(c.kv));
  CAPTURE(int(c.o));
  CAPTURE(c.offset);
  CAPTURE(int(c.fill));
  CAPTURE(c.with_lse);
  const att::Problem p = problem(c);
  CAPTURE(p.scale);
  auto g = smem::test::rng(salt(c));
  Inputs in(p, c.offset);
  fill(in, c.fill, g);
  const double atol = 1e-2 * std::max(in.v.max_abs(), 1e-30);
  const Reference ref = reference(p, in);
  DeviceBuffer<bf16> dq(in.q.buf), dk(in.k.buf), dv(in.v.buf);
  const bf16* Q = dq.get() + c.offset;
  const bf16* K = c.seq_kv == 0 ? nullptr : dk.get() + c.offset;
  const bf16* V = c.seq_kv == 0 ? nullptr : dv.get() + c.offset;
  GuardedBuffer<bf16> O(std::size_t(c.offset + std::max(extent(p.batch, p.seq_q, p.heads_q, p.head_dim, p.o), 1LL)));
  GuardedBuffer<float> L(std::max<std::size_t>(std::size_t(p.batch) * p.heads_q * p.seq_q, 1));
  for (const Launcher& x : launchers) {
    const std::string variant = x.name;
    CAPTURE(variant);
    O.poison();
    L.poison();
    const std::size_t bytes = x.workspace(p);
    DeviceBuffer<unsigned char> w(bytes);
    w.poison();
    const cudaError_t e = x.run(p, Q, K, V, O.get() + c.offset, c.with_lse ? L.get() : nullptr, w.get(), bytes);
    SMEM_CUDA_CHECK(cudaDeviceSynchronize());
    CHECK(cudaGetLastError() == cudaSuccess);
    CHECK(O.guards_intact());
    CHECK(L.guards_intact());
    const auto lse = L.download(0, L.size());
    const Output o = read_output(p, O, c.offset);
    if (e == cudaErrorInvalidValue && !x.takes(p, Q, K, V, O.get() + c.offset)) {  // refused: nothing written
      CHECK(o.stray == 0);
      CHECK(std::all_of(o.rows.begin(), o.rows.end(), poisoned));
      CHECK(all_nan(lse));
      continue;
    }
    REQUIRE(e == cudaSuccess);
    std::string first;
    const long long bad = count_bad(p, ref, o, c.with_lse ? lse.data() : nullptr, atol, first);
    CHECK_MESSAGE(bad == 0, first);
    if (!c.with_lse) CHECK(all_nan(lse));
  }
}

/// The cases every variant must get right.
std::vector<Case> cases() {
  using L = Layout;
  std::vector<Case> v = {
      // Sequence lengths 1, 7, 129 (one row past a tile), equal and different both ways.
      {1, 2, 2, 1, 1, 64},
      {1, 2, 2, 7, 7, 64},
      {2, 2, 1, 129, 129, 64},
      {1, 2, 2, 7, 129, 64},
      {1, 2, 2, 129, 7, 64},
      {1, 2, 2, 1, 129, 64},
      {1, 2, 2, 129, 1, 64},
      // Causal, seq_q < seq_kv, equal, and seq_q > seq_kv (rows 0 to seq_q - seq_kv - 1 see no key).
      {1, 2, 2, 7, 129, 64, true},
      {2, 2, 2, 129, 129, 64, true},
      {1, 2, 2, 129, 7, 64, true},
      {1, 1, 1, 33, 17, 8, true},
      {1, 2, 2, 1, 129, 64, true},
      {1, 2, 2, 129, 1, 64, true},
      // Grouped- and multi-query heads.
      {2, 8, 2, 129, 200, 64},
      {1, 8, 2, 129, 200, 64, true},
      {1, 4, 1, 65, 130, 128},
      {1, 4, 1, 1, 257, 128, true},
      // head_dim from 8 to 256, across the steps' column groups (64, 128, 256).
      {1, 2, 1, 40, 70, 8},
      {1, 2, 1, 40, 70, 24},
      {1, 2, 1, 40, 70, 72, true},
      {1, 2, 1, 40, 70, 128},
      {1, 2, 1, 40, 70, 136, true},
      {1, 2, 1, 40, 70, 200},
      {1, 2, 1, 40, 70, 256},
      {1, 2, 2, 129, 129, 256, true},
      // Several 128-row blocks of step 8's shapes, causal ones in their longest-first order.
      {2, 2, 1, 300, 333, 128, true},
      {1, 2, 2, 257, 300, 128},
      {1, 2, 2, 300, 260, 64, true},
      // 288 query tiles of 128 rows, over twice the 132 SMs of an H100 or H200: step 12's blocks walk
      // three items each (both Q buffers, and the stages' phases carried from item to item); causal
      // with seq_q > seq_kv, the first tile of each head sees no key.
      {2, 48, 8, 300, 130, 128},
      {2, 48, 8, 300, 130, 64, true},
      // Layouts: [b, h, s, d], padded, mixed, K and V shared by the batch, odd strides off 16 bytes.
      {2, 4, 2, 50, 90, 64, false, L::bhsd, L::bhsd, L::bhsd},
      {2, 4, 2, 50, 90, 64, true, L::padded, L::padded, L::padded},
      {2, 4, 2, 50, 90, 72, false, L::padded_bhsd, L::padded_bhsd, L::padded_bhsd},
      {2, 4, 2, 50, 90, 64, true, L::bshd, L::bhsd, L::padded},
      {3, 4, 2, 50, 90, 64, false, L::bhsd, L::broadcast, L::bshd},
      {2, 4, 2, 50, 90, 40, true, L::odd, L::odd, L::odd, 1},
      {3, 2, 2, 17, 33, 128, false, L::padded_bhsd, L::padded, L::bhsd, 3},
      {2, 4, 2, 50, 90, 128, true, L::padded, L::padded_bhsd, L::padded, 8},  // 16-byte rows, not 256
      // Few query rows over long keys (the decode split): chunks of 1024 keys, a partial last one,
      // the query heads of a key head stacked past 16 rows.
      {1, 8, 2, 4, 2500, 128},
      {1, 8, 1, 3, 1500, 64, true},
      {2, 4, 4, 16, 1025, 64, true},
      {1, 2, 1, 1, 1024, 128, false, L::bhsd, L::bhsd, L::bhsd},
  };
  if (!smem::test::small_shapes_only()) {  // 1000 rows and keys
    for (bool causal : {false, true}) v.push_back({1, 2, 2, 1000, 1000, 64, causal});
    v.push_back({1, 2, 2, 1, 1000, 64});
    v.push_back({1, 2, 2, 1000, 33, 64, true});
    v.push_back({1, 2, 2, 1000, 1, 64, true});
    v.push_back({1, 4, 1, 1, 1000, 128});
  }
  return v;
}

/// Five made-up addresses 2^56 bytes apart, from k = 1 to 5; nothing is dereferenced. k = 8
/// (2^59) leaves room above for a span of kMaxTensorBytes.
template <class T>
T* made_up(std::uintptr_t k) {
  return reinterpret_cast<T*>(k << 56);
}

template <class T>
T* shift(T* p, long long bytes) {
  return reinterpret_cast<T*>(reinterpret_cast<std::uintptr_t>(p) + std::uintptr_t(bytes));
}

struct Ptrs {
  bf16 *q, *k, *v, *o;
  float* lse;
};

Args check(const att::Problem& p, const Ptrs& t) { return att::check_args(p, t.q, t.k, t.v, t.o, t.lse); }

/// The problem the argument tests vary: GQA, seq_q != seq_kv, packed; every variant takes it.
att::Problem base() { return packed(2, 4, 2, 12, 30, 64, 0.125f); }

long long q_elems(const att::Problem& p) { return extent(p.batch, p.seq_q, p.heads_q, p.head_dim, p.q); }
long long kv_elems(const att::Problem& p) { return extent(p.batch, p.seq_kv, p.heads_kv, p.head_dim, p.k); }
long long lse_elems(const att::Problem& p) { return 1LL * p.batch * p.heads_q * p.seq_q; }

/// head_dim d with packed strides for it (a d <= 0 keeps the old strides).
att::Problem with_head_dim(att::Problem p, int d) {
  if (d > 0) p = packed(p.batch, p.heads_q, p.heads_kv, p.seq_q, p.seq_kv, d, p.scale, p.causal);
  p.head_dim = d;
  return p;
}

struct ArgCase {
  std::string what;
  att::Problem p;
  Ptrs t;
};

/// Every bad argument the contract names, on base() with the tensors at t (Q, K, V and O of
/// base() apart, lse apart from them).
std::vector<ArgCase> bad_cases(const Ptrs& t) {
  const att::Problem p0 = base();
  std::vector<ArgCase> v;
  const auto add = [&](std::string what, auto change) {
    ArgCase c{std::move(what), p0, t};
    change(c.p, c.t);
    v.push_back(c);
  };
  using P = att::Problem;
  add("batch < 0", [](P& p, Ptrs&) { p.batch = -1; });
  add("heads_q < 0", [](P& p, Ptrs&) { p.heads_q = -4; });
  add("heads_kv < 0", [](P& p, Ptrs&) { p.heads_kv = -2; });
  add("seq_q < 0", [](P& p, Ptrs&) { p.seq_q = -1; });
  add("seq_kv < 0", [](P& p, Ptrs&) { p.seq_kv = -1; });
  add("heads_kv == 0", [](P& p, Ptrs&) { p.heads_kv = 0; });
  add("heads_kv does not divide heads_q", [](P& p, Ptrs&) { p.heads_kv = 3; });
  add("heads_kv > heads_q", [](P& p, Ptrs&) { p.heads_kv = 8; });
  for (int d : {0, 4, 12, 264, -8}) add("head_dim " + std::to_string(d), [d](P& p, Ptrs&) { p = with_head_dim(p, d); });
  for (float s : {std::numeric_limits<float>::quiet_NaN(), INFINITY, -INFINITY})
    add("scale " + std::to_string(s), [s](P& p, Ptrs&) { p.scale = s; });
  const std::pair<const char*, att::Strides P::*> tensors[] = {{"q", &P::q}, {"k", &P::k}, {"v", &P::v}, {"o", &P::o}};
  const std::pair<const char*, long long att::Strides::*> dims[] = {
      {"batch", &att::Strides::batch}, {"seq", &att::Strides::seq}, {"head", &att::Strides::head}};
  for (auto [tn, tm] : tensors)
    for (auto [dn, dm] : dims)
      add(std::string(tn) + "." + dn + " < 0", [tm = tm, dm = dm](P& p, Ptrs&) { (p.*tm).*dm = -((p.*tm).*dm); });
  // O's elements that coincide.
  add("o.seq == 0", [](P& p, Ptrs&) { p.o.seq = 0; });
  add("o.head < head_dim", [](P& p, Ptrs&) { p.o.head = 32; });
  add("o.batch == 0", [](P& p, Ptrs&) { p.o.batch = 0; });
  add("o.seq == o.head", [](P& p, Ptrs&) { p.o.seq = p.o.head; });
  add("o.batch on the last row", [](P& p, Ptrs&) { p.o.batch = p.o.seq * (p.seq_q - 1); });
  // Null pointers (K and V with seq_kv > 0).
  add("Q == nullptr", [](P&, Ptrs& t) { t.q = nullptr; });
  add("K == nullptr", [](P&, Ptrs& t) { t.k = nullptr; });
  add("V == nullptr", [](P&, Ptrs& t) { t.v = nullptr; });
  add("O == nullptr", [](P&, Ptrs& t) { t.o = nullptr; });
  // O and lse overlapping an input or each other, by as little as one element.
  const long long nq = q_elems(p0), nkv = kv_elems(p0), no = q_elems(p0), nl = lse_elems(p0);
  add("O == Q", [](P&, Ptrs& t) { t.o = t.q; });
  add("O on Q's last element", [nq](P&, Ptrs& t) { t.o = t.q + nq - 1; });
  add("O's last element on Q's first", [no](P&, Ptrs& t) { t.o = shift(t.q, -2 * (no - 1)); });
  add("O inside K", [](P&, Ptrs& t) { t.o = t.k + 7; });
  add("O on V's last element", [nkv](P&, Ptrs& t) { t.o = t.v + nkv - 1; });
  add("lse inside O", [](P&, Ptrs& t) { t.lse = reinterpret_cast<float*>(t.o + 64); });
  add("lse's last element on O's first",
      [nl](P&, Ptrs& t) { t.lse = shift(reinterpret_cast<float*>(t.o), -4 * (nl - 1)); });
  add("lse inside Q", [](P&, Ptrs& t) { t.lse = reinterpret_cast<float*>(t.q + 8); });
  add("lse inside K", [](P&, Ptrs& t) { t.lse = reinterpret_cast<float*>(t.k + 8); });
  add("lse on V's last element", [nkv](P&, Ptrs& t) { t.lse = shift(reinterpret_cast<float*>(t.v + nkv), -4); });
  // Misaligned pointers.
  add("Q at an odd byte", [](P&, Ptrs& t) { t.q = shift(t.q, 1); });
  add("K at an odd byte", [](P&, Ptrs& t) { t.k = shift(t.k, 1); });
  add("V at an odd byte", [](P&, Ptrs& t) { t.v = shift(t.v, 1); });
  add("O at an odd byte", [](P&, Ptrs& t) { t.o = shift(t.o, 1); });
  add("lse 2-byte aligned", [](P&, Ptrs& t) { t.lse = shift(t.lse, 2); });
  add("lse at an odd byte", [](P&, Ptrs& t) { t.lse = shift(t.lse, 1); });
  // Spans past kMaxTensorBytes.
  add("q.batch == LLONG_MAX", [](P& p, Ptrs&) { p.q.batch = LLONG_MAX; });
  add("k.seq == 2^62", [](P& p, Ptrs&) { p.k.seq = 1LL << 62; });
  add("v.head == 2^59", [](P& p, Ptrs&) { p.v.head = 1LL << 59; });
  add("o.seq == 2^56", [](P& p, Ptrs&) { p.o.seq = 1LL << 56; });
  return v;
}

/// Problems without a query row, with every pointer null, and one with O misaligned.
std::vector<ArgCase> empty_cases() {
  const Ptrs none = {nullptr, nullptr, nullptr, nullptr, nullptr};
  att::Problem b0 = base(), h0 = base(), s0 = base();
  b0.batch = 0, h0.heads_q = 0, s0.seq_q = 0;
  return {{"batch == 0", b0, none},
          {"heads_q == 0", h0, none},
          {"seq_q == 0", s0, none},
          {"seq_q == 0, O at an odd byte", s0, {nullptr, nullptr, nullptr, shift(made_up<bf16>(4), 1), nullptr}}};
}

/// Host memory for base()'s Q, K, V, O and lse, 16-byte aligned each, filled with one byte.
struct HostArena {
  static constexpr unsigned char kByte = 0x5A;
  std::vector<float4> mem;
  Ptrs t;
  HostArena() {
    const att::Problem p = base();
    const long long sizes[5] = {2 * q_elems(p), 2 * kv_elems(p), 2 * kv_elems(p), 2 * q_elems(p), 4 * lse_elems(p)};
    long long at[5], total = 0;
    for (int i = 0; i < 5; ++i) at[i] = total, total += (sizes[i] + 15) / 16 * 16;
    mem.resize(std::size_t(total / 16));
    std::memset(mem.data(), kByte, std::size_t(total));
    auto* base_ = reinterpret_cast<unsigned char*>(mem.data());
    t = {reinterpret_cast<bf16*>(base_ + at[0]), reinterpret_cast<bf16*>(base_ + at[1]),
         reinterpret_cast<bf16*>(base_ + at[2]), reinterpret_cast<bf16*>(base_ + at[3]),
         reinterpret_cast<float*>(base_ + at[4])};
  }
  bool untouched() const {
    const auto* b = reinterpret_cast<const unsigned char*>(mem.data());
    return std::all_of(b, b + mem.size() * 16, [](unsigned char x) { return x == kByte; });
  }
};

/// Problems for the work-order tests: one group of heads and several (K and V of 8192 x 64 take
/// 2 MiB a head, 8 heads a group: 15 heads make groups of 8 and 7), odd and even numbers of query
/// tiles, seq_q above and below seq_kv, with and without the mask.
std::vector<att::Problem> order_problems() {
  std::vector<att::Problem> v;
  for (bool causal : {false, true}) {
    v.push_back(packed(2, 3, 1, 300, 300, 128, 0.1f, causal));    // 3 tiles of 128 rows a head
    v.push_back(packed(3, 5, 5, 1000, 8192, 64, 0.1f, causal));   // 8 tiles, groups of 8 and 7 heads
    v.push_back(packed(1, 15, 3, 8192, 8192, 64, 0.1f, causal));  // 64 tiles
    v.push_back(packed(2, 4, 2, 700, 150, 64, 0.1f, causal));     // causal: the first tiles see no key
    v.push_back(packed(1, 2, 2, 1, 129, 128, 0.1f, causal));      // one tile
  }
  return v;
}

/// An order problem as batch x heads_q x seq_q x seq_kv, and its mask, for the failure messages.
std::string order_name(const att::Problem& p) {
  return std::to_string(p.batch) + "x" + std::to_string(p.heads_q) + "x" + std::to_string(p.seq_q) + "x" +
         std::to_string(p.seq_kv) + (p.causal ? " causal" : " full");
}

}  // namespace

TEST_SUITE("host") {
  TEST_CASE("reference: one key gives O = v and LSE = scale q . k") {
    const auto p = packed(1, 1, 1, 3, 1, 8, 0.5f);
    Inputs in(p, 0);
    in.q.fill([](long long, long long s, long long, long long c) { return c == 0 ? double(s + 1) : 0.25; });
    in.k.fill([](long long, long long, long long, long long c) { return c == 0 ? 1.0 : 0.0; });
    in.v.fill([](long long, long long, long long, long long c) { return 0.5 * double(c) - 1.0; });
    const Reference r = reference(p, in);
    for (int i = 0; i < 3; ++i) {
      CHECK(r.L(0, 0, i) == 0.5 * (i + 1));
      for (int c = 0; c < 8; ++c) CHECK(r.O(0, i, 0, c) == 0.5 * c - 1.0);
    }
  }

  TEST_CASE("reference: equal scores give the mean of V's rows and LSE = s + log n") {
    const auto p = packed(1, 1, 1, 2, 4, 8, 0.25f);
    Inputs in(p, 0);
    in.q.fill([](long long, long long, long long, long long c) { return c == 0 ? 2.0 : 0.0; });
    in.k.fill([](long long, long long, long long, long long c) { return c == 0 ? 1.0 : 0.0; });  // s = 0.5
    in.v.fill([](long long, long long j, long long, long long c) { return double(j * (c + 1)); });
    const Reference r = reference(p, in);
    for (int i = 0; i < 2; ++i) {
      CHECK(r.L(0, 0, i) == doctest::Approx(0.5 + std::log(4.0)).epsilon(1e-15));
      for (int c = 0; c < 8; ++c) CHECK(r.O(0, i, 0, c) == doctest::Approx(1.5 * (c + 1)).epsilon(1e-15));
    }
  }

  TEST_CASE("reference: two keys weighted 1 / (1 + e) and e / (1 + e)") {
    const auto p = packed(1, 1, 1, 1, 2, 8, 1.0f);
    Inputs in(p, 0);
    in.q.fill([](long long, long long, long long, long long c) { return c == 0 ? 1.0 : 0.0; });
    in.k.fill([](long long, long long j, long long, long long c) { return c == 0 ? double(j) : 0.0; });  // s = 0, 1
    in.v.fill([](long long, long long j, long long, long long) { return j == 0 ? 1.0 : 3.0; });
    const Reference r = reference(p, in);
    const double e = std::exp(1.0);
    CHECK(r.L(0, 0, 0) == doctest::Approx(std::log(1.0 + e)).epsilon(1e-15));
    for (int c = 0; c < 8; ++c) CHECK(r.O(0, 0, 0, c) == doctest::Approx(1.0 + 2.0 * e / (1.0 + e)).epsilon(1e-15));
  }

  TEST_CASE("reference: the causal mask aligned to the bottom right; rows without a key get O = 0, LSE = -inf") {
    // Q = 0: every visible score is 0, so a row's O is the mean of the V rows it sees and LSE = log n.
    for (const auto& shape : {std::pair{4, 2}, std::pair{2, 4}}) {
      const int sq = shape.first, skv = shape.second;
      CAPTURE(sq);
      CAPTURE(skv);
      const auto p = packed(1, 1, 1, sq, skv, 8, 1.0f, true);
      Inputs in(p, 0);
      in.q.fill([](long long, long long, long long, long long) { return 0.0; });
      in.k.fill([](long long, long long j, long long, long long c) { return double(j + c); });
      in.v.fill([](long long, long long j, long long, long long c) { return double(1 << j) + c; });
      const Reference r = reference(p, in);
      for (int i = 0; i < sq; ++i) {
        const int seen = std::clamp(i + skv - sq + 1, 0, skv);  // keys 0 to i + skv - sq
        CAPTURE(i);
        double mean = 0;
        for (int j = 0; j < seen; ++j) mean += double(1 << j) / seen;
        CHECK(r.L(0, 0, i) == (seen == 0 ? -kInf : std::log(double(seen))));
        for (int c = 0; c < 8; ++c) {
          if (seen == 0)
            CHECK(r.O(0, i, 0, c) == 0.0);
          else
            CHECK(r.O(0, i, 0, c) == doctest::Approx(mean + c).epsilon(1e-15));
        }
      }
    }
  }

  TEST_CASE("reference: query head h reads key head h / (heads_q / heads_kv)") {
    for (int hkv : {1, 2, 4}) {
      CAPTURE(hkv);
      const auto p = packed(2, 4, hkv, 3, 1, 8, 1.0f);
      Inputs in(p, 0);
      in.q.fill([](long long, long long, long long, long long) { return 1.0; });
      in.k.fill([](long long, long long, long long, long long) { return 1.0; });
      in.v.fill([](long long b, long long, long long h, long long c) { return double(100 * b + 10 * h + c); });
      const Reference r = reference(p, in);
      for (int b = 0; b < 2; ++b)
        for (int h = 0; h < 4; ++h)
          for (int c = 0; c < 8; ++c) CHECK(r.O(b, 1, h, c) == double(100 * b + 10 * (h / (4 / hkv)) + c));
    }
  }

  TEST_CASE("reference: a NaN in one query row makes that row NaN and no other") {
    const auto p = packed(2, 4, 2, 5, 6, 8, 0.5f, true);
    Inputs in(p, 0);
    auto g = smem::test::rng(3);
    fill(in, Fill::nan_row, g);  // the NaN in row (1, 3, head 1)
    const Reference r = reference(p, in);
    for (int b = 0; b < 2; ++b)
      for (int h = 0; h < 4; ++h)
        for (int i = 0; i < 5; ++i) {
          const bool nan_row = b == 1 && h == 1 && i == 3;
          CHECK(std::isnan(r.L(b, h, i)) == nan_row);
          CHECK(std::isfinite(r.L(b, h, i)) == !nan_row);
          for (int c = 0; c < 8; ++c) CHECK(std::isnan(r.O(b, i, h, c)) == nan_row);
        }
  }

  TEST_CASE("reference: the same data in every layout gives the same result, bit for bit") {
    auto g = smem::test::rng(4);
    std::vector<double> data(3 * 2 * 9 * 4 * 16);
    for (double& x : data) x = std::uniform_real_distribution<double>(-1, 1)(g);
    std::vector<Reference> refs;
    for (Layout l : {Layout::bshd, Layout::bhsd, Layout::padded, Layout::padded_bhsd, Layout::odd}) {
      att::Problem p = packed(2, 4, 2, 7, 9, 16, 0.3f, true);
      p.q = strides(l, 7, 4, 16);
      p.k = p.v = strides(l, 9, 2, 16);
      Inputs in(p, 3);
      const auto from = [&](int tensor) {
        return [&, tensor](long long b, long long s, long long h, long long c) {
          return data[std::size_t((((tensor * 2 + b) * 9 + s) * 4 + h) * 16 + c)];
        };
      };
      in.q.fill(from(0));
      in.k.fill(from(1));
      in.v.fill(from(2));
      refs.push_back(reference(p, in));
    }
    for (const Reference& r : refs) {
      CHECK(r.o == refs[0].o);
      CHECK(r.lse == refs[0].lse);
    }
  }

  TEST_CASE("reference: scores of magnitude 1e4 give a finite O and LSE") {
    for (float scale : {1e4f, -1e4f}) {
      CAPTURE(scale);
      const auto p = packed(1, 1, 1, 1, 2, 8, scale);
      Inputs in(p, 0);
      in.q.fill([](long long, long long, long long, long long c) { return c == 0 ? 1.0 : 0.0; });
      in.k.fill([](long long, long long j, long long, long long c) { return c == 0 && j == 0 ? 1.0 : 0.0; });
      in.v.fill([](long long, long long j, long long, long long c) { return double(j + c); });
      const Reference r = reference(p, in);  // s = (scale, 0): all the weight on one key
      CHECK(r.L(0, 0, 0) == (scale > 0 ? double(scale) : 0.0));
      for (int c = 0; c < 8; ++c) CHECK(r.O(0, 0, 0, c) == double(c + (scale > 0 ? 0 : 1)));
    }
  }

  TEST_CASE("check_args: packed, [b, h, s, d], padded and shared layouts launch; empty problems; seq_kv == 0") {
    const Ptrs t = {made_up<bf16>(1), made_up<bf16>(2), made_up<bf16>(3), made_up<bf16>(4), made_up<float>(5)};
    att::Problem p = base();
    CHECK(check(p, t) == Args::launch);
    CHECK(check(p, {t.q, t.k, t.v, t.o, nullptr}) == Args::launch);  // no LSE
    for (Layout l : {Layout::bhsd, Layout::padded, Layout::padded_bhsd, Layout::odd}) {
      CAPTURE(int(l));
      p.q = p.o = strides(l, p.seq_q, p.heads_q, p.head_dim);
      p.k = p.v = strides(l, p.seq_kv, p.heads_kv, p.head_dim);
      CHECK(check(p, t) == Args::launch);
    }
    p = base();
    p.k = p.v = strides(Layout::broadcast, p.seq_kv, p.heads_kv, p.head_dim);  // K and V shared by the batch
    p.q.seq = 0;                                                               // every query row the same
    CHECK(check(p, t) == Args::launch);
    p = base();
    p.seq_q = 1, p.o.seq = 0;  // a stride of a dimension of one element is free
    CHECK(check(p, t) == Args::launch);
    for (int d : {8, 16, 72, 136, 248, 256}) CHECK(check(with_head_dim(base(), d), t) == Args::launch);
    for (float s : {0.0f, -3.0f, 1e30f}) {
      p = base();
      p.scale = s;
      CHECK(check(p, t) == Args::launch);
    }
    for (int hkv : {1, 4}) {
      p = base();
      p.heads_kv = hkv, p.k = p.v = att::bshd(p.seq_kv, hkv, p.head_dim);
      CHECK(check(p, t) == Args::launch);
    }
    p = base();
    p.causal = true;
    CHECK(check(p, t) == Args::launch);
    // Adjacent tensors do not overlap; Q, K and V may overlap each other; 2-byte alignment is enough.
    const long long nq = q_elems(p), nl = lse_elems(p);
    CHECK(check(p, {t.q, t.k, t.v, t.q + nq, t.lse}) == Args::launch);
    CHECK(check(p, {t.q, t.k, t.v, shift(t.q, -2 * nq), t.lse}) == Args::launch);
    CHECK(check(p, {t.q, t.k, t.v, t.o, reinterpret_cast<float*>(t.o + nq)}) == Args::launch);
    CHECK(check(p, {t.q, t.k, t.v, t.o, shift(reinterpret_cast<float*>(t.o), -4 * nl)}) == Args::launch);
    CHECK(check(p, {t.q, t.q, t.q + 1, t.o, t.lse}) == Args::launch);
    CHECK(check(p, {t.q + 1, t.k + 3, t.v + 5, t.o + 7, t.lse + 1}) == Args::launch);
    for (const auto& c : empty_cases()) {
      CAPTURE(c.what);
      CHECK(check(c.p, c.t) == Args::empty);
    }
    // seq_kv == 0: K and V are not read, so they may be null or misaligned.
    p = base();
    p.seq_kv = 0;
    CHECK(check(p, {t.q, nullptr, nullptr, t.o, t.lse}) == Args::no_keys);
    CHECK(check(p, {t.q, shift(t.k, 1), shift(t.v, 1), t.o, nullptr}) == Args::no_keys);
    CHECK(check(p, {t.q, t.o, t.o, t.o, t.lse}) == Args::no_keys);  // nothing of K and V to overlap
    CHECK(check(p, {nullptr, nullptr, nullptr, t.o, t.lse}) == Args::invalid);
    CHECK(check(p, {t.q, nullptr, nullptr, nullptr, t.lse}) == Args::invalid);
    CHECK(check(p, {t.q, nullptr, nullptr, t.o, reinterpret_cast<float*>(t.q)}) == Args::invalid);
  }

  TEST_CASE("check_args: every bad argument the contract names is invalid") {
    const Ptrs t = {made_up<bf16>(1), made_up<bf16>(2), made_up<bf16>(3), made_up<bf16>(4), made_up<float>(5)};
    REQUIRE(check(base(), t) == Args::launch);
    for (const auto& c : bad_cases(t)) {
      CAPTURE(c.what);
      CHECK(check(c.p, c.t) == Args::invalid);
    }
    // Bad sizes, head_dim, scale and strides are invalid even without a query row.
    att::Problem p = with_head_dim(base(), 12);
    p.batch = 0;
    CHECK(check(p, t) == Args::invalid);
    p = base();
    p.seq_q = 0, p.scale = INFINITY;
    CHECK(check(p, t) == Args::invalid);
    p = base();
    p.heads_q = 0, p.k.head = -1;
    CHECK(check(p, t) == Args::invalid);
  }

  // The limits the contract states: every size up to 2^31 - 1, spans up to kMaxTensorBytes. The
  // tensor under test sits at 2^59, above the others, so its largest span overlaps nothing.
  TEST_CASE("check_args: sizes up to 2^31 - 1; a span of kMaxTensorBytes accepted, one element more refused") {
    const Ptrs t = {made_up<bf16>(1), made_up<bf16>(2), made_up<bf16>(3), made_up<bf16>(4), made_up<float>(5)};
    constexpr int kMax = INT_MAX;
    CHECK(check(packed(kMax, 1, 1, 1, 1, 8, 1.0f), t) == Args::launch);
    CHECK(check(packed(1, kMax, 1, 1, 1, 8, 1.0f), t) == Args::launch);
    CHECK(check(packed(1, kMax, kMax, 1, 1, 256, 1.0f), t) == Args::launch);
    CHECK(check(packed(1, 1, 1, kMax, 1, 8, 1.0f, true), t) == Args::launch);
    CHECK(check(packed(1, 1, 1, 1, kMax, 8, 1.0f, true), t) == Args::launch);
    CHECK(check(packed(1, 1, 1, kMax, kMax, 8, 1.0f, true), t) == Args::launch);
    // The mask's arithmetic at INT_MAX (64-bit): the last row of seq_q = 2^31 - 1 sees the only key.
    const att::Problem tall = packed(1, 1, 1, kMax, 1, 8, 1.0f, true);
    CHECK(att::visible(tall, kMax - 1, 0));
    CHECK(!att::visible(tall, kMax - 2, 0));
    const att::Problem square = packed(1, 1, 1, kMax, kMax, 8, 1.0f, true);
    CHECK(att::visible(square, kMax - 1, kMax - 1));
    CHECK(!att::visible(square, 0, 1));
    using P = att::Problem;
    const std::pair<const char*, att::Strides P::*> tensors[] = {
        {"Q", &P::q}, {"K", &P::k}, {"V", &P::v}, {"O", &P::o}};
    for (int i = 0; i < 4; ++i) {
      CAPTURE(tensors[i].first);
      Ptrs top = t;
      bf16** ptr[] = {&top.q, &top.k, &top.v, &top.o};
      *ptr[i] = made_up<bf16>(8);
      att::Problem p = base();
      att::Strides& s = p.*tensors[i].second;
      const long long seq = i == 0 || i == 3 ? p.seq_q : p.seq_kv, heads = i == 0 || i == 3 ? p.heads_q : p.heads_kv;
      const long long batch0 = (seq - 1) * s.seq + (heads - 1) * s.head + p.head_dim;  // one batch's elements
      s.batch = att::kMaxTensorBytes / 2 - batch0;  // the last element is the 2^59-th: 2^60 bytes
      CHECK(check(p, top) == Args::launch);
      s.batch += 1;
      CHECK(check(p, top) == Args::invalid);
    }
  }

  TEST_CASE("every launcher refuses every bad argument before any CUDA call, its outputs untouched") {
    // Host memory: a launch that got past the checks would fail with a device error (or, where the
    // GPU reads host memory, change the bytes).
    HostArena arena;
    const auto bad = bad_cases(arena.t);
    const auto empty = empty_cases();
    for (auto v : att::kAllVariants) {
      const std::string variant = att::name(v);
      CAPTURE(variant);
      for (const auto& c : bad) {
        CAPTURE(c.what);
        const std::size_t bytes = 1 << 20;
        CHECK(att::run(v, c.p, c.t.q, c.t.k, c.t.v, c.t.o, c.t.lse, made_up<void>(6), bytes) == cudaErrorInvalidValue);
      }
      for (const auto& c : empty) {  // nothing to do: success, no CUDA call (or refused, as planned)
        CAPTURE(c.what);
        const cudaError_t e = att::run(v, c.p, c.t.q, c.t.k, c.t.v, c.t.o, c.t.lse, nullptr, 0);
        CHECK((e == cudaSuccess || (e == cudaErrorInvalidValue && !takes(v, c.p, c.t.q, c.t.k, c.t.v, c.t.o))));
      }
    }
    CHECK(arena.untouched());
  }

  TEST_CASE("workspace: naive's holds the fp32 scores; a workspace that does not fit is refused before any CUDA "
            "call") {
    const att::Problem p = base();
    CHECK(att::workspace(att::Variant::naive, p) == std::size_t(2 * 4 * 12 * 30) * sizeof(float));
    att::Problem none = p;
    none.seq_kv = 0;
    for (auto v : att::kAllVariants) CHECK(att::workspace(v, none) == 0);  // no keys: no_keys_kernel only
    HostArena arena;
    const Ptrs& t = arena.t;
    for (auto v : att::kAllVariants) {
      const std::size_t need = att::workspace(v, p);
      if (need == 0) continue;  // the launcher ignores its workspace
      const std::string variant = att::name(v);
      CAPTURE(variant);
      REQUIRE(takes(v, p, t.q, t.k, t.v, t.o));
      std::vector<float4> ws(need / 16 + 2);
      const auto run = [&](void* w, std::size_t bytes) { return att::run(v, p, t.q, t.k, t.v, t.o, t.lse, w, bytes); };
      CHECK(run(nullptr, need) == cudaErrorInvalidValue);
      CHECK(run(ws.data(), need - 1) == cudaErrorInvalidValue);
      CHECK(run(shift(ws.data(), 8), need) == cudaErrorInvalidValue);  // 8-byte aligned only
      CHECK(run(t.o, need) == cudaErrorInvalidValue);                  // over O
      CHECK(run(shift(t.q, -16), need) == cudaErrorInvalidValue);      // over Q's start
      CHECK(run(t.lse, need) == cudaErrorInvalidValue);                // over lse
    }
    CHECK(arena.untouched());
  }

  // Problems the contract accepts whose fp32 scores take 2^64 bytes (2^62 scores: a size_t
  // product wraps to 0) and 2^66 bytes (2^64 scores: a long long count wraps too). A variant with
  // a workspace must answer SIZE_MAX (no workspace can hold it), not a wrapped size, or have no
  // plan; its launcher then refuses before any CUDA call.
  TEST_CASE("limits: the workspace size never wraps; a problem no workspace can hold is refused") {
    const Ptrs t = {made_up<bf16>(1), made_up<bf16>(2), made_up<bf16>(3), made_up<bf16>(4), made_up<float>(5)};
    for (int batch : {1 << 14, 1 << 16}) {
      const att::Problem p = packed(batch, 1 << 16, 1 << 16, 1 << 16, 1 << 16, 8, 1.0f);
      CAPTURE(batch);
      REQUIRE(check(p, t) == Args::launch);
      for (auto v : att::kAllVariants) {
        const std::string variant = att::name(v);
        CAPTURE(variant);
        const std::size_t w = att::workspace(v, p);
        const bool planned = att::plan(v, p).kernel != nullptr;
        CAPTURE(w);
        CAPTURE(planned);
        const bool refused = !planned || w == SIZE_MAX;
        CHECK(refused);
        if (refused)  // (a wrapped size would let the launch through: not attempted on made-up pointers)
          CHECK(att::run(v, p, t.q, t.k, t.v, t.o, t.lse, made_up<void>(6), SIZE_MAX - 15) == cudaErrorInvalidValue);
      }
    }
  }
  // The kernels' requests, each checked on its own (support/attention_bank_access.hpp).
  namespace aa = smem::test::attention_access;
  using smem::test::Access;
  template <class Walk>
  int worst(Walk&& walk) {
    return smem::test::worst_request(walk).wavefronts;
  }
  using smem::test::all_conflict_free;

  TEST_CASE("work order: QueryTile::nth visits every query tile of every head once, in the order it promises") {
    for (bool across : {false, true})
      for (const att::Problem& p : order_problems()) {
        const std::string problem = order_name(p);
        CAPTURE(problem);
        CAPTURE(across);
        const long long tq = att::tiles(p.seq_q, 128), heads = 1LL * p.batch * p.heads_q;
        std::vector<int> seen(std::size_t(heads * tq), 0);
        long long prev_bh = -1, prev_tile = -1, prev_end = LLONG_MAX;
        for (long long x = 0; x < heads * tq; ++x) {
          const att::QueryTile t = att::QueryTile::nth(p, x, 128, across);
          const long long bh = t.b * p.heads_q + t.h, tile = t.q0 / 128;
          REQUIRE(t.q0 % 128 == 0);
          REQUIRE((bh >= 0 && bh < heads && tile >= 0 && tile < tq));
          CHECK(t.last == std::min<long long>(t.q0 + 128, p.seq_q) - 1);
          ++seen[std::size_t(bh * tq + tile)];
          const long long end = att::KeyTiles(p, t.q0, t.last, 128).end;
          const long long g = att::QueryTile::group(p);
          if (!p.causal) {
            CHECK((bh == x / tq && tile == x % tq));  // a head's tiles one after another
          } else if (x > 0 && (across || bh / g == prev_bh / g)) {
            CHECK(end <= prev_end);  // across all heads, or within a group of heads, the longest first
            CHECK((tile < prev_tile || (tile == prev_tile && bh > prev_bh)));
            if (across) CHECK((bh == (prev_bh + 1) % heads));  // heads innermost
          }
          prev_bh = bh, prev_tile = tile, prev_end = end;
        }
        CHECK(std::all_of(seen.begin(), seen.end(), [](int n) { return n == 1; }));
      }
  }

#if defined(SMEM_ATTENTION_SM90A)
  TEST_CASE("step 16: a cluster's blocks take tiles 2k and 2k + 1 of one head, every tile once, causal pairs longest "
            "first") {
    for (const att::Problem& p : order_problems())
      for (const int rows : {att::WgmmaShape<128>::kRows, att::WgmmaShape<64>::kRows}) {
        const std::string problem = order_name(p);
        CAPTURE(problem);
        CAPTURE(rows);
        const long long tq = att::tiles(p.seq_q, rows), pairs = (tq + 1) / 2, heads = 1LL * p.batch * p.heads_q;
        std::vector<int> seen(std::size_t(heads * tq), 0);
        long long prev_k = LLONG_MAX;
        for (long long c = 0; c < heads * pairs; ++c) {
          long long bh[2], tile[2];
          for (unsigned r = 0; r < 2; ++r) {
            const att::QueryTile t = att::cluster_tile(p, c, r, rows);
            bh[r] = t.b * p.heads_q + t.h, tile[r] = t.q0 / rows;
            REQUIRE((bh[r] >= 0 && bh[r] < heads && t.q0 % rows == 0));
            if (tile[r] < tq)
              ++seen[std::size_t(bh[r] * tq + tile[r])];
            else  // the second tile of an odd count: past seq_q, it walks no key
              CHECK((r == 1 && tile[r] == tq && att::walked(p, t, 128) == 0));
          }
          CHECK((bh[0] == bh[1] && tile[0] % 2 == 0 && tile[1] == tile[0] + 1));
          if (p.causal) {
            CHECK(tile[0] / 2 <= prev_k);  // the longest pairs first, across all heads
            prev_k = tile[0] / 2;
          } else {
            CHECK((bh[0] == c / pairs && tile[0] / 2 == c % pairs));  // a head's pairs one after another
          }
        }
        CHECK(std::all_of(seen.begin(), seen.end(), [](int n) { return n == 1; }));
      }
  }
#endif

  TEST_CASE("work order: KeyTiles walks the keys a tile's rows see and masks from the first tile past the diagonal") {
    for (const att::Problem& p : order_problems()) {
      const std::string problem = order_name(p);
      CAPTURE(problem);
      for (long long q0 = 0; q0 < p.seq_q; q0 += 128) {
        const long long last = std::min<long long>(q0 + 128, p.seq_q) - 1;
        const att::KeyTiles kt(p, q0, last, 128);
        long long end = 0, masked = att::tiles(p.seq_kv, 128);
        for (long long j = 0; j < att::tiles(p.seq_kv, 128); ++j) {
          // A later row sees every key an earlier one does: some row of the tile sees one of the
          // tile's keys if its last row does, and every row sees all of them if its first row does.
          bool any = false, all = true;
          for (long long k = 128 * j; k < 128 * (j + 1); ++k) {
            any = any || (k < p.seq_kv && att::visible(p, last, k));
            all = all && k < p.seq_kv && att::visible(p, q0, k);
          }
          if (any) end = j + 1;
          if (!all && masked > j) masked = j;
        }
        CAPTURE(q0);
        CHECK(kt.end == end);
        CHECK(kt.masked == masked);
      }
    }
  }

  TEST_CASE("decode split (steps 7 and 13): its blocks take every query row with every key once") {
    for (const att::Problem& p : {packed(2, 8, 2, 4, 2500, 128, 0.1f), packed(1, 8, 1, 3, 1500, 64, 0.1f),
                                  packed(2, 4, 4, 16, 1025, 64, 0.1f), packed(1, 32, 8, 1, 4096, 128, 0.1f),
                                  packed(1, 2, 1, 13, 1, 64, 0.1f)}) {
      const std::string problem = order_name(p);
      CAPTURE(problem);
      const att::DecodeSplit split(p);
      std::vector<int> seen(std::size_t(p.batch * p.heads_q * p.seq_q * p.seq_kv), 0);
      bool heads_ok = true, chunks_ok = true;
      for (long long id = 0; id < p.batch * p.heads_kv * split.row_sets * split.chunks; ++id) {
        const att::DecodeBlock blk(p, split, id);
        chunks_ok = chunks_ok && blk.k_begin == blk.chunk * att::DecodeSplit::kChunk && blk.k_begin < blk.k_end &&
                    blk.k_end - blk.k_begin <= att::DecodeSplit::kChunk && blk.k_end <= p.seq_kv;
        for (long long x = 16 * blk.set; x < 16 * blk.set + 16 && x < split.rows; ++x) {
          const long long h = blk.head(x), i = x % p.seq_q;
          heads_ok = heads_ok && h / (p.heads_q / p.heads_kv) == blk.hk && h < p.heads_q;  // the key head's group
          for (long long k = blk.k_begin; k < blk.k_end; ++k)
            ++seen[std::size_t(((blk.b * p.heads_q + h) * p.seq_q + i) * p.seq_kv + k)];
        }
      }
      CHECK(heads_ok);
      CHECK(chunks_ok);
      CHECK(std::all_of(seen.begin(), seen.end(), [](int n) { return n == 1; }));
    }
  }

#if defined(SMEM_ATTENTION_SM90A)
  TEST_CASE("step 12: its units hold every query tile once, and with the causal mask the same work each") {
    for (const att::Problem& p : order_problems())
      for (const int rows : {att::WgmmaShape<128>::kRows, att::WgmmaShape<64>::kRows}) {
        const std::string problem = order_name(p);
        CAPTURE(problem);
        CAPTURE(rows);
        const att::Units units(p, rows);
        const long long tq = att::tiles(p.seq_q, rows), heads = 1LL * p.batch * p.heads_q;
        REQUIRE(units.count() == heads * ((tq + 1) / 2));
        std::vector<int> seen(std::size_t(heads * tq), 0);
        for (long long u = 0; u < units.count(); ++u) {
          long long work = 0, first_bh = -1;
          for (int i = 0; i < 2; ++i) {
            long long bh = -1;
            const long long t = units.tile(u, i, bh);
            if (t < 0) {
              CHECK((i == 1 && tq % 2 == 1));  // only the middle tile of an odd count stands alone
              continue;
            }
            REQUIRE((bh >= 0 && bh < heads && t < tq));
            if (i == 0) {
              first_bh = bh;
              CHECK(2 * t >= tq - 1);  // the later tile first
            }
            CHECK(bh == first_bh);  // both tiles of one head
            ++seen[std::size_t(bh * tq + t)];
            const att::QueryTile qt(p, bh, t, rows);
            work += att::KeyTiles(p, qt.q0, qt.last, 128).end;
          }
          // rows as keys per tile (head_dim 128): a unit's two tiles see tq + 1 key tiles together
          if (rows == 128 && p.causal && p.seq_q == p.seq_kv && p.seq_q % 256 == 0) CHECK(work == tq + 1);
        }
        CHECK(std::all_of(seen.begin(), seen.end(), [](int n) { return n == 1; }));
      }
  }
#endif

  TEST_CASE("attention bank model: steps 2 and 3's padding word makes the K column read conflict-free") {
    for (int d = 8; d <= 256; d += 8) {
      CAPTURE(d);
      CHECK(all_conflict_free([d](auto&& v) { aa::row_tiles(d, att::RowTiles::ld(d), v); }));
    }
    for (int d : {64, 128, 256}) {  // unpadded rows of d / 2 words, a multiple of 32: one bank
      CAPTURE(d);
      int column = 0;
      aa::row_tiles(d, d, [&](const smem::test::Request& r) {
        if (std::string(r.what).rfind("K pair", 0) == 0) column = std::max(column, r.cost().wavefronts);
      });
      CHECK(column == 32);
    }
  }

  TEST_CASE("attention bank model: the swizzled tiles are conflict-free for every ldmatrix and copy") {
    CHECK(all_conflict_free([](auto&& v) { aa::block<att::MmaShape<64>>(Access::store, v); }));
    CHECK(all_conflict_free([](auto&& v) { aa::block<att::MmaShape<128>>(Access::store, v); }));
    CHECK(all_conflict_free([](auto&& v) { aa::block<att::PipelinedShape<64>>(Access::copy, v); }));
    CHECK(all_conflict_free([](auto&& v) { aa::block<att::PipelinedShape<128>>(Access::copy, v); }));
    CHECK(all_conflict_free([](auto&& v) { aa::decode<64>(v); }));
    CHECK(all_conflict_free([](auto&& v) { aa::decode<128>(v); }));
    CHECK(all_conflict_free([](auto&& v) { aa::block<att::TunedShape<64, 2, 64, 4, 1, 1>>(Access::copy, v); }));
    CHECK(all_conflict_free([](auto&& v) { aa::block<att::TunedShape<128, 2, 32, 4, 0, 1>>(Access::copy, v); }));
    CHECK(all_conflict_free([](auto&& v) { aa::block<att::TunedShape<128, 1, 64, 8, 1, 1>>(Access::copy, v); }));
    // An ldmatrix.x4 reads 4 matrices of 8 rows, 8 per phase: 4 wavefronts when conflict-free.
    CHECK(worst([](auto&& v) { aa::block<att::PipelinedShape<128>>(Access::copy, v); }) == 4);
  }

  // The kernels address their ldmatrix reads through LdsmLanes (a row offset, an XOR and a
  // constant per block): the tile's own offset() at every lane and block, for both maps.
  template <int D, class Map, int kPanelRows = 0, class T = att::SwizzledTile<64, D>>
  int ldsm_lane_mismatches() {
    using L = att::LdsmLanes<D, Map, kPanelRows>;
    int bad = 0;
    for (int l = 0; l < 32; ++l)
      for (int R = 0; R < 64; R += 8)
        for (int C = 0; C < D; C += 16)
          bad += L::bytes(L::row_bytes(l), L::xor16(l), R, C) != 2u * T::offset(R + Map::row(l), C + Map::col(l));
    return bad;
  }
  TEST_CASE("attention: a lane's ldmatrix row offset, XOR and a constant give every block's address") {
    CHECK(ldsm_lane_mismatches<64, att::ColFirst>() == 0);
    CHECK(ldsm_lane_mismatches<128, att::ColFirst>() == 0);
    CHECK(ldsm_lane_mismatches<256, att::ColFirst>() == 0);
    CHECK(ldsm_lane_mismatches<64, att::RowFirst>() == 0);
    CHECK(ldsm_lane_mismatches<128, att::RowFirst>() == 0);
    CHECK(ldsm_lane_mismatches<256, att::RowFirst>() == 0);
  }
#if defined(SMEM_ATTENTION_SM90A)
  TEST_CASE("attention: with panels (step 13) the lanes give the address in TMA's layout (sm90::TmaTile)") {
    using T64 = smem::sm90::TmaTile<att::bf16, 64, 64>;
    using T128 = smem::sm90::TmaTile<att::bf16, 64, 128>;
    CHECK(ldsm_lane_mismatches<64, att::ColFirst, 64, T64>() == 0);
    CHECK(ldsm_lane_mismatches<128, att::ColFirst, 64, T128>() == 0);
    CHECK(ldsm_lane_mismatches<64, att::RowFirst, 64, T64>() == 0);
    CHECK(ldsm_lane_mismatches<128, att::RowFirst, 64, T128>() == 0);
    CHECK(ldsm_lane_mismatches<128, att::RowFirst, 0, T128>() > 0);  // rows of 128 columns: another layout
  }
  TEST_CASE("attention bank model: step 13's reads of TMA's layout are conflict-free") {
    CHECK(all_conflict_free([](auto&& v) { aa::tma_decode<64>(v); }));
    CHECK(all_conflict_free([](auto&& v) { aa::tma_decode<128>(v); }));
  }

  TEST_CASE("step 14: P's e4m3 registers and V^T's key order give P V (wgmma's A and accumulator layouts)") {
    // The layouts as CUTLASS's GMMA traits give them: thread t of the warpgroup holds accumulator i
    // = 4 j + 2 h + e at row 16 (t / 32) + t % 32 / 4 + 8 h, column 8 j + 2 (t % 4) + e; byte y of
    // its A register g (8-bit, k32) is row 16 (t / 32) + t % 32 / 4 + 8 (g % 2), k 4 (t % 4) + y +
    // 16 (g / 2). V^T is built as the kernel's transposing warps build it.
    auto g = smem::test::rng(14);
    std::uniform_int_distribution<int> u(-8, 8);
    std::vector<long long> P(64 * 128), V(128 * 128), Vt(128 * 128, LLONG_MIN), O(64 * 128, 0), want(64 * 128, 0);
    for (auto& x : P) x = u(g);
    for (auto& x : V) x = u(g);
    // V^T (tiles unswizzled here: the swizzle moves whole 16-byte rows of a matrix) as each unit's
    // ldmatrix.x4.trans, byte permutes and stmatrix.x4 build it: ldmatrix gives lane l, of matrix m,
    // the 16-bit elements (rows 2 (l % 4) and + 1, column l / 4), the rows' addresses from lanes
    // 8 m + row; stmatrix writes lane l's register m as bytes 4 (l % 4) on of row l / 4 of matrix m,
    // at the address lane 8 m + l / 4 gives. A permute's selector nibble y picks byte y of {a, b}.
    auto permute = [](const long long (&a)[4], const long long (&b)[4], unsigned sel, int y) {
      const unsigned k = sel >> (4 * y) & 7u;
      return k < 4 ? a[k] : b[k - 4];
    };
    for (int u = 0; u < 32; ++u)
      for (int lane = 0; lane < 32; ++lane) {
        long long v[4][4];  // matrix m, byte y
        for (int m = 0; m < 4; ++m)
          for (int y = 0; y < 4; ++y) {
            const int from = 8 * m + 2 * (lane % 4) + y / 2;
            v[m][y] = V[std::size_t(att::fp8_tr_src_key(u, from) * 128 + att::fp8_tr_src_dim(u, from) + 2 * (lane / 4) + y % 2)];
          }
        for (int m = 0; m < 4; ++m)
          for (int y = 0; y < 4; ++y) {
            const unsigned sel = att::fp8_tr_perm(lane) ^ (m % 2 ? 0x1111u : 0u);
            long long& dst = Vt[std::size_t(att::fp8_tr_dst(u, 8 * m + lane / 4) * 128 + 16 * (u / 4) + 4 * (lane % 4) + y)];
            CHECK(dst == LLONG_MIN);  // every element of V^T written once
            dst = permute(v[m / 2 * 2], v[m / 2 * 2 + 1], sel, y);
          }
      }
    for (int d = 0; d < 128; ++d)
      for (int k = 0; k < 128; ++k) REQUIRE(Vt[std::size_t(d * 128 + k)] == V[std::size_t(att::fp8_key(k) * 128 + d)]);
    for (int t = 0; t < 128; ++t) {
      const int row = 16 * (t / 32) + t % 32 / 4;
      long long sc[64];
      for (int i = 0; i < 64; ++i) sc[i] = P[std::size_t((row + 8 * (i % 4 / 2)) * 128 + 8 * (i / 4) + 2 * (t % 4) + i % 2)];
      for (int kb = 0; kb < 4; ++kb)
        for (int reg = 0; reg < 4; ++reg)
          for (int y = 0; y < 4; ++y) {
            const int m = row + 8 * (reg % 2), k = 32 * kb + 4 * (t % 4) + y + 16 * (reg / 2);
            const long long a = sc[att::fp8_p_index(kb, reg, y)];
            for (int d = 0; d < 128; ++d) O[std::size_t(m * 128 + d)] += a * Vt[std::size_t(d * 128 + k)];
          }
    }
    for (int m = 0; m < 64; ++m)
      for (int n = 0; n < 128; ++n)
        for (int d = 0; d < 128; ++d) want[std::size_t(m * 128 + d)] += P[std::size_t(m * 128 + n)] * V[std::size_t(n * 128 + d)];
    CHECK(O == want);
  }

  TEST_CASE("attention bank model: step 14's V transpose loads and stores are conflict-free") {
    CHECK(all_conflict_free([](auto&& v) { aa::fp8_transpose(v); }));
  }

  TEST_CASE("step 14: bad arguments are refused before any CUDA call") {
    auto p = packed(1, 2, 1, 256, 256, 128, 0.1f);
    const auto* Q = reinterpret_cast<const att::e4m3*>(std::uintptr_t(1) << 20);  // not dereferenced
    const auto* K = Q + (1 << 20);
    const auto* V = K + (1 << 20);
    auto* O = reinterpret_cast<att::bf16*>(std::uintptr_t(1) << 24);
    CHECK((att::fp8_plan(p, Q, K, V, O).kernel != nullptr));  // the valid problem, for contrast
    CHECK(att::fp8(p, att::Fp8Scales{NAN, 1, 1}, Q, K, V, O, nullptr) == cudaErrorInvalidValue);
    CHECK(att::fp8(p, att::Fp8Scales{1, 1, INFINITY}, Q, K, V, O, nullptr) == cudaErrorInvalidValue);
    CHECK(att::fp8(p, {}, Q + 8, K, V, O, nullptr) == cudaErrorInvalidValue);  // 8 bytes off TMA's 16
    CHECK(att::fp8(p, {}, nullptr, K, V, O, nullptr) == cudaErrorInvalidValue);
    auto strided = p;
    strided.k.seq = 136;  // a stride of 136 bytes: not a multiple of 16
    CHECK(att::fp8(strided, {}, Q, K, V, O, nullptr) == cudaErrorInvalidValue);
    auto d64 = packed(1, 2, 1, 256, 256, 64, 0.1f);
    CHECK(att::fp8(d64, {}, Q, K, V, O, nullptr) == cudaErrorInvalidValue);
    auto gqa = packed(1, 3, 2, 256, 256, 128, 0.1f);
    CHECK(att::fp8(gqa, {}, Q, K, V, O, nullptr) == cudaErrorInvalidValue);
  }
#endif

  // SwizzledTile<64, 128> without the swizzle: not a kernel's layout, what the swizzle is for.
  struct RowMajor {
    static constexpr int kD = 128, kElems = 64 * 128;
    static constexpr int offset(int r, int c) { return r * kD + c; }
  };
  TEST_CASE("attention bank model: without the XOR, ldmatrix reads 8 rows in one bank group") {
    CHECK(worst([](auto&& v) { aa::warp_fragments<RowMajor, RowMajor, 64, 1>(0, 0, v); }) == 32);
  }

  TEST_CASE("attention bank model agrees with Nsight Compute's ldmatrix wavefronts (results/*/banks.json)") {
    // From step 4 on every ldmatrix reads a swizzled tile: one fragment's wavefronts per LDSM.
    int compared = 0;
    for (const auto& m : smem::test::load_bank_measurements(SMEM_RESULTS_DIR)) {
      if (m.benchmark.rfind("attention/", 0) != 0 || !m.has("sass_ldsm_instructions") ||
          m["sass_ldsm_instructions"] == 0)
        continue;
      CAPTURE(m.gpu_file);
      CAPTURE(m.benchmark);
      const int want = worst([](auto&& v) { aa::block<att::PipelinedShape<128>>(Access::copy, v); });
      CHECK(m["sass_ldsm_wavefronts_per_instruction"] == doctest::Approx(want).epsilon(0.001));
      ++compared;
    }
    MESSAGE("compared " << compared << " attention kernels with their measurements");
  }
}

#if defined(SMEM_ATTENTION_SM90A)
/// Step 14 on case c: Q, K and V drawn as check_case() draws them, each rounded to e4m3 with the
/// scale max |x| / 448 (its values x / scale, so the scales need not be powers of 2); the float64
/// reference of the e4m3 values with scale * scale_q * scale_k (as the kernel's), its O times
/// scale_v. O within 7 % of max |V| (P rounded to e4m3: 3 bits of mantissa, half an ulp 6.25 %)
/// plus 2 % of |O|; LSE as the bf16 steps' (it sums P before the rounding), plus what FP8 wgmma's
/// sums lose: it adds a k32 slice's products to the fp32 accumulator keeping only about 14 bits
/// below the largest (the DeepSeek-V3 report measured this on Hopper), so a score can be off by up
/// to 32 x 2^-14 of the sum of its products' magnitudes; the slack is that over the row's keys.
/// (Scores that rise along the keys with one dominant column, 26 against products of 0.01, went
/// past the bf16 steps' LSE bound on some draws.)
void check_fp8(const Case& c) {
  CAPTURE(c.batch);
  CAPTURE(c.heads_q);
  CAPTURE(c.seq_q);
  CAPTURE(c.seq_kv);
  CAPTURE(c.causal);
  CAPTURE(int(c.q));
  att::Problem p = problem(c);
  auto g = smem::test::rng(salt(c) ^ 14);
  Inputs in(p, 0);
  fill(in, c.fill, g);
  att::Fp8Scales sc;
  std::vector<att::e4m3> codes[3];
  HostTensor* t[3] = {&in.q, &in.k, &in.v};
  float* scale[3] = {&sc.q, &sc.k, &sc.v};
  for (int i = 0; i < 3; ++i) {
    const double amax = t[i]->max_abs();
    *scale[i] = amax > 0 && std::isfinite(amax) ? float(amax / 448.0) : 1.0f;
    codes[i].resize(t[i]->buf.size());
    for (std::size_t e = 0; e < codes[i].size(); ++e) {
      codes[i][e] = att::e4m3(float(val(t[i]->buf[e])) / *scale[i]);
      t[i]->buf[e] = to_bf16(float(codes[i][e]));  // e4m3 values are bf16 values
    }
  }
  att::Problem pr = p;
  pr.scale = p.scale * sc.q * sc.k;
  Reference ref = reference(pr, in);
  std::vector<double> slack(std::size_t(p.batch * p.heads_q * p.seq_q));
  for (long long b = 0; b < p.batch; ++b)
    for (long long h = 0; h < p.heads_q; ++h)
      for (long long i = 0; i < p.seq_q; ++i) {
        const bf16* q = in.q.at(b, i, h);
        double most = 0;
        for (long long j = 0; j < p.seq_kv; ++j) {
          const bf16* k = in.k.at(b, j, h / (p.heads_q / p.heads_kv));
          double sum = 0;
          for (long long c = 0; c < p.head_dim; ++c) sum += std::fabs(val(q[c]) * val(k[c]));
          most = std::max(most, sum);
        }
        slack[std::size_t((b * p.heads_q + h) * p.seq_q + i)] = std::ldexp(most * std::fabs(double(pr.scale)), -9);
      }
  for (double& o : ref.o) o *= double(sc.v);
  const double atol = 0.07 * in.v.max_abs() * sc.v;
  DeviceBuffer<att::e4m3> dq(codes[0]), dk(codes[1]), dv(codes[2]);
  GuardedBuffer<bf16> O(std::size_t(std::max(extent(p.batch, p.seq_q, p.heads_q, p.head_dim, p.o), 1LL)));
  GuardedBuffer<float> L(std::max<std::size_t>(std::size_t(p.batch) * p.heads_q * p.seq_q, 1));
  O.poison();
  L.poison();
  REQUIRE(att::fp8(p, sc, dq.get(), dk.get(), dv.get(), O.get(), L.get()) == cudaSuccess);
  SMEM_CUDA_CHECK(cudaDeviceSynchronize());
  CHECK(O.guards_intact());
  CHECK(L.guards_intact());
  const auto lse = L.download(0, L.size());
  std::string first;
  const long long bad = count_bad(p, ref, read_output(p, O, 0), lse.data(), atol, first, &slack);
  CHECK_MESSAGE(bad == 0, first);
}
#endif

#if defined(SMEM_ATTENTION_SM90A)
/// Step 15's block of head_dim D, C consumer warpgroups, STAGES stages and tiles of KEYS keys, on
/// step 12's kernel (PERSISTENT) or step 11's, as a launcher; it takes what its plan takes with
/// 16-byte aligned rows.
template <int D, int C, int STAGES, int PERSISTENT, int KEYS>
Launcher hopper_block() {
  constexpr att::HopperBlock b = att::hopper_block_with<D, C, STAGES, PERSISTENT, KEYS>();
  return {"hopper_block_with<" + std::to_string(D) + ", " + std::to_string(C) + ", " + std::to_string(STAGES) + ", " +
              std::to_string(PERSISTENT) + ", " + std::to_string(KEYS) + ">",
          [b](const att::Problem& p, const bf16* Q, const bf16* K, const bf16* V, const bf16* O) {
            return b.plan(p, nullptr, nullptr, nullptr, nullptr).kernel != nullptr && att::rows16(Q, p.q) &&
                   att::rows16(K, p.k) && att::rows16(V, p.v) && att::rows16(O, p.o);
          },
          [](const att::Problem&) { return std::size_t(0); },
          [b](const att::Problem& p, const bf16* Q, const bf16* K, const bf16* V, bf16* O, float* lse, void*,
              std::size_t) { return att::wgmma_launch(b.plan, p, Q, K, V, O, lse, nullptr, b.keys); }};
}
#endif

TEST_SUITE("gpu") {
#if defined(SMEM_ATTENTION_SM90A)
  TEST_CASE("step 14 (FP8): odd lengths, causal rows without keys, GQA, [b, h, s, d], NaN, rising, against float64") {
    using L = Layout;
    for (const Case& c : std::vector<Case>{
             {1, 2, 1, 1, 1, 128, false, L::bshd, L::bshd, L::bshd},
             {2, 2, 2, 7, 129, 128, true, L::bshd, L::bshd, L::bshd},
             {1, 4, 2, 129, 1000, 128, true, L::bshd, L::bshd, L::bshd},
             {1, 2, 2, 1000, 129, 128, true, L::bshd, L::bshd, L::bshd},  // rows that see no key
             {2, 4, 4, 300, 300, 128, false, L::bhsd, L::bhsd, L::bhsd},
             {1, 8, 2, 512, 512, 128, true, L::bshd, L::bshd, L::bshd},
         })
      check_fp8(c);
    Case nan{1, 2, 1, 200, 300, 128, false, L::bshd, L::bshd, L::bshd};
    nan.fill = Fill::nan_row;
    check_fp8(nan);
    for (bool causal : {false, true})  // rising scores: the max moves on each 128-key tile (past the slack of 1)
      check_fp8({1, 2, 1, 129, 1000, 128, causal, L::bshd, L::bshd, L::bshd, 0, Fill::rising, 1.0f});
  }
#endif
  TEST_CASE("attention: every variant, every case, element by element against float64") {
    for (const auto& c : cases()) check_case(c);
  }
#if defined(SMEM_ATTENTION_SM90A)
  // Which block step 15 runs depends on the GPU: these run every GPU's table entries, and blocks
  // of the tuner's candidates off the kit's shapes (two consumers at head_dim 64, three stages, step
  // 12's kernel with either, tiles of 176 keys), on every case and on scores that rise along the keys.
  TEST_CASE("step 15: the Hopper table's blocks, every GPU's, and the tuner's others, against float64") {
    std::vector<Launcher> blocks = {hopper_block<64, 2, 3, 0, 128>(), hopper_block<64, 2, 2, 1, 128>(),
                                    hopper_block<64, 3, 3, 1, 128>(), hopper_block<128, 2, 3, 0, 128>(),
                                    hopper_block<128, 2, 2, 0, 176>()};
#define SMEM_ATTENTION_HOPPER_CASE(CC, SMS, SMEM, REGS, HD, CAUSAL, C, STAGES, PERSISTENT, KEYS) \
  blocks.push_back(hopper_block<HD, C, STAGES, PERSISTENT, KEYS>());
    SMEM_ATTENTION_HOPPER_TABLE(SMEM_ATTENTION_HOPPER_CASE)
#undef SMEM_ATTENTION_HOPPER_CASE
    for (const auto& c : cases()) check_case(c, blocks);
    for (bool causal : {false, true})
      for (int d : {64, 128})
        check_case({1, 2, 1, 129, 1000, d, causal, Layout::bshd, Layout::bshd, Layout::bshd, 0, Fill::rising, 1.0f},
                   blocks);
  }
#endif

  // Integer Q and K with scale 128: every score is a multiple of 128 computed exactly in fp32, of
  // magnitude up to 2.6e5, and the max subtraction must keep exp finite; O is the mean of the V
  // rows with the row's largest score.
  TEST_CASE("attention: scores of magnitude 1e4 give a finite O and LSE") {
    for (bool causal : {false, true}) {
      check_case({1, 4, 2, 129, 257, 64, causal, Layout::bshd, Layout::bshd, Layout::bshd, 0, Fill::integer, 128.0f});
      check_case({1, 2, 1, 70, 33, 128, causal, Layout::bshd, Layout::bshd, Layout::bshd, 0, Fill::integer, -128.0f});
    }
  }

  // The tensor-core steps move a row's max only when a tile passes it by more than kMaxSlack:
  // here it is passed by less on most tiles (P up to 2^8 before the max moves) and, with 64-key
  // tiles, by more at the first jump; the scores of magnitude 1e4 above move it by far more. The
  // Hopper steps' softmax without the max fails its sum check on the tiles with a jump (on the
  // scores of 1e4 its exponentials overflow), so both its paths run: P from the running max, and S
  // again with the max first.
  TEST_CASE("attention: scores that rise along the keys, the max left behind and moved, against float64") {
    for (bool causal : {false, true}) {
      check_case({1, 2, 1, 129, 1000, 128, causal, Layout::bshd, Layout::bshd, Layout::bshd, 0, Fill::rising, 1.0f});
      check_case({2, 4, 2, 300, 700, 64, causal, Layout::bshd, Layout::bshd, Layout::bshd, 0, Fill::rising, 1.0f});
    }
  }

  TEST_CASE("attention: all-equal scores give the mean of the visible V rows") {
    for (bool causal : {false, true}) {
      check_case({2, 2, 1, 129, 300, 64, causal, Layout::bshd, Layout::bshd, Layout::bshd, 0, Fill::equal_keys});
      check_case({1, 2, 2, 40, 77, 128, causal, Layout::bshd, Layout::bshd, Layout::bshd, 0, Fill::random, 0.0f});
    }
  }

  TEST_CASE("attention: a NaN in one query row reaches that row only") {
    for (bool causal : {false, true}) {
      check_case({2, 8, 2, 129, 200, 64, causal, Layout::bshd, Layout::bshd, Layout::bshd, 0, Fill::nan_row});
      check_case({1, 4, 1, 33, 40, 256, causal, Layout::bhsd, Layout::bhsd, Layout::bhsd, 0, Fill::nan_row});
    }
  }

  TEST_CASE("attention: seq_kv == 0 with null K and V gives O = 0 and LSE = -inf") {
    for (bool causal : {false, true}) {
      check_case({2, 4, 2, 33, 0, 64, causal});
      check_case({1, 2, 1, 7, 0, 256, causal, Layout::padded, Layout::bshd, Layout::padded, 1});
      check_case({1, 2, 1, 7, 0, 8, causal, Layout::bshd, Layout::bshd, Layout::bshd, 0, Fill::random, 1.0f, false});
    }
  }

  TEST_CASE("attention: lse == nullptr is accepted and O is the same") {
    check_case({1, 4, 2, 129, 129, 64, true, Layout::bshd, Layout::bshd, Layout::bshd, 0, Fill::random, kDefaultScale,
                false});
    check_case({2, 2, 2, 7, 33, 72, false, Layout::bhsd, Layout::bhsd, Layout::padded, 0, Fill::random, kDefaultScale,
                false});
  }

  TEST_CASE("attention: a problem without query rows returns cudaSuccess (or is refused as planned), writes nothing") {
    const att::Problem p0 = base();
    DeviceBuffer<bf16> q(std::size_t(q_elems(p0))), k(std::size_t(kv_elems(p0))), v(std::size_t(kv_elems(p0)));
    DeviceBuffer<bf16> o(std::size_t(q_elems(p0)));
    DeviceBuffer<float> lse(std::size_t(lse_elems(p0)));
    for (auto var : att::kAllVariants) {
      const std::string variant = att::name(var);
      CAPTURE(variant);
      for (const auto& c : empty_cases()) {
        CAPTURE(c.what);
        o.poison();
        lse.poison();
        const cudaError_t e = att::run(var, c.p, q.get(), k.get(), v.get(), o.get(), lse.get(), nullptr, 0);
        const bool planned = takes(var, c.p, q.get(), k.get(), v.get(), o.get());
        CHECK((e == cudaSuccess || (e == cudaErrorInvalidValue && !planned)));
        SMEM_CUDA_CHECK(cudaDeviceSynchronize());
        CHECK(cudaGetLastError() == cudaSuccess);
        const auto ho = o.download();
        CHECK(std::all_of(ho.begin(), ho.end(), poisoned));
        CHECK(all_nan(lse.download()));
      }
    }
  }
}

TEST_SUITE("large") {
  TEST_CASE("attention: batches 2^31 elements apart (64-bit offsets), every variant against float64") {
    // Q, K, V and O with batch 1 starting 2^31 + 8 elements after batch 0: 4 GiB of bf16 between them,
    // NaN in the inputs' buffers and poison in O's, so an offset computed in 32 bits reads NaN or
    // writes outside the tensor and the case fails. About 17 GiB of device memory per case.
    for (bool causal : {false, true})
      check_case({2, 4, 2, 129, 300, 128, causal, Layout::far, Layout::far, Layout::far});
    check_case({2, 32, 8, 1, 4100, 128, false, Layout::far, Layout::far, Layout::far});  // decode's split-KV
  }
}

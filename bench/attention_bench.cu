// Attention benchmarks: every variant and the baselines in one process, forward pass, bf16 tensors
// [batch, seq, heads, head_dim] packed, scale 1/sqrt(head_dim), inputs uniform in [-1, 1].
// Names: attention/<variant>/hd<d>/<full|causal>/<B>x<Hq>x<Hkv>x<Nq>x<Nkv>, and
// attention/gemm_roof/<M>x<N>x<K>. TFLOP/s counts 4 B Hq Nq Nkv d flops, half of that with the
// causal mask (the FlashAttention papers' convention); the decode shapes (Nq <= 16) also count GB/s:
// K and V read once, Q read and O written. The baselines: `gemm_roof`, cublasGemmEx in bf16
// (CUDA_R_16BF, CUBLAS_COMPUTE_32F) at 4096^3 and 8192^3, the roof each step's TFLOP/s is measured
// against; `unfused`, cuBLAS batched GEMMs around a softmax kernel, at every shape whose fp32 scores
// take at most 16 GiB, checked once against step `online` on small problems before it is timed;
// `copy`, for the decode shapes, a device copy of K and V (its GB/s counts what it reads and writes).
// The L2 is flushed before every timed launch; every repetition but the decode shapes' is timed
// after 0.1 s of untimed runs, as the GEMMs are, so the steps and the roof run at the same clocks.
// A step's workspace is allocated once per benchmark, outside the timing (a step whose workspace
// does not fit in free memory is skipped); its counters record its plan's kernel attributes.
#include <benchmark/benchmark.h>
#include <cublas_v2.h>

#include <attention/attention.cuh>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "attention_reference.hpp"
#include "bench_util.hpp"
#include "cublas_handle.hpp"
#include "device_buffer.hpp"
#include "random.hpp"

namespace att = smem::attention;
using smem::test::DeviceBuffer;
using bf16 = att::bf16;

namespace {

/// One benchmarked problem: head_dim, mask and sizes.
struct Shape {
  int d;
  bool causal;
  int batch, heads_q, heads_kv, seq_q, seq_kv;
};
// Full and causal of the same sizes side by side: they share their tensors (tensors()).
constexpr Shape kShapes[] = {
    // hd128, B N = 16384 and Hq d = 2048 (the FlashAttention-3 paper's shapes)
    {128, false, 16, 16, 16, 1024, 1024}, {128, true, 16, 16, 16, 1024, 1024},
    {128, false, 8, 16, 16, 2048, 2048},  {128, true, 8, 16, 16, 2048, 2048},
    {128, false, 4, 16, 16, 4096, 4096},  {128, true, 4, 16, 16, 4096, 4096},
    {128, false, 2, 16, 16, 8192, 8192},  {128, true, 2, 16, 16, 8192, 8192},
    {128, false, 1, 16, 16, 16384, 16384}, {128, true, 1, 16, 16, 16384, 16384},
    // hd64
    {64, false, 4, 32, 32, 4096, 4096}, {64, false, 2, 32, 32, 8192, 8192},
    // grouped-query attention
    {128, false, 4, 32, 8, 4096, 4096}, {128, true, 4, 32, 8, 4096, 4096},
    // decode
    {128, false, 16, 32, 8, 1, 32768}, {128, false, 16, 32, 8, 1, 131072}, {128, false, 64, 32, 8, 1, 8192}};

/// The problem of a shape: packed [batch, seq, heads, head_dim] tensors, scale 1/sqrt(d).
att::Problem problem(const Shape& s) {
  att::Problem p;
  p.batch = s.batch, p.heads_q = s.heads_q, p.heads_kv = s.heads_kv, p.seq_q = s.seq_q, p.seq_kv = s.seq_kv;
  p.head_dim = s.d;
  p.scale = 1.0f / std::sqrt(float(s.d));
  p.causal = s.causal;
  p.q = p.o = att::bshd(s.seq_q, s.heads_q, s.d);
  p.k = p.v = att::bshd(s.seq_kv, s.heads_kv, s.d);
  return p;
}

/// Few query rows against a long KV sequence: a bandwidth problem (GB/s counted, no warm-up).
bool decode(const Shape& s) { return s.seq_q <= 16; }

double flops(const Shape& s) {
  return 4.0 * s.batch * s.heads_q * s.seq_q * double(s.seq_kv) * s.d * (s.causal ? 0.5 : 1.0);
}

/// Elements of Q (and O) and of K (and V).
std::size_t q_elems(const Shape& s) { return std::size_t(s.batch) * s.seq_q * s.heads_q * s.d; }
std::size_t kv_elems(const Shape& s) { return std::size_t(s.batch) * s.seq_kv * s.heads_kv * s.d; }

/// The bytes a decode must move at least: K and V read once, Q read, O written.
double bytes(const Shape& s) { return 2.0 * sizeof(bf16) * double(q_elems(s) + kv_elems(s)); }

std::string shape_name(const Shape& s) {
  return "hd" + std::to_string(s.d) + (s.causal ? "/causal/" : "/full/") + std::to_string(s.batch) + "x" +
         std::to_string(s.heads_q) + "x" + std::to_string(s.heads_kv) + "x" + std::to_string(s.seq_q) + "x" +
         std::to_string(s.seq_kv);
}

/// Fewer iterations for the big problems and for the slow first steps (from 1e11 FLOP on, a call of
/// steps 1 to 3 runs long enough that one or two time it well; the repetitions give the median).
int iterations(double work, bool slow) {
  if (slow) return work > 1e12 ? 1 : work > 1e11 ? 2 : 5;
  return work > 1e12 ? 10 : work > 1e11 ? 20 : 50;
}

/// x[i] uniform in [-1, 1) from a hash of i and `salt` (the largest tensors, 4 GiB, are drawn on
/// the device in milliseconds).
__global__ void fill_uniform(bf16* x, long long n, unsigned long long salt) {
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x) {
    unsigned long long h = (unsigned long long)i + salt * 0x9E3779B97F4A7C15ull;  // splitmix64's finalizer
    h = (h ^ (h >> 30)) * 0xBF58476D1CE4E5B9ull;
    h = (h ^ (h >> 27)) * 0x94D049BB133111EBull;
    h ^= h >> 31;
    x[i] = __float2bfloat16_rn(float(h >> 40) * (2.0f / 16777216.0f) - 1.0f);
  }
}

/// n random bf16 values in [-1, 1): the run's seed (SMEM_SEED reproduces it) mixed with `salt`.
DeviceBuffer<bf16> random_bf16(std::size_t n, std::uint64_t salt) {
  DeviceBuffer<bf16> x(n);
  if (n) {
    fill_uniform<<<4096, 256>>>(x.get(), (long long)n, smem::test::run_seed() ^ (salt * 0xD1B54A32D192ED03ull));
    SMEM_CUDA_CHECK(cudaGetLastError());
    SMEM_CUDA_CHECK(cudaDeviceSynchronize());
  }
  return x;
}

/// The tensors of a problem: Q, K and V random, O and the LSE written by the benchmarks.
struct Tensors {
  DeviceBuffer<bf16> Q, K, V, O;
  DeviceBuffer<float> lse;
};
Tensors make_tensors(const Shape& s) {
  Tensors t;
  t.Q = random_bf16(q_elems(s), 1);
  t.K = random_bf16(kv_elems(s), 2);
  t.V = random_bf16(kv_elems(s), 3);
  t.O = DeviceBuffer<bf16>(q_elems(s));
  t.lse = DeviceBuffer<float>(std::size_t(s.batch) * s.heads_q * s.seq_q);
  return t;
}

/// The tensors of a shape's sizes (the mask does not change them), made on first use. Only the
/// last sizes' are kept: the benchmarks run shape by shape, and a decode shape's K and V take
/// 4 GiB each, so the previous tensors are freed before the next are made.
Tensors& tensors(const Shape& s) {
  static Tensors kept;
  static std::array<int, 6> key = {};
  const std::array<int, 6> k = {s.d, s.batch, s.heads_q, s.heads_kv, s.seq_q, s.seq_kv};
  if (k != key) {
    kept = Tensors{};
    kept = make_tensors(s);
    key = k;
  }
  return kept;
}

cudaError_t cuda_status(cublasStatus_t st) { return st == CUBLAS_STATUS_SUCCESS ? cudaSuccess : cudaErrorUnknown; }

/// Room left beside what a benchmark allocates (the L2 flush buffer, cuBLAS' workspace).
constexpr std::size_t kSpareBytes = std::size_t(1) << 30;

/// Whether `need` more bytes fit in free device memory with kSpareBytes to spare; if not, the
/// benchmark is skipped with the reason.
bool fits(benchmark::State& state, const std::string& what, std::size_t need) {
  std::size_t free = 0, total = 0;
  SMEM_CUDA_CHECK(cudaMemGetInfo(&free, &total));
  if (need + kSpareBytes <= free) return true;
  state.SkipWithError((what + " needs " + std::to_string(need >> 20) + " MiB, " + std::to_string(free >> 20) +
                       " MiB of device memory is free").c_str());
  return false;
}

/// W consecutive scores from s (16-byte aligned for W = 4).
template <int W>
__device__ __forceinline__ void load_scores(const float* s, float (&x)[W]) {
  if constexpr (W == 4) {
    const float4 v = *reinterpret_cast<const float4*>(s);
    x[0] = v.x, x[1] = v.y, x[2] = v.z, x[3] = v.w;
  } else {
    x[0] = *s;
  }
}

/// The unfused path's softmax: each row of the fp32 scores S ([batch, heads_q, seq_q, seq_kv],
/// packed) to P in bf16, the causal mask applied (a key the row does not see gets P = 0; a row
/// that sees none is all zeros). One warp per row, W consecutive elements per lane and access: one
/// pass for the row's max and sum (each lane's sum rescaled when its max grows), one for P.
template <int W>
__global__ void __launch_bounds__(256) unfused_softmax_kernel(att::Problem p, const float* S, bf16* P) {
  const long long rows = 1LL * p.batch * p.heads_q * p.seq_q;
  const int lane = threadIdx.x % 32;
  for (long long r = (blockIdx.x * 256LL + threadIdx.x) / 32; r < rows; r += gridDim.x * 8LL) {
    const long long i = r % p.seq_q, last = p.causal ? i + p.seq_kv - p.seq_q + 1 : p.seq_kv;
    const long long seen = last < 0 ? 0 : last < p.seq_kv ? last : p.seq_kv;  // keys [0, seen) are visible
    const float* s = S + r * p.seq_kv;
    bf16* out = P + r * p.seq_kv;
    float m = -INFINITY, l = 0.0f, x[W] = {};
    for (long long j = lane * W; j < seen; j += 32 * W) {
      load_scores<W>(s + j, x);
      float m_new = m;
#pragma unroll
      for (int k = 0; k < W; ++k) m_new = j + k < seen ? fmaxf(m_new, x[k]) : m_new;
      l *= expf(m - m_new);
#pragma unroll
      for (int k = 0; k < W; ++k) l += j + k < seen ? expf(x[k] - m_new) : 0.0f;
      m = m_new;
    }
    const float row_max = att::warp_max(m), base = row_max == -INFINITY ? 0.0f : row_max;
    const float sum = att::warp_sum(m == -INFINITY ? 0.0f : l * expf(m - base));
    const float inv = sum > 0.0f ? 1.0f / sum : 0.0f;
    for (long long j = lane * W; j < p.seq_kv; j += 32 * W) {
      if (j < seen) load_scores<W>(s + j, x);
#pragma unroll
      for (int k = 0; k < W; ++k) x[k] = j + k < seen ? expf(x[k] - base) * inv : 0.0f;
      if constexpr (W == 4) {
        auto* o2 = reinterpret_cast<__nv_bfloat162*>(out + j);
        o2[0] = __floats2bfloat162_rn(x[0], x[1]);
        o2[1] = __floats2bfloat162_rn(x[2], x[3]);
      } else {
        out[j] = __float2bfloat16_rn(x[0]);
      }
    }
  }
}

/// What a user without a fused kernel runs: S = scale Q K^T per (batch, query head) by one cuBLAS
/// batched GEMM (bf16 in, fp32 S out, fp32 compute), unfused_softmax_kernel to bf16 P, then O = P V
/// by a second batched GEMM (bf16 out). The GEMMs take one matrix pointer per (batch, query head),
/// so a query head meets its own K and V head under grouped-query attention and no tensor is
/// copied; the pointers are made once, with the buffers.
class Unfused {
 public:
  /// Device bytes for p: S, P and the pointers.
  static std::size_t bytes(const att::Problem& p) {
    const std::size_t heads = std::size_t(p.batch) * p.heads_q;
    return heads * p.seq_q * p.seq_kv * (sizeof(float) + sizeof(bf16)) + 6 * heads * sizeof(void*);
  }
  static std::size_t score_bytes(const att::Problem& p) {
    return std::size_t(p.batch) * p.heads_q * p.seq_q * p.seq_kv * sizeof(float);
  }

  Unfused(const att::Problem& p, const bf16* Q, const bf16* K, const bf16* V, bf16* O)
      : p_(p), S_(score_bytes(p) / sizeof(float)), P_(S_.size()) {
    const long long heads = 1LL * p.batch * p.heads_q, scores = 1LL * p.seq_q * p.seq_kv;
    const int group = p.heads_q / p.heads_kv;
    std::vector<void*> ptrs(6 * heads);
    for (long long e = 0; e < heads; ++e) {
      const long long b = e / p.heads_q, h = e % p.heads_q;
      ptrs[e] = const_cast<bf16*>(K + att::at(p.k, b, 0, h / group));
      ptrs[heads + e] = const_cast<bf16*>(Q + att::at(p.q, b, 0, h));
      ptrs[2 * heads + e] = S_.get() + e * scores;
      ptrs[3 * heads + e] = const_cast<bf16*>(V + att::at(p.v, b, 0, h / group));
      ptrs[4 * heads + e] = P_.get() + e * scores;
      ptrs[5 * heads + e] = O + att::at(p.o, b, 0, h);
    }
    ptrs_ = DeviceBuffer<void*>(ptrs);
  }

  cudaError_t operator()() const {
    const att::Problem& p = p_;
    const int heads = p.batch * p.heads_q, d = p.head_dim;
    using Ptrs = void* const*;
    const Ptrs k = ptrs_.get(), q = k + heads, s = q + heads, v = s + heads, pr = v + heads, o = pr + heads;
    const float one = 1.0f, zero = 0.0f;
    cublasHandle_t h = smem::test::cublas_handle();
    // Column-major, per head: S^T (seq_kv x seq_q) = K (op T of d x seq_kv) Q^T (d x seq_q).
    if (cudaError_t e = cuda_status(cublasGemmBatchedEx(
            h, CUBLAS_OP_T, CUBLAS_OP_N, p.seq_kv, p.seq_q, d, &p.scale, k, CUDA_R_16BF, int(p.k.seq), q, CUDA_R_16BF,
            int(p.q.seq), &zero, s, CUDA_R_32F, p.seq_kv, heads, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
        e != cudaSuccess)
      return e;
    const long long rows = 1LL * heads * p.seq_q;
    const unsigned blocks = unsigned(std::min<long long>(att::tiles(rows, 8), 65536));
    if (p.seq_kv % 4 == 0)
      unfused_softmax_kernel<4><<<blocks, 256>>>(p, S_.get(), P_.get());
    else
      unfused_softmax_kernel<1><<<blocks, 256>>>(p, S_.get(), P_.get());
    if (cudaError_t e = cudaGetLastError(); e != cudaSuccess) return e;
    // O^T (d x seq_q) = V^T (d x seq_kv) P^T (seq_kv x seq_q).
    return cuda_status(cublasGemmBatchedEx(h, CUBLAS_OP_N, CUBLAS_OP_N, d, p.seq_q, p.seq_kv, &one, v, CUDA_R_16BF,
                                           int(p.v.seq), pr, CUDA_R_16BF, p.seq_kv, &zero, o, CUDA_R_16BF,
                                           int(p.o.seq), heads, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
  }

 private:
  att::Problem p_;
  DeviceBuffer<float> S_;
  DeviceBuffer<bf16> P_;
  DeviceBuffer<void*> ptrs_;
};

/// Steps 1 to 3 run only at shapes of at most this much work (the hd128 N = 4096 shapes').
constexpr double kScalarMaxFlops = 4.0 * 4 * 16 * 4096 * 4096.0 * 128;

/// Registered only where the fp32 scores take at most this many bytes.
constexpr std::size_t kUnfusedMaxScoreBytes = std::size_t(16) << 30;

/// Empty if `unfused` gives step `online`'s O within bf16 tolerance on small problems (grouped
/// heads, both masks, rows that see no key, seq_kv with and without the softmax's 4-wide path),
/// else what differs.
std::string unfused_mismatch() {
  constexpr Shape kChecks[] = {
      {64, false, 2, 4, 2, 37, 133}, {128, true, 1, 4, 1, 100, 136}, {128, true, 2, 2, 2, 77, 52}};
  for (const Shape& s : kChecks) {
    const att::Problem p = problem(s);
    Tensors t = make_tensors(s);
    DeviceBuffer<bf16> O(t.O.size());
    SMEM_CUDA_CHECK(att::run(att::Variant::online, p, t.Q.get(), t.K.get(), t.V.get(), t.O.get(), nullptr, nullptr, 0));
    SMEM_CUDA_CHECK(Unfused(p, t.Q.get(), t.K.get(), t.V.get(), O.get())());
    SMEM_CUDA_CHECK(cudaDeviceSynchronize());
    const std::vector<bf16> want = t.O.download(), got = O.download();
    for (std::size_t i = 0; i < want.size(); ++i) {
      const float w = __bfloat162float(want[i]), g = __bfloat162float(got[i]);
      if (!(std::fabs(g - w) <= 4e-3f + 2e-2f * std::fabs(w)))
        return "unfused differs from online at " + shape_name(s) + ", element " + std::to_string(i) + ": " +
               std::to_string(g) + " against " + std::to_string(w);
    }
  }
  return {};
}

/// Times `launch()` at a shape and sets TFLOP/s (and GB/s for decode).
template <class Launch>
void measure(benchmark::State& state, const Shape& s, Launch&& launch) {
  const double secs =
      smem::bench::time_kernel(state, launch, true, nullptr, decode(s) ? 0.0 : smem::bench::kGemmWarmSeconds);
  smem::bench::set_rate(state, "TFLOP/s", flops(s), secs, 1e-12);
  if (decode(s)) smem::bench::set_rate(state, "GB/s", bytes(s), secs, 1e-9);
}

/// Registers attention/<variant>/<shape>, which runs `body(state, tensors(s))`.
template <class Body>
void register_one(const std::string& variant, const Shape& s, bool slow, Body body) {
  const std::string name = "attention/" + variant + "/" + shape_name(s);
  benchmark::RegisterBenchmark(name.c_str(), [=](benchmark::State& state) { body(state, tensors(s)); })
      ->UseManualTime()
      ->Iterations(iterations(flops(s), slow))
      ->Unit(benchmark::kMillisecond);
}

void register_step(att::Variant v, const Shape& s) {
  const bool slow = v == att::Variant::naive || v == att::Variant::two_pass || v == att::Variant::online;
  register_one(att::name(v), s, slow, [=](benchmark::State& state, Tensors& t) {
    const att::Problem p = problem(s);
    const auto plan = att::plan(v, p);
    if (plan.kernel == nullptr) {
      state.SkipWithError((std::string(att::name(v)) + " does not run this problem (its plan is null)").c_str());
      return;
    }
    const std::size_t need = att::workspace(v, p);
    if (need && !fits(state, std::string(att::name(v)) + "'s workspace", need)) return;
    DeviceBuffer<unsigned char> ws(need);
    measure(state, s, [&] {
      return att::run(v, p, t.Q.get(), t.K.get(), t.V.get(), t.O.get(), t.lse.get(), ws.get(), need);
    });
    smem::bench::set_kernel_counters(state, plan);
  });
}

// With SMEM_TUNE=1 (`./cookbook tune attention`): step 6's kernel with every candidate shape of step
// 8's table, named tune_<row tiles per warp>x<keys per tile>x<warps>x<Q in registers>x<blocks per SM>.
template <int D, int MT, int KEYS, int WARPS, int QREGS, int MINB>
void register_candidate(const Shape& s) {
  if (s.d != D || decode(s)) return;
  const std::string v = "tune_" + std::to_string(MT) + "x" + std::to_string(KEYS) + "x" + std::to_string(WARPS) +
                        "x" + std::to_string(QREGS) + "x" + std::to_string(MINB);
  register_one(v, s, false, [=](benchmark::State& state, Tensors& t) {
    const att::Problem p = problem(s);
    const auto plan = att::tuned_plan_with<att::TunedShape<D, MT, KEYS, WARPS, QREGS, MINB>>(p, t.Q.get(), t.K.get(),
                                                                                         t.V.get(), t.O.get());
    measure(state, s, [&] { return att::launch(plan, nullptr, p, t.Q.get(), t.K.get(), t.V.get(), t.O.get(),
                                               t.lse.get()); });
    smem::bench::set_kernel_counters(state, plan);
  });
}
void register_candidates(const Shape& s) {
  register_candidate<64, 1, 64, 4, 1, 1>(s);
  register_candidate<64, 1, 64, 4, 1, 3>(s);
  register_candidate<64, 2, 64, 4, 1, 1>(s);
  register_candidate<64, 2, 32, 4, 1, 1>(s);
  register_candidate<64, 1, 64, 8, 1, 1>(s);
  register_candidate<64, 2, 64, 4, 0, 1>(s);
  register_candidate<128, 1, 64, 4, 1, 1>(s);
  register_candidate<128, 1, 32, 4, 1, 3>(s);
  register_candidate<128, 2, 64, 4, 0, 1>(s);
  register_candidate<128, 2, 32, 4, 0, 1>(s);
  register_candidate<128, 2, 32, 4, 1, 1>(s);
  register_candidate<128, 1, 64, 8, 1, 1>(s);
  register_candidate<128, 1, 128, 4, 1, 1>(s);
}

#if defined(SMEM_ATTENTION_SM90A)
// With SMEM_TUNE=1: step 15's candidate blocks (step 11's or 12's kernel), named
// tune_hopper_<consumer warpgroups>_<stages>_<persistent>_<keys>.
template <int D, int C, int STAGES, int PERSISTENT, int KEYS>
void register_hopper_candidate(const Shape& s) {
  if (s.d != D || decode(s)) return;
  const std::string v = "tune_hopper_" + std::to_string(C) + "_" + std::to_string(STAGES) + "_" +
                        std::to_string(PERSISTENT) + "_" + std::to_string(KEYS);
  register_one(v, s, false, [=](benchmark::State& state, Tensors& t) {
    const att::Problem p = problem(s);
    constexpr att::HopperBlock b = att::hopper_block_with<D, C, STAGES, PERSISTENT, KEYS>();
    measure(state, s, [&] {
      return att::wgmma_launch(b.plan, p, t.Q.get(), t.K.get(), t.V.get(), t.O.get(), t.lse.get(), nullptr, b.keys);
    });
    smem::bench::set_kernel_counters(state, b.plan(p, t.Q.get(), t.K.get(), t.V.get(), t.O.get()));
  });
}
void register_hopper_candidates(const Shape& s) {
  register_hopper_candidate<64, 2, 2, 0, 128>(s);
  register_hopper_candidate<64, 2, 3, 0, 128>(s);
  register_hopper_candidate<64, 2, 2, 1, 128>(s);
  register_hopper_candidate<64, 3, 2, 0, 128>(s);
  register_hopper_candidate<64, 3, 3, 0, 128>(s);
  register_hopper_candidate<64, 3, 4, 0, 128>(s);
  register_hopper_candidate<64, 3, 2, 1, 128>(s);
  register_hopper_candidate<64, 3, 3, 1, 128>(s);
  register_hopper_candidate<128, 2, 2, 0, 128>(s);
  register_hopper_candidate<128, 2, 3, 0, 128>(s);
  register_hopper_candidate<128, 2, 2, 1, 128>(s);
  register_hopper_candidate<128, 2, 2, 0, 176>(s);
}
#endif

void register_unfused(const Shape& s) {
  register_one("unfused", s, false, [=](benchmark::State& state, Tensors& t) {
    static const std::string mismatch = unfused_mismatch();
    if (!mismatch.empty()) {
      state.SkipWithError(mismatch.c_str());
      return;
    }
    const att::Problem p = problem(s);
    if (!fits(state, "unfused's scores", Unfused::bytes(p))) return;
    const Unfused unfused(p, t.Q.get(), t.K.get(), t.V.get(), t.O.get());
    measure(state, s, unfused);
  });
}

/// K's and V's bytes copied device to device: what a decode cannot beat, since it reads them.
void register_copy(const Shape& s) {
  register_one("copy", s, false, [=](benchmark::State& state, Tensors& t) {
    if (!fits(state, "copy's destination", t.K.bytes() + t.V.bytes())) return;
    DeviceBuffer<bf16> dst(t.K.size() + t.V.size());
    const auto copy = [&] {
      if (cudaError_t e = cudaMemcpyAsync(dst.get(), t.K.get(), t.K.bytes(), cudaMemcpyDeviceToDevice);
          e != cudaSuccess)
        return e;
      return cudaMemcpyAsync(dst.get() + t.K.size(), t.V.get(), t.V.bytes(), cudaMemcpyDeviceToDevice);
    };
    const double secs = smem::bench::time_kernel(state, copy, true);
    smem::bench::set_rate(state, "GB/s", 2.0 * double(t.K.bytes() + t.V.bytes()), secs, 1e-9);
  });
}

struct GemmInputs {
  DeviceBuffer<bf16> A, B, D;
};
/// cuBLAS' bf16 GEMM D = A B at n x n x n (as tc_gemm's baseline): the tensor-core roof.
void register_gemm_roof(int n) {
  const std::string dims = std::to_string(n), name = "attention/gemm_roof/" + dims + "x" + dims + "x" + dims;
  const double work = 2.0 * n * n * double(n);
  benchmark::RegisterBenchmark(name.c_str(), [=](benchmark::State& state) {
    GemmInputs& in = smem::bench::kept_inputs<GemmInputs>(n, n, n, [&](GemmInputs& g) {
      g.A = random_bf16(std::size_t(n) * n, 11);
      g.B = random_bf16(std::size_t(n) * n, 12);
      g.D = DeviceBuffer<bf16>(std::size_t(n) * n);
    });
    const float one = 1.0f, zero = 0.0f;
    // Row-major D = A B is, column-major, D^T = B^T A^T.
    const auto gemm = [&] {
      return cuda_status(cublasGemmEx(smem::test::cublas_handle(), CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, in.B.get(),
                                      CUDA_R_16BF, n, in.A.get(), CUDA_R_16BF, n, &zero, in.D.get(), CUDA_R_16BF, n,
                                      CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
    };
    const double secs = smem::bench::time_kernel(state, gemm, true, nullptr, smem::bench::kGemmWarmSeconds);
    smem::bench::set_rate(state, "TFLOP/s", work, secs, 1e-12);
  })->UseManualTime()->Iterations(iterations(work, false))->Unit(benchmark::kMillisecond);
}

#if defined(SMEM_ATTENTION_SM90A)
/// y = x * inv_scale rounded to e4m3 (saturated), element by element.
__global__ void to_e4m3(const bf16* x, att::e4m3* y, long long n, float inv_scale) {
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x)
    y[i] = att::e4m3(__bfloat162float(x[i]) * inv_scale);
}

/// The error of O (packed [b, s, h, d]) against float64 attention of the bf16 Q, K and V, on 64
/// query rows spread over the batches, heads and rows: sqrt(sum (O - ref)^2 / sum ref^2).
double sampled_error(const att::Problem& p, const Tensors& t, const std::vector<bf16>& O) {
  const std::vector<bf16> Q = t.Q.download(), K = t.K.download(), V = t.V.download();
  double err = 0, norm = 0;
  std::vector<double> sc(static_cast<std::size_t>(p.seq_kv)), o(static_cast<std::size_t>(p.head_dim));
  for (int r = 0; r < 64; ++r) {
    const long long b = r % p.batch, h = r % p.heads_q, i = (p.seq_q - 1LL) * r / 63;
    if (smem::test::attention_reference_row(p, Q.data(), K.data(), V.data(), b, i, h, o.data(), sc) == -INFINITY)
      continue;  // no key
    const bf16* got = &O[std::size_t(att::at(p.o, b, i, h))];
    for (long long c = 0; c < p.head_dim; ++c) {
      const double e = double(__bfloat162float(got[c])) - o[std::size_t(c)];
      err += e * e, norm += o[std::size_t(c)] * o[std::size_t(c)];
    }
  }
  return norm > 0 ? std::sqrt(err / norm) : 0.0;
}

/// Step 14 (FP8) at the hd128 shapes but decode's: the bench's Q, K and V (uniform in [-1, 1))
/// as e4m3 with scale 1 / 448, so that their largest values use e4m3's range. Besides the time:
/// the error of its O and of step 12's (bf16) against float64 attention of the bf16 inputs
/// (sampled_error), as counters error_fp8 and error_bf16.
void register_fp8(const Shape& s) {
  if (s.d != 128 || decode(s)) return;
  register_one("fp8", s, false, [=](benchmark::State& state, Tensors& t) {
    const att::Problem p = problem(s);
    DeviceBuffer<att::e4m3> q(t.Q.size()), k(t.K.size()), v(t.V.size());
    to_e4m3<<<1024, 256>>>(t.Q.get(), q.get(), (long long)q.size(), 448.0f);
    to_e4m3<<<1024, 256>>>(t.K.get(), k.get(), (long long)k.size(), 448.0f);
    to_e4m3<<<1024, 256>>>(t.V.get(), v.get(), (long long)v.size(), 448.0f);
    SMEM_CUDA_CHECK(cudaGetLastError());
    const att::Fp8Scales sc{1.0f / 448, 1.0f / 448, 1.0f / 448};
    measure(state, s, [&] { return att::fp8(p, sc, q.get(), k.get(), v.get(), t.O.get(), t.lse.get()); });
    smem::bench::set_kernel_counters(state, att::fp8_plan(p, q.get(), k.get(), v.get(), t.O.get()));
    SMEM_CUDA_CHECK(cudaDeviceSynchronize());
    state.counters["error_fp8"] = sampled_error(p, t, t.O.download());
    DeviceBuffer<bf16> O16(t.O.size());
    SMEM_CUDA_CHECK(att::run(att::Variant::persistent, p, t.Q.get(), t.K.get(), t.V.get(), O16.get(), nullptr,
                             nullptr, 0));
    SMEM_CUDA_CHECK(cudaDeviceSynchronize());
    state.counters["error_bf16"] = sampled_error(p, t, O16.download());
  });
}
#endif

const bool registered = [] {
  smem::bench::add_steps_context(
      "attention", "gemm_roof",
      smem::bench::step_infos(
          {{"gemm_roof", -1, "",
            "cublasGemmEx, bf16 matrices (CUDA_R_16BF), fp32 compute (CUBLAS_COMPUTE_32F), at 4096^3 and 8192^3: "
            "the tensor-core roof."},
           {"unfused", -1, "",
            "cuBLAS batched GEMMs for scale Q K^T (fp32 S) and P V around a row softmax to bf16 P: no fusion."},
           {"copy", -1, "", "cudaMemcpyAsync device to device of K and V: the bandwidth roof of decode."},
           {"fp8", 14, "attention_14_fp8.cuh",
            "FP8: e4m3 Q, K and V with per-tensor scales, both products on FP8 wgmma, V transposed in shared memory."}},
          att::kSteps));
  register_gemm_roof(4096);
  register_gemm_roof(8192);
  const bool tune = std::getenv("SMEM_TUNE") != nullptr;
  for (const Shape& s : kShapes) {
    if (Unfused::score_bytes(problem(s)) <= kUnfusedMaxScoreBytes) register_unfused(s);
    if (decode(s)) register_copy(s);
    for (att::Variant v : att::kAllVariants) {
      // The decode steps (7 and 13, named *decode) only where they run (seq_q <= 16); the scalar steps
      // 1 to 3 up to the work of the N = 4096 shapes (beyond, one of their runs takes seconds).
      const bool scalar = v == att::Variant::naive || v == att::Variant::two_pass || v == att::Variant::online;
      const bool decoder = std::string(att::name(v)).find("decode") != std::string::npos;
      if ((!decoder || decode(s)) && !(scalar && flops(s) > kScalarMaxFlops)) register_step(v, s);
    }
#if defined(SMEM_ATTENTION_SM90A)
    register_fp8(s);
    if (tune) register_hopper_candidates(s);
#endif
    if (tune) register_candidates(s);
  }
  return true;
}();

}  // namespace

// What the softmax costs step 11 (the Hopper softmax page's question): step 11's loop with parts of
// its online softmax changed, in alternating rounds in one process, at full attention (no mask),
// head_dim 128 and 64. After the first tile (which sets the running max): the max taken first on
// every tile (the kit's softmax_exact, the softmax before the kit checked the max through the
// sum); the max reduced alongside the exponentials (the same instructions, the exponentials not
// waiting for it: P from the running max, rescaled where the tile moved it past the slack); step
// 11 (no max, the sum checked); and from step 11, one change each: a quarter of the exponentials on
// the FMA pipe (a degree-3 polynomial); no exponentials (P = the FFMA's argument); no softmax at
// all (P = S). Whether a variant's O equals step 11's bit for bit (those with ex2 change nothing on
// these inputs: the max never moves past the slack after the first tile) is printed beside it;
// without ex2 the outputs are meaningless.
// Built and run by probes/attention_softmax.sh (./cookbook probe attention_softmax).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <vector>

#include "attention_11_overlap.cuh"
#include "cuda_check.hpp"
#include "device_buffer.hpp"
#include "probe_timing.cuh"

namespace {
using namespace smem::attention;
using smem::test::DeviceBuffer;
using smem::test::fill_random;
using smem::test::time_ms;

enum Cut { kMaxFirst, kMaxAlongside, kStep11, kFmaQuarter, kNoExp, kNoSoftmax, kCuts };
const char* const kNames[kCuts] = {"max first", "max alongside", "step 11", "ex2 1/4 on FMA", "no ex2", "no softmax"};

/// 2^x on the FMA pipe: x = j + f (j = round(x), |f| <= 1/2), 2^f by a degree-3 polynomial, j
/// added into the exponent's bits (x clamped at -127; NaN stays NaN).
__device__ __forceinline__ float exp2_fma(float x) {
  x = x < -127.0f ? -127.0f : x;
  const float t = x + 12582912.0f, j = t - 12582912.0f, f = x - j;  // 1.5 x 2^23: j in t's low bits
  const float p = fmaf(fmaf(fmaf(0.0555041087f, f, 0.240226507f), f, 0.693147181f), f, 1.0f);
  return __int_as_float(__float_as_int(p) + (__float_as_int(t) << 23));
}

/// Step 11's rows with part of the softmax changed, for step 11's kernel (the probe's problems have
/// no mask and no key past seq_kv: every tile takes the unmasked path, c = scale log2(e) > 0).
template <class S, int kCut>
struct CutRows : RowsOf<S> {
  using Base = RowsOf<S>;
  using Base::Base;
  __device__ __forceinline__ bool softmax(float (&sc)[S::kKeys / 2], const Problem& p, long long k0) {
    if (kCut == kStep11) return Base::softmax(sc, p, k0);
    const bool first = !__all_sync(0xffffffffu, this->m[0] != -INFINITY && this->m[1] != -INFINITY);
    if (kCut == kMaxFirst || first) {
      Base::softmax_exact(sc, p, k0);
    } else if constexpr (kCut != kNoSoftmax) {
      cut(sc, p.scale * 1.44269504088896341f);
    }
    return true;
  }
  __device__ __forceinline__ void cut(float (&sc)[S::kKeys / 2], float c) {
#pragma unroll
    for (int hh = 0; hh < 2; ++hh) {
      float mx = -INFINITY, sum = 0.0f;
#pragma unroll
      for (int i = 0; i < S::kKeys / 4; ++i) {
        float& x = sc[4 * (i / 2) + 2 * hh + i % 2];
        if (kCut == kMaxAlongside) mx = fmaxf(mx, x);
        x = fmaf(x, c, -this->m[hh]);
        if (kCut == kFmaQuarter && i % 4 == 3)
          x = exp2_fma(x);
        else if (kCut != kNoExp)
          x = exp2_approx(x);
        sum += x;
      }
      this->rescale[hh] = 1.0f;
      if (kCut == kMaxAlongside) {
#pragma unroll
        for (int lane = 1; lane <= 2; lane *= 2) mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, lane));
        if (mx * c > this->m[hh] + kMaxSlack) {  // P from the new max: the running max's P times 2^(old - new)
          const float f = exp2_approx(this->m[hh] - mx * c);
#pragma unroll
          for (int i = 0; i < S::kKeys / 4; ++i) sc[4 * (i / 2) + 2 * hh + i % 2] *= f;
          sum *= f, this->rescale[hh] = f, this->m[hh] = mx * c;
        }
      }
      this->l[hh] = this->l[hh] * this->rescale[hh] + sum;
    }
  }
};

template <int kCut>
Plan<WgmmaKernel> cut_plan(const Problem& p, const bf16* Q, const bf16* K, const bf16* V, const bf16* O) {
  using S64 = WgmmaShape<64>;
  using S128 = WgmmaShape<128>;
  return wgmma_grid_plan(pingpong_kernel<S64, true, CutRows<S64, kCut>>,
                         pingpong_kernel<S128, true, CutRows<S128, kCut>>, p, Q, K, V, O);
}
using PlanOf = Plan<WgmmaKernel> (*)(const Problem&, const bf16*, const bf16*, const bf16*, const bf16*);
const PlanOf kPlans[kCuts] = {cut_plan<0>, cut_plan<1>, cut_plan<2>, cut_plan<3>, cut_plan<4>, cut_plan<5>};

void measure(int d, int batch, int heads, int n) {
  Problem p;
  p.batch = batch, p.heads_q = p.heads_kv = heads, p.seq_q = p.seq_kv = n, p.head_dim = d;
  p.scale = 1.0f / std::sqrt(float(d));
  p.q = p.k = p.v = p.o = bshd(n, heads, d);
  const std::size_t elems = std::size_t(batch) * n * heads * d, rows = std::size_t(batch) * heads * n;
  DeviceBuffer<bf16> Q(elems), K(elems), V(elems), O(elems), O0(elems);
  DeviceBuffer<float> L(rows), L0(rows);
  fill_random<<<1024, 256>>>(Q.get(), (long long)elems, 1);
  fill_random<<<1024, 256>>>(K.get(), (long long)elems, 2);
  fill_random<<<1024, 256>>>(V.get(), (long long)elems, 3);
  auto run = [&](int cut, bf16* o, float* l) {
    return wgmma_launch(kPlans[cut], p, Q.get(), K.get(), V.get(), o, l, nullptr);
  };
  SMEM_CUDA_CHECK(run(kStep11, O0.get(), L0.get()));
  const std::vector<bf16> o0 = O0.download();
  const std::vector<float> l0 = L0.download();
  bool same[kCuts];
  for (int cut = 0; cut < kCuts; ++cut) {
    O.poison();
    SMEM_CUDA_CHECK(run(cut, O.get(), L.get()));
    const std::vector<bf16> o = O.download();
    const std::vector<float> l = L.download();
    same[cut] = std::memcmp(o.data(), o0.data(), elems * sizeof(bf16)) == 0 &&
                std::memcmp(l.data(), l0.data(), rows * sizeof(float)) == 0;
  }
  const double flop = 4.0 * batch * heads * double(n) * n * d;
  const int reps = int(std::max(2.0, 4e13 / flop));
  std::vector<double> rate[kCuts];
  for (int round = 0; round < 5; ++round)
    for (int cut = 0; cut < kCuts; ++cut)
      rate[cut].push_back(flop / time_ms([&] { return run(cut, O.get(), L.get()); }, reps) * 1e-9);
  std::printf("hd%d/full/%dx%dx%dx%dx%d\n", d, batch, heads, heads, n, n);
  for (auto& r : rate) std::sort(r.begin(), r.end());
  for (int cut = 0; cut < kCuts; ++cut) {
    std::printf("  %-15s %6.1f TFLOP/s  %.3f of step 11  %.3f of max first  O and LSE as step 11's: %s\n",
                kNames[cut], rate[cut][2], rate[cut][2] / rate[kStep11][2], rate[cut][2] / rate[kMaxFirst][2],
                same[cut] ? "yes" : "no");
  }
}
}  // namespace

int main() {
  std::printf("[parts of the softmax changed in step 11's loop, median of 5 alternating rounds]\n");
  measure(128, 4, 16, 4096);
  measure(128, 2, 16, 8192);
  measure(128, 1, 16, 16384);
  measure(64, 4, 32, 4096);
  measure(64, 2, 32, 8192);
  return 0;
}

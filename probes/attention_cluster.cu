// Clusters with TMA multicast of K and V (the attention limits page's question): step 11's kernel
// (step 10's with the overlap) against the same kernel in clusters of two blocks on two query
// tiles of one head, each block loading half of every K and V tile (64 of its 128 keys) and
// multicasting it into both blocks' stages. Each tile then crosses from L2 to the SMs once per
// cluster instead of once per block: half the L2 reads of K and V per FLOP.
//
// What the cluster changes in the kernel, and only that: a stage's empty barriers count both blocks'
// consumer warpgroups (a consumer releases a stage in both blocks: `mapa` gives the other block's
// barrier), because either block's producer writes into both; a full barrier still expects a whole
// tile's bytes, half from each producer; the barriers are initialized in both blocks before either
// block multicasts (a cluster barrier); and a producer waits, before it exits, until both blocks'
// consumers have released its last stages, so that no block arrives on a block that has exited. The
// consumers run step 11's loop as it is (pingpong_rows, on this ring). Full attention only: both
// tiles of a cluster see every key, so both producers stream the same key tiles.
//
// Prints, per shape, both kernels' TFLOP/s (median of alternating rounds) and whether the cluster
// kernel's O and LSE are bit for bit step 11's. Built and run by probes/attention_cluster.sh
// (./cookbook probe attention_cluster).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "attention_11_overlap.cuh"

namespace {
using namespace smem::attention;
namespace sm90 = smem::sm90;

__device__ __forceinline__ unsigned cluster_rank() {
  unsigned r;
  asm volatile("mov.u32 %0, %%cluster_ctarank;\n" : "=r"(r));
  return r;
}
/// Arrives on the barrier at bar's offset in block `cta` of the cluster (this block's too).
__device__ __forceinline__ void arrive_in(std::uint64_t* bar, unsigned cta) {
  asm volatile(
      "{\n.reg .b32 remote;\nmapa.shared::cluster.u32 remote, %0, %1;\n"
      "mbarrier.arrive.shared::cluster.b64 _, [remote];\n}\n" ::"r"(sm90::smem_u32(bar)),
      "r"(cta)
      : "memory");
}
/// The 4D box at (c, s, h, b) into dst in every block of `mask`, completing on bar's offset in each.
__device__ __forceinline__ void tma_multicast_4d(void* dst, const CUtensorMap* map, int c, int s, int h, int b,
                                                 std::uint64_t* bar, std::uint16_t mask) {
  asm volatile(
      "cp.async.bulk.tensor.4d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.multicast::cluster"
      " [%0], [%1, {%2, %3, %4, %5}], [%6], %7;\n" ::"r"(sm90::smem_u32(dst)),
      "l"(map), "r"(c), "r"(s), "r"(h), "r"(b), "r"(sm90::smem_u32(bar)), "h"(mask)
      : "memory");
}
__device__ __forceinline__ void cluster_sync() {
  asm volatile("barrier.cluster.arrive.release.aligned;\nbarrier.cluster.wait.acquire.aligned;\n" ::: "memory");
}

/// The kit's ring, its empty barriers counting both blocks' consumers, released in both blocks.
template <class S>
struct ClusterStages : WgmmaStages<S> {
  using Base = WgmmaStages<S>;
  using Base::Base;
  __device__ void init() const {
    sm90::mbar_init(&this->bar.q, 1);
    for (int s = 0; s < S::kStages; ++s)
      for (int kv = 0; kv < 2; ++kv)
        sm90::mbar_init(&this->bar.full[s][kv], 1), sm90::mbar_init(&this->bar.empty[s][kv], 2 * S::kConsumers);
    sm90::fence_barrier_init();
  }
  __device__ void release(long long j, int kv, int t) const {
    if (t == 0)
      for (unsigned cta = 0; cta < 2; ++cta) arrive_in(&this->bar.empty[j % S::kStages][kv], cta);
  }
};

template <class S>
__global__ void __cluster_dims__(2, 1, 1) __launch_bounds__(S::kThreads, 1)
    cluster_kernel(const __grid_constant__ CUtensorMap q_map, const __grid_constant__ CUtensorMap k_half,
                   const __grid_constant__ CUtensorMap v_half, Problem p, bf16* O, float* lse) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  extern __shared__ unsigned char raw[];
  __shared__ typename WgmmaStages<S>::Bars bars;
  const ClusterStages<S> st(raw, bars);
  const unsigned rank = cluster_rank();
  const long long pairs = (tiles(p.seq_q, S::kRows) + 1) / 2, c = blockIdx.x / 2;  // cluster c: a pair of tiles
  const QueryTile blk(p, c / pairs, 2 * (c % pairs) + rank, S::kRows);
  const long long n = tiles(p.seq_kv, S::kKeys);
  if (threadIdx.x == 0) st.init();
  cluster_sync();
  constexpr int kLaunch = 65536 / S::kThreads / 8 * 8;
  if (sm90::warpgroup() == 0) {
    sm90::regs_down<24>();
    if (threadIdx.x != 0 || n == 0) return;
    sm90::mbar_arrive_expect_tx(&st.bar.q, S::kQBytes);
    tma_rows<S::kD, S::QTile::kPanel>(st.q, &q_map, p.q, blk.q0, blk.h, blk.b, &st.bar.q);
    const CUtensorMap* map[2] = {&k_half, &v_half};
    const int h = int(blk.h / (p.heads_q / p.heads_kv));
    for (long long j = 0; j < n + S::kStages; ++j)
      for (int kv = 0; kv < 2; ++kv) {
        sm90::mbar_wait(&st.bar.empty[j % S::kStages][kv], st.parity(j) ^ 1);
        if (j >= n) continue;  // the tail: both blocks released the last stages
        std::uint64_t* bar = &st.bar.full[j % S::kStages][kv];
        sm90::mbar_arrive_expect_tx(bar, S::kTileBytes);
        for (int col = 0; col < S::kD / 64; ++col)  // this block's 64 rows of each panel
          tma_multicast_4d(st.tile(j, kv) + col * S::Tile::kPanel + 64 * 64 * rank, map[kv], 64 * col,
                           int(j * S::kKeys + 64 * rank), h, int(blk.b), bar, 0x3);
      }
    return;
  }
  sm90::regs_up<(kLaunch * (1 + S::kConsumers) - 24) / S::kConsumers / 8 * 8>();
  const int w = sm90::warpgroup() - 1;
  WgmmaRows<S::kD> r(blk.q0 + 64 * w);
  if (n > 0) {
    sm90::mbar_wait(&st.bar.q, 0);
    pingpong_rows<S, true>(st, st.q, r, p, n, w, 0);
  }
  r.store(p, blk, O, lse);
#endif
}

#define CHECK_CUDA(x)                                                                        \
  do {                                                                                       \
    cudaError_t e_ = (x);                                                                    \
    if (e_ != cudaSuccess) {                                                                 \
      std::printf("%s:%d: %s\n", __FILE__, __LINE__, cudaGetErrorString(e_));                \
      std::exit(1);                                                                          \
    }                                                                                        \
  } while (0)

template <class S>
cudaError_t run_cluster(const Problem& p, const bf16* Q, const bf16* K, const bf16* V, bf16* O, float* lse) {
  CUtensorMap q, k, v;
  if (!head_map(&q, Q, p.batch, p.seq_q, p.heads_q, p.head_dim, p.q, S::kRows) ||
      !head_map(&k, K, p.batch, p.seq_kv, p.heads_kv, p.head_dim, p.k, 64) ||
      !head_map(&v, V, p.batch, p.seq_kv, p.heads_kv, p.head_dim, p.v, 64))
    return cudaErrorInvalidValue;
  const long long pairs = (tiles(p.seq_q, S::kRows) + 1) / 2;
  const Plan<WgmmaKernel> plan{cluster_kernel<S>, dim3(unsigned(2 * pairs * p.batch * p.heads_q)), dim3(S::kThreads),
                               S::kSmemBytes};
  return launch(plan, nullptr, q, k, v, p, O, lse);
}

__global__ void fill_random(bf16* x, long long n, unsigned seed) {
  for (long long i = blockIdx.x * 256LL + threadIdx.x; i < n; i += 256LL * gridDim.x) {
    unsigned h = unsigned(i) * 2654435761u ^ seed;
    h ^= h >> 15, h *= 2246822519u, h ^= h >> 13;
    x[i] = __float2bfloat16(float(h & 0xffff) / 32768.0f - 1.0f);
  }
}

template <class F>
float time_ms(F f, int reps) {
  cudaEvent_t a, b;
  CHECK_CUDA(cudaEventCreate(&a));
  CHECK_CUDA(cudaEventCreate(&b));
  CHECK_CUDA(cudaEventRecord(a));
  for (int i = 0; i < reps; ++i) CHECK_CUDA(f());
  CHECK_CUDA(cudaEventRecord(b));
  CHECK_CUDA(cudaEventSynchronize(b));
  float ms = 0;
  CHECK_CUDA(cudaEventElapsedTime(&ms, a, b));
  CHECK_CUDA(cudaEventDestroy(a));
  CHECK_CUDA(cudaEventDestroy(b));
  return ms / reps;
}

template <int D>
void measure(int batch, int heads, int n) {
  using S = WgmmaShape<D>;
  Problem p;
  p.batch = batch, p.heads_q = heads, p.heads_kv = heads, p.seq_q = n, p.seq_kv = n, p.head_dim = D;
  p.scale = 1.0f / std::sqrt(float(D));
  p.q = p.k = p.v = p.o = bshd(int(n), heads, D);
  const long long elems = 1LL * batch * n * heads * D, rows = 1LL * batch * heads * n;
  bf16 *Q, *K, *V, *O1, *O2;
  float *L1, *L2;
  for (bf16** x : {&Q, &K, &V, &O1, &O2}) CHECK_CUDA(cudaMalloc(x, elems * sizeof(bf16)));
  for (float** x : {&L1, &L2}) CHECK_CUDA(cudaMalloc(x, rows * sizeof(float)));
  fill_random<<<1024, 256>>>(Q, elems, 1), fill_random<<<1024, 256>>>(K, elems, 2), fill_random<<<1024, 256>>>(V, elems, 3);
  CHECK_CUDA(cudaMemset(O2, 0xff, elems * sizeof(bf16)));
  CHECK_CUDA(cudaMemset(L2, 0xff, rows * sizeof(float)));
  auto step11 = [&] { return overlap(p, Q, K, V, O1, L1, nullptr, 0); };
  auto cluster = [&] { return run_cluster<S>(p, Q, K, V, O2, L2); };
  CHECK_CUDA(step11());
  CHECK_CUDA(cluster());
  CHECK_CUDA(cudaDeviceSynchronize());
  std::vector<bf16> a(elems), b(elems);
  std::vector<float> la(rows), lb(rows);
  CHECK_CUDA(cudaMemcpy(a.data(), O1, elems * sizeof(bf16), cudaMemcpyDeviceToHost));
  CHECK_CUDA(cudaMemcpy(b.data(), O2, elems * sizeof(bf16), cudaMemcpyDeviceToHost));
  CHECK_CUDA(cudaMemcpy(la.data(), L1, rows * sizeof(float), cudaMemcpyDeviceToHost));
  CHECK_CUDA(cudaMemcpy(lb.data(), L2, rows * sizeof(float), cudaMemcpyDeviceToHost));
  const bool same = std::memcmp(a.data(), b.data(), elems * sizeof(bf16)) == 0 &&
                    std::memcmp(la.data(), lb.data(), rows * sizeof(float)) == 0;
  const double flop = 4.0 * batch * heads * double(n) * n * D;
  const int reps = int(std::max(2.0, 2e12 / flop * 20));
  std::vector<double> r11, rc;
  for (int round = 0; round < 7; ++round) {  // alternating, after a warm-up of either
    r11.push_back(flop / time_ms(step11, reps) * 1e-9);
    rc.push_back(flop / time_ms(cluster, reps) * 1e-9);
  }
  std::sort(r11.begin(), r11.end());
  std::sort(rc.begin(), rc.end());
  std::printf("hd%d/full/%dx%dx%dx%dx%d  step11 %7.1f  cluster %7.1f TFLOP/s  cluster/step11 %.3f  "
              "O and LSE bit for bit step 11's: %s\n",
              D, batch, heads, heads, n, n, r11[3], rc[3], rc[3] / r11[3], same ? "yes" : "NO");
  for (bf16* x : {Q, K, V, O1, O2}) CHECK_CUDA(cudaFree(x));
  for (float* x : {L1, L2}) CHECK_CUDA(cudaFree(x));
}
}  // namespace

int main() {
  std::printf("[clusters of two with TMA multicast of K and V against step 11 (median of 7 alternating rounds)]\n");
  measure<128>(16, 16, 1024);
  measure<128>(4, 16, 4096);
  measure<128>(2, 16, 8192);
  measure<64>(4, 32, 4096);
  measure<64>(2, 32, 8192);
  return 0;
}

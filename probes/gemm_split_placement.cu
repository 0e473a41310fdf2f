// Where the low parts of split TF32 live on wgmma (the gemm split page's placement question):
// step 15's arrangement (C^T = B^T A^T: B's parts in registers as wgmma's A operand, A's lo in a shared
// tile) against the other one, kept here as `transposed_b`: C = A B, A's fragments split in registers
// (wgmma's A operand), and B's tile, which TMA brings N-major while TF32 wgmma reads only K-major
// shared operands, transposed by the consumers into K-major hi and lo tiles each stage.
// transposed_b is step 15's kernel with those two changes (and a grid of one block per tile instead of
// the persistent loop, and no alpha and beta): same tile, stages, warpgroups and registers.
// Prints the worst error of both against float64 (|c - c_ref| / sum |a||b|) and their TFLOP/s.
// Built and run by probes/gemm_split_placement.sh (./cookbook probe gemm_split_placement).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

#include "sgemm_15_split_wgmma.cuh"

namespace {
using namespace smem::gemm;
namespace sm90 = smem::sm90;
using S = SplitWgmmaShape;
using LA = S::LA;                                     // A's tile A[m][k], K-major as loaded
using LB = S::LB;                                     // B's tile B[k][n], N-major as loaded
using LT = sm90::TmaTile<float, S::kBN, S::kBK>;      // B^T's hi and lo tiles [n][k], K-major
constexpr int kStage = LA::kElems + LB::kElems;       // floats of a stage: A and B as loaded
constexpr unsigned kSmem = LA::smem_bytes((S::kStages * kStage + 4 * LT::kElems) * sizeof(float));

__global__ void __launch_bounds__(S::kThreads, 1)
    transposed_b(const __grid_constant__ CUtensorMap a_map, const __grid_constant__ CUtensorMap b_map, int M, int N,
                 int K, float* C, int ldc) {
  extern __shared__ unsigned char smem_raw[];
  __shared__ std::uint64_t full[S::kStages], empty[S::kStages];
  float* smem = reinterpret_cast<float*>(LA::align(smem_raw));
  float* bt = smem + S::kStages * kStage;  // two buffers of (hi, lo): K-tile kt writes buffer kt % 2
  const int tiles_k = tiles(K, S::kBK), m0 = blockIdx.y * S::kBM, n0 = blockIdx.x * S::kBN;
  if (threadIdx.x == 0) {
    for (int s = 0; s < S::kStages; ++s) sm90::mbar_init(&full[s], 1), sm90::mbar_init(&empty[s], S::kConsumers);
    sm90::fence_barrier_init();
  }
  __syncthreads();
  if (sm90::warpgroup() == 0) {
    sm90::regs_down<S::kProducerRegs>();
    if (threadIdx.x == 0)
      for (int kt = 0; kt < tiles_k; ++kt) {
        const int s = kt % S::kStages;
        sm90::mbar_wait(&empty[s], (kt / S::kStages & 1) ^ 1);
        float* st = smem + s * kStage;
        sm90::mbar_arrive_expect_tx(&full[s], kStage * sizeof(float));
        sm90::tma_load(st, &a_map, kt * S::kBK, m0, &full[s]);
        for (int p = 0; p < S::kBN / LB::kSpan; ++p)
          sm90::tma_load(st + LA::kElems + p * LB::kPanel, &b_map, n0 + LB::kSpan * p, kt * S::kBK, &full[s]);
      }
    return;
  }
  sm90::regs_up<S::kConsumerRegs>();
  const int ct = threadIdx.x - 128, t = ct % 128, w = sm90::warpgroup() - 1, q = t % 4;
  const int m_row = 64 * w + 16 * (t / 32) + t % 32 / 4;  // this thread's A rows: m_row and m_row + 8
  float sum[64] = {}, big[64], small[64];
  for (int kt = 0; kt < tiles_k; ++kt) {
    const int s = kt % S::kStages;
    sm90::mbar_wait(&full[s], kt / S::kStages & 1);
    const float *As = smem + s * kStage, *Bs = As + LA::kElems;
    float *hi_t = bt + kt % 2 * 2 * LT::kElems, *lo_t = hi_t + LT::kElems;
    // The transpose: chunk c of 4 k at column n, lanes along n (conflict-free loads and 16-byte stores).
    // Buffer kt % 2 was last read by K-tile kt - 2's wgmma, which both consumers waited for before
    // the barrier of K-tile kt - 1.
    for (int i = 0; i < 4; ++i) {
      const int c = ct + 256 * i, n = c % S::kBN, k = 4 * (c / S::kBN);
      uint4 hi, lo;
      tf32_split(Bs[LB::offset(k, n)], hi.x, lo.x), tf32_split(Bs[LB::offset(k + 1, n)], hi.y, lo.y);
      tf32_split(Bs[LB::offset(k + 2, n)], hi.z, lo.z), tf32_split(Bs[LB::offset(k + 3, n)], hi.w, lo.w);
      *reinterpret_cast<uint4*>(hi_t + LT::offset(n, k)) = hi;
      *reinterpret_cast<uint4*>(lo_t + LT::offset(n, k)) = lo;
    }
    sm90::fence_proxy_async();
    sm90::named_barrier(1, 128 * S::kConsumers);
    sm90::wgmma_fence();
    for (int k8 = 0; k8 < S::kBK / 8; ++k8) {
      const int k = 8 * k8 + q;
      const float a[4] = {As[LA::offset(m_row, k)], As[LA::offset(m_row + 8, k)], As[LA::offset(m_row, k + 4)],
                          As[LA::offset(m_row + 8, k + 4)]};
      unsigned ah[4], al[4];
      for (int e = 0; e < 4; ++e) tf32_split(a[e], ah[e], al[e]);
      const std::uint64_t b_hi = LT::desc<false>(hi_t + 8 * k8), b_lo = LT::desc<false>(lo_t + 8 * k8);
      wgmma_tf32_m64n128k8(big, ah, b_hi, k8 > 0);
      wgmma_tf32_m64n128k8(small, al, b_hi, kt > 0 || k8 > 0);
      wgmma_tf32_m64n128k8(small, ah, b_lo, true);
    }
    sm90::wgmma_commit();
    sm90::wgmma_wait<0>();
    sm90::fence_acc(big), sm90::fence_acc(small);
    if (t == 0) sm90::mbar_arrive(&empty[s]);
    for (int i = 0; i < 64; ++i) sum[i] += big[i];
  }
  for (int j = 0; j < 16; ++j)
    for (int h = 0; h < 2; ++h)
      for (int e = 0; e < 2; ++e) {
        const int m = m0 + 64 * w + sm90::acc_row(t, h), n = n0 + sm90::acc_col(t, j) + e, i = 4 * j + 2 * h + e;
        if (m < M && n < N) C[std::size_t(m) * ldc + n] = split_sum(sum[i], small[i]);
      }
}

// C = A B (row-major, packed) by `v`: 0 step 15's launcher, 1 transposed_b.
cudaError_t run(int v, int M, int N, int K, const float* A, const float* B, float* C) {
  if (v == 0) return split_wgmma(M, N, K, 1.0f, A, K, B, N, 0.0f, C, N);
  CUtensorMap am, bm;
  if (!LA::make_map(&am, A, M, K, K) || !LB::make_map(&bm, B, K, N, N)) return cudaErrorInvalidValue;
  cudaFuncSetAttribute(transposed_b, cudaFuncAttributeMaxDynamicSharedMemorySize, int(kSmem));
  transposed_b<<<dim3(tiles(N, S::kBN), tiles(M, S::kBM)), S::kThreads, kSmem>>>(am, bm, M, N, K, C, N);
  return cudaGetLastError();
}

int check(cudaError_t e) {
  if (e != cudaSuccess) std::printf("CUDA error: %s\n", cudaGetErrorString(e)), std::exit(1);
  return 0;
}
}  // namespace

int main() {
  const char* names[2] = {"split_wgmma", "transposed_b"};
  std::mt19937 g(2026);
  std::uniform_real_distribution<float> u(-1, 1);
  {  // accuracy against float64
    const int M = 512, N = 384, K = 1000;
    std::vector<float> a(std::size_t(M) * K), b(std::size_t(K) * N), c(std::size_t(M) * N);
    for (float& x : a) x = u(g);
    for (float& x : b) x = u(g);
    float *A, *B, *Cd;
    check(cudaMalloc(&A, a.size() * 4)), check(cudaMalloc(&B, b.size() * 4)), check(cudaMalloc(&Cd, c.size() * 4));
    check(cudaMemcpy(A, a.data(), a.size() * 4, cudaMemcpyHostToDevice));
    check(cudaMemcpy(B, b.data(), b.size() * 4, cudaMemcpyHostToDevice));
    std::printf("[accuracy %dx%dx%d uniform(-1, 1)]", M, N, K);
    for (int v = 0; v < 2; ++v) {
      check(cudaMemset(Cd, 0xff, c.size() * 4));  // NaN: an element not written fails
      check(run(v, M, N, K, A, B, Cd)), check(cudaDeviceSynchronize());
      check(cudaMemcpy(c.data(), Cd, c.size() * 4, cudaMemcpyDeviceToHost));
      double worst = 0;
      for (int i = 0; i < M; ++i)
        for (int j = 0; j < N; ++j) {
          double r = 0, s = 0;
          for (int k = 0; k < K; ++k) {
            const double p = double(a[std::size_t(i) * K + k]) * b[std::size_t(k) * N + j];
            r += p, s += std::fabs(p);
          }
          const double e = std::fabs(c[std::size_t(i) * N + j] - r) / s;
          worst = std::isnan(e) || e > worst ? e : worst;
        }
      std::printf(" %s %.2g", names[v], worst);
    }
    std::printf("\n");
    cudaFree(A), cudaFree(B), cudaFree(Cd);
  }
  for (int n : {2048, 4096, 8192}) {  // speed: the median of 5 timings of `reps` launches each
    std::vector<float> h(std::size_t(n) * n);
    for (float& x : h) x = u(g);
    float *A, *B, *C;
    check(cudaMalloc(&A, h.size() * 4)), check(cudaMalloc(&B, h.size() * 4)), check(cudaMalloc(&C, h.size() * 4));
    check(cudaMemcpy(A, h.data(), h.size() * 4, cudaMemcpyHostToDevice));
    check(cudaMemcpy(B, h.data(), h.size() * 4, cudaMemcpyHostToDevice));
    cudaEvent_t e0, e1;
    cudaEventCreate(&e0), cudaEventCreate(&e1);
    const int reps = n >= 8192 ? 4 : 20;
    std::printf("[%d^3] TFLOP/s", n);
    for (int v = 0; v < 2; ++v) {
      std::vector<float> ms(5);
      check(run(v, n, n, n, A, B, C)), check(cudaDeviceSynchronize());
      for (float& m : ms) {
        cudaEventRecord(e0);
        for (int r = 0; r < reps; ++r) run(v, n, n, n, A, B, C);
        cudaEventRecord(e1), check(cudaEventSynchronize(e1));
        cudaEventElapsedTime(&m, e0, e1);
      }
      std::sort(ms.begin(), ms.end());
      std::printf(" %s %.1f", names[v], 2.0 * n * n * n * reps / (ms[2] * 1e-3) / 1e12);
    }
    std::printf("\n");
    cudaFree(A), cudaFree(B), cudaFree(C);
  }
}

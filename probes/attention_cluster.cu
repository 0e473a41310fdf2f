// Clusters with TMA multicast of K and V (the attention limits page's question): step 16 against
// step 11, whose kernel it is in clusters of two blocks, in alternating rounds in one process, at
// full and causal attention, head_dim 128 and 64; and whether step 16's O and LSE are step 11's bit
// for bit (the same products and softmax in the same order: only where K and V come from differs).
// Built and run by probes/attention_cluster.sh (./cookbook probe attention_cluster).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "attention_11_overlap.cuh"
#include "attention_16_cluster.cuh"

namespace {
using namespace smem::attention;

#define CHECK_CUDA(x)                                                         \
  do {                                                                        \
    cudaError_t e_ = (x);                                                     \
    if (e_ != cudaSuccess) {                                                  \
      std::printf("%s:%d: %s\n", __FILE__, __LINE__, cudaGetErrorString(e_)); \
      std::exit(1);                                                           \
    }                                                                         \
  } while (0)

__global__ void fill_random(bf16* x, long long n, unsigned seed) {
  for (long long i = blockIdx.x * 256LL + threadIdx.x; i < n; i += 256LL * gridDim.x) {
    unsigned h = unsigned(i) * 2654435761u ^ seed;
    h ^= h >> 15, h *= 2246822519u, h ^= h >> 13;
    x[i] = __float2bfloat16(float(h & 0xffff) / 32768.0f - 1.0f);
  }
}

/// The mean time of `reps` launches of f, in ms.
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

template <class T>
std::vector<T> download(const T* d, long long n) {
  std::vector<T> h(static_cast<std::size_t>(n));
  CHECK_CUDA(cudaMemcpy(h.data(), d, n * sizeof(T), cudaMemcpyDeviceToHost));
  return h;
}

void measure(int d, bool causal, int batch, int heads, int n) {
  Problem p;
  p.batch = batch, p.heads_q = p.heads_kv = heads, p.seq_q = p.seq_kv = n, p.head_dim = d, p.causal = causal;
  p.scale = 1.0f / std::sqrt(float(d));
  p.q = p.k = p.v = p.o = bshd(n, heads, d);
  const long long elems = 1LL * batch * n * heads * d, rows = 1LL * batch * heads * n;
  bf16 *Q, *K, *V, *O[2];
  float* L[2];
  for (bf16** x : {&Q, &K, &V, &O[0], &O[1]}) CHECK_CUDA(cudaMalloc(x, elems * sizeof(bf16)));
  for (float** x : {&L[0], &L[1]}) CHECK_CUDA(cudaMalloc(x, rows * sizeof(float)));
  fill_random<<<1024, 256>>>(Q, elems, 1);
  fill_random<<<1024, 256>>>(K, elems, 2);
  fill_random<<<1024, 256>>>(V, elems, 3);
  CHECK_CUDA(cudaMemset(O[1], 0xff, elems * sizeof(bf16)));
  CHECK_CUDA(cudaMemset(L[1], 0xff, rows * sizeof(float)));
  decltype(&overlap) step[2] = {overlap, cluster};
  auto run = [&](int i) { return step[i](p, Q, K, V, O[i], L[i], nullptr, 0, nullptr); };
  CHECK_CUDA(run(0));
  CHECK_CUDA(run(1));
  CHECK_CUDA(cudaDeviceSynchronize());
  const bool same = download(O[0], elems) == download(O[1], elems) &&
                    std::memcmp(download(L[0], rows).data(), download(L[1], rows).data(), rows * sizeof(float)) == 0;
  const double flop = (causal ? 2.0 : 4.0) * batch * heads * double(n) * n * d;
  const int reps = int(std::max(2.0, 4e13 / flop));
  std::vector<double> rate[2];
  for (int round = 0; round < 7; ++round)
    for (int i = 0; i < 2; ++i) rate[i].push_back(flop / time_ms([&] { return run(i); }, reps) * 1e-9);
  for (auto& r : rate) std::sort(r.begin(), r.end());
  std::printf("hd%d/%s/%dx%dx%dx%dx%d  step 11 %6.1f  step 16 %6.1f TFLOP/s  16/11 %.3f  O and LSE bit for bit: %s\n",
              d, causal ? "causal" : "full", batch, heads, heads, n, n, rate[0][3], rate[1][3], rate[1][3] / rate[0][3],
              same ? "yes" : "NO");
  for (bf16* x : {Q, K, V, O[0], O[1]}) CHECK_CUDA(cudaFree(x));
  for (float* x : L) CHECK_CUDA(cudaFree(x));
}

/// How many clusters of step 16's kernel at head_dim D can be resident at once.
template <int D>
int resident_clusters() {
  using S = WgmmaShape<D>;
  CHECK_CUDA(cudaFuncSetAttribute(cluster_kernel<S>, cudaFuncAttributeMaxDynamicSharedMemorySize, int(S::kSmemBytes)));
  cudaLaunchConfig_t config = {};
  cudaLaunchAttribute cluster_dims = {};
  cluster_dims.id = cudaLaunchAttributeClusterDimension;
  cluster_dims.val.clusterDim.x = 2, cluster_dims.val.clusterDim.y = cluster_dims.val.clusterDim.z = 1;
  config.gridDim = dim3(1024), config.blockDim = dim3(S::kThreads), config.dynamicSmemBytes = S::kSmemBytes;
  config.attrs = &cluster_dims, config.numAttrs = 1;
  int clusters = 0;
  CHECK_CUDA(cudaOccupancyMaxActiveClusters(&clusters, cluster_kernel<S>, &config));
  return clusters;
}
}  // namespace

int main() {
  int sms = 0;
  CHECK_CUDA(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  std::printf("[step 16 (clusters of two, K and V multicast) against step 11, median of 7 alternating rounds]\n");
  std::printf("resident at once: %d clusters of two at head_dim 128, %d at 64, on %d SMs (one block an SM)\n",
              resident_clusters<128>(), resident_clusters<64>(), sms);
  for (bool causal : {false, true}) {
    measure(128, causal, 16, 16, 1024);
    measure(128, causal, 4, 16, 4096);
    measure(128, causal, 2, 16, 8192);
  }
  measure(64, false, 4, 32, 4096);
  measure(64, false, 2, 32, 8192);
  return 0;
}

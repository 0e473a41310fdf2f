// Clusters with TMA multicast of K and V (the attention limits page's question): step 16 against
// step 11, whose kernel it is in clusters of two blocks, in alternating rounds in one process, at
// full and causal attention, head_dim 128 and 64; and whether step 16's O and LSE are step 11's bit
// for bit (the same products and softmax in the same order: only where K and V come from differs).
// Built and run by probes/attention_cluster.sh (./cookbook probe attention_cluster).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <vector>

#include "attention_11_overlap.cuh"
#include "attention_16_cluster.cuh"
#include "cuda_check.hpp"
#include "device_buffer.hpp"
#include "probe_timing.cuh"

namespace {
using namespace smem::attention;
using smem::test::DeviceBuffer;
using smem::test::fill_random;
using smem::test::time_ms;

void measure(int d, bool causal, int batch, int heads, int n) {
  Problem p;
  p.batch = batch, p.heads_q = p.heads_kv = heads, p.seq_q = p.seq_kv = n, p.head_dim = d, p.causal = causal;
  p.scale = 1.0f / std::sqrt(float(d));
  p.q = p.k = p.v = p.o = bshd(n, heads, d);
  const std::size_t elems = std::size_t(batch) * n * heads * d, rows = std::size_t(batch) * heads * n;
  DeviceBuffer<bf16> Q(elems), K(elems), V(elems), O[2] = {DeviceBuffer<bf16>(elems), DeviceBuffer<bf16>(elems)};
  DeviceBuffer<float> L[2] = {DeviceBuffer<float>(rows), DeviceBuffer<float>(rows)};
  fill_random<<<1024, 256>>>(Q.get(), (long long)elems, 1);
  fill_random<<<1024, 256>>>(K.get(), (long long)elems, 2);
  fill_random<<<1024, 256>>>(V.get(), (long long)elems, 3);
  O[1].poison();
  L[1].poison();
  decltype(&overlap) step[2] = {overlap, cluster};
  auto run = [&](int i) {
    return step[i](p, Q.get(), K.get(), V.get(), O[i].get(), L[i].get(), nullptr, 0, nullptr);
  };
  SMEM_CUDA_CHECK(run(0));
  SMEM_CUDA_CHECK(run(1));
  SMEM_CUDA_CHECK(cudaDeviceSynchronize());
  const std::vector<bf16> o0 = O[0].download(), o1 = O[1].download();
  const std::vector<float> l0 = L[0].download(), l1 = L[1].download();
  const bool same = std::memcmp(o0.data(), o1.data(), elems * sizeof(bf16)) == 0 &&
                    std::memcmp(l0.data(), l1.data(), rows * sizeof(float)) == 0;
  const double flop = (causal ? 2.0 : 4.0) * batch * heads * double(n) * n * d;
  const int reps = int(std::max(2.0, 4e13 / flop));
  std::vector<double> rate[2];
  for (int round = 0; round < 7; ++round)
    for (int i = 0; i < 2; ++i) rate[i].push_back(flop / time_ms([&] { return run(i); }, reps) * 1e-9);
  for (auto& r : rate) std::sort(r.begin(), r.end());
  std::printf("hd%d/%s/%dx%dx%dx%dx%d  step 11 %6.1f  step 16 %6.1f TFLOP/s  16/11 %.3f  O and LSE bit for bit: %s\n",
              d, causal ? "causal" : "full", batch, heads, heads, n, n, rate[0][3], rate[1][3], rate[1][3] / rate[0][3],
              same ? "yes" : "NO");
}

/// How many clusters of step 16's kernel at head_dim D can be resident at once.
template <int D>
int resident_clusters() {
  using S = WgmmaShape<D>;
  SMEM_CUDA_CHECK(cudaFuncSetAttribute(cluster_kernel<S>, cudaFuncAttributeMaxDynamicSharedMemorySize, int(S::kSmemBytes)));
  cudaLaunchConfig_t config = {};
  cudaLaunchAttribute cluster_dims = {};
  cluster_dims.id = cudaLaunchAttributeClusterDimension;
  cluster_dims.val.clusterDim.x = 2, cluster_dims.val.clusterDim.y = cluster_dims.val.clusterDim.z = 1;
  config.gridDim = dim3(1024), config.blockDim = dim3(S::kThreads), config.dynamicSmemBytes = S::kSmemBytes;
  config.attrs = &cluster_dims, config.numAttrs = 1;
  int clusters = 0;
  SMEM_CUDA_CHECK(cudaOccupancyMaxActiveClusters(&clusters, cluster_kernel<S>, &config));
  return clusters;
}
}  // namespace

int main() {
  int sms = 0;
  SMEM_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
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

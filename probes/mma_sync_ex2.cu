// The ceilings the attention page compares its mma.sync steps with: per SM and clock, on every SM,
// (1) mma.sync m16n8k16 bf16 with fp32 accumulators, eight independent accumulators per warp;
// (2) ex2.approx on f32, f16x2 and bf16x2 (elements per clock); (3) one warp's stream of mma.sync
// with 2 or 4 ex2 between them (does the special-function unit run beside the tensor cores?).
// And the two the gemm split page sets against each other: (4) mma.sync m16n8k8 TF32, which step
// 14's three products per term share, and (5) fma.rn.f32, the FMA pipe of the fp32 steps and of
// cuBLAS's fp32 kernel, eight independent chains per thread.
// The clock is the device's maximum (cudaDevAttrClockRate): under load it may be lower, so the rates
// per clock are lower bounds. Built and run by probes/mma_sync_ex2.sh.
#include <cuda_runtime.h>

#include <cstdio>

namespace {
constexpr int kIters = 4096;

__global__ void ex2_f32(float* out) {
  float a[8];
  for (int i = 0; i < 8; ++i) a[i] = 0.5f + i * 0.001f + threadIdx.x * 1e-6f;
  for (int it = 0; it < kIters; ++it)
#pragma unroll
    for (int i = 0; i < 8; ++i) asm volatile("ex2.approx.ftz.f32 %0, %0;" : "+f"(a[i]));
  float s = 0;
  for (float x : a) s += x;
  out[blockIdx.x * blockDim.x + threadIdx.x] = s;
}
template <bool kBf16>
__global__ void ex2_x2(float* out) {
  unsigned a[8];
  for (int i = 0; i < 8; ++i) a[i] = (kBf16 ? 0x3f803f80u : 0x3c003c00u) + i + threadIdx.x;
  for (int it = 0; it < kIters; ++it)
#pragma unroll
    for (int i = 0; i < 8; ++i) {
      if constexpr (kBf16)
        asm volatile("ex2.approx.ftz.bf16x2 %0, %0;" : "+r"(a[i]));
      else
        asm volatile("ex2.approx.f16x2 %0, %0;" : "+r"(a[i]));
    }
  unsigned s = 0;
  for (unsigned x : a) s += x;
  out[blockIdx.x * blockDim.x + threadIdx.x] = float(s);
}
template <int kEx2>  // ex2 per mma.sync
__global__ void mma_ex2(float* out) {
  float d[8][4] = {}, e[8];
  for (int i = 0; i < 8; ++i) e[i] = 0.5f + i * 0.001f;
  const unsigned a = 0x3f803f80u + threadIdx.x, b = 0x3f803f80u;
  for (int it = 0; it < kIters; ++it)
#pragma unroll
    for (int i = 0; i < 8; ++i) {
      asm volatile(
          "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%4,%4,%4}, {%5,%5}, "
          "{%0,%1,%2,%3};"
          : "+f"(d[i][0]), "+f"(d[i][1]), "+f"(d[i][2]), "+f"(d[i][3])
          : "r"(a), "r"(b));
#pragma unroll
      for (int k = 0; k < kEx2; ++k) asm volatile("ex2.approx.ftz.f32 %0, %0;" : "+f"(e[(i + k) % 8]));
    }
  float s = 0;
  for (int i = 0; i < 8; ++i) s += d[i][0] + d[i][3] + e[i];
  out[blockIdx.x * blockDim.x + threadIdx.x] = s;
}

__global__ void mma_tf32(float* out) {
  float d[8][4] = {};
  const unsigned a = 0x3f800000u + threadIdx.x, b = 0x3f800000u;
  for (int it = 0; it < kIters; ++it)
#pragma unroll
    for (int i = 0; i < 8; ++i)
      asm volatile(
          "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%4,%4,%4}, {%5,%5}, {%0,%1,%2,%3};"
          : "+f"(d[i][0]), "+f"(d[i][1]), "+f"(d[i][2]), "+f"(d[i][3])
          : "r"(a), "r"(b));
  float s = 0;
  for (int i = 0; i < 8; ++i) s += d[i][0] + d[i][3];
  out[blockIdx.x * blockDim.x + threadIdx.x] = s;
}
__global__ void fma_f32(float* out) {
  float c[8];
  for (int i = 0; i < 8; ++i) c[i] = threadIdx.x * 1e-6f + i;
  for (int it = 0; it < kIters; ++it)
#pragma unroll
    for (int i = 0; i < 8; ++i) asm volatile("fma.rn.f32 %0, %0, %1, %2;" : "+f"(c[i]) : "f"(0.999f), "f"(1e-3f));
  float s = 0;
  for (float x : c) s += x;
  out[blockIdx.x * blockDim.x + threadIdx.x] = s;
}

// ops: per thread and iteration of the kernel's loop.
void time(const char* name, void (*k)(float*), double ops, const char* unit) {
  int sms = 0, khz = 0;
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
  cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, 0);
  const int blocks = 4 * sms, threads = 256;
  float* out = nullptr;
  cudaMalloc(&out, sizeof(float) * blocks * threads);
  cudaEvent_t a, b;
  cudaEventCreate(&a), cudaEventCreate(&b);
  k<<<blocks, threads>>>(out);  // warm-up
  float best = 1e30f;
  for (int r = 0; r < 5; ++r) {
    cudaEventRecord(a);
    k<<<blocks, threads>>>(out);
    cudaEventRecord(b);
    cudaEventSynchronize(b);
    float ms = 0;
    cudaEventElapsedTime(&ms, a, b);
    best = ms < best ? ms : best;
  }
  const double total = double(blocks) * threads * kIters * ops;
  std::printf("[%s] %.1f %s per SM per clock (%.0f G/s at %d MHz, %d SMs)\n", name,
              total / (best * 1e-3) / sms / (khz * 1e3), unit, total / (best * 1e-3) / 1e9, khz / 1000, sms);
  cudaFree(out);
  if (cudaGetLastError() != cudaSuccess) std::printf("[%s] CUDA error\n", name);
}
}  // namespace

int main() {
  const double mma_flop = 8 * 4096.0 / 32;  // per thread: 8 mma.sync of 16 x 8 x 16 (4096 FLOP) per warp
  time("mma.sync bf16", mma_ex2<0>, mma_flop, "FLOP");
  time("ex2 f32", ex2_f32, 8, "elements");
  time("ex2 f16x2", ex2_x2<false>, 16, "elements");
  time("ex2 bf16x2", ex2_x2<true>, 16, "elements");
  time("mma.sync + 2 ex2", mma_ex2<2>, mma_flop, "FLOP");
  time("mma.sync + 4 ex2", mma_ex2<4>, mma_flop, "FLOP");
  time("mma.sync tf32", mma_tf32, 8 * 2048.0 / 32, "FLOP");  // 8 mma.sync of 16 x 8 x 8 per warp
  time("fma f32", fma_f32, 8 * 2.0, "FLOP");
}

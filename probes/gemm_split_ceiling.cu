// The ceilings the gemm split page compares step 14 with, per SM and clock, on every SM:
// (1) mma.sync m16n8k8 TF32 with fp32 accumulators (step 14's product), eight independent
// accumulators per warp; (2) fma.rn.f32 (the FMA pipe of steps 1 to 13, and cuBLAS's fp32 kernel),
// eight independent chains per thread. Three TF32 products per term make the split's ceiling a third
// of (1), to set against (2). The clock is the device's maximum (cudaDevAttrClockRate): under load
// it may be lower, so the rates per clock are lower bounds. Built and run by
// probes/gemm_split_ceiling.sh.
#include <cuda_runtime.h>

#include <cstdio>

namespace {
constexpr int kIters = 4096;

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

__global__ void ffma(float* out) {
  float c[8];
  for (int i = 0; i < 8; ++i) c[i] = threadIdx.x * 1e-6f + i;
  const float a = 0.999f, b = 1e-3f;
  for (int it = 0; it < kIters; ++it)
#pragma unroll
    for (int i = 0; i < 8; ++i) asm volatile("fma.rn.f32 %0, %0, %1, %2;" : "+f"(c[i]) : "f"(a), "f"(b));
  float s = 0;
  for (float x : c) s += x;
  out[blockIdx.x * blockDim.x + threadIdx.x] = s;
}

// flop: per thread and iteration of the kernel's loop.
void time(const char* name, void (*k)(float*), double flop) {
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
  const double total = double(blocks) * threads * kIters * flop;
  std::printf("[%s] %.1f FLOP per SM per clock (%.1f TFLOP/s at %d MHz, %d SMs)\n", name,
              total / (best * 1e-3) / sms / (khz * 1e3), total / (best * 1e-3) / 1e12, khz / 1000, sms);
  cudaFree(out);
  if (cudaGetLastError() != cudaSuccess) std::printf("[%s] CUDA error\n", name);
}
}  // namespace

int main() {
  time("mma.sync tf32", mma_tf32, 8 * 2048.0 / 32);  // 8 mma.sync of 16 x 8 x 8 (2048 FLOP) per warp
  time("fma f32", ffma, 8 * 2.0);
}

// Tensor-core GEMM benchmarks: every variant and the cuBLAS bf16 baseline in one process.
// Names: tc_gemm/<variant>/<M>x<N>x<K>. TFLOP/s counts 2 M N K flops. D = A B (beta = 0, D in
// place of C), bf16 in and out, fp32 accumulation; the baseline is cublasGemmEx with CUDA_R_16BF
// matrices and CUBLAS_COMPUTE_32F. Every repetition is timed after 0.1 s of untimed runs. Each
// step's counters record its kernel's attributes, read from the plan its launcher uses at that
// shape. Steps 15 and 16 are timed after their one-time setup (prepare_cluster_order).
#include <benchmark/benchmark.h>
#include <cublas_v2.h>

#include <tc_gemm/tc_gemm.cuh>

#include <string>

#include "bench_util.hpp"
#include "cublas_handle.hpp"
#include "device_buffer.hpp"
#include "random.hpp"

namespace tc = smem::tc_gemm;
using smem::test::DeviceBuffer;
using bf16 = tc::bf16;

namespace {

struct Shape {
  int M, N, K;
};
constexpr Shape kShapes[] = {{1024, 1024, 1024}, {2048, 2048, 2048}, {4096, 4096, 4096},
                             {8192, 8192, 8192}, {4096, 4096, 1024}, {4000, 3001, 1000}};

// Row-major D = A B is, column-major, D^T = B^T A^T.
cudaError_t cublas_bf16(const Shape& s, const bf16* A, const bf16* B, bf16* D) {
  const float one = 1.0f, zero = 0.0f;
  const cublasStatus_t st =
      cublasGemmEx(smem::test::cublas_handle(), CUBLAS_OP_N, CUBLAS_OP_N, s.N, s.M, s.K, &one, B, CUDA_R_16BF, s.N, A,
                   CUDA_R_16BF, s.K, &zero, D, CUDA_R_16BF, s.N, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
  return st == CUBLAS_STATUS_SUCCESS ? cudaSuccess : cudaErrorUnknown;
}

// Fewer iterations for the big shapes and for the slow first steps.
int iterations(Shape s, bool slow) {
  const double flops = 2.0 * s.M * s.N * s.K;
  if (slow) return flops > 1e11 ? 3 : 10;
  return flops > 1e12 ? 20 : 50;
}

// Random bf16 inputs of a shape, made once and kept (kept_inputs).
struct Inputs {
  DeviceBuffer<bf16> A, B, D;
};
Inputs& inputs(Shape s) {
  return smem::bench::kept_inputs<Inputs>(s.M, s.N, s.K, [&](Inputs& in) {
    auto g = smem::test::rng(std::uint64_t(s.M) * 31 + s.K);
    auto fill = [&](std::size_t n) {
      const auto f = smem::test::random_vector<float>(n, g);
      std::vector<bf16> v(n);
      for (std::size_t i = 0; i < n; ++i) v[i] = __float2bfloat16_rn(f[i]);
      return DeviceBuffer<bf16>(v);
    };
    in.A = fill(std::size_t(s.M) * s.K);
    in.B = fill(std::size_t(s.K) * s.N);
    in.D = DeviceBuffer<bf16>(std::size_t(s.M) * s.N);
  });
}
// The mma.sync roof: each warp issues independent m16n8k16 bf16 mma.sync from registers only,
// 8 accumulator tiles in flight, no memory traffic; the grid fills the GPU with 16 warps per SM.
// Its TFLOP/s, for the FLOPs of a shape, is what no mma.sync kernel can pass on this GPU.
__global__ void __launch_bounds__(256) mma_roof_kernel(int iters, float* sink) {
  unsigned a[4] = {threadIdx.x, threadIdx.x * 3u, threadIdx.x * 5u, threadIdx.x * 7u}, b0 = threadIdx.x, b1 = ~b0;
  float acc[8][4] = {};
  for (int i = 0; i < iters; ++i)
#pragma unroll
    for (int t = 0; t < 8; ++t) tc::mma_16816(acc[t], a, b0, b1);
  float s = 0;
  for (auto& t : acc)
    for (float x : t) s += x;
  if (s == 1.2345f) *sink = s;  // keeps the work alive; never true for these inputs
}

cudaError_t mma_roof(const Shape& s, float* sink) {
  int sms = 0, dev = 0;
  if (cudaError_t e = cudaGetDevice(&dev); e != cudaSuccess) return e;
  if (cudaError_t e = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev); e != cudaSuccess) return e;
  const double mmas = 2.0 * s.M * s.N * s.K / (2.0 * 16 * 8 * 16);  // mma.sync of the shape
  const int warps = sms * 16, iters = int(mmas / (warps * 8.0)) + 1;
  mma_roof_kernel<<<2 * sms, 256>>>(iters, sink);
  return cudaGetLastError();
}

// The ldmatrix roof: step 6's warp loop with its default shape (8 warps of 64 x 64, LaneFrags'
// fragment loads, double-buffered, one barrier per window of 64) over one resident swizzled
// stage, with no global-to-shared copies; one block per SM, each running its share of the shape's
// windows. The gap to mma_roof is the cost of the ldmatrix reads; the gap from it to step 6 is the
// cost of filling shared memory from global memory.
using RoofShape = tc::MultistageDefault;
__global__ void __launch_bounds__(RoofShape::kThreads, 1) ldsm_roof_kernel(int windows, float* sink) {
  using S = RoofShape;
  extern __shared__ __align__(128) bf16 stage[];
  // Random-looking values with full mantissas: the tensor cores draw more power (and the GPU
  // clocks lower) on random data than on zeros or small integers, so the roof uses data like A's.
  for (int i = threadIdx.x; i < S::kStageElems; i += S::kThreads)
    stage[i] = __float2bfloat16_rn(__uint_as_float((unsigned(i) * 2654435761u) >> 9 | 0x3f800000u) - 1.5f);
  __syncthreads();
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int wm = warp / S::kWarpsN * S::kWM, wn = warp % S::kWarpsN * S::kWN;
  float acc[S::kMI][S::kNJ][4] = {};
  unsigned a[2][S::kMI][4], b[2][S::kNJ][2];
  const tc::LaneFrags<S> frags(wm, wn, lane);  // step 6's fragment loads
  const unsigned stage_addr = tc::smem_u32(stage);
  frags.load(a[0], b[0], stage_addr, 0);
  for (int w = 0; w < windows; ++w)
#pragma unroll
    for (int k = 0; k < S::kBK / 16; ++k) {
      const int next = (k + 1) % (S::kBK / 16);
      if (next == 0) __syncthreads();
      frags.load(a[(k + 1) % 2], b[(k + 1) % 2], stage_addr, next);
      tc::warp_mma(acc, a[k % 2], b[k % 2]);
    }
  float s = 0;
  for (auto& i : acc)
    for (auto& j : i)
      for (float x : j) s += x;
  if (s == 1.2345f) *sink = s;  // keeps the work alive; never true for these inputs
}

cudaError_t ldsm_roof(const Shape& s, float* sink) {
  using S = RoofShape;
  int sms = 0, dev = 0;
  if (cudaError_t e = cudaGetDevice(&dev); e != cudaSuccess) return e;
  if (cudaError_t e = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev); e != cudaSuccess) return e;
  constexpr int kBytes = S::kStageElems * int(sizeof(bf16));
  if (cudaError_t e = cudaFuncSetAttribute(ldsm_roof_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, kBytes);
      e != cudaSuccess)
    return e;
  const double windows = 2.0 * s.M * s.N * s.K / (2.0 * S::kBM * S::kBN * S::kBK);  // of the shape
  ldsm_roof_kernel<<<sms, S::kThreads, kBytes>>>(int(windows / sms) + 1, sink);
  return cudaGetLastError();
}

template <class Launch>
void register_one(const std::string& variant, Shape s, Launch launch, const tc::Variant* step = nullptr) {
  const std::string name = "tc_gemm/" + variant + "/" + std::to_string(s.M) + "x" + std::to_string(s.N) + "x" +
                           std::to_string(s.K);
  const bool slow = step && (*step == tc::Variant::wmma_global || *step == tc::Variant::wmma_smem);
  benchmark::RegisterBenchmark(name.c_str(), [=](benchmark::State& state) {
#if defined(SMEM_TC_GEMM_SM90A)
    // Steps 15 and 16 (and their tuning candidates) walk their clusters by GPC once the device is
    // measured: the one-time setup, before any timing.
    int dev = 0;
    if (cudaError_t e = cudaGetDevice(&dev); e != cudaSuccess || (e = tc::prepare_cluster_order(dev)) != cudaSuccess) {
      state.SkipWithError((std::string("prepare_cluster_order: ") + cudaGetErrorString(e)).c_str());
      return;
    }
#endif
    Inputs& in = inputs(s);
    const bf16 *A = in.A.get(), *B = in.B.get();
    bf16* D = in.D.get();
    const double secs = smem::bench::time_kernel(
        state, [&] { return launch(A, B, D); }, true, nullptr, smem::bench::kGemmWarmSeconds);
    smem::bench::set_rate(state, "TFLOP/s", 2.0 * s.M * s.N * s.K, secs, 1e-12);
    if (step) smem::bench::set_kernel_counters(state, tc::plan(*step, s.M, s.N, s.K, A, s.K, B, s.N, D, s.N, D, s.N));
  })->UseManualTime()->Iterations(iterations(s, slow))->Unit(benchmark::kMillisecond);
}

// With SMEM_TUNE=1 (`./cookbook tune tc_gemm`): step 6's kernel with every candidate shape of step 7's
// table, named tune_<BM>x<BN>x<BK>_<WM>x<WN>_<S>.
template <int BM, int BN, int BK, int WM, int WN, int S>
void register_shape_candidate(Shape s) {
  using T = tc::TcShape<BM, BN, BK, WM, WN, S>;
  const std::string v = "tune_" + std::to_string(BM) + "x" + std::to_string(BN) + "x" + std::to_string(BK) + "_" +
                        std::to_string(WM) + "x" + std::to_string(WN) + "_" + std::to_string(S);
  register_one(v, s, [=](const bf16* A, const bf16* B, bf16* D) {
    return tc::multistage_with<T>(s.M, s.N, s.K, 1.0f, A, s.K, B, s.N, 0.0f, D, s.N, D, s.N);
  });
}

#if defined(SMEM_TC_GEMM_SM90A)
// With SMEM_TUNE=1: step 15 with other shapes (step 16's candidates), named
// tune_hopper_<BN>_<stages>_<cluster_m>_<group_rows>.
template <int BN, int S, int CM, int G>
void register_hopper_candidate(Shape s) {
  using T = tc::ClusterShapeOf<BN, S, CM, G>;
  const std::string v = "tune_hopper_" + std::to_string(BN) + "_" + std::to_string(S) + "_" + std::to_string(CM) + "_" +
                        std::to_string(G);
  register_one(v, s, [=](const bf16* A, const bf16* B, bf16* D) {
    return tc::launch_tma<T>(tc::overlapped_plan_with<T>, s.M, s.N, s.K, 1.0f, A, s.K, B, s.N, 0.0f, D, s.N, D, s.N,
                             nullptr, tc::cluster_order<T>);
  });
}
#endif
const bool registered = [] {
  smem::bench::add_steps_context(
      "tc_gemm", "cublas",
      smem::bench::step_infos(
          {{"cublas", -1, "", "cublasGemmEx, bf16 matrices (CUDA_R_16BF), fp32 compute (CUBLAS_COMPUTE_32F)."},
           {"mma_roof", -1, "", "The shape's mma.sync m16n8k16 issued from registers only: the ceiling of steps 3 to 7."},
           {"ldsm_roof", -1, "",
            "Step 6's ldmatrix and mma.sync loop over one resident shared stage, no global copies."}},
          tc::kSteps));
  for (auto s : kShapes) {
    register_one("cublas", s, [=](const bf16* A, const bf16* B, bf16* D) { return cublas_bf16(s, A, B, D); });
    register_one("mma_roof", s, [=](const bf16*, const bf16*, bf16* D) {
      return mma_roof(s, reinterpret_cast<float*>(D));
    });
    register_one("ldsm_roof", s, [=](const bf16*, const bf16*, bf16* D) {
      return ldsm_roof(s, reinterpret_cast<float*>(D));
    });
    for (const auto& v : tc::kAllVariants)
      register_one(tc::name(v), s, [=](const bf16* A, const bf16* B, bf16* D) {
        return tc::run(v, s.M, s.N, s.K, 1.0f, A, s.K, B, s.N, 0.0f, D, s.N, D, s.N);
      }, &v);
  }
  if (smem::bench::tuning())
    for (auto s : kShapes) {
      register_shape_candidate<128, 256, 64, 64, 64, 3>(s);  // step 6's shape
      register_shape_candidate<128, 256, 64, 64, 64, 4>(s);
      register_shape_candidate<256, 128, 64, 64, 64, 3>(s);
      register_shape_candidate<256, 128, 64, 64, 64, 4>(s);
      register_shape_candidate<128, 128, 64, 64, 64, 3>(s);
      register_shape_candidate<128, 128, 64, 64, 64, 4>(s);
      register_shape_candidate<128, 128, 64, 64, 32, 3>(s);
      register_shape_candidate<128, 128, 64, 64, 32, 4>(s);
      register_shape_candidate<128, 128, 64, 32, 64, 3>(s);
      register_shape_candidate<64, 256, 64, 32, 64, 3>(s);
      register_shape_candidate<64, 128, 64, 32, 64, 4>(s);
      register_shape_candidate<128, 64, 64, 64, 32, 4>(s);
      register_shape_candidate<128, 256, 128, 64, 64, 2>(s);
      register_shape_candidate<256, 128, 128, 64, 64, 2>(s);
      register_shape_candidate<128, 128, 128, 64, 64, 3>(s);
#if defined(SMEM_TC_GEMM_SM90A)
      register_hopper_candidate<256, 4, 2, 8>(s);
      register_hopper_candidate<256, 3, 2, 8>(s);
      register_hopper_candidate<256, 4, 2, 4>(s);
      register_hopper_candidate<256, 4, 2, 16>(s);
      register_hopper_candidate<256, 4, 1, 8>(s);
      register_hopper_candidate<256, 4, 1, 16>(s);
      register_hopper_candidate<128, 6, 2, 8>(s);
      register_hopper_candidate<128, 6, 1, 8>(s);
      register_hopper_candidate<256, 4, 1, 1>(s);
      register_hopper_candidate<256, 4, 2, 1>(s);
      register_hopper_candidate<128, 6, 2, 16>(s);
#endif
    }
  return true;
}();

}  // namespace

// SGEMM benchmarks: every variant and the cuBLAS baselines in one process: `cublas` in true fp32
// (the reference) and `cublas_tf32` (TF32 tensor cores, one TF32 product per term).
// Names: gemm/<variant>/<M>x<N>x<K>. TFLOP/s counts 2 M N K flops. Each step's counters also
// record its kernel's registers, static and dynamic shared memory per block, threads per block,
// blocks per SM (cudaOccupancyMaxActiveBlocksPerMultiprocessor) and grid size, read from the
// plan its launcher uses at that shape. At 2048x2048x2048, every variant's entry also holds its
// error: counters err_uniform, err_normal, err_exp20 and err_k16384, each the largest
// |c - c_ref| / sum_k |a_ik||b_kj| over the elements of C = A B (alpha 1, beta 0) against a float64
// reference, on 2048 x 2048 outputs with inputs uniform(-1, 1), normal, +-m 2^e (m in [1, 2), e in
// [-20, 19]: magnitudes 2^-20 to 2^20), each with K = 2048, and uniform(-1, 1) with K = 16384.
// With SMEM_TUNE=1 (`./cookbook tune gemm`), step 12's kernel with each candidate shape of step
// 13's table too (gemm_tune_candidates.cuh), named tune_<BM>x<BN>x<BK>_<WM>x<WN>_<TM>x<TN>_<stages>,
// and in sm_90a builds step 16's with each of step 17's, named tune_split_<BM>_<stages>_<group_rows>.
#include <benchmark/benchmark.h>
#include <cublas_v2.h>

#include <gemm/gemm.cuh>

#include <cmath>
#include <cstring>
#include <functional>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "bench_util.hpp"
#include "cublas_handle.hpp"
#include "device_buffer.hpp"
#include "gemm_tune_candidates.cuh"
#include "random.hpp"
#include "gemm_reference.cuh"

namespace gm = smem::gemm;
using smem::test::DeviceBuffer;

using smem::test::cublas_handle;

namespace {

struct Shape {
  int M, N, K;
};
constexpr Shape kShapes[] = {{1024, 1024, 1024}, {2048, 2048, 2048}, {4096, 4096, 4096}, {8192, 8192, 8192},
                             {4096, 4096, 1024}, {1000, 1000, 1000}, {4000, 4000, 4000}, {3001, 2999, 1000}};

// Row-major C = alpha A B + beta C in true fp32 (CUBLAS_COMPUTE_32F): column-major C^T = B^T A^T.
cudaError_t cublas_sgemm(int M, int N, int K, float alpha, const float* A, int lda, const float* B, int ldb,
                         float beta, float* C, int ldc) {
  const cublasStatus_t s = cublasGemmEx(cublas_handle(), CUBLAS_OP_N, CUBLAS_OP_N, N, M, K, &alpha, B, CUDA_R_32F,
                                        ldb, A, CUDA_R_32F, lda, &beta, C, CUDA_R_32F, ldc, CUBLAS_COMPUTE_32F,
                                        CUBLAS_GEMM_DEFAULT);
  return s == CUBLAS_STATUS_SUCCESS ? cudaSuccess : cudaErrorUnknown;
}

// The same with TF32 tensor cores allowed (CUBLAS_COMPUTE_32F_FAST_TF32): one TF32 product per term.
cudaError_t cublas_tf32(int M, int N, int K, float alpha, const float* A, int lda, const float* B, int ldb,
                        float beta, float* C, int ldc) {
  const cublasStatus_t s = cublasGemmEx(cublas_handle(), CUBLAS_OP_N, CUBLAS_OP_N, N, M, K, &alpha, B, CUDA_R_32F,
                                        ldb, A, CUDA_R_32F, lda, &beta, C, CUDA_R_32F, ldc,
                                        CUBLAS_COMPUTE_32F_FAST_TF32, CUBLAS_GEMM_DEFAULT);
  return s == CUBLAS_STATUS_SUCCESS ? cudaSuccess : cudaErrorUnknown;
}

// Fixed iteration counts, fewer for the big shapes and for the slow early steps (each of their
// runs at 4096^3 and above takes tens to hundreds of milliseconds), so the suite stays short.
int iterations(Shape s, bool slow) {
  const double flops = 2.0 * s.M * s.N * s.K;
  if (slow && flops > 1e11) return 2;
  return flops > 1e12 ? 3 : flops > 1e11 ? 5 : flops > 1e10 ? 10 : 20;
}

// Random inputs of a shape, made once and kept (kept_inputs).
struct Inputs {
  DeviceBuffer<float> A, B, C;
};
Inputs& inputs(Shape s) {
  return smem::bench::kept_inputs<Inputs>(s.M, s.N, s.K, [&](Inputs& in) {
    auto g = smem::test::rng(std::uint64_t(s.M) * 31 + s.K);
    in.A = DeviceBuffer<float>(smem::test::random_vector<float>(std::size_t(s.M) * s.K, g));
    in.B = DeviceBuffer<float>(smem::test::random_vector<float>(std::size_t(s.K) * s.N, g));
    in.C = DeviceBuffer<float>(smem::test::random_vector<float>(std::size_t(s.M) * s.N, g));
  });
}


// ---- Accuracy: the error counters of the 2048x2048x2048 entries. ----

// A C = A B of 2048 x 2048 outputs (alpha 1, beta 0) returning cudaError_t: a variant or a baseline.
using Gemm = std::function<cudaError_t(int M, int N, int K, const float* A, const float* B, float* C)>;

using smem::test::Spread;
struct AccuracyInput {
  const char* counter;
  int K;
  Spread spread;
};
constexpr int kAccuracyMN = 2048;
constexpr Shape kAccuracyShape = {2048, 2048, 2048};  // the entries that hold the counters
constexpr AccuracyInput kAccuracyInputs[] = {{"err_uniform", 2048, Spread::uniform},
                                             {"err_normal", 2048, Spread::normal},
                                             {"err_exp20", 2048, Spread::exp20},
                                             {"err_k16384", 16384, Spread::uniform}};

// One input's operands and float64 reference (R and S of gemm_reference.cuh), made once.
struct Reference {
  DeviceBuffer<float> A, B, C;
  DeviceBuffer<double> R, S;
};
Reference& reference(int i) {
  static std::map<int, Reference> made;
  auto [it, fresh] = made.try_emplace(i);
  if (fresh) {
    const AccuracyInput& in = kAccuracyInputs[i];
    const std::size_t mn = std::size_t(kAccuracyMN) * kAccuracyMN, mk = std::size_t(kAccuracyMN) * in.K;
    auto g = smem::test::rng(1000u + i);
    Reference& r = it->second;
    r.A = DeviceBuffer<float>(smem::test::spread_vector(mk, in.spread, g));
    r.B = DeviceBuffer<float>(smem::test::spread_vector(mk, in.spread, g));
    r.C = DeviceBuffer<float>(mn);
    r.R = DeviceBuffer<double>(mn);
    r.S = DeviceBuffer<double>(mn);
    SMEM_CUDA_CHECK(smem::test::gemm_reference_gpu(kAccuracyMN, kAccuracyMN, in.K, 1.0f, r.A.get(), in.K, r.B.get(),
                                                   kAccuracyMN, 0.0f, nullptr, kAccuracyMN, r.R.get(), r.S.get()));
  }
  return it->second;
}

// A variant's error on each input (a negative value where it cannot run the input), measured once.
const std::vector<double>& errors(const std::string& variant, const Gemm& gemm) {
  static std::map<std::string, std::vector<double>> made;
  auto [it, fresh] = made.try_emplace(variant);
  if (fresh)
    for (int i = 0; i < int(std::size(kAccuracyInputs)); ++i) {
      Reference& r = reference(i);
      double err = -1;
      if (gemm(kAccuracyMN, kAccuracyMN, kAccuracyInputs[i].K, r.A.get(), r.B.get(), r.C.get()) == cudaSuccess) {
        DeviceBuffer<unsigned long long> worst(std::vector<unsigned long long>{0});
        SMEM_CUDA_CHECK(smem::test::max_scaled_error_gpu(kAccuracyMN, kAccuracyMN, r.C.get(), kAccuracyMN, r.R.get(),
                                                         r.S.get(), worst.get()));
        const unsigned long long bits = worst.download()[0];
        std::memcpy(&err, &bits, sizeof err);
      }
      SMEM_CUDA_CHECK(cudaGetLastError());
      it->second.push_back(err);
    }
  return it->second;
}

// The error counters of a variant's entry.
void set_errors(benchmark::State& state, const std::string& variant, const Gemm& gemm) {
  const auto& e = errors(variant, gemm);
  for (std::size_t i = 0; i < e.size(); ++i)
    if (e[i] >= 0) state.counters[kAccuracyInputs[i].counter] = e[i];
}

template <class Launch>
void register_one(const std::string& variant, Shape s, Launch launch, const gm::Variant* step = nullptr,
                  bool slow = false, const Gemm& gemm = nullptr) {
  const std::string name = "gemm/" + variant + "/" + std::to_string(s.M) + "x" + std::to_string(s.N) + "x" +
                           std::to_string(s.K);
  benchmark::RegisterBenchmark(name.c_str(), [=](benchmark::State& state) {
    Inputs& in = inputs(s);
    const float *A = in.A.get(), *B = in.B.get();
    float* C = in.C.get();
    const double secs = smem::bench::time_kernel(
        state, [&] { return launch(A, B, C); }, true, nullptr, smem::bench::kGemmWarmSeconds);
    smem::bench::set_rate(state, "TFLOP/s", 2.0 * s.M * s.N * s.K, secs, 1e-12);
    if (step) smem::bench::set_kernel_counters(state, gm::plan(*step, s.M, s.N, s.K, A, s.K, B, s.N, C, s.N));
    if (gemm && s.M == kAccuracyShape.M && s.N == kAccuracyShape.N && s.K == kAccuracyShape.K)
      set_errors(state, variant, gemm);
  })->UseManualTime()->Iterations(iterations(s, slow))->Unit(benchmark::kMillisecond);
}

// The steps before register blocktiling: under a fifth of cuBLAS, timed with fewer iterations.
bool is_slow(gm::Variant v) {
  for (auto x : {gm::Variant::naive, gm::Variant::coalesced, gm::Variant::full_k_strip, gm::Variant::tiled_16,
                 gm::Variant::tiled_32, gm::Variant::tiled_32_padded, gm::Variant::double_buffered})
    if (v == x) return true;
  return false;
}

const bool registered = [] {
  smem::bench::add_steps_context(
      "gemm", "cublas",
      smem::bench::step_infos({{"cublas", -1, "", "cublasGemmEx in true fp32 (CUBLAS_COMPUTE_32F, no TF32)."},
                               {"cublas_tf32", -1, "",
                                "cublasGemmEx on TF32 tensor cores (CUBLAS_COMPUTE_32F_FAST_TF32): one TF32 product."}},
                              gm::kSteps));
  const Gemm blas = [](int M, int N, int K, const float* A, const float* B, float* C) {
    return cublas_sgemm(M, N, K, 1.0f, A, K, B, N, 0.0f, C, N);
  };
  const Gemm blas_tf32 = [](int M, int N, int K, const float* A, const float* B, float* C) {
    return cublas_tf32(M, N, K, 1.0f, A, K, B, N, 0.0f, C, N);
  };
  for (auto s : kShapes) {
    register_one("cublas", s, [=](const float* A, const float* B, float* C) {
      return cublas_sgemm(s.M, s.N, s.K, 1.0f, A, s.K, B, s.N, 0.0f, C, s.N);
    }, nullptr, false, blas);
    register_one("cublas_tf32", s, [=](const float* A, const float* B, float* C) {
      return cublas_tf32(s.M, s.N, s.K, 1.0f, A, s.K, B, s.N, 0.0f, C, s.N);
    }, nullptr, false, blas_tf32);
    for (const auto& v : gm::kAllVariants) {
      if (v == gm::Variant::naive && s.M >= 8192) continue;  // minutes per run: skipped
      // A step that cannot run the shape (the full-K strip beyond its K limit) has a null plan.
      if (gm::plan(v, s.M, s.N, s.K, nullptr, s.K, nullptr, s.N, nullptr, s.N).kernel == nullptr) continue;
      register_one(gm::name(v), s, [=](const float* A, const float* B, float* C) {
        return gm::run(v, s.M, s.N, s.K, 1.0f, A, s.K, B, s.N, 0.0f, C, s.N);
      }, &v, is_slow(v), [v](int M, int N, int K, const float* A, const float* B, float* C) {
        return gm::run(v, M, N, K, 1.0f, A, K, B, N, 0.0f, C, N);
      });
    }
  }
  if (smem::bench::tuning())
    for (auto s : kShapes) {
#define SMEM_TUNE_CASE(BM, BN, BK, WM, WN, TM, TN, S)                                                         \
  register_one("tune_" #BM "x" #BN "x" #BK "_" #WM "x" #WN "_" #TM "x" #TN "_" #S, s,                        \
               [=](const float* A, const float* B, float* C) {                                                \
                 return gm::multistage_with<gm::MultistageShape<BM, BN, BK, WM, WN, TM, TN, S>>(              \
                     s.M, s.N, s.K, 1.0f, A, s.K, B, s.N, 0.0f, C, s.N, nullptr);                             \
               });
      SMEM_TUNE_CANDIDATES(SMEM_TUNE_CASE)
#undef SMEM_TUNE_CASE
#if defined(SMEM_GEMM_SM90A)
#define SMEM_SPLIT_TUNE_CASE(BM, S, G)                                                                            \
  register_one("tune_split_" #BM "_" #S "_" #G, s, [=](const float* A, const float* B, float* C) {              \
    return gm::split_presplit_with<gm::PresplitShapeOf<BM, S, G>>(s.M, s.N, s.K, 1.0f, A, s.K, B, s.N, 0.0f, C, \
                                                                   s.N);                                        \
  });
      SMEM_SPLIT_TUNE_CANDIDATES(SMEM_SPLIT_TUNE_CASE)
#undef SMEM_SPLIT_TUNE_CASE
#endif
    }
  return true;
}();

}  // namespace

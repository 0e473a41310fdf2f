// The SGEMM tuner: `./cookbook tune gemm` (built only with -DSMEM_BUILD_TUNER=ON).
//
// For the GPU present it checks every candidate shape of the multistage kernel
// (gemm_tune_candidates.cuh) against cuBLAS fp32 on shapes with partial tiles, odd leading
// dimensions and a NaN-poisoned C, times every valid candidate at each tuning size (square,
// median of event-timed launches), prints every candidate's TFLOP/s next to cuBLAS's, and, with
// --write <file>, puts the winner of each size class for this GPU into the committed
// table (between the markers in recipes/gemm/sgemm_13_autotuned.cuh), keeping the other GPUs'
// entries (matched by the table key: compute capability, SMs, shared memory and registers per SM),
// and prints how much each winner gains over the heuristic shape of step 13.
//
//   gemm_tune [--write FILE] [--sizes 1000,2048,4096,8192] [--log FILE]
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <gemm/sgemm_13_autotuned.cuh>

#include "cuda_check.hpp"
#include "cublas_handle.hpp"
#include "device_buffer.hpp"
#include "gemm_tune_candidates.cuh"
#include "kernel_attributes.hpp"
#include "random.hpp"

using smem::test::DeviceBuffer;
using smem::tune::Candidate;

using smem::test::cublas_handle;

namespace {

// Row-major C = alpha A B + beta C is column-major C^T = alpha B^T A^T + beta C^T.
cudaError_t cublas_sgemm(int M, int N, int K, float alpha, const float* A, int lda, const float* B,
                         int ldb, float beta, float* C, int ldc, cudaStream_t = nullptr) {
  const cublasStatus_t s = cublasSgemm(cublas_handle<CUBLAS_PEDANTIC_MATH>(), CUBLAS_OP_N, CUBLAS_OP_N,
                                       N, M, K, &alpha, B, ldb, A, lda, &beta, C, ldc);
  return s == CUBLAS_STATUS_SUCCESS ? cudaSuccess : cudaErrorUnknown;
}

// Uniform values in [-1, 1) from a hash of (seed, i): fresh every run, fast for large buffers.
__global__ void fill_random(float* p, std::size_t n, unsigned long long seed) {
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n;
       i += std::size_t(gridDim.x) * blockDim.x) {
    unsigned long long x = (i + 1) * 0x9E3779B97F4A7C15ull ^ seed;
    x ^= x >> 31, x *= 0xBF58476D1CE4E5B9ull, x ^= x >> 29, x *= 0x94D049BB133111EBull, x ^= x >> 32;
    p[i] = float(x >> 40) * (2.0f / 16777216.0f) - 1.0f;
  }
}
void randomize(DeviceBuffer<float>& b, unsigned long long salt) {
  fill_random<<<1024, 256>>>(b.get(), b.size(), smem::test::run_seed() ^ (salt * 0x2545F4914F6CDD1Dull));
  SMEM_CUDA_CHECK(cudaGetLastError());
}

struct Shape {
  int M, N, K, lda, ldb, ldc;
  float alpha, beta;
};

// Relative Frobenius error of `launch` against cuBLAS on one shape; +inf on a launch error or a
// non-finite output (C is NaN-poisoned before the call, so an unwritten element fails).
double check(smem::tune::Launch launch, const Shape& s) {
  DeviceBuffer<float> A(std::size_t(s.M) * s.lda), B(std::size_t(s.K) * s.ldb),
      C0(std::size_t(s.M) * s.ldc), C(C0.size()), R(C0.size());
  randomize(A, 1), randomize(B, 2), randomize(C0, 3);
  if (s.beta == 0.0f) C0.poison();
  SMEM_CUDA_CHECK(cudaMemcpy(C.get(), C0.get(), C0.bytes(), cudaMemcpyDeviceToDevice));
  SMEM_CUDA_CHECK(cudaMemcpy(R.get(), C0.get(), C0.bytes(), cudaMemcpyDeviceToDevice));
  if (s.beta == 0.0f) SMEM_CUDA_CHECK(cudaMemset(R.get(), 0, R.bytes()));
  if (launch(s.M, s.N, s.K, s.alpha, A.get(), s.lda, B.get(), s.ldb, s.beta, C.get(), s.ldc, nullptr) != cudaSuccess ||
      cudaDeviceSynchronize() != cudaSuccess)
    return INFINITY;
  SMEM_CUDA_CHECK(cublas_sgemm(s.M, s.N, s.K, s.alpha, A.get(), s.lda, B.get(), s.ldb, s.beta, R.get(), s.ldc));
  const auto c = C.download(), r = R.download();
  double num = 0, den = 0;
  for (int m = 0; m < s.M; ++m)
    for (int n = 0; n < s.N; ++n) {
      const double g = c[std::size_t(m) * s.ldc + n], x = r[std::size_t(m) * s.ldc + n];
      if (!std::isfinite(g)) return INFINITY;
      num += (g - x) * (g - x), den += x * x;
    }
  return std::sqrt(num / (den > 0 ? den : 1));
}

// Median seconds of `reps` event-timed launches after two warm-ups; negative on a launch error.
double time_median(smem::tune::Launch launch, int n, int reps, float* A, float* B, float* C) {
  for (int i = 0; i < 2; ++i)
    if (launch(n, n, n, 1.0f, A, n, B, n, 0.0f, C, n, nullptr) != cudaSuccess) return -1;
  cudaEvent_t e0, e1;
  SMEM_CUDA_CHECK(cudaEventCreate(&e0));
  SMEM_CUDA_CHECK(cudaEventCreate(&e1));
  std::vector<double> t;
  for (int i = 0; i < reps; ++i) {
    SMEM_CUDA_CHECK(cudaEventRecord(e0));
    const cudaError_t err = launch(n, n, n, 1.0f, A, n, B, n, 0.0f, C, n, nullptr);
    SMEM_CUDA_CHECK(cudaEventRecord(e1));
    SMEM_CUDA_CHECK(cudaEventSynchronize(e1));
    if (err != cudaSuccess) return -1;
    float ms = 0;
    SMEM_CUDA_CHECK(cudaEventElapsedTime(&ms, e0, e1));
    t.push_back(ms * 1e-3);
  }
  cudaEventDestroy(e0), cudaEventDestroy(e1);
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

std::string shape_name(const Candidate& c) {
  char b[96];
  std::snprintf(b, sizeof b, "%dx%dx%d/%dx%d/%dx%d/%d", c.bm, c.bn, c.bk, c.wm, c.wn, c.tm, c.tn, c.stages);
  return b;
}

// Replaces the entries of this GPU's key (the first four fields, `key`) in the tuned table of
// `path`, keeping every other line.
void write_config(const std::string& path, const std::string& key, const std::vector<std::string>& entries) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot read " + path);
  std::vector<std::string> lines;
  for (std::string l; std::getline(in, l);) lines.push_back(l);
  const auto begin = std::find(lines.begin(), lines.end(), "// BEGIN TUNED TABLE");
  const auto end = std::find(lines.begin(), lines.end(), "// END TUNED TABLE");
  if (begin == lines.end() || end == lines.end() || end <= begin + 1)
    throw std::runtime_error(path + ": no tuned-table markers");
  std::vector<std::string> keep;  // entries of other GPUs, without the trailing backslash
  for (auto it = begin + 2; it != end; ++it) {
    std::string l = *it;
    while (!l.empty() && (l.back() == '\\' || l.back() == ' ')) l.pop_back();
    if (l.empty() || l.find(key) != std::string::npos) continue;
    keep.push_back(l);
  }
  for (const auto& e : entries) keep.push_back("  " + e);
  std::ostringstream out;
  for (auto it = lines.begin(); it <= begin; ++it) out << *it << "\n";
  out << "#define SMEM_SGEMM_TUNED_TABLE(X)" << (keep.empty() ? "" : " \\") << "\n";
  for (std::size_t i = 0; i < keep.size(); ++i) out << keep[i] << (i + 1 < keep.size() ? " \\" : "") << "\n";
  for (auto it = end; it != lines.end(); ++it) out << *it << "\n";
  std::ofstream(path) << out.str();
}

}  // namespace

int main(int argc, char** argv) try {
  std::string write_path, log_path;
  std::vector<int> sizes = {1000, 2048, 4096, 8192};
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--write" && i + 1 < argc) write_path = argv[++i];
    else if (a == "--log" && i + 1 < argc) log_path = argv[++i];
    else if (a == "--sizes" && i + 1 < argc) {
      sizes.clear();
      std::stringstream ss(argv[++i]);
      for (std::string x; std::getline(ss, x, ',');) sizes.push_back(std::stoi(x));
    } else {
      std::fprintf(stderr, "usage: %s [--write FILE] [--sizes 1000,2048,...] [--log FILE]\n", argv[0]);
      return 2;
    }
  }
  std::sort(sizes.begin(), sizes.end());
  cudaDeviceProp prop{};
  SMEM_CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
  const std::string gpu = prop.name;
  const smem::gemm::detail::GpuKey k = smem::gemm::detail::gpu_key();
  const std::string key = "X(" + std::to_string(k.cc) + ", " + std::to_string(k.sms) + ", " +
                          std::to_string(k.smem_per_sm) + ", " + std::to_string(k.regs_per_sm) + ",";
  std::printf("GPU: %s; table key: compute capability %d, %d SMs, %d B shared memory and %d registers per SM; "
              "seed %llu\n",
              gpu.c_str(), k.cc, k.sms, k.smem_per_sm, k.regs_per_sm, (unsigned long long)smem::test::run_seed());

  std::vector<Candidate> cands;
  smem::tune::add_candidates_0(cands), smem::tune::add_candidates_1(cands);
  smem::tune::add_candidates_2(cands), smem::tune::add_candidates_3(cands);
  smem::tune::add_candidates_4(cands), smem::tune::add_candidates_5(cands);
  smem::tune::add_candidates_6(cands), smem::tune::add_candidates_7(cands);
  std::sort(cands.begin(), cands.end(), [](const Candidate& a, const Candidate& b) { return a.index < b.index; });

  // Correctness: partial tiles everywhere, odd and padded leading dimensions (the 4-byte B path),
  // alpha/beta, beta == 0 over a NaN-poisoned C, and an aligned shape (the 16-byte B path).
  const Shape checks[] = {{129, 127, 131, 131, 127, 127, 1.0f, 0.0f},
                          {1000, 999, 1001, 1003, 1001, 1002, 1.25f, -0.75f},
                          {515, 260, 777, 780, 264, 268, 0.5f, 2.0f},
                          {512, 512, 512, 512, 512, 512, 1.0f, 0.0f}};
  std::vector<bool> valid(cands.size(), true);
  for (std::size_t i = 0; i < cands.size(); ++i) {
    smem::test::KernelAttributes at{};
    const cudaError_t ae = smem::test::kernel_attributes(cands[i].plan(4096), &at);
    double worst = 0;
    for (const auto& s : checks) {
      const double tol = 16 * 1.1920929e-7 * std::sqrt(double(s.K));
      const double e = check(cands[i].launch, s);
      worst = std::max(worst, e / tol);
      if (!(e <= tol)) valid[i] = false;
    }
    std::printf("check %-26s regs %3d smem %6d B blocks/SM %d  worst error/tolerance %.3f %s\n",
                shape_name(cands[i]).c_str(), ae == cudaSuccess ? at.registers : -1, at.dynamic_smem,
                at.blocks_per_sm, worst, valid[i] ? "ok" : "FAILED");
  }

  const int nmax = sizes.back();
  DeviceBuffer<float> A(std::size_t(nmax) * nmax), B(A.size()), C(A.size());
  randomize(A, 11), randomize(B, 12);
  std::vector<std::vector<double>> tf(cands.size(), std::vector<double>(sizes.size(), 0));
  std::vector<double> ref(sizes.size());
  std::string log = "candidate";
  for (int n : sizes) log += "," + std::to_string(n);
  log += "\n";
  std::printf("\nTFLOP/s (median of event-timed launches, square n x n x n, beta = 0)\n%-28s", "shape");
  for (int n : sizes) std::printf(" %8d", n);
  std::printf("\n%-28s", "cublas");
  log += "cublas";
  for (std::size_t j = 0; j < sizes.size(); ++j) {
    const int n = sizes[j], reps = n >= 8192 ? 15 : n >= 4096 ? 30 : 100;
    const double t = time_median(cublas_sgemm, n, reps, A.get(), B.get(), C.get());
    ref[j] = t > 0 ? 2.0 * n * n * double(n) / t * 1e-12 : 0;
    std::printf(" %8.2f", ref[j]);
    log += "," + std::to_string(ref[j]);
  }
  std::printf("\n%-28s", "heuristic");
  log += "\nheuristic";
  std::vector<double> heur(sizes.size());
  for (std::size_t j = 0; j < sizes.size(); ++j) {
    const int n = sizes[j], reps = n >= 8192 ? 15 : n >= 4096 ? 30 : 100;
    const double t = time_median(smem::gemm::heuristic, n, reps, A.get(), B.get(), C.get());
    heur[j] = t > 0 ? 2.0 * n * n * double(n) / t * 1e-12 : 0;
    std::printf(" %8.2f", heur[j]);
    log += "," + std::to_string(heur[j]);
  }
  std::printf("\n");
  log += "\n";
  for (std::size_t i = 0; i < cands.size(); ++i) {
    std::printf("%-28s", shape_name(cands[i]).c_str());
    log += shape_name(cands[i]);
    for (std::size_t j = 0; j < sizes.size(); ++j) {
      const int n = sizes[j], reps = n >= 8192 ? 15 : n >= 4096 ? 30 : 100;
      double v = 0;
      if (valid[i]) {
        const double t = time_median(cands[i].launch, n, reps, A.get(), B.get(), C.get());
        v = t > 0 ? 2.0 * n * n * double(n) / t * 1e-12 : 0;
      }
      tf[i][j] = v;
      std::printf(" %8.2f", v);
      log += "," + std::to_string(v);
    }
    std::printf("%s\n", valid[i] ? "" : "  (failed its check: not timed)");
    log += "\n";
  }
  if (!log_path.empty()) std::ofstream(log_path) << log;

  // Winner per size; size class j covers outputs up to the geometric mean of sizes j and j + 1
  // squared (the last: everything). Neighbouring classes with the same winner merge.
  std::vector<std::string> entries;
  std::printf("\nwinners (ratio to cuBLAS and gain over the heuristic's shape, in this run)\n");
  int prev = -1;
  for (std::size_t j = 0; j < sizes.size(); ++j) {
    int best = -1;
    for (std::size_t i = 0; i < cands.size(); ++i)
      if (valid[i] && tf[i][j] > 0 && (best < 0 || tf[i][j] > tf[best][j])) best = int(i);
    if (best < 0) throw std::runtime_error("no valid candidate");
    std::printf("  n = %5d: %-26s %7.2f TFLOP/s, cuBLAS %7.2f, ratio %.3f, heuristic %7.2f, gain %.3f\n",
                sizes[j], shape_name(cands[best]).c_str(), tf[best][j], ref[j], tf[best][j] / ref[j], heur[j],
                heur[j] > 0 ? tf[best][j] / heur[j] : 0.0);
    const bool last = j + 1 == sizes.size();
    const long long max_mn = last ? 0x7fffffffffffffffLL
                                  : (long long)(double(sizes[j]) * sizes[j + 1]);  // (sqrt(a b))^2
    const Candidate& c = cands[best];
    char e[256];
    std::snprintf(e, sizeof e, "%s %lldLL, %d, %d, %d, %d, %d, %d, %d, %d)", key.c_str(), max_mn, c.bm, c.bn,
                  c.bk, c.wm, c.wn, c.tm, c.tn, c.stages);
    if (best == prev) entries.back() = e;  // widen the previous class
    else entries.push_back(e);
    prev = best;
  }
  if (!write_path.empty()) {
    write_config(write_path, key, entries);
    std::printf("wrote %zu entries for %s (%s) to %s\n", entries.size(), key.c_str(), gpu.c_str(),
                write_path.c_str());
  }
  return 0;
} catch (const std::exception& e) {
  std::fprintf(stderr, "gemm_tune: %s\n", e.what());
  return 1;
}

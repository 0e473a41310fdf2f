// Tensor-core GEMM (bf16 in and out, fp32 accumulation): every variant against a float64
// reference on the bf16 inputs, element by element within a bound derived from K and the bf16
// rounding of D, on odd shapes, wide and odd leading dimensions, misaligned operands (the
// element-wise paths), in place (D == C), with NaN-poisoned outputs; the large shapes against
// cuBLAS. Host suite: the bank model on the kernels' own layouts and copy maps, and the contract
// (what check_args() decides; every launcher on bad arguments: bad_input_test.cu; graph capture:
// graph_test.cu).
#include <doctest/doctest.h>
#include <cublas_v2.h>

#include <tc_gemm/tc_gemm.cuh>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "bank_evidence.hpp"
#include "bank_model.hpp"
#include "compare.hpp"
#include "cublas_handle.hpp"
#include "cuda_check.hpp"
#include "device_buffer.hpp"
#include "gpu.hpp"
#include "graph_capture.hpp"
#include "limits.cuh"
#include "random.hpp"
#include "tc_gemm_bank_access.hpp"

namespace tc = smem::tc_gemm;
using smem::test::capture_and_replay;
using smem::test::DeviceBuffer;
using smem::test::GuardedBuffer;
using smem::test::SmallIntOfIndex;
using bf16 = tc::bf16;

namespace {

std::vector<bf16> random_bf16(std::size_t n, std::mt19937_64& g) {
  const auto f = smem::test::random_vector<float>(n, g);
  std::vector<bf16> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = __float2bfloat16_rn(f[i]);
  return v;
}

/// R = alpha A B + beta C and S = |alpha| |A| |B| + |beta C| in float64 on the GPU, dense (ld N).
__global__ void reference_kernel(int M, int N, int K, float alpha, const bf16* A, int lda, const bf16* B, int ldb,
                                 float beta, const bf16* C, int ldc, double* R, double* S) {
  const int row = blockIdx.y * 16 + threadIdx.y, col = blockIdx.x * 16 + threadIdx.x;
  if (row >= M || col >= N) return;
  double acc = 0, mag = 0;
  for (int k = 0; k < K; ++k) {
    const double p = double(__bfloat162float(A[std::size_t(row) * lda + k])) *
                     double(__bfloat162float(B[std::size_t(k) * ldb + col]));
    acc += p;
    mag += fabs(p);
  }
  const double c = beta != 0.0f ? double(beta) * double(__bfloat162float(C[std::size_t(row) * ldc + col])) : 0.0;
  R[std::size_t(row) * N + col] = double(alpha) * acc + c;
  S[std::size_t(row) * N + col] = fabs(double(alpha)) * mag + fabs(c);
}

/// The documented rule of the Hopper steps: from step 8 on, A and B are read with TMA, and from
/// step 12 on D is stored with it; those operands need 16-byte aligned rows.
bool tma_refuses(tc::Variant v, const bf16* A, int lda, const bf16* B, int ldb, const bf16* D, int ldd) {
  int step = 0;
  for (const auto& st : tc::kSteps)
    if (st.variant == v) step = st.step;
  if (step < 8) return false;
  return !tc::tma_rows(A, lda) || !tc::tma_rows(B, ldb) || (step >= 12 && !tc::tma_rows(D, ldd));
}

// The elements of the M x N matrix D in `got` (leading dimension ldd, from element `offset`) outside
// |D - R| <= 2^-8 |R| + (K + 4) 2^-22 S (bf16 rounding of the result, fp32 accumulation), R and S
// dense from reference_kernel; the first of them (row-major index) in `first`, -1 if none.
long long count_bad(const std::vector<bf16>& got, std::size_t offset, int ldd, const std::vector<double>& r,
                    const std::vector<double>& s, int M, int N, int K, long long& first) {
  long long bad = 0;
  first = -1;
  for (int i = 0; i < M; ++i)
    for (int j = 0; j < N; ++j) {
      const double x = double(__bfloat162float(got[offset + std::size_t(i) * ldd + j]));
      const double ref = r[std::size_t(i) * N + j], mag = s[std::size_t(i) * N + j];
      const double tol = std::ldexp(std::fabs(ref), -8) + (K + 4) * std::ldexp(mag, -22) + 1e-30;
      if (!(std::fabs(x - ref) <= tol)) {
        if (first < 0) first = (long long)i * N + j;
        ++bad;
      }
    }
  return bad;
}

struct Case {
  int M, N, K, lda, ldb, ldc, ldd;
  float alpha, beta;
  int offset = 0;       // elements added to every pointer (1: only 2-byte aligned operands)
  bool in_place = false;  // D == C
};

// Runs variant v on fresh random bf16 data with a NaN-poisoned D and checks every element of D
// (count_bad).
void check_case(tc::Variant v, const Case& c) {
  CAPTURE(tc::name(v));
  CAPTURE(c.M);
  CAPTURE(c.N);
  CAPTURE(c.K);
  CAPTURE(c.lda);
  CAPTURE(c.ldb);
  CAPTURE(c.ldd);
  CAPTURE(c.offset);
  CAPTURE(c.in_place);
  CAPTURE(c.beta);
  auto g = smem::test::rng(std::uint64_t(c.M) * 7919 + c.N * 31 + c.K + c.offset);
  const std::size_t na = std::size_t(c.M) * c.lda + c.offset, nb = std::size_t(c.K) * c.ldb + c.offset;
  const std::size_t nc = std::size_t(c.M) * c.ldc + c.offset, nd = std::size_t(c.M) * c.ldd + c.offset;
  DeviceBuffer<bf16> A(random_bf16(na, g)), B(random_bf16(nb, g)), C(random_bf16(nc, g)), D(nd);
  DeviceBuffer<double> R(std::size_t(c.M) * c.N), S(std::size_t(c.M) * c.N);
  const bf16 *a = A.get() + c.offset, *b = B.get() + c.offset, *cc = C.get() + c.offset;
  reference_kernel<<<dim3((c.N + 15) / 16, (c.M + 15) / 16), dim3(16, 16)>>>(c.M, c.N, c.K, c.alpha, a, c.lda, b,
                                                                             c.ldb, c.beta, cc, c.ldc, R.get(),
                                                                             S.get());
  SMEM_CUDA_CHECK(cudaGetLastError());
  bf16* d = D.get() + c.offset;
  if (c.in_place) {
    d = C.get() + c.offset;
  } else {
    D.poison();
  }
  const int ldd = c.in_place ? c.ldc : c.ldd;
  const cudaError_t e = tc::run(v, c.M, c.N, c.K, c.alpha, a, c.lda, b, c.ldb, c.beta, cc, c.ldc, d, ldd);
  SMEM_CUDA_CHECK(cudaDeviceSynchronize());
  const auto got = (c.in_place ? C : D).download();
  if (tma_refuses(v, a, c.lda, b, c.ldb, d, ldd)) {
    // The documented refusal: TMA's stride rule broken, D untouched.
    CHECK(e == cudaErrorInvalidValue);
    if (!c.in_place)
      for (int i = 0; i < c.M; ++i)
        for (int j = 0; j < c.N; ++j) REQUIRE(std::isnan(__bfloat162float(got[c.offset + std::size_t(i) * ldd + j])));
    return;
  }
  REQUIRE(e == cudaSuccess);
  long long first = -1;
  const long long bad = count_bad(got, c.offset, ldd, R.download(), S.download(), c.M, c.N, c.K, first);
  CAPTURE(first);
  CHECK(bad == 0);
  if (!c.in_place)  // nothing written between column N and the leading dimension
    for (int i = 0; i < c.M; ++i)
      for (int j = c.N; j < ldd; ++j) REQUIRE(std::isnan(__bfloat162float(got[c.offset + std::size_t(i) * ldd + j])));
}

// The shapes every variant must get right: 1 x 1, thin, prime, not a multiple of any tile, wide
// leading dimensions, odd leading dimensions (element-wise paths), misaligned pointers.
std::vector<Case> cases() {
  std::vector<Case> v = {
      {1, 1, 1, 1, 1, 1, 1, 1.0f, 0.0f},
      {1, 37, 5, 5, 37, 37, 37, 1.0f, 0.0f},
      {37, 1, 129, 129, 1, 1, 1, 0.5f, 2.0f},
      {31, 97, 63, 63, 97, 97, 97, 1.0f, -1.0f},
      {128, 128, 64, 64, 128, 128, 128, 1.0f, 0.0f},
      {129, 127, 131, 136, 128, 130, 129, 1.25f, -0.75f},
      {200, 264, 72, 80, 264, 264, 272, 1.0f, 0.5f},
      {131, 259, 200, 203, 261, 259, 263, 1.0f, 1.0f},  // odd leading dimensions: element-wise paths
      {96, 136, 88, 88, 136, 136, 136, 1.0f, 1.0f, 1},   // 2-byte aligned pointers
      {70, 90, 50, 56, 96, 96, 96, -1.0f, 1.0f, 0, true},  // D == C
      // 16-byte rows with odd M, N, K: TMA's zero-filled boxes past every edge, and K < 64.
      {1, 64, 64, 64, 64, 64, 64, 1.0f, 0.0f},
      {65, 301, 8, 8, 304, 304, 304, 1.0f, 0.5f},
      {333, 517, 1000, 1000, 520, 520, 520, 0.75f, 0.5f},
      {257, 513, 136, 136, 520, 520, 520, 1.0f, -1.0f, 0, true},
      // K a whole number of 64-wide windows: step 6's interior blocks take the loop without the
      // bounds-checked copies, the edge blocks of the same launch the other; then the same with
      // rows that are not 16-byte aligned, where no block may take it.
      {300, 600, 256, 264, 608, 600, 600, 1.0f, 0.5f},
      {160, 272, 128, 131, 272, 272, 272, 1.0f, 0.0f},
  };
  if (!smem::test::small_shapes_only()) {
    v.push_back({1000, 999, 1001, 1001, 999, 999, 1000, 1.0f, 0.25f});
    v.push_back({520, 776, 1032, 1032, 776, 776, 776, 1.0f, 0.0f});
  }
  return v;
}

// D = A B against cuBLAS (cublasGemmEx, bf16 in and out, fp32 compute) on a large shape, with
// leading dimensions lda >= K, ldb >= N and ldd >= N: relative Frobenius difference within a bf16
// rounding of the result, and D's columns from N to ldd untouched.
void check_against_cublas(tc::Variant v, int M, int N, int K, int lda, int ldb, int ldd) {
  CAPTURE(tc::name(v));
  CAPTURE(M);
  CAPTURE(N);
  CAPTURE(K);
  auto g = smem::test::rng(std::uint64_t(M) + K);
  DeviceBuffer<bf16> A(random_bf16(std::size_t(M) * lda, g)), B(random_bf16(std::size_t(K) * ldb, g));
  DeviceBuffer<bf16> D(std::size_t(M) * ldd), E(std::size_t(M) * ldd);
  const float one = 1.0f, zero = 0.0f;
  REQUIRE(cublasGemmEx(smem::test::cublas_handle(), CUBLAS_OP_N, CUBLAS_OP_N, N, M, K, &one, B.get(), CUDA_R_16BF, ldb,
                       A.get(), CUDA_R_16BF, lda, &zero, E.get(), CUDA_R_16BF, ldd, CUBLAS_COMPUTE_32F,
                       CUBLAS_GEMM_DEFAULT) == CUBLAS_STATUS_SUCCESS);
  D.poison();
  REQUIRE(tc::run(v, M, N, K, 1.0f, A.get(), lda, B.get(), ldb, 0.0f, nullptr, ldd, D.get(), ldd) == cudaSuccess);
  SMEM_CUDA_CHECK(cudaDeviceSynchronize());
  const auto d = D.download(), e = E.download();
  std::vector<float> df, ef;
  bool pad_untouched = true;
  for (std::size_t r = 0; r < std::size_t(M); ++r)
    for (std::size_t c = 0; c < std::size_t(ldd); ++c) {
      const float x = __bfloat162float(d[r * ldd + c]);
      if (c < std::size_t(N))
        df.push_back(x), ef.push_back(__bfloat162float(e[r * ldd + c]));
      else
        pad_untouched = pad_untouched && std::isnan(x);
    }
  CHECK(smem::test::relative_error(df, ef) < 8e-3);
  CHECK(pad_untouched);
}

// ---- The large suite: integer data filled and checked on the GPU. ----

// An integer-valued bf16 matrix as fill_by_index writes it: element (r, c), at flat index
// p = r ld + c of its buffer, holds f(p); with sparse_width (the A of a long K) only the columns
// c < 64, c >= sparse_width - 64 and c % 65536 == 4099 do, the others hold 0, so that the few
// products of a row add up exactly in fp32.
struct IntMatrix {
  SmallIntOfIndex f;
  int ld;
  int sparse_width = 0;
  __host__ __device__ int value(std::size_t p) const {
    if (sparse_width == 0) return f(p);
    const int c = int(p % std::size_t(ld));
    return c < 64 || c >= sparse_width - 64 || c % 65536 == 4099 ? f(p) : 0;
  }
  __host__ __device__ bf16 operator()(std::size_t p) const { return __float2bfloat16_rn(float(value(p))); }
  int at(int r, int c) const { return value(std::size_t(r) * ld + c); }
};

// The bits D(r, c) must hold after D = A B (+ C, with_c): bf16 of the exact sum, which every step
// gets, since fp32 holds every partial sum of these small integers in any order.
struct Want {
  IntMatrix a, b, c;
  int K;
  bool with_c;
  unsigned short bits(int r, int col) const {
    long long s = with_c ? c.at(r, col) : 0;
    const auto add = [&](long long k) { s += (long long)a.at(r, int(k)) * b.at(int(k), col); };
    if (a.sparse_width == 0) {
      for (int k = 0; k < K; ++k) add(k);
    } else {  // the columns a row of A holds
      const long long tail = std::max(64, K - 64);
      for (long long k = 0; k < std::min(64, K); ++k) add(k);
      for (long long k = 4099; k < tail; k += 65536) add(k);
      for (long long k = tail; k < K; ++k) add(k);
    }
    return __bfloat16_as_ushort(__float2bfloat16_rn(float(s)));
  }
};

// Counts the elements of the M x N matrix D (ldd) whose bits are not those of bf16(A B + C) (C when
// non-null), summed in fp32 from A, B and C as they lie in memory, or with `untouched` not the
// poison 0xFFFF; the count in out[0], the first wrong element's index in D in out[1]. The lines of
// the longer side run in parallel, the few elements of each (N or M, with K, small) in a loop.
__global__ void count_wrong_kernel(int M, int N, int K, const bf16* A, int lda, const bf16* B, int ldb, const bf16* C,
                                   int ldc, const bf16* D, int ldd, bool untouched, unsigned long long* out) {
  const bool by_row = M >= N;
  const long long lines = by_row ? M : N;
  const int len = by_row ? N : M;
  unsigned long long wrong = 0, first = ~0ull;
  for (long long l = blockIdx.x * (long long)blockDim.x + threadIdx.x; l < lines;
       l += (long long)gridDim.x * blockDim.x)
    for (int e = 0; e < len; ++e) {
      const int r = by_row ? int(l) : e, c = by_row ? e : int(l);
      unsigned short want = 0xFFFF;
      if (!untouched) {
        float acc = 0.0f;
        for (int k = 0; k < K; ++k)
          acc += __bfloat162float(A[std::size_t(r) * lda + k]) * __bfloat162float(B[std::size_t(k) * ldb + c]);
        if (C != nullptr) acc += __bfloat162float(C[std::size_t(r) * ldc + c]);
        want = __bfloat16_as_ushort(__float2bfloat16_rn(acc));
      }
      const std::size_t p = std::size_t(r) * ldd + c;
      if (__bfloat16_as_ushort(D[p]) != want) ++wrong, first = first < p ? first : p;
    }
  if (wrong) atomicAdd(out, wrong), atomicMin(out + 1, first);
}

// Runs variant v on the M x N x K problem D = A B (+ C, beta = 1, where C is given), D poisoned
// first, and checks: the result (or, where the step documents a refusal, cudaErrorInvalidValue and D
// untouched), every element on the GPU with `full` (count_wrong_kernel), on the host the first and
// last 64 rows of D (of a D of fewer rows than columns, the first and last 64 columns of each row)
// and `random` random elements, and D's guards.
void check_large(tc::Variant v, int M, int N, int K, const IntMatrix& a, const bf16* A, const IntMatrix& b,
                 const bf16* B, const IntMatrix& c, const bf16* C, GuardedBuffer<bf16>& D, int ldd, bool full,
                 int random, std::mt19937_64& g) {
  CAPTURE(tc::name(v));
  CAPTURE(M);
  CAPTURE(N);
  CAPTURE(K);
  D.poison();
  const cudaError_t e = tc::run(v, M, N, K, 1.0f, A, a.ld, B, b.ld, C ? 1.0f : 0.0f, C, C ? c.ld : ldd, D.get(), ldd);
  SMEM_CUDA_CHECK(cudaDeviceSynchronize());
  const bool refused = tma_refuses(v, A, a.ld, B, b.ld, D.get(), ldd);
  CHECK(e == (refused ? cudaErrorInvalidValue : cudaSuccess));
  if (full) {
    DeviceBuffer<unsigned long long> out(std::vector<unsigned long long>{0, ~0ull});
    count_wrong_kernel<<<4096, 256>>>(M, N, K, A, a.ld, B, b.ld, C, C ? c.ld : 0, D.get(), ldd, refused, out.get());
    SMEM_CUDA_CHECK(cudaGetLastError());
    SMEM_CUDA_CHECK(cudaDeviceSynchronize());
    const auto h = out.download();
    INFO("first wrong element at index " << h[1] << " of D");
    CHECK(h[0] == 0);
  }
  const Want want{a, b, c, K, C != nullptr};
  long long wrong = 0;
  auto check = [&](int r, int c0, int count) {
    const auto h = D.download(std::size_t(r) * ldd + c0, std::size_t(count));
    for (int j = 0; j < count; ++j)
      wrong += __bfloat16_as_ushort(h[j]) != (refused ? 0xFFFF : want.bits(r, c0 + j));
  };
  if (M >= N) {
    for (int r = 0; r < M; r = r == 63 && M > 128 ? M - 64 : r + 1) check(r, 0, N);
  } else {
    for (int r = 0; r < M; ++r) {
      check(r, 0, std::min(N, 64));
      if (N > 64) check(r, std::max(64, N - 64), N - std::max(64, N - 64));
    }
  }
  std::uniform_int_distribution<int> row(0, M - 1), col(0, N - 1);
  for (int i = 0; i < random; ++i) check(row(g), col(g), 1);
  CHECK(wrong == 0);
  CHECK(D.guards_intact());
}

// A persistent block's ring count (ring_after_tile) over `tiles` tiles of `windows` windows each,
// against the true count: the same stage, parity and first-round flag after every tile, and it
// stays below 4 kStages + windows.
template <int kStages>
bool ring_count_holds(int windows, int tiles) {
  long long truth = 0;
  int it = 0;
  const auto same = [&] {
    return it % (2 * kStages) == truth % (2 * kStages) && (it >= kStages) == (truth >= kStages);
  };
  for (int t = 0; t < tiles; ++t) {
    it += windows, truth += windows;
    if (!same() || it >= 4 * kStages + windows) return false;
    it = tc::ring_after_tile<kStages>(it);
    if (!same() || it >= 4 * kStages + windows) return false;
  }
  return true;
}

}  // namespace

TEST_SUITE("gpu") {
  // The process's first tc_gemm work: this case comes first in the file, and CTest also runs it alone
  // (tc_gemm_test.first_call_captured). Every launcher, with no setup, captured into one graph in
  // global mode on a fresh stream: the capture ends, the replays compute D, the device's default
  // memory pool was never used (stream-ordered allocation by a launcher would show there), and steps
  // 15 and 16 measured nothing (they walk their clusters by index, as steps 13 and 14 do).
  TEST_CASE("tc_gemm first call: every variant captured in global mode without any setup") {
    const int M = 1000, N = 1000, K = 200;
    int dev = 0;
    SMEM_CUDA_CHECK(cudaGetDevice(&dev));
    auto g = smem::test::rng(11);
    DeviceBuffer<bf16> A(random_bf16(std::size_t(M) * K, g)), B(random_bf16(std::size_t(K) * N, g));
    DeviceBuffer<double> R(std::size_t(M) * N), S(std::size_t(M) * N);
    reference_kernel<<<dim3((N + 15) / 16, (M + 15) / 16), dim3(16, 16)>>>(M, N, K, 1.0f, A.get(), K, B.get(), N, 0.0f,
                                                                         nullptr, N, R.get(), S.get());
    SMEM_CUDA_CHECK(cudaGetLastError());
    std::vector<DeviceBuffer<bf16>> D;
    for (std::size_t i = 0; i < std::size(tc::kAllVariants); ++i) {
      D.emplace_back(std::size_t(M) * N);
      D.back().poison();
    }
    capture_and_replay([&](cudaStream_t s) {
      for (std::size_t i = 0; i < std::size(tc::kAllVariants); ++i)
        if (cudaError_t e = tc::run(tc::kAllVariants[i], M, N, K, 1.0f, A.get(), K, B.get(), N, 0.0f, nullptr, N,
                                    D[i].get(), N, s);
            e != cudaSuccess)
          return e;
      return cudaSuccess;
    });
    cudaMemPool_t pool;
    SMEM_CUDA_CHECK(cudaDeviceGetDefaultMemPool(&pool, dev));
    std::uint64_t used = 1;
    SMEM_CUDA_CHECK(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrUsedMemHigh, &used));
    CHECK(used == 0);
#if defined(SMEM_TC_GEMM_SM90A)
    CHECK(tc::detail::measured_gpcs(dev, 1) == nullptr);
    CHECK(tc::detail::measured_gpcs(dev, 2) == nullptr);
    const auto plan = tc::gpc_order_plan(M, N, K, A.get(), K, B.get(), N, nullptr, N, D[0].get(), N);
    REQUIRE(plan.erased().kernel != nullptr);
    const tc::ClusterOrder order = tc::cluster_order<tc::ClusterShape>(plan);
    for (int c = 0; c < tc::ClusterOrder::kMax; ++c) CHECK(order.place[c] == c);  // by index
#endif
    const auto r = R.download(), sc = S.download();
    for (std::size_t i = 0; i < std::size(tc::kAllVariants); ++i) {
      CAPTURE(tc::name(tc::kAllVariants[i]));
      long long first = -1;
      const long long bad = count_bad(D[i].download(), 0, N, r, sc, M, N, K, first);
      CAPTURE(first);
      CHECK(bad == 0);
    }
  }

#if defined(SMEM_TC_GEMM_SM90A)
  // The setup, measured while another stream of this thread captures a graph in global mode (the
  // capture must still end and replay), then kept: the launchers' order (cluster_order) is then the
  // measured one, for a launch that fills the GPU and for a smaller one. The cases after this one
  // run steps 15 and 16 in that order.
  TEST_CASE("tc_gemm prepare_cluster_order: measured beside a capture, then the launchers' order") {
    int dev = 0;
    SMEM_CUDA_CHECK(cudaGetDevice(&dev));
    DeviceBuffer<bf16> A(std::size_t(64) * 64);
    cudaError_t prepared = cudaErrorUnknown;
    capture_and_replay([&](cudaStream_t s) {
      REQUIRE(cudaMemsetAsync(A.get(), 0, 64, s) == cudaSuccess);
      prepared = tc::prepare_cluster_order(dev);
      return cudaMemsetAsync(A.get(), 0, 64, s);
    });
    REQUIRE(prepared == cudaSuccess);
    CHECK(tc::prepare_cluster_order(dev) == cudaSuccess);  // kept: nothing to measure again
    CHECK(tc::prepare_cluster_order(-1) == cudaErrorInvalidDevice);
    REQUIRE(tc::detail::measured_gpcs(dev, 1) != nullptr);
    const tc::detail::MeasuredGpcs* m = tc::detail::measured_gpcs(dev, 2);
    REQUIRE(m != nullptr);
    // One label per cluster of two, several GPCs, and GPCs that hold several clusters each.
    const int clusters = tc::detail::gpu_key().sms / 2;
    REQUIRE(m->clusters == clusters);
    std::vector<int> per_label(1024, 0);
    for (int c = 0; c < clusters; ++c) ++per_label[m->gpc[c]];
    const int largest = *std::max_element(per_label.begin(), per_label.end());
    CHECK(largest >= 2);
    CHECK(largest <= clusters / 2);
    // The launchers' order: clusters ranked by their measured GPC, by index within one, each at the
    // place gpc_position gives its rank, for a plan that fills the GPU (4096^3) and for one of 10
    // clusters (2560 x 256).
    for (const int rows : {4096, 2560}) {
      CAPTURE(rows);
      const int cols = rows == 4096 ? 4096 : 256;
      const auto plan = tc::gpc_order_plan(rows, cols, 64, A.get(), 64, A.get(), 64, nullptr, 0, A.get(), 64);
      REQUIRE(plan.erased().kernel != nullptr);
      const int n = int(plan.grid.x) / 2;
      CHECK(n == (rows == 4096 ? clusters : 10));
      const tc::ClusterOrder order = tc::cluster_order<tc::ClusterShape>(plan);
      const tc::ClusterRanks r = tc::rank_by_gpc(m->gpc, n);
      std::vector<int> by_rank(n, -1), at_place(n, -1);
      for (int c = 0; c < n; ++c) {
        if (r.rank[c] < n) by_rank[r.rank[c]] = c;
        if (order.place[c] < n) at_place[order.place[c]] = c;
        CHECK(order.place[c] == tc::gpc_position(r.rank[c], n, tc::ClusterShape::kGroupRows));
      }
      REQUIRE(std::all_of(by_rank.begin(), by_rank.end(), [](int c) { return c >= 0; }));  // permutations
      REQUIRE(std::all_of(at_place.begin(), at_place.end(), [](int c) { return c >= 0; }));
      for (int i = 1; i < n; ++i) {
        const int a = by_rank[i - 1], b = by_rank[i];
        CHECK((m->gpc[a] < m->gpc[b] || (m->gpc[a] == m->gpc[b] && a < b)));
      }
    }
  }
#endif

  TEST_CASE("tc_gemm: every variant, every case, element by element against float64") {
    for (const auto& c : cases())
      for (auto v : tc::kAllVariants) check_case(v, c);
  }

  TEST_CASE("tc_gemm: K == 0 and alpha == 0 give D = beta C; beta == 0 never reads C") {
    const int M = 67, N = 45;
    auto g = smem::test::rng(5);
    for (auto v : tc::kAllVariants) {
      CAPTURE(tc::name(v));
      DeviceBuffer<bf16> A(random_bf16(M * 16, g)), B(random_bf16(16 * N, g)), C(random_bf16(M * N, g)), D(M * N);
      const auto c = C.download();
      D.poison();
      REQUIRE(tc::run(v, M, N, 0, 1.0f, A.get(), 16, B.get(), N, 2.0f, C.get(), N, D.get(), N) == cudaSuccess);
      auto d = D.download();
      for (int i = 0; i < M * N; ++i) REQUIRE(__bfloat162float(d[i]) == 2.0f * __bfloat162float(c[i]));
      D.poison();
      REQUIRE(tc::run(v, M, N, 16, 0.0f, A.get(), 16, B.get(), N, 0.0f, C.get(), N, D.get(), N) == cudaSuccess);
      d = D.download();
      for (int i = 0; i < M * N; ++i) REQUIRE(__bfloat162float(d[i]) == 0.0f);
      C.poison();  // NaN in C: with beta == 0 it must not reach D
      DeviceBuffer<bf16> B48(random_bf16(16 * 48, g)), D48(M * 48);  // rows every step accepts
      D48.poison();
      REQUIRE(tc::run(v, M, N, 16, 1.0f, A.get(), 16, B48.get(), 48, 0.0f, C.get(), N, D48.get(), 48) ==
              cudaSuccess);
      const auto d48 = D48.download();
      for (int i = 0; i < M; ++i)
        for (int j = 0; j < 48; ++j) {
          const float x = __bfloat162float(d48[i * 48 + j]);
          REQUIRE((j < N ? std::isfinite(x) : std::isnan(x)));  // finite inside, untouched outside
        }
    }
  }

  TEST_CASE("tc_gemm: the fast variants agree with cuBLAS on large shapes") {
    if (smem::test::small_shapes_only()) return;
    for (auto v : tc::kAllVariants) {
      if (v == tc::Variant::wmma_global || v == tc::Variant::wmma_smem) continue;  // slow; checked above
      for (auto [M, N, K] : {std::array<int, 3>{2048, 2048, 2048}, {4000, 3000, 1000}})
        check_against_cublas(v, M, N, K, K, N, N);
      // Several tiles per block of the persistent steps (a finished tile's panels stored behind
      // the next tile's windows, spread over them), a ragged right edge (N not a multiple of 8,
      // rows padded to 16 bytes) and K of five windows, the last one partial; then of two
      // windows, and of one partial window (every panel behind the next tile's only window).
      check_against_cublas(v, 2100, 2001, 300, 304, 2008, 2008);
      check_against_cublas(v, 2100, 2001, 100, 104, 2008, 2008);
      check_against_cublas(v, 4000, 3000, 40, 40, 3000, 3000);
    }
  }

}

TEST_SUITE("host") {
  namespace tca = smem::test::tc_gemm_access;
  using smem::test::Access;

  // The kernels' requests (support/tc_gemm_bank_access.hpp), each checked on its own.
  using smem::test::all_conflict_free;

  TEST_CASE("tc_gemm bank model: ldmatrix 8-way on row-major tiles, conflict-free padded and swizzled") {
    for (int kk = 0; kk < tc::kTileK; kk += 16)
      for (int i = 0; i < 4; ++i) {
        CAPTURE(kk);
        CAPTURE(i);
        CHECK(tca::ldmatrix_a<tc::LdmatrixA>(i, kk).cost().wavefronts == 32);  // 4 phases of 8
        CHECK(tca::ldmatrix_a<tc::PaddedA>(i, kk).cost().conflict_free());
        CHECK(tca::ldmatrix_a<tc::SwizzledA>(i, kk).cost().conflict_free());
        CHECK(tca::ldmatrix_b<tc::LdmatrixB>(i, kk).cost().wavefronts == 32);
        CHECK(tca::ldmatrix_b<tc::PaddedB>(i, kk).cost().conflict_free());
        CHECK(tca::ldmatrix_b<tc::SwizzledB>(i, kk).cost().conflict_free());
      }
  }

  TEST_CASE("tc_gemm bank model: the 16-byte tile stores and cp.async copies") {
    for (int w = 0; w < 8; ++w)
      for (int i = 0; i < 4; ++i) {
        CHECK(tca::tile_chunk<tc::LdmatrixA>("", Access::store, tc::kTileK, w, i).cost().conflict_free());
        CHECK(tca::tile_chunk<tc::PaddedA>("", Access::store, tc::kTileK, w, i).cost().conflict_free());
        CHECK(tca::tile_chunk<tc::SwizzledA>("", Access::store, tc::kTileK, w, i).cost().conflict_free());
        CHECK(tca::tile_chunk<tc::SwizzledA>("", Access::copy, tc::kTileK, w, i).cost().conflict_free());
        CHECK(tca::tile_chunk<tc::SwizzledB>("", Access::copy, tc::kTileN, w, i).cost().conflict_free());
      }
    CHECK(all_conflict_free([](auto&& v) { tca::multistage(v); }));
  }

  // The 128-byte swizzle that TMA writes (TmaTile): 16-byte chunk c of row r lands at chunk
  // c ^ (r % 8) of its 128-byte row. Step 8 reads it with ldmatrix; the epilogue of steps 12 to
  // 16 writes D's staging panels in it: eight rows of one 4-byte column of a plain 128-byte-row
  // panel share a bank (8-way), the swizzle spreads them over all 32 banks.
  TEST_CASE("tc_gemm bank model: TMA's 128-byte swizzle is conflict-free for ldmatrix and the staging writes") {
    CHECK(all_conflict_free([](auto&& v) { tca::tma(v); }));
    CHECK(all_conflict_free([](auto&& v) { tca::tma_epilogue(v); }));
    tca::tma_epilogue_without_swizzle([](const smem::test::Request& r) {
      const auto c = r.cost();
      CHECK(c.wavefronts == 8 * c.phases);
    });
  }

  TEST_CASE("tc_gemm grouped_tile: every tile once, groups of tile-rows walked column by column") {
    using smem::tc_gemm::grouped_tile;
    for (int group : {1, 2, 3, 8, 16})
      for (int tiles_m : {1, 2, 7, 8, 9, 17, 33})
        for (int tiles_n : {1, 3, 8, 31}) {
          CAPTURE(group);
          CAPTURE(tiles_m);
          CAPTURE(tiles_n);
          std::vector<int> seen(std::size_t(tiles_m) * tiles_n, 0);
          bool in_range = true, ordered = true;
          for (int q = 0; q < tiles_m * tiles_n; ++q) {
            const auto t = grouped_tile(q, group, tiles_m, tiles_n);
            if (t.m < 0 || t.m >= tiles_m || t.n < 0 || t.n >= tiles_n) {
              in_range = false;
              continue;
            }
            ++seen[std::size_t(t.m) * tiles_n + t.n];
            // Inside a group the next tile is one row down, or the group's first row one column right.
            const int first = t.m / group * group, rows = std::min(group, tiles_m - first);
            if (q + 1 < tiles_m * tiles_n) {
              const auto u = grouped_tile(q + 1, group, tiles_m, tiles_n);
              if (t.m - first < rows - 1)
                ordered = ordered && u.m == t.m + 1 && u.n == t.n;
              else  // the group's next column, or the next group
                ordered = ordered && (t.n + 1 < tiles_n ? u.m == first && u.n == t.n + 1 : u.m == first + rows && u.n == 0);
            }
          }
          CHECK(in_range);
          CHECK(ordered);
          CHECK(std::all_of(seen.begin(), seen.end(), [](int c) { return c == 1; }));
        }
  }

#if defined(SMEM_TC_GEMM_SM90A)
  TEST_CASE("tc_gemm gpc_position and rank_by_gpc: a permutation of the walk, runs of 8 ranks on one tile-row") {
    for (int group : {1, 2, 3, 8, 16})
      for (int n = 1; n <= 300; ++n) {
        CAPTURE(group);
        CAPTURE(n);
        std::vector<int> seen(n, 0);
        for (int k = 0; k < n; ++k)
          if (const int p = tc::gpc_position(k, n, group); p >= 0 && p < n) ++seen[p];
        CHECK(std::all_of(seen.begin(), seen.end(), [](int c) { return c == 1; }));
      }
    for (int group : {1, 8})  // 66 clusters (132 SMs in pairs): each full run of 8 ranks is one row, 8 columns
      for (int k0 = 0; k0 + 8 <= 64; k0 += 8) {
        const int p0 = tc::gpc_position(k0, 66, group);
        for (int j = 1; j < 8; ++j) {
          const int p = tc::gpc_position(k0 + j, 66, group);
          CHECK(p % group == p0 % group);
          CHECK(p / group == p0 / group + j);
        }
      }
    const unsigned short six[6] = {3, 1, 3, 0, 1, 3};
    const tc::ClusterRanks o = tc::rank_by_gpc(six, 6);  // by label, then by index
    const int expected[6] = {3, 1, 4, 0, 2, 5};
    for (int c = 0; c < 6; ++c) CHECK(o.rank[c] == expected[c]);
    auto g = smem::test::rng(17);
    std::vector<unsigned short> labels(tc::ClusterOrder::kMax);
    for (auto& l : labels) l = static_cast<unsigned short>(g() % 9);
    const tc::ClusterRanks all = tc::rank_by_gpc(labels.data(), tc::ClusterOrder::kMax);  // the most a plan has
    std::vector<int> seen(tc::ClusterOrder::kMax, 0);
    for (int c = 0; c < tc::ClusterOrder::kMax; ++c) ++seen[all.rank[c]];
    CHECK(std::all_of(seen.begin(), seen.end(), [](int x) { return x == 1; }));
    const tc::ClusterRanks r = tc::rank_by_gpc(labels.data(), 66);
    std::vector<int> by_rank(66, -1);
    for (int c = 0; c < 66; ++c)
      if (r.rank[c] < 66) by_rank[r.rank[c]] = c;
    REQUIRE(std::all_of(by_rank.begin(), by_rank.end(), [](int c) { return c >= 0; }));
    for (int i = 1; i < 66; ++i) {
      const int a = by_rank[i - 1], b = by_rank[i];
      CHECK((labels[a] < labels[b] || (labels[a] == labels[b] && a < b)));
    }
  }
#endif

  TEST_CASE("tc_gemm contract: what check_args() makes of degenerate, in-place and overlapping operands") {
    std::vector<bf16> buf(4 * 64 * 64);
    bf16 *A = buf.data(), *B = A + 64 * 64, *C = B + 64 * 64, *D = C + 64 * 64;
    using tc::Args;
    CHECK(tc::check_args(64, 64, 64, 1.0f, A, 64, B, 64, 1.0f, C, 64, D, 64) == Args::launch);
    CHECK(tc::check_args(-1, 64, 64, 1.0f, A, 64, B, 64, 1.0f, C, 64, D, 64) == Args::invalid);
    CHECK(tc::check_args(64, 64, 64, 1.0f, A, 63, B, 64, 1.0f, C, 64, D, 64) == Args::invalid);
    CHECK(tc::check_args(64, 64, 64, 1.0f, A, 64, B, 64, 1.0f, C, 64, D, 63) == Args::invalid);
    CHECK(tc::check_args(64, 64, 64, 1.0f, nullptr, 64, B, 64, 1.0f, C, 64, D, 64) == Args::invalid);
    CHECK(tc::check_args(64, 64, 64, 1.0f, A, 64, B, 64, 1.0f, nullptr, 64, D, 64) == Args::invalid);
    CHECK(tc::check_args(64, 64, 64, 1.0f, A, 64, B, 64, 0.0f, nullptr, 64, D, 64) == Args::launch);
    CHECK(tc::check_args(64, 64, 64, 1.0f, A, 64, B, 64, 1.0f, C, 64, C, 64) == Args::launch);      // in place
    CHECK(tc::check_args(64, 64, 64, 1.0f, A, 64, B, 64, 1.0f, C, 64, C + 1, 64) == Args::invalid);  // overlap
    CHECK(tc::check_args(64, 64, 64, 1.0f, A, 64, B, 64, 1.0f, C, 64, A + 5, 64) == Args::invalid);
    CHECK(tc::check_args(0, 64, 64, 1.0f, nullptr, 64, nullptr, 64, 1.0f, nullptr, 64, nullptr, 64) == Args::empty);
    CHECK(tc::check_args(64, 64, 0, 1.0f, nullptr, 64, nullptr, 64, 1.0f, C, 64, D, 64) == Args::scale_only);
    const auto odd = reinterpret_cast<bf16*>(reinterpret_cast<char*>(D) + 1);
    CHECK(tc::check_args(64, 64, 64, 1.0f, A, 64, B, 64, 1.0f, C, 64, odd, 64) == Args::invalid);
  }

  // The accepted sizes (tc_gemm_common.cuh): M N <= 2^40, and for steps 8 to 16 16-byte rows, so N
  // and K at most 2^31 - 8. The next size up is refused with cudaErrorInvalidValue before any CUDA
  // call (the pointers are made up, far apart: nothing may touch them), every plan of the largest
  // problem is null, and the host arithmetic holds at INT_MAX.
  TEST_CASE("tc_gemm limits: the next size up is refused before any CUDA call; the arithmetic at INT_MAX") {
    constexpr int kMax = std::numeric_limits<int>::max(), kRows = 1 << 20;
    const auto at = [](std::uintptr_t tib) { return reinterpret_cast<bf16*>(tib << 40); };
    bf16 *A = at(4), *B = at(8), *D = at(12);
    using tc::Args;
    CHECK(tc::check_args(kRows, kRows, 8, 1.0f, A, 8, B, kRows, 0.0f, nullptr, kRows, D, kRows) == Args::launch);
    CHECK(tc::check_args(kRows + 1, kRows, 8, 1.0f, A, 8, B, kRows, 0.0f, nullptr, kRows, D, kRows) == Args::invalid);
    CHECK(tc::check_args(kMax, 512, 8, 1.0f, A, 8, B, 512, 0.0f, nullptr, 512, D, 512) == Args::launch);
    CHECK(tc::check_args(kMax, 513, 8, 1.0f, A, 8, B, 513, 0.0f, nullptr, 513, D, 513) == Args::invalid);
    CHECK(tc::check_args(2, kMax, 8, 1.0f, A, 8, B, kMax, 0.0f, nullptr, kMax, D, kMax) == Args::launch);
    CHECK(tc::check_args(2, 8, kMax, 1.0f, A, kMax, B, 8, 0.0f, nullptr, 8, D, 8) == Args::launch);
    CHECK(tc::tma_rows(B, kMax - 7));  // the widest rows TMA takes
    CHECK(!tc::tma_rows(B, kMax));
    for (auto v : tc::kAllVariants) {
      CAPTURE(tc::name(v));
      auto run = [&](int m, int n, int k, int lda, int ldb, int ldd) {
        return tc::run(v, m, n, k, 1.0f, A, lda, B, ldb, 0.0f, nullptr, ldd, D, ldd);
      };
      CHECK(run(kRows + 1, kRows, 8, 8, kRows, kRows) == cudaErrorInvalidValue);
      CHECK(run(kMax, 513, 8, 8, 513, 513) == cudaErrorInvalidValue);
      if (tma_refuses(v, A, 8, B, kMax, D, kMax)) {  // steps 8 to 16: N and K of 2^31 - 1 have no 16-byte rows
        CHECK(run(2, kMax, 8, 8, kMax, kMax) == cudaErrorInvalidValue);
        CHECK(run(2, 8, kMax, kMax, 8, 8) == cudaErrorInvalidValue);
      }
      CHECK(tc::plan(v, kMax, kMax - 7, 8, A, 8, B, kMax - 7, nullptr, kMax - 7, D, kMax - 7).kernel == nullptr);
    }
    CHECK(tc::tiles(kMax, 1) == kMax);
    CHECK(tc::tiles(kMax, 32) == 1 << 26);
    CHECK(tc::tiles(kMax, 256) == 1 << 23);
    CHECK(tc::tiles(kMax, 2 * 128) == 1 << 23);  // step 13's pair-rows
    CHECK(tc::tiles(0, 64) == 0);
    CHECK(tc::tiles(kMax, 32) * tc::tiles(512, 32) <= (1 << 30) + (1 << 26));  // the most 32 x 32 tiles of a D
    // The largest accepted D's tile walks: the last tile of step 6's (128 x 256 tiles) and step 13's
    // (pairs of 128 x 256 tiles) grouped orders is the corner.
    const int tm = int(tc::tiles(kMax, 128)), pm = int(tc::tiles(kMax, 256)), tn = int(tc::tiles(512, 256));
    const tc::TileCoord last6 = tc::grouped_tile(tm * tn - 1, 8, tm, tn);
    const tc::TileCoord last13 = tc::grouped_tile(pm * tn - 1, 8, pm, tn);
    CHECK((last6.m == tm - 1 && last6.n == tn - 1));
    CHECK((last13.m == pm - 1 && last13.n == tn - 1));
    // K = 2^31 - 1: 2^25 windows of 64; the panels' windows stay inside the tile's.
    const int windows = int(tc::tiles(kMax, 64));
    CHECK(windows == 1 << 25);
#if defined(SMEM_TC_GEMM_SM90A)
    for (int p = 0; p < 4; ++p) {
      CHECK(tc::panel_window<256>(p, windows) < windows);
      CHECK(tc::panel_window<128>(p % 2, windows) < windows);
    }
#endif
    // A persistent block's ring count over more windows than an int counts (200 tiles of 2^25).
    for (int w : {1, 2, 3, 5, 7, 64, windows}) {
      CAPTURE(w);
      CHECK(ring_count_holds<3>(w, 200));
      CHECK(ring_count_holds<4>(w, 200));
      CHECK(ring_count_holds<6>(w, 200));
    }
  }

  TEST_CASE("tc_gemm bank model agrees with Nsight Compute's ldmatrix and store wavefronts (results/*/banks.json)") {
    // Every ldmatrix of a kernel reads the same layout: its wavefronts per LDSM instruction are
    // one fragment's. Steps 3-5 store their tiles with 16-byte stores through load_tile.
    int compared = 0;
    for (const auto& m : smem::test::load_bank_measurements(SMEM_RESULTS_DIR)) {
      if (m.benchmark.rfind("tc_gemm/", 0) != 0 || !m.has("sass_ldsm_instructions") || m["sass_ldsm_instructions"] == 0)
        continue;
      CAPTURE(m.gpu_file);
      CAPTURE(m.benchmark);
      const std::string v = m.benchmark.substr(8, m.benchmark.find('/', 8) - 8);
      const int a = v == "mma_ldmatrix" ? tca::ldmatrix_a<tc::LdmatrixA>(0, 0).cost().wavefronts
                    : v == "padded"     ? tca::ldmatrix_a<tc::PaddedA>(0, 0).cost().wavefronts
                    : v == "tma"        ? tca::ldmatrix_a<tc::TmaTile<tc::bf16, 128, 64>>(0, 0).cost().wavefronts
                                        : tca::ldmatrix_a<tc::SwizzledA>(0, 0).cost().wavefronts;
      CHECK(m["sass_ldsm_wavefronts_per_instruction"] == doctest::Approx(a).epsilon(0.001));
      if (v == "mma_ldmatrix" || v == "padded" || v == "swizzled")
        CHECK(m["sass_st_wavefronts_per_instruction"] == doctest::Approx(4).epsilon(0.001));
      ++compared;
    }
    // The Hopper steps that stage D for a TMA store (12 on): only the staging writes are
    // shared-memory stores, one wavefront each (TmaTile, above).
    for (const auto& m : smem::test::load_bank_measurements(SMEM_RESULTS_DIR)) {
      const bool staged = m.benchmark.rfind("tc_gemm/persistent/", 0) == 0 ||
                          m.benchmark.rfind("tc_gemm/cluster/", 0) == 0 ||
                          m.benchmark.rfind("tc_gemm/overlapped/", 0) == 0 ||
                          m.benchmark.rfind("tc_gemm/gpc_order/", 0) == 0 ||
                          m.benchmark.rfind("tc_gemm/tuned_hopper/", 0) == 0;
      if (!staged || !m.has("sass_st_instructions") || m["sass_st_instructions"] == 0) continue;
      CAPTURE(m.gpu_file);
      CAPTURE(m.benchmark);
      CHECK(m["sass_st_wavefronts_per_instruction"] == doctest::Approx(1).epsilon(0.001));
      ++compared;
    }
    MESSAGE("compared " << compared << " tc_gemm kernels with their measurements");
  }
}

TEST_SUITE("large") {
  // The largest M: 2^31 - 1 rows with N = K = 8 (A and D 32 GiB each, beta = 0 and no C). Every
  // variant runs and D is checked in full; no larger M exists.
  TEST_CASE("tc_gemm large: M = 2^31 - 1 with N = K = 8, every variant") {
    constexpr int M = std::numeric_limits<int>::max(), N = 8, K = 8;
    const std::size_t a_elems = std::size_t(M) * K, d_elems = std::size_t(M) * N;
    if (!smem::test::device_can_hold((a_elems + d_elems) * sizeof(bf16) + (1 << 20))) return;
    const std::uint64_t seed = smem::test::run_seed();
    const IntMatrix a{{seed, 2}, K}, b{{seed + 1, 2}, N};
    DeviceBuffer<bf16> A(a_elems), B(std::size_t(K) * N);
    smem::test::fill_by_index(A.get(), A.size(), a);
    smem::test::fill_by_index(B.get(), B.size(), b);
    GuardedBuffer<bf16> D(d_elems);
    auto g = smem::test::rng(21);
    for (auto v : tc::kAllVariants) check_large(v, M, N, K, a, A.get(), b, B.get(), {}, nullptr, D, N, true, 1024, g);
  }

  // N near its limit with M = 2 and K = 8, and C read (beta = 1): B 32 GiB, C and D 8 GiB each.
  // N = 2^31 - 1 with leading dimensions 2^31 - 1: steps 1 to 7 take it on their element-wise paths,
  // steps 8 to 16 refuse it (no 16-byte rows), D untouched. N = 2^31 - 9 with leading dimensions
  // 2^31 - 8, the widest 16-byte rows: every step takes it (steps 12 to 16 store the panel that ends
  // inside a 16-byte chunk of a row with the threads).
  TEST_CASE("tc_gemm large: N = 2^31 - 1 and N = 2^31 - 9 with M = 2 and K = 8, every variant") {
    constexpr int M = 2, K = 8, kMax = std::numeric_limits<int>::max();
    const std::size_t row = std::size_t(kMax);
    if (!smem::test::device_can_hold((K + 2 * M) * row * sizeof(bf16) + (1 << 20))) return;
    const std::uint64_t seed = smem::test::run_seed();
    DeviceBuffer<bf16> A(std::size_t(M) * K), B(K * row), C(M * row);
    GuardedBuffer<bf16> D(M * row);
    auto g = smem::test::rng(22);
    for (const int N : {kMax, kMax - 8}) {
      const int ld = N == kMax ? kMax : kMax - 7;
      const IntMatrix a{{seed + 2, 2}, K}, b{{seed + 3, 2}, ld}, c{{seed + 4, 2}, ld};
      smem::test::fill_by_index(A.get(), A.size(), a);
      smem::test::fill_by_index(B.get(), std::size_t(K) * ld, b);
      smem::test::fill_by_index(C.get(), std::size_t(M) * ld, c);
      for (auto v : tc::kAllVariants) check_large(v, M, N, K, a, A.get(), b, B.get(), c, C.get(), D, ld, true, 1024, g);
    }
  }

  // K = 2^31 - 8 with lda = K (the widest 16-byte rows), M = 2, N = 8: A 8 GiB, B 32 GiB. A row of A
  // holds values only in its first and last 64 columns and every 65536th (sparse_width), so its sums
  // are exact; the last windows are those a wrapped K index would lose. A tile walks its 2^25 windows
  // alone, seconds per step, so three steps run it: step 6 (cp.async, its full-window test), step 13
  // (TMA, wgmma, the persistent ring in clusters) and step 15 (step 14's kernel: the spread epilogue);
  // every D element is checked on the host.
  TEST_CASE("tc_gemm large: K = 2^31 - 8 with M = 2 and N = 8, steps 6, 13 and 15") {
    constexpr int M = 2, N = 8, K = std::numeric_limits<int>::max() - 7;
    if (!smem::test::device_can_hold((std::size_t(M) + N) * K * sizeof(bf16) + (1 << 20))) return;
    const std::uint64_t seed = smem::test::run_seed();
    const IntMatrix a{{seed + 5, 2}, K, K}, b{{seed + 6, 2}, N};
    DeviceBuffer<bf16> A(std::size_t(M) * K), B(std::size_t(K) * N);
    smem::test::fill_by_index(A.get(), A.size(), a);
    smem::test::fill_by_index(B.get(), B.size(), b);
    GuardedBuffer<bf16> D(std::size_t(M) * N);
    auto g = smem::test::rng(23);
    std::vector<tc::Variant> steps = {tc::Variant::multistage};
#if defined(SMEM_TC_GEMM_SM90A)
    steps.push_back(tc::Variant::cluster);
    steps.push_back(tc::Variant::gpc_order);
#endif
    for (auto v : steps) check_large(v, M, N, K, a, A.get(), b, B.get(), {}, nullptr, D, N, false, 0, g);
  }
}

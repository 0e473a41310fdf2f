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
#include <vector>

#include "bank_evidence.hpp"
#include "bank_model.hpp"
#include "compare.hpp"
#include "cublas_handle.hpp"
#include "cuda_check.hpp"
#include "device_buffer.hpp"
#include "gpu.hpp"
#include "graph_capture.hpp"
#include "random.hpp"
#include "tc_gemm_bank_access.hpp"

namespace tc = smem::tc_gemm;
using smem::test::capture_and_replay;
using smem::test::DeviceBuffer;
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

struct Case {
  int M, N, K, lda, ldb, ldc, ldd;
  float alpha, beta;
  int offset = 0;       // elements added to every pointer (1: only 2-byte aligned operands)
  bool in_place = false;  // D == C
};

// Runs variant v on fresh random bf16 data with a NaN-poisoned D and checks every element of D:
// |D - R| <= 2^-8 |R| + (K + 4) 2^-22 S (bf16 rounding of the result, fp32 accumulation).
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
  const auto r = R.download(), s = S.download();
  long long bad = 0, first = -1;
  for (int i = 0; i < c.M; ++i)
    for (int j = 0; j < c.N; ++j) {
      const double x = double(__bfloat162float(got[c.offset + std::size_t(i) * ldd + j]));
      const double ref = r[std::size_t(i) * c.N + j], mag = s[std::size_t(i) * c.N + j];
      const double tol = std::ldexp(std::fabs(ref), -8) + (c.K + 4) * std::ldexp(mag, -22) + 1e-30;
      if (!(std::fabs(x - ref) <= tol)) {
        if (first < 0) first = (long long)i * c.N + j;
        ++bad;
      }
    }
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

}  // namespace

TEST_SUITE("gpu") {
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

#if defined(SMEM_TC_GEMM_SM90A)
  TEST_CASE("tc_gemm cluster_order: GPCs measured inside another stream's capture, every cluster ranked once") {
    // The measurement runs on its own stream in relaxed mode: a global-mode capture under way on
    // another stream of this thread must still end and replay.
    DeviceBuffer<bf16> A(std::size_t(64) * 64);
    std::vector<int> gpc;
    capture_and_replay([&](cudaStream_t s) {
      REQUIRE(cudaMemsetAsync(A.get(), 0, 64, s) == cudaSuccess);
      gpc = tc::detail::measure_cluster_gpcs(2, tc::ClusterShape::kSmemBytes);
      return cudaMemsetAsync(A.get(), 0, 64, s);
    });
    // One label per cluster of two, several GPCs, and GPCs that hold several clusters each.
    const int clusters = tc::detail::gpu_key().sms / 2;
    REQUIRE(int(gpc.size()) == clusters);
    std::vector<int> per_label(*std::max_element(gpc.begin(), gpc.end()) + 1, 0);
    for (int l : gpc) ++per_label[l];
    const int largest = *std::max_element(per_label.begin(), per_label.end());
    CHECK(largest >= 2);
    CHECK(largest <= clusters / 2);
    // The launch's order: a permutation of its clusters.
    const auto plan = tc::cluster_plan(4096, 4096, 4096, A.get(), 64, A.get(), 64, nullptr, 0, A.get(), 64);
    REQUIRE(plan.erased().kernel != nullptr);
    const int n = int(plan.grid.x) / 2;
    const tc::ClusterOrder order = tc::cluster_order(plan);
    std::vector<int> seen(n, 0);
    for (int c = 0; c < n; ++c)
      if (order.rank[c] < n) ++seen[order.rank[c]];
    CHECK(std::all_of(seen.begin(), seen.end(), [](int x) { return x == 1; }));
  }
#endif
}

TEST_SUITE("host") {
  namespace tca = smem::test::tc_gemm_access;
  using smem::test::Access;

  // The kernels' requests (common/tc_gemm_bank_access.hpp), each checked on its own.
  template <class Walk>
  bool all_conflict_free(Walk&& walk) {
    bool ok = true;
    walk([&](const smem::test::Request& r) { ok = ok && r.cost().conflict_free(); });
    return ok;
  }

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
  // 14 writes D's staging panels in it: eight rows of one 4-byte column of a plain 128-byte-row
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
    const tc::ClusterOrder o = tc::rank_by_gpc({3, 1, 3, 0, 1, 3}, 6);  // by label, then by index
    const int expected[6] = {3, 1, 4, 0, 2, 5};
    for (int c = 0; c < 6; ++c) CHECK(o.rank[c] == expected[c]);
    const tc::ClusterOrder id = tc::rank_by_gpc({}, 5);  // nothing measured: by index
    for (int c = 0; c < 5; ++c) CHECK(id.rank[c] == c);
    auto g = smem::test::rng(17);
    std::vector<int> labels(66);
    for (int& l : labels) l = int(g() % 9);
    const tc::ClusterOrder r = tc::rank_by_gpc(labels, 66);
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
                    : v == "tma"        ? tca::ldmatrix_a<tc::TmaTile<128, 64>>(0, 0).cost().wavefronts
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

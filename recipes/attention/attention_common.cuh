/// \file attention_common.cuh
/// \brief What every attention step uses: the problem and its strides, the launcher contract
/// (argument checks on the host before any CUDA call), the causal mask, the launch plan and the
/// kernel that finishes a problem without keys.
///
/// Every step computes, per batch b and query head h, the forward pass
/// O = softmax(scale Q K^T + mask) V and the log-sum-exp of each query row,
/// LSE = log(sum_j exp(scale q_i . k_j)) over the keys the row sees, through a launcher
/// \code
/// cudaError_t <step>(const Problem& p, const bf16* Q, const bf16* K, const bf16* V, bf16* O, float* lse,
///                    void* workspace, std::size_t workspace_bytes, cudaStream_t stream = nullptr);
/// std::size_t <step>_workspace(const Problem& p);  // the bytes the step needs (0 for most)
/// \endcode
/// Q, K, V and O are bf16 tensors [batch, seq, heads, head_dim] with head_dim contiguous and the
/// other three strides free (Strides: PyTorch's [batch, seq, heads, d] and [batch, heads, seq, d]
/// both work without a copy); the scores, the softmax and the accumulation are fp32. K and V have
/// heads_kv heads, which divides heads_q: query head h reads key head h / (heads_q / heads_kv)
/// (grouped-query attention; heads_kv == 1 is multi-query). lse, if not null, is fp32
/// [batch, heads_q, seq_q], packed. With `causal`, query i sees key j when
/// j <= i + seq_kv - seq_q (the mask aligned to the bottom right, FlashAttention 2.1's
/// convention); a row that sees no key gets O = 0 and LSE = -inf, never NaN. A NaN in a query row
/// makes that row NaN and no other.
///
/// The launcher checks its arguments before any CUDA call (check_args()), returns
/// `cudaErrorInvalidValue` with O and lse untouched for bad ones, never allocates or synchronizes
/// (a step that needs scratch memory takes it as `workspace`) and returns `cudaGetLastError()`
/// after the launch. Accepted: every size from 0 to 2^31 - 1, heads_kv >= 1 dividing heads_q,
/// head_dim a multiple of 8 from 8 to 256 (a step may take fewer: its plan is then null and the
/// launcher refuses), a finite scale, strides >= 0 under which no two elements of O coincide, and
/// tensors of at most 2^60 bytes each; O and lse may not overlap Q, K, V or each other. A step
/// also refuses a problem that needs more than 2^31 - 1 blocks (steps 2 and 3: batch x heads_q x
/// ceil(seq_q / 16); 4 to 6: ceil(seq_q / 64); 7: batch x heads_kv x row sets x chunks; 8:
/// ceil(seq_q / its rows, 64 or 128); 9 to 11: ceil(seq_q / 128)) or work units (12: batch x
/// heads_q x ceil(seq_q / 256)) or, in step 1, more than 2^60 bytes of scores.
#pragma once
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>

namespace smem::attention {

using bf16 = __nv_bfloat16;

/// The strides, in elements, of a [batch, seq, heads, head_dim] tensor whose head_dim is contiguous.
struct Strides {
  long long batch, seq, head;
};
/// A packed [batch, seq, heads, head_dim] tensor.
inline Strides bshd(int seq, int heads, int head_dim) {
  return {static_cast<long long>(seq) * heads * head_dim, static_cast<long long>(heads) * head_dim, head_dim};
}
/// A packed [batch, heads, seq, head_dim] tensor, read as [batch, seq, heads, head_dim].
inline Strides bhsd(int seq, int heads, int head_dim) {
  return {static_cast<long long>(heads) * seq * head_dim, head_dim, static_cast<long long>(seq) * head_dim};
}

/// One attention problem: its sizes, the scale of the scores, the mask and the four tensors' strides.
struct Problem {
  int batch = 0, heads_q = 0, heads_kv = 0, seq_q = 0, seq_kv = 0, head_dim = 0;
  float scale = 0.0f;
  bool causal = false;
  Strides q = {}, k = {}, v = {}, o = {};
};

/// The element (b, s, h, 0) of a tensor with strides t: 64-bit, as every offset in this family.
__host__ __device__ inline long long at(const Strides& t, long long b, long long s, long long h) {
  return b * t.batch + s * t.seq + h * t.head;
}

/// Whether query i sees key j (bottom-right causal mask, or none).
__host__ __device__ inline bool visible(const Problem& p, long long i, long long j) {
  return !p.causal || j <= i + p.seq_kv - p.seq_q;
}

/// What a launcher does with its arguments.
enum class Args {
  launch,   ///< run the step's kernel
  empty,    ///< no query row (batch, heads_q or seq_q is 0): return cudaSuccess
  no_keys,  ///< seq_kv == 0: every row sees no key, O = 0 and LSE = -inf (launch no_keys_kernel)
  invalid   ///< return cudaErrorInvalidValue, touch nothing
};

__host__ __device__ inline bool aligned(const void* p, std::size_t bytes) {
  return reinterpret_cast<std::uintptr_t>(p) % bytes == 0;
}

/// The most bytes a tensor may span: its offsets then fit a long long many times over.
inline constexpr long long kMaxTensorBytes = 1LL << 60;

namespace detail {
/// First and one-past-last byte of a tensor; empty (lo == hi) for a tensor with no element.
struct Span {
  std::uintptr_t lo, hi;
};
inline bool overlap(Span a, Span b) { return a.lo < b.hi && b.lo < a.hi; }

/// The bytes from p spanned by [batch, seq, heads, d] elements of `bytes` each under strides t,
/// false if a stride is negative or the span passes kMaxTensorBytes.
inline bool span_of(const void* p, long long batch, long long seq, long long heads, long long d, const Strides& t,
                    long long bytes, Span& s) {
  const auto lo = reinterpret_cast<std::uintptr_t>(p);
  s = {lo, lo};
  if (t.batch < 0 || t.seq < 0 || t.head < 0) return false;
  if (batch == 0 || seq == 0 || heads == 0 || d == 0) return true;
  const long long counts[3] = {batch - 1, seq - 1, heads - 1}, strides[3] = {t.batch, t.seq, t.head};
  long long last = d - 1;  // the last element's offset, checked against the limit term by term
  for (int i = 0; i < 3; ++i) {
    if (strides[i] != 0 && counts[i] > kMaxTensorBytes / bytes / strides[i]) return false;
    last += counts[i] * strides[i];
    if (last >= kMaxTensorBytes / bytes) return false;
  }
  s.hi = lo + std::uintptr_t(last + 1) * std::uintptr_t(bytes);
  return true;
}

/// Whether no two elements of a [batch, seq, heads, d] tensor (head_dim contiguous) share an
/// address: taken from the smallest stride up, each stride of a dimension of more than one
/// element clears everything inside it.
inline bool distinct(long long batch, long long seq, long long heads, long long d, const Strides& t) {
  long long n[3] = {batch, seq, heads}, s[3] = {t.batch, t.seq, t.head};
  for (int i = 0; i < 3; ++i)  // sort the three by stride
    for (int j = i + 1; j < 3; ++j)
      if (s[j] < s[i]) std::swap(s[i], s[j]), std::swap(n[i], n[j]);
  long long extent = d;  // elements covered by the dimensions inside the next one
  for (int i = 0; i < 3; ++i) {
    if (n[i] <= 1) continue;
    if (s[i] < extent) return false;
    extent = s[i] * (n[i] - 1) + extent;  // no overflow: span_of bounded it first
  }
  return true;
}
}  // namespace detail

//! [contract]
/// Checks the arguments of a step: sizes, heads, head_dim, scale, strides, null and misaligned
/// pointers, spans beyond kMaxTensorBytes, elements of O that coincide, and O or lse overlapping
/// an input or each other are invalid. K and V are not read when seq_kv == 0 (they may then be
/// null), nothing is read or written when there is no query row. Q, K and V are bf16, or bytes
/// for step 14 (FP8).
template <class In>
Args check_args(const Problem& p, const In* Q, const In* K, const In* V, const bf16* O, const float* lse) {
  constexpr int e = int(sizeof(In));
  if (p.batch < 0 || p.heads_q < 0 || p.heads_kv < 1 || p.seq_q < 0 || p.seq_kv < 0) return Args::invalid;
  if (p.heads_q % p.heads_kv != 0 || p.head_dim < 8 || p.head_dim > 256 || p.head_dim % 8 != 0) return Args::invalid;
  if (!std::isfinite(p.scale)) return Args::invalid;
  detail::Span q, k, v, o, l;
  const int d = p.head_dim;
  if (!detail::span_of(Q, p.batch, p.seq_q, p.heads_q, d, p.q, e, q) ||
      !detail::span_of(K, p.batch, p.seq_kv, p.heads_kv, d, p.k, e, k) ||
      !detail::span_of(V, p.batch, p.seq_kv, p.heads_kv, d, p.v, e, v) ||
      !detail::span_of(O, p.batch, p.seq_q, p.heads_q, d, p.o, 2, o) ||
      !detail::span_of(lse, p.batch, p.heads_q, p.seq_q, 1, Strides{1LL * p.heads_q * p.seq_q, p.seq_q, 1}, 4, l))
    return Args::invalid;
  if (!detail::distinct(p.batch, p.seq_q, p.heads_q, d, p.o)) return Args::invalid;
  if (p.batch == 0 || p.heads_q == 0 || p.seq_q == 0) return Args::empty;
  if (Q == nullptr || O == nullptr || !aligned(Q, e) || !aligned(O, 2) || !aligned(lse, 4)) return Args::invalid;
  const bool with_lse = lse != nullptr;
  if (detail::overlap(o, q) || (with_lse && (detail::overlap(l, q) || detail::overlap(l, o)))) return Args::invalid;
  if (p.seq_kv == 0) return Args::no_keys;
  if (K == nullptr || V == nullptr || !aligned(K, e) || !aligned(V, e)) return Args::invalid;
  if (detail::overlap(o, k) || detail::overlap(o, v) || (with_lse && (detail::overlap(l, k) || detail::overlap(l, v))))
    return Args::invalid;
  return Args::launch;
}
//! [contract]

/// Whether `bytes` of `workspace` hold `need` bytes for a launch of p: not null, 16-byte aligned,
/// and overlapping none of the tensors (for arguments check_args() accepted).
inline bool workspace_fits(const Problem& p, const bf16* Q, const bf16* K, const bf16* V, const bf16* O,
                           const float* lse, const void* workspace, std::size_t bytes, std::size_t need) {
  if (workspace == nullptr || bytes < need || !aligned(workspace, 16)) return false;
  const auto lo = reinterpret_cast<std::uintptr_t>(workspace);
  const detail::Span w = {lo, lo + need};
  detail::Span t[5];
  const int d = p.head_dim;
  detail::span_of(Q, p.batch, p.seq_q, p.heads_q, d, p.q, 2, t[0]);
  detail::span_of(K, p.batch, p.seq_kv, p.heads_kv, d, p.k, 2, t[1]);
  detail::span_of(V, p.batch, p.seq_kv, p.heads_kv, d, p.v, 2, t[2]);
  detail::span_of(O, p.batch, p.seq_q, p.heads_q, d, p.o, 2, t[3]);
  detail::span_of(lse, p.batch, p.heads_q, p.seq_q, 1, Strides{1LL * p.heads_q * p.seq_q, p.seq_q, 1}, 4, t[4]);
  if (lse == nullptr) t[4] = {0, 0};
  return std::none_of(t, t + 5, [&](detail::Span s) { return detail::overlap(w, s); });
}

/// rows x per_row x `bytes`-byte elements as a workspace size, or SIZE_MAX (which no caller can
/// provide) beyond kMaxTensorBytes.
inline std::size_t workspace_size(long long rows, long long per_row, long long bytes) {
  if (rows <= 0 || per_row <= 0) return 0;
  if (rows > kMaxTensorBytes / bytes / per_row) return SIZE_MAX;
  return std::size_t(rows * per_row * bytes);
}

/// Every row of a problem without keys: O = 0 and LSE = -inf. One thread per element of O.
static __global__ void no_keys_kernel(Problem p, bf16* O, float* lse) {
  const long long rows = 1LL * p.batch * p.seq_q * p.heads_q, total = rows * p.head_dim;
  for (long long e = blockIdx.x * 256LL + threadIdx.x; e < total; e += 256LL * gridDim.x) {
    const long long r = e / p.head_dim, c = e % p.head_dim;
    const long long h = r % p.heads_q, s = r / p.heads_q % p.seq_q, b = r / p.heads_q / p.seq_q;
    O[at(p.o, b, s, h) + c] = bf16(0.0f);
    if (lse != nullptr && c == 0) lse[(b * p.heads_q + h) * p.seq_q + s] = -INFINITY;
  }
}

/// What a launcher returns for a non-launch Args: success for empty, no_keys_kernel's launch for
/// no_keys, cudaErrorInvalidValue for invalid.
inline cudaError_t finish_without_launch(Args a, const Problem& p, bf16* O, float* lse, cudaStream_t stream) {
  if (a == Args::invalid) return cudaErrorInvalidValue;
  if (a == Args::empty) return cudaSuccess;
  const long long total = 1LL * p.batch * p.seq_q * p.heads_q * p.head_dim;
  no_keys_kernel<<<unsigned(std::min<long long>((total + 255) / 256, 4096)), 256, 0, stream>>>(p, O, lse);
  return cudaGetLastError();
}

/// Number of `tile`-sized tiles covering n (n >= 0), in 64 bits.
__host__ __device__ constexpr long long tiles(long long n, int tile) { return (n + tile - 1) / tile; }

//! [work order]
/// Work item x of a grid over query tiles of `rows` rows: its batch b, head h, first row q0 and last
/// row (below seq_q). Without the mask a head's query tiles are consecutive items (they read its K
/// and V together). With it the longest (last) query tiles run first, heads innermost: within
/// groups of G heads whose K and V fit in about 16 MiB of L2 together, so that the items running
/// at once share them (item x: group x / (G tiles_q), in it query tile tiles_q - 1 - r / n of head
/// first + r % n, r its place, n the group's heads); or, with `across_heads` (step 8), across all
/// heads (query tile tiles_q - 1 - x / H of head x % H), where the shortest come last everywhere
/// but the items running at once share K and V only with fewer heads than resident blocks.
struct QueryTile {
  long long b, h, q0, last;
  /// Query tile `tile` of head bh (of batch x heads_q).
  __host__ __device__ QueryTile(const Problem& p, long long bh, long long tile, int rows)
      : b(bh / p.heads_q), h(bh % p.heads_q), q0(tile * rows), last((q0 + rows < p.seq_q ? q0 + rows : p.seq_q) - 1) {}
  /// G: the heads (of batch x heads_q) whose K and V take about 16 MiB together, at least 1.
  __host__ __device__ static long long group(const Problem& p) {
    const long long heads = 1LL * p.batch * p.heads_q, g = (16LL << 20) / (4LL * p.seq_kv * p.head_dim + 1);
    return g < 1 ? 1 : g < heads ? g : heads;
  }
  /// Work item x.
  __host__ __device__ static QueryTile nth(const Problem& p, long long x, int rows, bool across_heads = false) {
    const long long tiles_q = tiles(p.seq_q, rows), heads = 1LL * p.batch * p.heads_q;
    if (!p.causal) return QueryTile(p, x / tiles_q, x % tiles_q, rows);
    if (across_heads) return QueryTile(p, x % heads, tiles_q - 1 - x / heads, rows);
    const long long group = QueryTile::group(p), first = x / (group * tiles_q) * group;
    const long long n = heads - first < group ? heads - first : group, r = x - first * tiles_q;
    return QueryTile(p, first + r % n, tiles_q - 1 - r / n, rows);
  }
};

/// The keys the rows first to last of a query tile see, as tiles of `keys`: tiles [0, end) are
/// walked, and tiles from `masked` on need the mask (they reach past the diagonal of row `first`,
/// or past seq_kv).
struct KeyTiles {
  long long end, masked;
  __host__ __device__ KeyTiles(const Problem& p, long long first, long long last, int keys) {
    const long long n = tiles(p.seq_kv, keys), shift = p.seq_kv - p.seq_q;
    const long long reach = (last + shift) / keys + 1, clear_row = first + shift + 1;
    end = !p.causal ? n : last + shift < 0 ? 0 : reach < n ? reach : n;
    const long long clear = !p.causal || clear_row > p.seq_kv ? p.seq_kv : clear_row;  // keys below it: no mask
    masked = clear <= 0 ? 0 : clear / keys;  // tiles below it lie wholly before `clear`
  }
};
//! [work order]

//! [plan]
/// What a launcher launches: the kernel, its grid and block, and its dynamic shared memory. A null
/// kernel: the step cannot run this problem (the launcher returns cudaErrorInvalidValue).
template <class Kernel>
struct Plan {
  Kernel kernel;
  dim3 grid, block;
  unsigned smem;
  Plan<const void*> erased() const { return {reinterpret_cast<const void*>(kernel), grid, block, smem}; }
};

/// A plan over a 1D grid of `blocks` blocks, null beyond 2^31 - 1 blocks.
template <class Kernel>
Plan<Kernel> grid_plan(Kernel kernel, long long blocks, dim3 block, unsigned smem = 0) {
  return {blocks <= 0x7fffffffLL ? kernel : nullptr, dim3(unsigned(blocks > 0 ? blocks : 1)), block, smem};
}

/// Launches a plan with the kernel's arguments: cudaErrorInvalidValue for a null kernel; above
/// 48 KB of dynamic shared memory the kernel opts in first.
template <class Kernel, class... A>
cudaError_t launch(const Plan<Kernel>& p, cudaStream_t stream, A... args) {
  if (p.kernel == nullptr) return cudaErrorInvalidValue;
  if (p.smem > 48u * 1024u)
    if (cudaError_t e = cudaFuncSetAttribute(p.kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(p.smem));
        e != cudaSuccess)
      return e;
  p.kernel<<<p.grid, p.block, p.smem, stream>>>(args...);
  return cudaGetLastError();
}
//! [plan]

/// What decides the best shape on a GPU, as steps 8 and 15 key their tables (all zero if the
/// device cannot be queried): five attribute queries, no synchronization.
struct GpuKey {
  int cc = 0, sms = 0, smem_per_sm = 0, regs_per_sm = 0;
};
inline GpuKey gpu_key() {
  int dev = 0, major = 0, minor = 0;
  GpuKey k;
  if (cudaGetDevice(&dev) != cudaSuccess || cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev) ||
      cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev) ||
      cudaDeviceGetAttribute(&k.sms, cudaDevAttrMultiProcessorCount, dev) ||
      cudaDeviceGetAttribute(&k.smem_per_sm, cudaDevAttrMaxSharedMemoryPerMultiprocessor, dev) ||
      cudaDeviceGetAttribute(&k.regs_per_sm, cudaDevAttrMaxRegistersPerMultiprocessor, dev))
    return GpuKey{};
  k.cc = major * 10 + minor;
  return k;
}

/// Two floats as a bf16 pair, x in the low half (the lower column or k index).
__device__ __forceinline__ unsigned pack_bf16(float x, float y) {
  const __nv_bfloat162 v = __floats2bfloat162_rn(x, y);
  return *reinterpret_cast<const unsigned*>(&v);
}
//! [exp2]
/// 2^x in one instruction (the special-function unit's ex2.approx.ftz: relative error near 2^-22,
/// 2^-inf = 0). The softmax works in base 2 with log2(e) folded into the scale, so that every
/// exponential is this one instruction instead of expf's range reduction.
__device__ __forceinline__ float exp2_approx(float x) {
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;\n" : "=f"(y) : "f"(x));
  return y;
}
//! [exp2]

/// How far (base 2) a tile's row max may pass the running max before the tensor-core steps move it
/// (FlashAttention-4's conditional rescale): P stays at most 2^8, o's rescale is skipped on most tiles, and o
/// and l may hold 2^8 times the exact-max values (o overflows for |V| beyond about 2^120 / seq_kv).
inline constexpr int kMaxSlack = 8;

/// The kernel of steps 2 and 3: (problem, Q, K, V, O, lse).
using RowKernel = void (*)(Problem, const bf16*, const bf16*, const bf16*, bf16*, float*);

}  // namespace smem::attention

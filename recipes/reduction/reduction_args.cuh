/// \file reduction_args.cuh
/// \brief The contract shared by every reduction step: the operations (sum, max) with their
/// identities, the argument checks done on the host before any CUDA call, the workspace sizes,
/// and the multi-pass driver of the one-block-per-tile steps 1 to 6.
///
/// Every launcher has the shape of `cub::DeviceReduce`:
/// \code
/// template <class T, class Op>
/// cudaError_t reduce_<step>(void* d_temp, std::size_t& temp_bytes, const T* in, long long n,
///                           T* out, Op op, T identity, cudaStream_t stream = nullptr);
/// \endcode
/// - `d_temp == nullptr`: size query. Sets `temp_bytes` to the workspace the call needs for this
///   `n` and returns, touching nothing (the pointers may be null then). Needs no CUDA call.
/// - Otherwise writes `*out = identity op in[0] op ... op in[n-1]` (device memory), on `stream`,
///   using the caller's workspace; no allocation, no synchronization: capturable in a CUDA graph.
/// - `n == 0` writes `identity`. Indices are 64-bit: any `n` up to what fits in memory.
/// - Invalid (returns `cudaErrorInvalidValue` before any CUDA call, writes nothing): `n < 0`,
///   `out == nullptr`, `in == nullptr` with `n > 0`, `in` or `out` not aligned to `alignof(T)`,
///   `d_temp` not 16-byte aligned, `temp_bytes` smaller than the size query's answer.
/// - `op` must be associative; the result is bitwise identical from run to run on the same GPU
///   (a fixed reduction order: no atomics on values), but it depends on the step, since each
///   step groups the operands differently.
#pragma once
#include <cuda_runtime.h>

#include <climits>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <type_traits>

namespace smem::reduction {

//! [ops]
/// a + b; identity 0.
struct Sum {
  template <class T>
  __host__ __device__ T operator()(const T& a, const T& b) const { return a + b; }
  template <class T>
  static constexpr T identity() { return T(0); }
};

/// The larger of a and b; identity -infinity for floating point, the lowest value otherwise.
struct Max {
  template <class T>
  __host__ __device__ T operator()(const T& a, const T& b) const { return a < b ? b : a; }
  template <class T>
  static constexpr T identity() {
    if constexpr (std::numeric_limits<T>::has_infinity) return -std::numeric_limits<T>::infinity();
    else return std::numeric_limits<T>::lowest();
  }
};
//! [ops]

/// What a launcher does with its arguments: answer a size query, launch, or reject them.
enum class Args { query, launch, invalid };

/// Workspace offsets and sizes are rounded up to this (also the required d_temp alignment).
inline constexpr std::size_t kTempAlign = 16;
constexpr std::size_t align_up(std::size_t x) { return (x + kTempAlign - 1) / kTempAlign * kTempAlign; }

/// Checks a launcher's arguments against `needed`, the workspace bytes this call needs (from the
/// step's own size function, which is plain host arithmetic). Makes no CUDA call.
template <class T>
Args check_args(const void* d_temp, std::size_t temp_bytes, std::size_t needed, const T* in,
                long long n, const T* out) {
  if (n < 0) return Args::invalid;
  if (d_temp == nullptr) return Args::query;
  if (out == nullptr || (in == nullptr && n > 0)) return Args::invalid;
  const auto a = reinterpret_cast<std::uintptr_t>(in), o = reinterpret_cast<std::uintptr_t>(out),
             t = reinterpret_cast<std::uintptr_t>(d_temp);
  if (a % alignof(T) != 0 || o % alignof(T) != 0 || t % kTempAlign != 0) return Args::invalid;
  if (temp_bytes < needed) return Args::invalid;
  return Args::launch;
}

/// The common head of every launcher: the size query, or the error to return, or "go on"
/// (returns false with `err` unset only when the launcher should launch).
template <class T>
bool handle_args(void* d_temp, std::size_t& temp_bytes, std::size_t needed, const T* in, long long n,
                 const T* out, cudaError_t& err) {
  switch (check_args(d_temp, temp_bytes, needed, in, n, out)) {
    case Args::query: temp_bytes = needed; err = cudaSuccess; return true;
    case Args::invalid: err = cudaErrorInvalidValue; return true;
    case Args::launch: break;
  }
  return false;
}

// ---- Steps 1 to 6: one block per tile of the input, then the same kernel on the partials. ----

/// Threads per block of steps 1 to 6.
inline constexpr int kTreeThreads = 256;

/// Blocks (= partial results) one pass over `count` elements needs, at `per_block` elements per
/// block. At least 1: an empty input still yields one partial (the identity).
constexpr long long pass_blocks(long long count, long long per_block) {
  return count <= per_block ? 1 : (count + per_block - 1) / per_block;
}

/// Workspace of the multi-pass driver: two ping-pong buffers of partials, sized for the first
/// and second passes (every later pass is smaller and reuses them). The last pass writes `out`.
/// Never 0, so that a caller who allocates what the query says never passes a null workspace.
template <class T>
constexpr std::size_t multi_pass_bytes(long long n, long long per_block) {
  const long long b1 = pass_blocks(n, per_block);
  if (b1 <= 1) return kTempAlign;
  const long long b2 = pass_blocks(b1, per_block);
  return align_up(std::size_t(b1) * sizeof(T)) + (b2 > 1 ? align_up(std::size_t(b2) * sizeof(T)) : 0);
}

/// Runs `launch(src, count, dst, blocks)` pass after pass until one block is left, which
/// writes `out`. Pass k reads the partials of pass k-1: the reduction needs no atomics and no
/// second kernel. After the argument checks; returns the first launch error.
template <class T, class Launch>
cudaError_t multi_pass(void* d_temp, std::size_t& temp_bytes, const T* in, long long n, T* out,
                       long long per_block, Launch&& launch) {
  cudaError_t err;
  if (handle_args(d_temp, temp_bytes, multi_pass_bytes<T>(n, per_block), in, n, out, err)) return err;
  if (pass_blocks(n, per_block) > INT_MAX) return cudaErrorInvalidValue;  // beyond the grid limit
  T* buf[2] = {static_cast<T*>(d_temp),
               reinterpret_cast<T*>(static_cast<char*>(d_temp) +
                                    align_up(std::size_t(pass_blocks(n, per_block)) * sizeof(T)))};
  const T* src = in;
  long long count = n;
  for (int pass = 0;; ++pass) {
    const long long blocks = pass_blocks(count, per_block);
    T* dst = blocks == 1 ? out : buf[pass % 2];
    launch(src, count, dst, unsigned(blocks));
    if ((err = cudaGetLastError()) != cudaSuccess || blocks == 1) return err;
    src = dst;
    count = blocks;
  }
}

}  // namespace smem::reduction

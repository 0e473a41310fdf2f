/// \file histogram_07_byte_counters.cuh
/// \brief Step 7, private byte counters: no atomic in the counting loop.
///
/// What changes from step 5: step 5 still pays one shared atomic per run, and on uniform
/// `std::uint8_t` data a run is one sample. Here each lane counts into 8-bit counters of its own,
/// so a sample costs a byte load, an add and a byte store: plain shared-memory instructions at
/// full rate, with no atomic unit in the way and no lane ever waiting for another, whatever the
/// data (the skewed input costs what the uniform one does). Lane l's counter of privatized bin b
/// is byte `b % 4` of word `byte_counter_word(b, l)` of its warp's table, always in bank l.
///
/// A byte holds 255. Every kFoldRounds rounds of the loop (at most 255 samples per lane), the
/// warp folds its table into 32-bit totals kept in registers: lane l owns bins 8 l .. 8 l + 7 and
/// sums them over the 32 columns, reading the columns in a rotated order (`fold_word`: in each
/// round the 32 lanes read 32 banks) and adding two bytes at a time in 16-bit halves; then each
/// lane zeroes its own column. At the end each warp writes its totals into its table, and the
/// block sums them bin by bin and adds them to the output with one global atomic per bin, as
/// step 2 does.
///
/// Bins: at most kByteBins = 256 privatized bins, every `std::uint8_t` histogram and `float` ones
/// up to 256 bins (more: cudaErrorInvalidValue). The table takes 8 KB per warp: 64 KB per block.
#pragma once
#include <cuda_runtime.h>

#include "histogram_common.cuh"

namespace smem::histogram {

/// Privatized bins of the byte counters, and the words of a lane's column (4 counters a word).
inline constexpr int kByteBins = 256;
inline constexpr int kByteRows = kByteBins / 4;

//! [byte maps]
/// Word of lane l's byte counter of bin b in its warp's table (the counter is byte b % 4 of it):
/// row b / 4, column l, so always bank l.
__host__ __device__ constexpr int byte_counter_word(int bin, int lane) { return bin / 4 * 32 + lane; }
/// The word that `lane` reads of row `row` in round `round` of the fold: the column of lane
/// (lane + round) % 32, so that the 32 lanes of a round read 32 banks.
__host__ __device__ constexpr int fold_word(int row, int lane, int round) { return row * 32 + (lane + round) % 32; }
/// Word of bin b's total in a warp's table at the end, padded one word per 32 as in step 3:
/// lane l stores bins 8 l .. 8 l + 7, and the padding spreads each such store over the 32 banks.
__host__ __device__ constexpr int total_word(int bin) { return bin + bin / 32; }
//! [byte maps]

//! [byte counters]
template <class T>
__global__ void __launch_bounds__(kThreads) byte_counters_kernel(const T* __restrict__ samples, long long n,
                                                                 Counter* __restrict__ counts, Even<T> rule) {
  extern __shared__ unsigned table[];  // per warp: kByteRows x 32 words
  const int lane = threadIdx.x % 32;
  unsigned* words = table + threadIdx.x / 32 * kByteRows * 32;
  unsigned char* bytes = reinterpret_cast<unsigned char*>(words);
  for (int r = 0; r < kByteRows; ++r) words[r * 32 + lane] = 0;
  __syncwarp();

  Counter total[8] = {};  // bins 8 lane .. 8 lane + 7
  const auto fold = [&] {
    __syncwarp();
#pragma unroll
    for (int h = 0; h < 2; ++h) {  // rows 2 lane + h: bins 4 row .. 4 row + 3
      unsigned even = 0, odd = 0;  // bytes 0 and 2, bytes 1 and 3, in 16-bit halves (32 x 255 fits)
      for (int i = 0; i < 32; ++i) {
        const unsigned w = words[fold_word(2 * lane + h, lane, i)];
        even += w & 0x00ff00ffu;
        odd += w >> 8 & 0x00ff00ffu;
      }
      total[4 * h] += even & 0xffffu;
      total[4 * h + 1] += odd & 0xffffu;
      total[4 * h + 2] += even >> 16;
      total[4 * h + 3] += odd >> 16;
    }
    __syncwarp();
    for (int r = 0; r < kByteRows; ++r) words[r * 32 + lane] = 0;
    __syncwarp();
  };
  const auto count = [&](T x) {
    const int b = rule.privatized(x);
    if (b >= 0) ++bytes[byte_counter_word(b, lane) * 4 + b % 4];
  };

  // The samples before the first and after the last 16-byte boundary (fewer than 16 each) go
  // straight to the output; the vectors are shared out as in step 5, a round of kUnroll per lane.
  constexpr int kVec = 16 / int(sizeof(T));
  constexpr int kFoldRounds = 255 / (kUnroll * kVec);  // rounds before a byte could overflow
  const long long misalign = (long long)(reinterpret_cast<std::uintptr_t>(samples) % 16 / sizeof(T));
  const long long head = misalign == 0 ? 0 : (kVec - misalign < n ? kVec - misalign : n);
  const long long vecs = (n - head) / kVec, tail = head + vecs * kVec;
  const long long tid = (long long)blockIdx.x * blockDim.x + threadIdx.x, threads = (long long)gridDim.x * blockDim.x;
  const auto direct = [&](T x) {
    const int b = rule.privatized(x);
    if (b >= 0) add_to_output(rule, b, 1, counts);
  };
  if (tid < head) direct(samples[tid]);
  if (tid < n - tail) direct(samples[tail + tid]);
  const uint4* v = reinterpret_cast<const uint4*>(samples + head);
  int rounds = 0;
  for (long long base = tid; base - lane < vecs; base += threads * kUnroll) {  // warp-uniform test
    uint4 r[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u)
      if (base + u * threads < vecs) r[u] = __ldcs(v + base + u * threads);
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      if (base + u * threads >= vecs) break;
      T x[kVec];
      memcpy(x, &r[u], sizeof(x));
#pragma unroll
      for (int k = 0; k < kVec; ++k) count(x[k]);
    }
    if (++rounds == kFoldRounds) {
      fold();
      rounds = 0;
    }
  }
  fold();

#pragma unroll
  for (int j = 0; j < 8; ++j) words[total_word(8 * lane + j)] = total[j];  // the table is free now
  __syncthreads();
  for (int i = threadIdx.x; i < kByteBins; i += blockDim.x) {
    Counter c = 0;
    for (int w = 0; w < kThreads / 32; ++w) c += table[w * kByteRows * 32 + total_word(i)];
    add_to_output(rule, i, c, counts);
  }
}
//! [byte counters]

/// At most kByteBins privatized bins.
template <class T>
constexpr bool byte_counters_fits(int bins) {
  return bins >= 1 && privatized_bins<T>(bins) <= kByteBins;
}

template <class T>
Plan<void (*)(const T*, long long, Counter*, Even<T>)> byte_counters_plan(long long n, int bins) {
  if (!byte_counters_fits<T>(bins)) return {nullptr, dim3(), dim3(), 0};
  constexpr int kWords = kThreads / 32 * kByteRows * 32;
  return fill_plan<byte_counters_kernel<T>>(n, unsigned(kWords * sizeof(unsigned)), privatized_per_block(kWords));
}

/// counts = histogram of samples[0, n), counted in private byte counters per lane; see
/// histogram_common.cuh for the contract. At most 256 bins for `float` samples.
template <class T>
cudaError_t byte_counters(const T* samples, long long n, Counter* counts, int bins, Level<T> lower, Level<T> upper,
                          cudaStream_t stream = nullptr) {
  const Even<T> rule = Even<T>::make(bins, lower, upper);
  if (!valid_args(samples, n, counts, rule.valid, byte_counters_fits<T>(bins))) return cudaErrorInvalidValue;
  return zero_and_launch(byte_counters_plan<T>(n, bins), 1, counts, bins, n, stream, samples, n, counts, rule);
}

}  // namespace smem::histogram

/// \file reduction_10_tagged_counter.cuh
/// \brief Step 10, step 8 without the memset: a tagged ticket counter that every launch leaves
/// ready for the next, and that a launch on fresh workspace recognizes as stale.
///
/// What changes from step 8: the `cudaMemsetAsync` before the kernel goes, and with it the
/// second operation on the stream (a second node in a CUDA graph). Step 8 must zero its counter
/// before every launch because the caller's workspace may hold anything. The lesson of the
/// scan's look-back is that shared state needs no reset when a reader can tell current state
/// from stale: here the counter is one 64-bit word, a 40-bit tag above a 24-bit count, and a
/// word is current when it carries the tag and a count below the grid.
/// - The block that draws the last ticket leaves the word at (tag, 0), which is exactly what the
///   next launch needs. Every launch after the first on a workspace takes its tickets with one
///   `atomicAdd` each, as step 8 does.
/// - On a fresh workspace the first tickets land on a stale word. Each block that draws one
///   tries to replace the word by (tag, 1), its own ticket 0, with a compare-and-swap; the one
///   that succeeds holds ticket 0, and every other block draws again from the current word.
///
/// What the tag cannot rule out: a fresh workspace whose word already holds the tag and a count
/// between 1 and the grid. Random bytes do that with a probability below 2^-40, and the word
/// read as a `double`, or its high half read as a `float`, is a NaN with an unusual payload, so
/// partials left in the workspace by another reduction do not look like it either. Where a
/// caller cannot accept that, step 8 is exact.
#pragma once
#include <cuda_runtime.h>

#include <cstddef>

#include "reduction_08_single_pass.cuh"

namespace smem::reduction {

//! [tagged counter]
/// The ticket counter of step 10: one 64-bit word, kTag above a count of tickets drawn.
struct TaggedCounter {
  static constexpr int kCountBits = 24;
  static constexpr unsigned long long kTag = 0x7FF5A17E3Cull, kCountMask = (1ull << kCountBits) - 1;
  static constexpr unsigned long long kReady = kTag << kCountBits;  ///< the word a launch leaves
  static_assert(kMaxGridBlocks <= (long long)kCountMask, "the count holds every block's ticket");
  unsigned long long* word;

  /// True when w is this launch's state: the tag, and fewer tickets than blocks drawn so far.
  __device__ static bool current(unsigned long long w) {
    return w >> kCountBits == kTag && (w & kCountMask) < gridDim.x;
  }
  /// This block's ticket, 0 .. gridDim.x - 1; every block counts exactly once in the tagged word.
  __device__ unsigned take() const {
    const unsigned long long seen = atomicAdd(word, 1ull);
    if (current(seen)) return unsigned(seen & kCountMask);
    // The add landed on a stale word: replace the word by (tag, 1), holding ticket 0, unless
    // another block replaced it first; then draw again from the tagged word.
    for (unsigned long long expect = seen + 1;;) {
      const unsigned long long prev = atomicCAS(word, expect, kReady + 1);
      if (prev == expect) return 0;
      if (current(prev)) return unsigned(atomicAdd(word, 1ull) & kCountMask);
      expect = prev;  // still stale, changed by other blocks' adds: try again
    }
  }
  /// Run by the block with the last ticket, after every block has drawn: ready for the next launch.
  __device__ void leave() const { *word = kReady; }
  cudaError_t prepare(cudaStream_t) const { return cudaSuccess; }
};
//! [tagged counter]

template <class T, class Op, int kThreads = kStrideThreads, int kUnroll = kStrideUnroll, Load kLoad = kStrideLoad,
          int kWaves = kStrideWaves>
Plan<SinglePassKernel<T, Op, TaggedCounter>> tagged_counter_plan(long long n) {
  return single_pass_plan<T, Op, kThreads, kUnroll, kLoad, kWaves, ShuffleBlockReduce<kThreads>, TaggedCounter>(n);
}

/// *out = reduction of in[0, n) with `op`, in one kernel and nothing else on the stream; see
/// reduction_common.cuh for the contract.
template <int kThreads = kStrideThreads, int kUnroll = kStrideUnroll, Load kLoad = kStrideLoad,
          int kWaves = kStrideWaves, class T, class Op>
cudaError_t tagged_counter(void* d_temp, std::size_t& temp_bytes, const T* in, long long n, T* out, Op op,
                           T identity, cudaStream_t stream = nullptr) {
  const SinglePassLayout w = single_pass_layout<T, kThreads>(n);
  cudaError_t err;
  if (handle_args(d_temp, temp_bytes, w.bytes, in, n, out, err)) return err;
  return single_pass_launch(tagged_counter_plan<T, Op, kThreads, kUnroll, kLoad, kWaves>(n), w, d_temp, in, n, out,
                            op, identity, stream);
}

}  // namespace smem::reduction

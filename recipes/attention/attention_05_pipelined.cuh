/// \file attention_05_pipelined.cuh
/// \brief Step 5, a cp.async pipeline: the next K and V tiles load while the warps compute on the
/// current ones.
///
/// Change from step 4: in step 4 every thread copies a tile through its registers and the block
/// waits for the copy before any warp computes, then the copy units idle while the tensor cores
/// work. Here the tiles of keys k0 + 64 are issued with `cp.async` (global to shared memory
/// directly, zero-filled past seq_kv) into the second of two stages before the warps start on
/// the tiles of k0: the copy of tile t + 1 overlaps both products and the softmax of tile t. One
/// barrier per tile does both jobs: after it, tile t has landed for every thread's copies, and
/// every warp has finished tile t - 1, whose stage the copy of tile t + 1 then refills. Two stages
/// of K and V take 64 KiB of shared memory at head_dim 128, so the kernel opts in to more than
/// 48 KiB.
#pragma once
#include <cuda_runtime.h>

#include <cstddef>

#include "attention_sm80.cuh"

namespace smem::attention {


//! [pipelined kernel]
template <class S>
__global__ void __launch_bounds__(S::kThreads, S::kMinBlocks)
    pipelined_kernel(Problem p, const bf16* Q, const bf16* K, const bf16* V, bf16* O, float* lse) {
  extern __shared__ __align__(16) unsigned char smem_raw[];
  bf16* Qs = reinterpret_cast<bf16*>(smem_raw);
  bf16* stage0 = Qs + S::QTile::kElems;  // stage s: K at stage0 + 2 s kElems, V after it
  const long long tiles_q = tiles(p.seq_q, S::kRows), bh = blockIdx.x / tiles_q;
  const long long b = bh / p.heads_q, h = bh % p.heads_q, hk = h / (p.heads_q / p.heads_kv);
  const long long q0 = blockIdx.x % tiles_q * S::kRows;
  const int row0 = 16 * S::kMt * int(threadIdx.x / 32);
  auto issue = [&](long long k0, int s) {  // the K and V tiles of keys k0 on, into stage s
    bf16* Ks = stage0 + 2 * s * S::KvTile::kElems;
    load_tile_async<typename S::KvTile, S::kThreads>(Ks, K + at(p.k, b, k0, hk), p.k.seq, p.seq_kv - k0);
    load_tile_async<typename S::KvTile, S::kThreads>(Ks + S::KvTile::kElems, V + at(p.v, b, k0, hk), p.v.seq,
                                                     p.seq_kv - k0);
    cp_async_commit();
  };

  load_tile_async<typename S::QTile, S::kThreads>(Qs, Q + at(p.q, b, q0, h), p.q.seq, p.seq_q - q0);
  issue(0, 0);  // one group: Q and the first tiles
  typename S::Warp w(q0 + row0);
  const long long n = tiles(p.seq_kv, S::kKeys);
  for (long long t = 0; t < n; ++t) {
    cp_async_wait<0>();
    __syncthreads();  // tile t (and Q) landed for every thread's copies, and every warp is done with tile t - 1
    if (t + 1 < n) issue((t + 1) * S::kKeys, int((t + 1) % 2));  // into tile t - 1's stage
    if (t == 0) w.load_q(Qs, row0, p.scale < 0);
    const bf16* Ks = stage0 + 2 * (t % 2) * S::KvTile::kElems;
    w.scores(Ks);
    w.softmax(p, t * S::kKeys);
    w.add_pv(Ks + S::KvTile::kElems);
  }
  w.store(p, b, h, q0 + row0, O, lse);
}
//! [pipelined kernel]

/// The plan of step 5: head_dim 64 or 128, 16-byte rows (null otherwise); one block per 64 query
/// rows of each head.
inline Plan<RowKernel> pipelined_plan(const Problem& p, const bf16* Q = nullptr, const bf16* K = nullptr,
                                      const bf16* V = nullptr, const bf16* O = nullptr) {
  using S64 = PipelinedShape<64>;
  using S128 = PipelinedShape<128>;
  return shaped_plan<S64, S128>(p, Q, K, V, O, pipelined_kernel<S64>, pipelined_kernel<S128>);
}
inline std::size_t pipelined_workspace(const Problem&) { return 0; }

/// O = softmax(scale Q K^T + mask) V and its LSE: step 4 with the K and V loads pipelined.
inline cudaError_t pipelined(const Problem& p, const bf16* Q, const bf16* K, const bf16* V, bf16* O, float* lse,
                             void*, std::size_t, cudaStream_t stream = nullptr) {
  const Args a = check_args(p, Q, K, V, O, lse);
  if (a == Args::invalid || (p.head_dim != 64 && p.head_dim != 128)) return cudaErrorInvalidValue;
  if (a != Args::launch) return finish_without_launch(a, p, O, lse, stream);
  return launch(pipelined_plan(p, Q, K, V, O), stream, p, Q, K, V, O, lse);
}

}  // namespace smem::attention

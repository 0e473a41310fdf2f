/// \file scan.cuh
/// \brief The scan family: its one step list (SMEM_SCAN_STEPS), and the Variant enum, names,
/// dispatchers and step table generated from it, which the tests and benchmarks iterate over.
/// Adding a step is one header, its `#include` here and one line in the list.
#pragma once
#include <cuda_runtime.h>

#include "../smem_steps.cuh"
#include <cstddef>

#include "scan_01_kogge_stone.cuh"
#include "scan_02_brent_kung.cuh"
#include "scan_03_padded.cuh"
#include "scan_04_warp_shuffle.cuh"
#include "scan_05_reduce_then_scan.cuh"
#include "scan_06_decoupled_look_back.cuh"

/// The ladder, in order: X(step, name, header, summary). `name` is the variant, the launcher
/// (`name(d_temp, temp_bytes, in, out, n, op, identity, kind, stream)`) and its plan
/// (`name##_plan<T, Op>(n)`).
#define SMEM_SCAN_STEPS(X)                                                                                  \
  X(1, kogge_stone, "scan_01_kogge_stone.cuh",                                                              \
    "Kogge-Stone in shared memory, double-buffered: one barrier a round, n log n work.")                    \
  X(2, brent_kung, "scan_02_brent_kung.cuh", "Brent-Kung up-sweep and down-sweep: work-efficient, bank conflicts.") \
  X(3, padded, "scan_03_padded.cuh", "Brent-Kung with one padding word per 32: the strided lanes spread over the banks.") \
  X(4, warp_shuffle, "scan_04_warp_shuffle.cuh", "Warp-shuffle scans; shared memory only for one total per warp.") \
  X(5, reduce_then_scan, "scan_05_reduce_then_scan.cuh",                                                    \
    "Reduce, scan the totals, scan again: three passes over memory, 16-byte loads, 128 bytes per thread.")   \
  X(6, decoupled_look_back, "scan_06_decoupled_look_back.cuh",                                              \
    "Single pass with decoupled look-back: the input read once, the output written once.")

namespace smem::scan {

/// Variant, Step, kSteps[], kAllVariants[] and name(v), from the step list.
SMEM_STEP_TABLE(SMEM_SCAN_STEPS)

/// Runs one variant: the size query when d_temp is null, else the scan of in[0, n) into out.
template <class T, class Op>
cudaError_t run(Variant v, void* d_temp, std::size_t& temp_bytes, const T* in, T* out, long long n, Op op,
                T identity, Kind kind, cudaStream_t stream = nullptr) {
  switch (v) {
#define SMEM_RUN(step, name, header, summary) \
  case Variant::name: return name(d_temp, temp_bytes, in, out, n, op, identity, kind, stream);
    SMEM_SCAN_STEPS(SMEM_RUN)
#undef SMEM_RUN
  }
  return cudaErrorInvalidValue;
}

/// The launch plan (of the first kernel) variant v uses for n elements, as the benchmark
/// reports it.
template <class T, class Op>
Plan<const void*> plan(Variant v, long long n) {
  switch (v) {
#define SMEM_PLAN(step, name, header, summary) \
  case Variant::name: return name##_plan<T, Op>(n).erased();
    SMEM_SCAN_STEPS(SMEM_PLAN)
#undef SMEM_PLAN
  }
  return {nullptr, dim3(), dim3(), 0};
}

}  // namespace smem::scan

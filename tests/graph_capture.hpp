// Capture-and-replay for the tests: graph_test's two files, and tc_gemm_test's measurement under
// a capture.
#pragma once
#include <cuda_runtime.h>
#include <doctest/doctest.h>

#include "cuda_check.hpp"

namespace smem::test {

// Captures launch(stream) into a graph on a fresh non-blocking stream, replays it twice. The
// device is synchronized first: a non-blocking stream does not wait for the legacy default stream,
// so a poison cudaMemset still in flight there could otherwise land after the graph's own writes
// (a workspace's zeroed tile counter overwritten with the poison, say).
template <class Launch>
void capture_and_replay(Launch&& launch) {
  SMEM_CUDA_CHECK(cudaDeviceSynchronize());
  cudaStream_t s;
  SMEM_CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  cudaGraph_t graph;
  SMEM_CUDA_CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
  const cudaError_t launched = launch(s);
  const cudaError_t ended = cudaStreamEndCapture(s, &graph);
  (void)cudaGetLastError();  // a failed capture's error must not reach the next case's launch
  REQUIRE(launched == cudaSuccess);
  REQUIRE(ended == cudaSuccess);
  cudaGraphExec_t exec;
  SMEM_CUDA_CHECK(cudaGraphInstantiate(&exec, graph, 0));
  for (int replay = 0; replay < 2; ++replay) SMEM_CUDA_CHECK(cudaGraphLaunch(exec, s));
  SMEM_CUDA_CHECK(cudaStreamSynchronize(s));
  SMEM_CUDA_CHECK(cudaGraphExecDestroy(exec));
  SMEM_CUDA_CHECK(cudaGraphDestroy(graph));
  SMEM_CUDA_CHECK(cudaStreamDestroy(s));
}

}  // namespace smem::test

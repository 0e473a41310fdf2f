// Tests only: recipes never include support/. Support for the boundary tests (tests/limits_*.cu):
// outputs with guard bytes on both sides, device memory that may not be there, and inputs filled
// on the GPU (tens of GiB are too slow to draw on the host and copy).
#pragma once
#include <cuda_runtime.h>

#include <doctest/doctest.h>

#include <cstddef>
#include <cstdint>
#include <vector>

#include "cuda_check.hpp"
#include "device_buffer.hpp"

namespace smem::test {

/// True when the device can hold `bytes` more. False (with a doctest warning naming the size) only
/// when the device's whole memory is too small, so the test is skipped on a smaller GPU; a device
/// large enough whose memory is not free fails the test instead (something leaked).
inline bool device_can_hold(std::size_t bytes) {
  std::size_t free_bytes = 0, total_bytes = 0;
  SMEM_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
  const std::size_t margin = std::size_t(1) << 30;  // the context, cuBLAS and rounding
  if (total_bytes < bytes + margin) {
    WARN_MESSAGE(false, "skipped: needs " << (bytes >> 20) << " MiB of device memory, the device has "
                                          << (total_bytes >> 20));
    return false;
  }
  REQUIRE_MESSAGE(free_bytes >= bytes + margin / 2,
                  "needs " << (bytes >> 20) << " MiB of device memory, " << (free_bytes >> 20) << " MiB free");
  return true;
}

/// n elements of T on the device between two guards of kGuard bytes each, filled with a pattern:
/// a launcher that writes before or after its output changes one of them. The elements start
/// 256-byte aligned, as cudaMalloc's would.
template <class T>
class GuardedBuffer {
 public:
  static constexpr std::size_t kGuard = 1 << 16;
  static constexpr unsigned char kPattern = 0xA5;

  explicit GuardedBuffer(std::size_t n) : n_(n) {
    SMEM_CUDA_CHECK(cudaMalloc(&base_, total()));
    SMEM_CUDA_CHECK(cudaMemset(base_, kPattern, kGuard));
    SMEM_CUDA_CHECK(cudaMemset(base_ + kGuard + bytes(), kPattern, kGuard));
  }
  ~GuardedBuffer() { cudaFree(base_); }
  GuardedBuffer(const GuardedBuffer&) = delete;
  GuardedBuffer& operator=(const GuardedBuffer&) = delete;

  T* get() const { return reinterpret_cast<T*>(base_ + kGuard); }
  std::size_t size() const { return n_; }
  std::size_t bytes() const { return n_ * sizeof(T); }

  /// Sets every byte of the elements (not the guards) to `byte`; 0xFF makes floats NaN.
  void poison(unsigned char byte = 0xFF) {
    if (n_) SMEM_CUDA_CHECK(cudaMemset(get(), byte, bytes()));
  }
  /// True when both guards still hold the pattern.
  bool guards_intact() const {
    std::vector<unsigned char> g(kGuard);
    for (const unsigned char* p : {base_, base_ + kGuard + bytes()}) {
      SMEM_CUDA_CHECK(cudaMemcpy(g.data(), p, kGuard, cudaMemcpyDeviceToHost));
      for (unsigned char b : g)
        if (b != kPattern) return false;
    }
    return true;
  }
  /// Elements [first, first + count) copied to the host.
  std::vector<T> download(std::size_t first, std::size_t count) const {
    std::vector<T> h(count);
    if (count) SMEM_CUDA_CHECK(cudaMemcpy(h.data(), get() + first, count * sizeof(T), cudaMemcpyDeviceToHost));
    return h;
  }
  T at(std::size_t i) const { return download(i, 1)[0]; }

 private:
  std::size_t total() const { return 2 * kGuard + (bytes() + 255) / 256 * 256; }
  unsigned char* base_ = nullptr;
  std::size_t n_;
};

template <class T, class F>
__global__ void fill_by_index_kernel(T* p, std::size_t n, F f) {
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n;
       i += std::size_t(gridDim.x) * blockDim.x)
    p[i] = f(i);
}

/// p[i] = f(i) for i in [0, n), on the GPU; F is a struct with a __device__ operator()(size_t).
template <class T, class F>
void fill_by_index(T* p, std::size_t n, F f) {
  if (n == 0) return;
  fill_by_index_kernel<<<4096, 256>>>(p, n, f);
  SMEM_CUDA_CHECK(cudaGetLastError());
  SMEM_CUDA_CHECK(cudaDeviceSynchronize());
}

template <class T>
__global__ void device_sum_kernel(const T* x, std::size_t n, unsigned long long* total) {
  unsigned long long s = 0;
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n;
       i += std::size_t(gridDim.x) * blockDim.x)
    s += (unsigned long long)x[i];
  atomicAdd(total, s);
}

/// The sum of x[0, n) as unsigned 64-bit integers (modulo 2^64), by a plain grid-stride loop on
/// the GPU: the reference of the large tests.
template <class T>
unsigned long long device_sum(const T* x, std::size_t n) {
  DeviceBuffer<unsigned long long> total(1);
  SMEM_CUDA_CHECK(cudaMemset(total.get(), 0, sizeof(unsigned long long)));
  device_sum_kernel<<<4096, 256>>>(x, n, total.get());
  SMEM_CUDA_CHECK(cudaGetLastError());
  SMEM_CUDA_CHECK(cudaDeviceSynchronize());
  return total.download()[0];
}

/// An index hashed to a small integer in [-range, range]: integer-valued data whose sums and
/// products stay exact in float over the sizes of the boundary tests, and that differs between
/// neighbours (so a shifted or transposed read is caught). `salt` varies it per run.
struct SmallIntOfIndex {
  std::uint64_t salt;
  int range;
  __host__ __device__ int operator()(std::size_t i) const {
    std::uint64_t x = (i + salt) * 0x9E3779B97F4A7C15ull;
    x ^= x >> 29;
    x *= 0xBF58476D1CE4E5B9ull;
    x ^= x >> 32;
    return int(x % std::uint64_t(2 * range + 1)) - range;
  }
};

}  // namespace smem::test

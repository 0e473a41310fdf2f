// Tests and benchmarks only: recipes never include support/.
#pragma once
#include <cuda_runtime.h>

#include <cstddef>
#include <cstring>
#include <vector>

#include "cuda_check.hpp"

namespace smem::test {

/// RAII device allocation of n elements of T (plain cudaMalloc, never managed memory).
template <class T>
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(std::size_t n) : n_(n) {
    if (n_) SMEM_CUDA_CHECK(cudaMalloc(&p_, n_ * sizeof(T)));
  }
  explicit DeviceBuffer(const std::vector<T>& host) : DeviceBuffer(host.size()) { upload(host); }
  ~DeviceBuffer() {
    if (p_) cudaFree(p_);
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  DeviceBuffer(DeviceBuffer&& o) noexcept : p_(o.p_), n_(o.n_) { o.p_ = nullptr, o.n_ = 0; }
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept {
    std::swap(p_, o.p_);
    std::swap(n_, o.n_);
    return *this;
  }

  T* get() const { return p_; }
  std::size_t size() const { return n_; }
  std::size_t bytes() const { return n_ * sizeof(T); }

  void upload(const std::vector<T>& host) {
    if (host.size() != n_) throw std::invalid_argument("DeviceBuffer::upload: size mismatch");
    if (n_) SMEM_CUDA_CHECK(cudaMemcpy(p_, host.data(), bytes(), cudaMemcpyHostToDevice));
  }
  std::vector<T> download() const {
    std::vector<T> host(n_);
    if (n_) SMEM_CUDA_CHECK(cudaMemcpy(host.data(), p_, bytes(), cudaMemcpyDeviceToHost));
    return host;
  }
  /// Sets every byte to `byte` (0xFF makes every float and double a NaN): an element the kernel
  /// does not write is then visible.
  void poison(unsigned char byte = 0xFF) {
    if (n_) SMEM_CUDA_CHECK(cudaMemset(p_, byte, bytes()));
  }

 private:
  T* p_ = nullptr;
  std::size_t n_ = 0;
};

}  // namespace smem::test

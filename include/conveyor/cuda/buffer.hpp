#pragma once
/// @file
/// Pinned host memory and device memory, owned by unique_ptrs whose deleters never throw.

#include <conveyor/config.hpp>
#include <conveyor/cuda/error.hpp>

#include <cstddef>
#include <memory>
#include <span>

#include <cuda_runtime_api.h>

namespace conveyor {
inline namespace v0 {
namespace cuda {

/// Page-locked host memory (cudaHostAlloc): the only kind an asynchronous copy really overlaps.
class PinnedBuffer {
 public:
  PinnedBuffer() = default;
  explicit PinnedBuffer(std::size_t bytes) : size_(bytes) {
    void* p = nullptr;
    if (bytes) CONVEYOR_CUDA_TRY(cudaHostAlloc(&p, bytes, cudaHostAllocDefault));
    data_.reset(static_cast<std::byte*>(p));
  }
  [[nodiscard]] std::byte* data() const noexcept { return data_.get(); }
  [[nodiscard]] std::size_t size() const noexcept { return size_; }
  [[nodiscard]] std::span<std::byte> span() const noexcept { return {data_.get(), size_}; }

 private:
  struct Free {
    void operator()(std::byte* p) const noexcept { (void)cudaFreeHost(p); }
  };
  std::unique_ptr<std::byte, Free> data_;
  std::size_t size_ = 0;
};

/// Device memory (cudaMalloc) on the current device.
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(std::size_t bytes) : size_(bytes) {
    void* p = nullptr;
    if (bytes) CONVEYOR_CUDA_TRY(cudaMalloc(&p, bytes));
    data_.reset(static_cast<std::byte*>(p));
  }
  [[nodiscard]] std::byte* data() const noexcept { return data_.get(); }
  [[nodiscard]] std::size_t size() const noexcept { return size_; }

 private:
  struct Free {
    void operator()(std::byte* p) const noexcept { (void)cudaFree(p); }
  };
  std::unique_ptr<std::byte, Free> data_;
  std::size_t size_ = 0;
};

}  // namespace cuda
}  // namespace v0
}  // namespace conveyor

#pragma once
/// @file
/// Page-aligned, uninitialised host memory for a slot's tensors (the CPU backend's counterpart of
/// a pinned buffer: the pipeline code is the same over both).

#include <conveyor/config.hpp>

#include <cstddef>
#include <memory>
#include <new>

namespace conveyor {
inline namespace v0 {
namespace detail {

class HostBuffer {
 public:
  static constexpr std::size_t alignment = 4096;

  HostBuffer() = default;
  explicit HostBuffer(std::size_t bytes)
      : data_(bytes ? static_cast<std::byte*>(::operator new(bytes, std::align_val_t{alignment})) : nullptr), size_(bytes) {}

  [[nodiscard]] std::byte* data() const noexcept { return data_.get(); }
  [[nodiscard]] std::size_t size() const noexcept { return size_; }

 private:
  struct Free {
    void operator()(std::byte* p) const noexcept { ::operator delete(p, std::align_val_t{alignment}); }
  };
  std::unique_ptr<std::byte, Free> data_;
  std::size_t size_ = 0;
};

}  // namespace detail
}  // namespace v0
}  // namespace conveyor

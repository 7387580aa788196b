#pragma once
/// @file
/// A growable byte buffer that does not zero what it grows into: workers reuse one per thread, so
/// reading a sample costs no allocation once the buffer has reached the largest file.

#include <conveyor/config.hpp>

#include <cstddef>
#include <cstring>
#include <memory>
#include <span>

namespace conveyor {
inline namespace v0 {

/// Owning, uninitialized-on-growth byte storage.
class ByteBuffer {
 public:
  ByteBuffer() = default;
  /// A copy of `bytes`.
  explicit ByteBuffer(std::span<const std::byte> bytes) { assign(bytes); }

  [[nodiscard]] std::byte* data() noexcept { return data_.get(); }
  [[nodiscard]] const std::byte* data() const noexcept { return data_.get(); }
  [[nodiscard]] std::size_t size() const noexcept { return size_; }
  [[nodiscard]] std::size_t capacity() const noexcept { return capacity_; }
  [[nodiscard]] bool empty() const noexcept { return size_ == 0; }
  [[nodiscard]] std::span<const std::byte> span() const noexcept { return {data_.get(), size_}; }
  [[nodiscard]] std::span<std::byte> span() noexcept { return {data_.get(), size_}; }

  /// Sets the size; new bytes are left uninitialized and kept bytes keep their values.
  void resize(std::size_t n) {
    reserve(n);
    size_ = n;
  }
  /// Grows the capacity to at least `n` bytes (geometrically, so repeated growth stays cheap).
  void reserve(std::size_t n) {
    if (n <= capacity_) return;
    std::size_t cap = capacity_ < 4096 ? 4096 : capacity_;
    while (cap < n) cap += cap / 2;
    std::unique_ptr<std::byte[]> grown(new std::byte[cap]);
    if (size_ != 0) std::memcpy(grown.get(), data_.get(), size_);
    data_ = std::move(grown);
    capacity_ = cap;
  }
  /// Replaces the content with a copy of `bytes`.
  void assign(std::span<const std::byte> bytes) {
    resize(bytes.size());
    if (!bytes.empty()) std::memcpy(data_.get(), bytes.data(), bytes.size());
  }
  void clear() noexcept { size_ = 0; }

 private:
  std::unique_ptr<std::byte[]> data_;
  std::size_t size_ = 0;
  std::size_t capacity_ = 0;
};

}  // namespace v0
}  // namespace conveyor

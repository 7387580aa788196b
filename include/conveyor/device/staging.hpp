#pragma once
/// @file
/// Placing device-bound samples in the data section of a slot's pinned arena (`SlotLayout`).
/// Decoded regions vary in size, so each sample allocates what it needs, but only if what is left
/// still covers a reserved minimum for every sample not yet placed: a sample that does not fit can
/// always be finished on the CPU into its reserve, so a batch never fails for lack of room.

#include <conveyor/config.hpp>

#include <cstddef>
#include <mutex>
#include <optional>

namespace conveyor {
inline namespace v0 {

/// The data section's allocator, shared by the workers filling one slot (thread-safe).
class ArenaAllocator {
 public:
  static constexpr std::size_t alignment = 16;

  /// Starts a batch of `samples` in `capacity` bytes, each guaranteed `reserve` bytes.
  void reset(std::size_t capacity, std::size_t samples, std::size_t reserve) {
    std::lock_guard lock(m_);
    capacity_ = capacity;
    pending_ = samples;
    reserve_ = align(reserve);
    used_ = 0;
  }
  /// Room for `bytes` more of one sample, if the others' reserves stay covered; its offset.
  [[nodiscard]] std::optional<std::size_t> try_allocate(std::size_t bytes) {
    std::lock_guard lock(m_);
    const std::size_t need = align(bytes);
    if (pending_ == 0 || used_ + need + (pending_ - 1) * reserve_ > capacity_) return std::nullopt;
    return take(need);
  }
  /// A sample's reserve: always available.
  [[nodiscard]] std::size_t allocate_reserve() {
    std::lock_guard lock(m_);
    return take(reserve_);
  }
  /// A sample placed elsewhere (a device decoder's section) gives its reserve back to the others.
  void forgo() {
    std::lock_guard lock(m_);
    if (pending_ > 0) --pending_;
  }
  [[nodiscard]] std::size_t used() const {
    std::lock_guard lock(m_);
    return used_;
  }

 private:
  static constexpr std::size_t align(std::size_t n) noexcept { return (n + alignment - 1) / alignment * alignment; }
  std::size_t take(std::size_t n) noexcept {
    const std::size_t at = used_;
    used_ += n;
    --pending_;
    return at;
  }

  mutable std::mutex m_;
  std::size_t capacity_ = 0, pending_ = 0, reserve_ = 0, used_ = 0;
};

/// Where a device-bound sample's bytes go: the data section of the slot's pinned arena and its
/// allocator (`DeviceTransform::stage`).
struct StagingArea {
  std::byte* data = nullptr;
  ArenaAllocator* allocator = nullptr;
  /// Set when the sample drew the device's JPEG decoder (device/jpeg_offload.hpp): the transform
  /// may stage the file there instead of decoding it.
  const struct DeviceJpegPlace* device_jpeg = nullptr;
};

}  // namespace v0
}  // namespace conveyor

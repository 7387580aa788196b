#pragma once
/// @file
/// `SlotLayout`: the sections of a slot's arena, the same bytes on the host (pinned) and on the
/// device, so the pipeline that writes them and the backend that reads them name each section
/// by type instead of by offset.
///
///   [labels: batch x int64][plans: batch x ops::SamplePlan][data: decoded windows or samples]
///
/// and, after those, sections only one side has: `host_only` bytes of the pinned arena (never
/// uploaded) and `device_only` bytes of the device arena (written on the device), for device steps
/// (a GPU decode's files and windows, device/jpeg_offload.hpp).

#include <conveyor/config.hpp>
#include <conveyor/ops/plan.hpp>

#include <cstddef>
#include <cstdint>

namespace conveyor {
inline namespace v0 {

struct SlotLayout {
  static constexpr std::size_t data_alignment = 256;

  std::size_t batch = 0;
  std::size_t plans_offset = 0;
  std::size_t data_offset = 0;
  std::size_t total = 0;  ///< of the mirrored sections
  std::size_t host_only = 0;
  std::size_t device_only = 0;

  /// The layout of a slot for `batch` samples and `data_bytes` of data.
  [[nodiscard]] static constexpr SlotLayout make(std::size_t batch, std::size_t data_bytes, std::size_t host_only = 0,
                                                 std::size_t device_only = 0) noexcept {
    SlotLayout l;
    l.host_only = host_only;
    l.device_only = device_only;
    l.batch = batch;
    l.plans_offset = batch * sizeof(std::int64_t);
    l.data_offset = (l.plans_offset + batch * sizeof(ops::SamplePlan) + data_alignment - 1) / data_alignment *
                    data_alignment;
    l.total = l.data_offset + data_bytes;
    return l;
  }

  /// Bytes of the data section.
  [[nodiscard]] constexpr std::size_t data_bytes() const noexcept { return total - data_offset; }
  /// Bytes to upload for a batch whose samples use `data_used` bytes of the data section.
  [[nodiscard]] constexpr std::size_t upload_bytes(std::size_t data_used) const noexcept {
    return data_offset + data_used;
  }

  /// The sections of the arena at `base` (host or device memory).
  [[nodiscard]] std::int64_t* labels(std::byte* base) const noexcept { return reinterpret_cast<std::int64_t*>(base); }
  [[nodiscard]] ops::SamplePlan* plans(std::byte* base) const noexcept {
    return reinterpret_cast<ops::SamplePlan*>(base + plans_offset);
  }
  [[nodiscard]] const ops::SamplePlan* plans(const std::byte* base) const noexcept {
    return reinterpret_cast<const ops::SamplePlan*>(base + plans_offset);
  }
  [[nodiscard]] std::byte* data(std::byte* base) const noexcept { return base + data_offset; }
  [[nodiscard]] const std::byte* data(const std::byte* base) const noexcept { return base + data_offset; }
  /// The one-sided section after the mirrored ones (host_only on the pinned arena, device_only on
  /// the device's), `data_bytes()` past the start of the data section.
  [[nodiscard]] std::byte* one_sided(std::byte* base) const noexcept { return base + total; }
  [[nodiscard]] const std::byte* one_sided(const std::byte* base) const noexcept { return base + total; }
};

}  // namespace v0
}  // namespace conveyor

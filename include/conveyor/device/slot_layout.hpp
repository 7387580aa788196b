#pragma once
/// @file
/// `SlotLayout`: the sections of a slot's arena, the same bytes on the host (pinned) and on the
/// device, so the pipeline that writes them and the backend that reads them name each section
/// by type instead of by offset.
///
///   [labels: batch x int64][plans: batch x copies x ops::SamplePlan][programs: batch x copies x PixelProgram]
///   [mix: (1 + batch) x BatchMix, targets: batch x classes float32][data: decoded windows or samples][guard]
///
/// (`copies` plans and programs a sample: a multi-view transform's, `DeviceWork::copies`, sample
/// i's copy k at i * copies + k; the program table only for work that asks for one,
/// `DeviceWork::programs`; the mix section
/// only with a batch transform: the batch's draw, its samples' own (timm's per-sample modes) and
/// its soft targets, written by the worker that
/// finishes the batch, read by the mixing step and the consumer),
/// and, after those, sections only one side has: `host_only` bytes of the pinned arena (never
/// uploaded) and `device_only` bytes of the device arena (written on the device), for device steps
/// (a GPU decode's files and windows, device/jpeg_offload.hpp). The guard is a pattern nothing
/// writes: the pipeline fills it once and checks it before each upload, so a sample written past
/// the data section fails the pipeline instead of passing unseen (pinned memory is outside what
/// the sanitizers watch).

#include <conveyor/config.hpp>
#include <conveyor/batch/batch_mix.hpp>
#include <conveyor/ops/pixel/op.hpp>
#include <conveyor/ops/plan.hpp>

#include <cstddef>
#include <cstdint>

namespace conveyor {
inline namespace v0 {

struct SlotLayout {
  static constexpr std::size_t data_alignment = 256;
  static constexpr std::size_t guard_bytes = 64;

  std::size_t batch = 0;
  std::size_t copies = 1;  ///< plans (and programs) a sample
  std::size_t plans_offset = 0;
  std::size_t programs_offset = 0;  ///< where the program table starts (its end, when it has none)
  bool has_programs = false;
  std::size_t mix_offset = 0;      ///< where the mix section starts (its end, when it has none)
  std::size_t targets_offset = 0;
  std::size_t classes = 0;         ///< the soft targets' width; 0: no mix section
  std::size_t data_offset = 0;
  std::size_t total = 0;  ///< of the mirrored sections
  std::size_t host_only = 0;
  std::size_t device_only = 0;

  /// The layout of a slot for `batch` samples and `data_bytes` of data, with a program table when
  /// `programs` and a mix section for soft targets `classes` wide when `classes` > 0, `copies`
  /// plans (and programs) a sample.
  [[nodiscard]] static constexpr SlotLayout make(std::size_t batch, std::size_t data_bytes, std::size_t host_only = 0,
                                                 std::size_t device_only = 0, bool programs = false,
                                                 std::size_t classes = 0, std::size_t copies = 1) noexcept {
    SlotLayout l;
    l.copies = copies;
    l.host_only = host_only;
    l.device_only = device_only;
    l.batch = batch;
    l.plans_offset = batch * sizeof(std::int64_t);
    l.programs_offset = l.plans_offset + batch * copies * sizeof(ops::SamplePlan);
    l.has_programs = programs;
    l.mix_offset = round_up(l.programs_offset + (programs ? batch * copies * sizeof(ops::pixel::PixelProgram) : 0), 64);
    l.classes = classes;
    l.targets_offset = l.mix_offset + (classes ? round_up((batch + 1) * sizeof(BatchMix), 64) : 0);
    const std::size_t tables_end = l.targets_offset + batch * classes * sizeof(float);
    l.data_offset = round_up(tables_end, data_alignment);
    l.total = l.data_offset + data_bytes + guard_bytes;
    return l;
  }

  /// Bytes of the data section.
  [[nodiscard]] constexpr std::size_t data_bytes() const noexcept { return total - guard_bytes - data_offset; }
  /// From the start of the data section to the one-sided section's.
  [[nodiscard]] constexpr std::size_t data_to_one_sided() const noexcept { return total - data_offset; }
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
  /// The program table, or nullptr when the slot has none.
  [[nodiscard]] ops::pixel::PixelProgram* programs(std::byte* base) const noexcept {
    return has_programs ? reinterpret_cast<ops::pixel::PixelProgram*>(base + programs_offset) : nullptr;
  }
  [[nodiscard]] const ops::pixel::PixelProgram* programs(const std::byte* base) const noexcept {
    return has_programs ? reinterpret_cast<const ops::pixel::PixelProgram*>(base + programs_offset) : nullptr;
  }
  /// The batch's draw, or nullptr when the slot has no mix section.
  [[nodiscard]] BatchMix* mix(std::byte* base) const noexcept {
    return classes ? reinterpret_cast<BatchMix*>(base + mix_offset) : nullptr;
  }
  [[nodiscard]] const BatchMix* mix(const std::byte* base) const noexcept {
    return classes ? reinterpret_cast<const BatchMix*>(base + mix_offset) : nullptr;
  }
  /// The samples' own draws, after the batch's (`mix(base) + 1`), or nullptr.
  [[nodiscard]] const BatchMix* sample_mixes(const std::byte* base) const noexcept {
    return classes ? mix(base) + 1 : nullptr;
  }
  /// The soft targets [batch, classes], or nullptr when the slot has no mix section.
  [[nodiscard]] float* targets(std::byte* base) const noexcept {
    return classes ? reinterpret_cast<float*>(base + targets_offset) : nullptr;
  }
  [[nodiscard]] std::byte* data(std::byte* base) const noexcept { return base + data_offset; }
  [[nodiscard]] const std::byte* data(const std::byte* base) const noexcept { return base + data_offset; }
  /// The one-sided section after the mirrored ones (host_only on the pinned arena, device_only on
  /// the device's), `data_to_one_sided()` past the start of the data section.
  [[nodiscard]] std::byte* one_sided(std::byte* base) const noexcept { return base + total; }
  [[nodiscard]] const std::byte* one_sided(const std::byte* base) const noexcept { return base + total; }

  /// Fills the guard after the data section of the pinned arena at `base`.
  void write_guard(std::byte* base) const noexcept {
    for (std::size_t i = 0; i < guard_bytes; ++i) base[total - guard_bytes + i] = guard_byte(i);
  }
  /// Whether the guard is as `write_guard` left it.
  [[nodiscard]] bool guard_intact(const std::byte* base) const noexcept {
    for (std::size_t i = 0; i < guard_bytes; ++i)
      if (base[total - guard_bytes + i] != guard_byte(i)) return false;
    return true;
  }

 private:
  [[nodiscard]] static constexpr std::size_t round_up(std::size_t n, std::size_t to) noexcept { return (n + to - 1) / to * to; }
  // Varies from byte to byte, so no fill of one value (a zeroed or memset region) matches it.
  static constexpr std::byte guard_byte(std::size_t i) noexcept { return std::byte((0xA5 ^ (i * 29)) & 0xFF); }
};

}  // namespace v0
}  // namespace conveyor

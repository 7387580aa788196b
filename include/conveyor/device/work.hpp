#pragma once
/// @file
/// What a transform asks of a device: how much of a slot's arena its samples need and the steps
/// that turn the uploaded arena into the batch (`DeviceWork`), the transforms that stage samples
/// for those steps themselves (`DeviceTransform`), and the two steps conveyor ships.

#include <conveyor/config.hpp>
#include <conveyor/core/concepts.hpp>
#include <conveyor/core/sample.hpp>
#include <conveyor/device/staging.hpp>
#include <conveyor/device/step.hpp>
#include <conveyor/io/decode_options.hpp>
#include <conveyor/ops/normalize.hpp>
#include <conveyor/ops/plan.hpp>

#include <concepts>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

namespace conveyor {
inline namespace v0 {

/// The device copies finished samples (sample i at byte i * sample_bytes of the data section)
/// into the output.
struct CopySamples {
  static constexpr const char* name = "copy samples";
};

/// The fused kernel: each sample's decoded window (where its `ops::SamplePlan` says) is resampled,
/// flipped, normalised and converted into an `out_width` x `out_height` output; samples the plan
/// marks `precomputed` are copied. Of a multi-view transform's samples, the copies `copies` names.
struct ResampleSamples {
  static constexpr const char* name = "resample samples";
  ops::OutputParams params{};
  std::int32_t out_width = 0, out_height = 0;
  ops::CopyRange copies{};
};

/// `ResampleSamples` into u8 interleaved images, then each sample's pixel program from the slot's
/// program table (`SlotLayout::programs`) on its image, stored normalised and converted into the
/// output with the program's erasing. A `precomputed` sample's image was resampled on the CPU
/// (u8 interleaved, at its plan's offset): the device copies it and runs its program as the rest.
/// Of a multi-view transform's samples, the copies `copies` names.
struct ProgramSamples {
  static constexpr const char* name = "resample samples and run their pixel programs";
  ops::OutputParams params{};
  std::int32_t out_width = 0, out_height = 0;
  ops::CopyRange copies{};
  bool mixes = false;  ///< programs may mix (AugMix): the step keeps each image's saved copy and float sums
};

/// A transform's device work.
struct DeviceWork {
  /// Where a sample's bytes go in the data section: at `position * reserve` (finished samples,
  /// written by `Transform::apply`), or wherever `DeviceTransform::stage` allocates them.
  enum class Placement : std::uint8_t { by_position, staged };
  Placement placement = Placement::by_position;
  /// Bytes every sample is guaranteed in the data section.
  std::size_t reserve = 0;
  /// Bytes a sample is given on average when the pipeline sizes the arena (`arena_bytes` unset).
  std::size_t budget = 0;
  std::vector<DeviceStepSpec> steps;
  /// Set by a transform that can stage JPEGs for a device decoder (`StagingArea::device_jpeg`).
  struct JpegStaging {
    std::size_t max_window_bytes = 0;  ///< the largest decoded window it stages for one
    DecodeOptions decode{};            ///< how strictly it decodes
  };
  std::optional<JpegStaging> jpeg_staging;
  /// Each sample carries a pixel program: the slot gets a program table beside its plans, which
  /// `stage` fills (`StagingArea::program`).
  bool programs = false;
  /// Plans (and programs) each sample stages: one, or a multi-view transform's copies
  /// (`StagingArea::plans`, `CopyRange`).
  std::size_t copies = 1;

  /// Samples finished on the host, `sample_bytes` each, copied into the output by the device.
  [[nodiscard]] static DeviceWork finished(std::size_t sample_bytes) {
    return {Placement::by_position, sample_bytes, sample_bytes, {DeviceStepSpec::of(CopySamples{})}, std::nullopt};
  }
};

/// A transform that stages its samples for a device itself: `stage` writes what its steps read
/// into `area` (a decoded window, say) and returns the sample's plan; `device_work()` says which
/// steps and how much room (`DeviceWork::Placement::staged`). Its room comes from `area.claim`
/// (a later request replaces an earlier one; if `stage` throws, the room goes back). The plan it
/// returns is the sample's (its copy 0's, when `DeviceWork::copies` > 1: it writes the others'
/// into `area.plans`). Workers call
/// `stage` concurrently, each with its own workspace, as they call `apply`.
template <class T>
concept DeviceTransform = Transform<T> &&
    requires(const T& t, const SampleContext& ctx, std::span<const std::byte> in, StagingArea& area,
             typename T::Workspace& ws) {
      { t.device_work() } -> std::same_as<DeviceWork>;
      { t.stage(ctx, in, area, ws) } -> std::same_as<ops::SamplePlan>;
    };

/// The device work of any transform: its own, or its finished samples copied.
template <Transform T>
[[nodiscard]] DeviceWork device_work_of(const T& t) {
  if constexpr (DeviceTransform<T>)
    return t.device_work();
  else
    return DeviceWork::finished(t.sample_spec().bytes());
}

}  // namespace v0
}  // namespace conveyor

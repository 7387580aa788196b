#pragma once
/// @file
/// A pipeline's device JPEG decoder (device/jpeg_offload.hpp), set up from its options and its
/// transform's device work, and `JpegDecode::adaptive`'s step between epochs: the engines' share
/// with the shortest batch period (`best_gpu_share`), from the counters of the epochs since the
/// last change (worker time per sample in the pipeline's "read" and the transform's "decode",
/// "decode (engine-able)" and "offload" stages, the stager's host time per batch) and the line
/// fitted to every batched decode call so far (its fixed cost and its cost an image).

#include <conveyor/config.hpp>
#include <conveyor/core/error.hpp>
#include <conveyor/device/jpeg_offload.hpp>
#include <conveyor/device/work.hpp>
#include <conveyor/pipeline/options.hpp>
#include <conveyor/pipeline/stats.hpp>

#include <algorithm>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace conveyor {
inline namespace v0 {
namespace detail {

/// @throws ConfigError for decode options a pipeline cannot take.
inline void validate_decode_options(const PipelineOptions& o) {
  if (o.gpu_share && !(*o.gpu_share >= 0 && *o.gpu_share <= 1))
    throw ConfigError("BatchPipeline: gpu_share must be in [0, 1], got " + std::to_string(*o.gpu_share));
  if (o.decode != JpegDecode::cpu && o.device == cpu_device)
    throw ConfigError(std::string("BatchPipeline: decode = ") + to_string(o.decode) +
                      " decodes on a device: set device to a CUDA ordinal (the CPU backend decodes on its workers)");
}

/// Whether the device decoder interpolates chroma: the device layer's spelling of `gpu_upsampling`.
[[nodiscard]] inline bool interpolates_chroma(const PipelineOptions& o) noexcept {
  return o.gpu_upsampling == ChromaUpsampling::interpolated;
}

/// The engines' share of the first epoch: `gpu_share`, or its default for `decode`.
[[nodiscard]] inline double first_gpu_share(const PipelineOptions& o) noexcept {
  if (o.gpu_share) return *o.gpu_share;
  return o.decode == JpegDecode::adaptive ? starting_gpu_share(o.workers, o.batch_size, interpolates_chroma(o)) : 1.0;
}

/// The places of a device JPEG decoder, with its step put first in `work`; nothing with decode = cpu.
/// @throws ConfigError for a transform that does not stage JPEGs for one.
[[nodiscard]] inline std::optional<JpegOffloadLayout> add_jpeg_offload(DeviceWork& work, const PipelineOptions& o) {
  if (o.decode == JpegDecode::cpu) return std::nullopt;
  if (work.placement != DeviceWork::Placement::staged || !work.jpeg_staging)
    throw ConfigError(std::string("BatchPipeline: decode = ") + to_string(o.decode) +
                      " needs a transform that stages JPEGs for a device decoder (ImageAugment does)");
  const std::size_t window = o.gpu_max_window_pixels ? 3 * o.gpu_max_window_pixels : work.jpeg_staging->max_window_bytes;
  const JpegOffloadLayout layout{o.batch_size, o.gpu_max_file_bytes, window};
  work.steps.insert(work.steps.begin(),
                    DeviceStepSpec::of(DecodeJpegs{layout, work.jpeg_staging->decode, interpolates_chroma(o), o.gpu_part_images}));
  return layout;
}

/// The share for the next epoch (`measurable_share`); nothing when the epochs between `last` and
/// `now` measured no device decode.
[[nodiscard]] inline std::optional<double> rebalanced_gpu_share(const PipelineStats& now, const PipelineStats& last,
                                                                int workers, std::size_t batch_size) {
  const auto delta = [&](std::string_view stage, bool count) {
    double a = 0, b = 0;
    for (const StageStats& s : now.stages)
      if (s.name == stage) a = count ? double(s.count) : s.seconds;
    for (const StageStats& s : last.stages)
      if (s.name == stage) b = count ? double(s.count) : s.seconds;
    return a - b;
  };
  const double images = double(now.images - last.images);
  const double offloaded = double(now.gpu_decoded - last.gpu_decoded);
  const double batches = double(now.batches - last.batches);
  const double others = delta("decode", true), able = delta("decode (engine-able)", true);
  const double staged = delta("offload", true), read = delta("read", true);
  if (images <= 0 || batches <= 0 || offloaded <= 0 || now.gpu_decode_calls.count == 0 || staged <= 0 || read <= 0 ||
      now.gpu_share <= 0)
    return std::nullopt;
  OffloadRates r;
  r.workers = workers;
  r.batch = double(batch_size);
  r.read_seconds = delta("read", false) / read;
  r.other_seconds = others > 0 ? delta("decode", false) / others : 0.0;
  // Not measured while every engine-able file went to the engines: the others' cost stands in.
  r.cpu_seconds = able > 0 ? delta("decode (engine-able)", false) / able : r.other_seconds;
  r.offload_seconds = delta("offload", false) / staged;
  r.eligible = std::min(1.0, offloaded / (now.gpu_share * images));
  r.call_fixed_seconds = now.gpu_decode_calls.intercept();
  r.call_image_seconds = now.gpu_decode_calls.slope();
  const double call = now.gpu_decode_call_seconds - last.gpu_decode_call_seconds;
  r.stager_seconds = std::max(0.0, now.submit_seconds - last.submit_seconds - call) / batches;
  return measurable_share(best_gpu_share(r));
}

}  // namespace detail
}  // namespace v0
}  // namespace conveyor

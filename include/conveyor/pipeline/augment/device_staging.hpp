#pragma once
/// @file
/// Where a device-bound sample goes in its slot (`DeviceTransform::stage`): its decoded window in
/// the data section, its file at the device JPEG decoder's place, or (when neither can take it)
/// its finished output in its reserve.

#include <conveyor/config.hpp>
#include <conveyor/device/jpeg_offload.hpp>
#include <conveyor/device/staging.hpp>
#include <conveyor/io/image_decoder.hpp>
#include <conveyor/ops/plan.hpp>
#include <conveyor/pipeline/augment/decode_job.hpp>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <span>

namespace conveyor {
inline namespace v0 {
namespace detail {

/// The filter's half width (its support times the source scale) above which a sample is finished
/// on the CPU instead of by a device: the kernel keeps up to 2 x 32 + 2 filter taps of each output
/// pixel in shared memory (`cuda::kernels::max_taps`). The default filter's source scale up to 32.
inline constexpr double max_device_support = 32.0;

/// Whether the device's kernel resamples `p` with the CPU's bits: every filter whose weights the
/// device computes exactly (`ops::exact_on_device`: all but Hamming and Lanczos), at scales whose
/// windows fit; the other samples are finished on the CPU, with the same bits.
[[nodiscard]] inline bool device_resamples(const ops::SamplePlan& p) noexcept {
  const double support = ops::filter_support(p.x.filter);
  return ops::exact_on_device(p.x.filter) && p.x.scale * support <= max_device_support &&
         p.y.scale * support <= max_device_support;
}

/// Room in the data section for `job`'s window, if the kernel can resample it and what is left
/// still covers the other samples' reserves: its offset.
[[nodiscard]] inline std::optional<std::size_t> claim_window(const DecodeJob& job, StagingArea& area) {
  if (!device_resamples(job.plan)) return std::nullopt;
  return area.claim->try_allocate(job.bytes());
}

/// Whether the image whose header `decoder` has read is a JPEG the device's engines decode exactly.
[[nodiscard]] inline bool engine_takes(const ImageDecoder& decoder) {
  return decoder.format() == ImageFormat::jpeg && engine_decodable(decoder.jpeg_info());
}

/// Whether a sample of `plan` may be decoded by the engines. Not one resized with Pillow's filters:
/// on an H100 (2026-12-07) the kernel's Pillow resizes of engine-decoded windows differed from the
/// CPU loader's batches (tests/python/test_cuda.py), a cause not yet found, so their samples are
/// decoded by libjpeg-turbo, as before the kernel took Pillow's filters.
[[nodiscard]] inline bool engine_plan(const ops::SamplePlan& plan) noexcept { return !ops::is_pil(plan.x.filter); }

/// Places `image`, planned at full scale as `job` (its header read by `decoder`), for the device's
/// JPEG decoder: copies the file to `place` and writes its job; the plan reads the window where the
/// device will decode it. Nothing, when the engines would not decode it exactly or it does not fit
/// its place: the CPU takes it, as the same function of its bytes always does.
[[nodiscard]] inline std::optional<ops::SamplePlan> place_for_device_decode(const DecodeJob& job,
                                                                            const ImageDecoder& decoder,
                                                                            std::span<const std::byte> image,
                                                                            const DeviceJpegPlace& place,
                                                                            StagingArea& area) {
  if (!engine_takes(decoder) || !engine_plan(job.plan)) return std::nullopt;
  if (job.bytes() > place.max_window_bytes || !device_resamples(job.plan)) return std::nullopt;
  std::memcpy(place.file, image.data(), image.size());
  *place.job = {image.size(), job.region.x, job.region.y, job.region.width, job.region.height};
  area.claim->forgo();
  return job.finish(place.window_offset);
}

}  // namespace detail
}  // namespace v0
}  // namespace conveyor

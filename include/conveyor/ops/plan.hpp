#pragma once
/// @file
/// The per-sample plan: everything the resampler needs to produce one output image from a
/// decoded source, as plain data that the CPU loops and the CUDA kernel read alike.

#include <conveyor/config.hpp>
#include <conveyor/ops/filters.hpp>

#include <cstddef>
#include <cstdint>

namespace conveyor {
inline namespace v0 {
namespace ops {

/// How one output axis maps onto the source.
///
/// Output pixel `o` is resized pixel `r = o + offset`; `r` outside [0, resized) is padding (zero),
/// as torchvision's CenterCrop pads an image smaller than the crop. Otherwise its centre lies at
/// source coordinate `src_begin + origin + (r + 0.5) * scale`, and its filter taps are clamped to
/// the source pixels [src_begin, src_end): the crop box, so nothing outside the crop bleeds in,
/// exactly as when torchvision crops first and resizes after.
struct AxisPlan {
  double origin = 0.0;  ///< sub-pixel shift of the box, relative to src_begin (0 unless decoded scaled)
  double scale = 1.0;   ///< source pixels per output pixel: in / out exactly, as torch divides them
  std::int32_t offset = 0;
  std::int32_t resized = 0;
  std::int32_t src_begin = 0;
  std::int32_t src_end = 0;
  Resampling filter = Resampling::bilinear;  ///< both axes' of a sample alike
};

/// Where a sample's decoded pixels are, as an oriented view: pixel (x, y) of the view starts at
/// byte `offset + x * x_stride + y * y_stride` of the source buffer. Exif orientations are
/// negative or swapped strides, never a copy.
struct SourceView {
  std::int64_t offset = 0;
  std::int64_t x_stride = 3;
  std::int64_t y_stride = 0;
  std::int32_t width = 0;   ///< of the oriented view
  std::int32_t height = 0;
};

/// One sample's plan.
struct SamplePlan {
  AxisPlan x;
  AxisPlan y;
  SourceView src;
  std::int32_t out_width = 0;
  std::int32_t out_height = 0;
  std::int32_t flip = 0;    ///< mirror the output horizontally
  std::int32_t flip_y = 0;  ///< mirror the output vertically
  /// The sample is already finished (by the CPU, in the output's dtype and layout) at src.offset:
  /// a device only copies it.
  std::int32_t precomputed = 0;
};

/// Which of each sample's copies a resampling step makes: copies [first, first + count) of the
/// `per_sample` a multi-view transform (`Views`) stages per sample (one plan, and one program, per
/// copy: `DeviceWork::copies`), stored one after another from `out_offset` bytes into the sample's
/// output, `copy_bytes` each. The default is a single-view transform's: one copy filling the sample.
/// A step makes `count` copies of each sample of a batch: its j-th is copy `first + j % count` of
/// sample `j / count`.
struct CopyRange {
  std::int32_t first = 0, count = 1, per_sample = 1;
  std::size_t out_offset = 0;
  std::size_t copy_bytes = 0;  ///< of one finished copy; unused when `count` is 1

  /// The index, in the slot's plan and program tables, of the step's j-th copy.
  [[nodiscard]] CONVEYOR_HD std::int64_t entry(std::int64_t j) const noexcept {
    return j / count * per_sample + first + j % count;
  }
  /// Where the step's j-th copy goes in the output, whose samples are `sample_bytes` apart.
  [[nodiscard]] CONVEYOR_HD std::size_t output(std::int64_t j, std::size_t sample_bytes) const noexcept {
    return static_cast<std::size_t>(j / count) * sample_bytes + out_offset + static_cast<std::size_t>(j % count) * copy_bytes;
  }
};

}  // namespace ops
}  // namespace v0
}  // namespace conveyor

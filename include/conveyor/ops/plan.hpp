#pragma once
/// @file
/// The per-sample plan: everything the resampler needs to produce one output image from a
/// decoded source, as plain data that the CPU loops and the CUDA kernel read alike.

#include <conveyor/config.hpp>
#include <conveyor/ops/filters.hpp>

#include <climits>
#include <cstddef>
#include <cstdint>
#include <span>

namespace conveyor {
inline namespace v0 {
namespace ops {

/// How a crop pads an image, with torchvision's (and numpy's) names: what resized pixel `r`
/// outside [0, n) is.
enum class PadMode : std::uint8_t {
  constant = 0,  ///< zero (torchvision's default fill)
  edge,          ///< the nearest edge pixel: a a | a b c
  reflect,       ///< mirrored about the edge pixel: c b | a b c, at most n - 1 deep
  symmetric,     ///< mirrored with the edge pixel repeated: b a | a b c, at most n deep
};

namespace detail {
inline constexpr const char* pad_mode_names[] = {"constant", "edge", "reflect", "symmetric"};
}  // namespace detail

/// The names, in the enum's order: "constant", "edge", "reflect", "symmetric".
[[nodiscard]] constexpr std::span<const char* const> enum_names(PadMode) noexcept { return detail::pad_mode_names; }

/// The deepest padding `m` makes of an axis of `n` pixels with one mirror image: torch refuses a
/// deeper reflect, and torchvision's symmetric indexes past the image; edge and constant have no
/// bound.
[[nodiscard]] constexpr long long max_padding(PadMode m, long long n) noexcept {
  return m == PadMode::reflect ? n - 1 : m == PadMode::symmetric ? n : LLONG_MAX;
}

/// The resized pixel that pixel `r` outside [0, n) repeats under `m` (not constant), within
/// `max_padding`.
[[nodiscard]] CONVEYOR_HD constexpr std::int32_t padded_pixel(PadMode m, std::int32_t r, std::int32_t n) noexcept {
  if (r < 0) return m == PadMode::edge ? 0 : m == PadMode::reflect ? -r : -r - 1;
  return m == PadMode::edge ? n - 1 : m == PadMode::reflect ? 2 * n - 2 - r : 2 * n - 1 - r;
}

/// How one output axis maps onto the source.
///
/// Output pixel `o` is resized pixel `r = o + offset`; `r` outside [0, resized) is padding: zero
/// with `PadMode::constant` (as torchvision's CenterCrop pads an image smaller than the crop), else
/// the resized pixel `padded_pixel` names (RandomCrop's padding modes). Otherwise its centre lies at
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
  PadMode padding = PadMode::constant;
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

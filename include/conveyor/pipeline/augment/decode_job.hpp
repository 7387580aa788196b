#pragma once
/// @file
/// What to decode for one sample: the window of the (oriented, DCT-scaled) image that its plan's
/// filter taps read, and the plan moved onto that window. Planned from the header alone, before
/// any pixel is decoded.

#include <conveyor/config.hpp>
#include <conveyor/io/decode_options.hpp>
#include <conveyor/io/image_decoder.hpp>
#include <conveyor/io/jpeg_info.hpp>
#include <conveyor/ops/plan.hpp>
#include <conveyor/ops/resample.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>

namespace conveyor {
inline namespace v0 {
namespace detail {

/// The view of a `width` x `height` RGB image (rows `row` bytes apart) shown upright under Exif
/// `orientation` (1..8).
[[nodiscard]] inline ops::SourceView oriented_view(int orientation, int width, int height, std::int64_t row) noexcept {
  const std::int64_t right = std::int64_t{width - 1} * 3, bottom = std::int64_t{height - 1} * row;
  switch (orientation) {
    case 2: return {right, -3, row, width, height};                 // mirrored
    case 3: return {right + bottom, -3, -row, width, height};       // rotated 180
    case 4: return {bottom, 3, -row, width, height};                // mirrored vertically
    case 5: return {0, row, 3, height, width};                      // transposed
    case 6: return {bottom, -row, 3, height, width};                // rotate 90 clockwise to view
    case 7: return {right + bottom, -row, -3, height, width};       // transversed
    case 8: return {right, row, -3, height, width};                 // rotate 90 counter-clockwise to view
    default: return {0, 3, row, width, height};
  }
}

/// The size of `info`'s image shown upright under Exif `orientation`: {width, height}.
[[nodiscard]] inline std::array<int, 2> oriented_size(const ImageInfo& info, int orientation) noexcept {
  return orientation >= 5 ? std::array<int, 2>{info.height, info.width} : std::array<int, 2>{info.width, info.height};
}

/// Rewrites one axis of a plan for the image decoded at `n`/8: positions scale by n/8, and a
/// mirrored axis also shifts by the rounding of the scaled size (its pixel grid is anchored at
/// the other end).
inline void scale_axis(ops::AxisPlan& a, int n, int extent, int scaled_extent, bool mirrored) noexcept {
  const double s = n / 8.0;
  const double shift = mirrored ? scaled_extent - s * extent : 0.0;
  const double begin = s * (a.src_begin + a.origin) + shift;
  const auto first = static_cast<std::int32_t>(std::floor(begin));
  const auto last = static_cast<std::int32_t>(std::ceil(s * a.src_end + shift));
  a.origin = begin - first;
  a.scale = s * a.scale;
  a.src_begin = first;
  a.src_end = std::min(last, scaled_extent);
}

/// The source pixels [lo, hi) along one axis that any output pixel's taps read.
[[nodiscard]] inline std::array<std::int32_t, 2> needed_range(const ops::AxisPlan& a, std::int32_t out) noexcept {
  std::int32_t lo = a.src_end, hi = a.src_begin;
  for (std::int32_t o = 0; o < out; ++o) {
    const ops::AxisTaps t = ops::axis_taps(a, o);
    if (t.count == 0) continue;
    lo = std::min(lo, a.src_begin + t.first);
    hi = std::max(hi, a.src_begin + t.first + t.count);
  }
  if (lo >= hi) return {a.src_begin, a.src_begin};
  return {lo, hi};
}

/// What to decode for one sample, and the plan that will read it. The plan is in the
/// coordinates of the (scaled, oriented) image until `finish` moves it onto the decoded window.
struct DecodeJob {
  ops::SamplePlan plan;
  DecodeRegion region;      ///< in stored (unrotated) pixels of the scaled image
  int orientation = 1;
  bool whole = false;       ///< the entire image at full scale: decode it in one piece
  std::int32_t x0 = 0, y0 = 0;  ///< the window's origin in the oriented, scaled image

  [[nodiscard]] std::size_t bytes() const noexcept {
    return std::size_t(region.width) * std::size_t(region.height) * 3;
  }
  /// The plan reading a window decoded at byte `offset` of its buffer (rows packed).
  [[nodiscard]] ops::SamplePlan finish(std::int64_t offset) const noexcept {
    ops::SamplePlan p = plan;
    p.src = oriented_view(orientation, region.width, region.height, std::int64_t{region.width} * 3);
    p.src.offset += offset;
    // Integer shifts only: the resampler's coordinates relative to src_begin are unchanged.
    p.x.src_begin -= x0;
    p.x.src_end -= x0;
    p.y.src_begin -= y0;
    p.y.src_end -= y0;
    return p;
  }
};

/// The DCT scale (in eighths) `decode_job` chooses for `plan` of `info`'s image: the smallest of
/// 1/8, 2/8, 4/8 and 8/8 that still gives at least one source pixel per output pixel on both axes,
/// where `dct_scaling` allows and the image is scalable; else 8.
[[nodiscard]] inline int dct_scale(const ImageInfo& info, const ops::SamplePlan& plan, bool dct_scaling) noexcept {
  // Only 1/8, 2/8 and 4/8: libjpeg-turbo has SIMD inverse DCTs for those, while 3/8, 5/8, 6/8
  // and 7/8 run in plain C and decode slower than full size (measured: bench_decode).
  int n = 8;
  if (dct_scaling && info.scalable) {
    const double scale = std::min(plan.x.scale, plan.y.scale);
    while (n > 1 && scale * (n / 2) >= 8.0) n /= 2;
  }
  return n;
}

/// Where window `r` (stored pixels of the image of `info` scaled by `r.scale_num`/8) starts in that
/// image shown upright under Exif `orientation`: {x0, y0}.
[[nodiscard]] inline std::array<std::int32_t, 2> oriented_origin(const ImageInfo& info, int orientation,
                                                                 const DecodeRegion& r) noexcept {
  const bool swap = orientation >= 5;
  const bool mirror_x = orientation == 2 || orientation == 3 || orientation == 6 || orientation == 7;
  const bool mirror_y = orientation == 3 || orientation == 4 || orientation == 7 || orientation == 8;
  const int sw = scaled_size(info.width, r.scale_num), sh = scaled_size(info.height, r.scale_num);
  const auto start = [](std::int32_t lo, std::int32_t hi, int extent, bool mirrored) {
    return mirrored ? extent - hi : lo;
  };
  const std::array<std::int32_t, 2> cols{r.x, r.x + r.width}, rows{r.y, r.y + r.height};
  return {swap ? start(rows[0], rows[1], sh, mirror_x) : start(cols[0], cols[1], sw, mirror_x),
          swap ? start(cols[0], cols[1], sw, mirror_y) : start(rows[0], rows[1], sh, mirror_y)};
}

/// The job for `plan` (made for the image of `info` shown upright under Exif `orientation`,
/// `oriented_size`) decoded at the DCT scale `n`/8 (1, 2, 4 or 8; 8 where the image is not
/// scalable): the window the resampler's taps read (with `roi`; else the whole image).
[[nodiscard]] inline DecodeJob decode_job_at(const ImageInfo& info, int orientation, const ops::SamplePlan& plan, int n,
                                             bool roi) {
  DecodeJob job;
  job.orientation = orientation;
  const bool swap = job.orientation >= 5;
  const bool mirror_x = job.orientation == 2 || job.orientation == 3 || job.orientation == 6 || job.orientation == 7;
  const bool mirror_y = job.orientation == 3 || job.orientation == 4 || job.orientation == 7 || job.orientation == 8;
  const auto [ow, oh] = oriented_size(info, orientation);
  job.plan = plan;
  const int sow = scaled_size(ow, n), soh = scaled_size(oh, n);
  if (n < 8) {
    scale_axis(job.plan.x, n, ow, sow, mirror_x);
    scale_axis(job.plan.y, n, oh, soh, mirror_y);
  }
  std::array<std::int32_t, 2> xr{0, sow}, yr{0, soh};
  if (roi) {
    xr = needed_range(job.plan.x, job.plan.out_width);
    yr = needed_range(job.plan.y, job.plan.out_height);
    if (xr[0] >= xr[1]) xr = {0, 1};  // all padding: decode a pixel rather than nothing
    if (yr[0] >= yr[1]) yr = {0, 1};
  }
  // The oriented window [xr) x [yr) in the stored image's (scaled) columns and rows.
  const int sw = swap ? soh : sow, sh = swap ? sow : soh;
  const auto stored_range = [](std::array<std::int32_t, 2> r, int extent, bool mirrored) {
    return mirrored ? std::array<std::int32_t, 2>{extent - r[1], extent - r[0]} : r;
  };
  auto cols = swap ? stored_range(yr, sw, mirror_y) : stored_range(xr, sw, mirror_x);
  const auto rows = swap ? stored_range(xr, sh, mirror_x) : stored_range(yr, sh, mirror_y);
  // Decode straight into place: the columns start on an iMCU, and the crop's edge columns
  // (which libjpeg-turbo upsamples as image edges) lie a column away from anything the taps read.
  const auto decoded = crop_columns(cols[0], cols[1] - cols[0], sw, info.column_alignment(n), info.min_width);
  cols = {decoded[0], decoded[1]};
  job.region = {cols[0], rows[0], cols[1] - cols[0], rows[1] - rows[0], n};
  job.whole = n == 8 && job.region.width == sw && job.region.height == sh;
  // Where the decoded window starts in the oriented image.
  const auto [x0, y0] = oriented_origin(info, orientation, job.region);
  job.x0 = x0;
  job.y0 = y0;
  return job;
}

/// The job for `plan` (made for the image of `info` shown upright under Exif `orientation`,
/// `oriented_size`): at the DCT scale `dct_scale` chooses, the window the resampler's taps read
/// (with `roi`; else the whole image).
[[nodiscard]] inline DecodeJob decode_job(const ImageInfo& info, int orientation, const ops::SamplePlan& plan,
                                          bool dct_scaling, bool roi) {
  return decode_job_at(info, orientation, plan, dct_scale(info, plan, dct_scaling), roi);
}

/// The smallest window holding windows `a` and `b` of one image at one scale. Two windows
/// `decode_job_at` made keep their columns' alignment and their edge columns' margin in it: its
/// first column is one of theirs, and every tap either reads lies at least as far inside it.
[[nodiscard]] inline DecodeRegion region_union(const DecodeRegion& a, const DecodeRegion& b) noexcept {
  const int x = std::min(a.x, b.x), y = std::min(a.y, b.y);
  return {x, y, std::max(a.x + a.width, b.x + b.width) - x, std::max(a.y + a.height, b.y + b.height) - y, a.scale_num};
}

/// `job` (of `info`'s image) reading `window` instead of its own region: a window at the job's
/// scale holding its region (`region_union`). Its plan moves by integer shifts only, in `finish`,
/// so it reads the same pixels, wherever libjpeg-turbo decodes them alike.
[[nodiscard]] inline DecodeJob on_window(DecodeJob job, const ImageInfo& info, const DecodeRegion& window) noexcept {
  job.region = window;
  job.whole = window.scale_num == 8 && window.x == 0 && window.y == 0 && window.width == info.width &&
              window.height == info.height;
  const auto [x0, y0] = oriented_origin(info, job.orientation, window);
  job.x0 = x0;
  job.y0 = y0;
  return job;
}

/// Decodes `job`'s window into `dst` (rows packed, 3 bytes a pixel) with `decoder`, which has
/// read the image's header.
inline void decode_window(ImageDecoder& decoder, const DecodeJob& job, std::uint8_t* dst) {
  const std::size_t row = std::size_t(job.region.width) * 3;
  if (job.whole)
    decoder.decode(dst, row);
  else
    decoder.decode_columns(job.region, dst, row);
}

}  // namespace detail
}  // namespace v0
}  // namespace conveyor

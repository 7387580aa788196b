#pragma once
/// @file
/// Separable resampling with the filters of `ops/filters.hpp` and their libraries' uint8
/// arithmetic: the filter widened by the downscale factor, centres at half pixels, taps clamped to
/// the source box, weights normalised to sum to one in double precision, then turned into
/// fixed-point integers: 16-bit at a precision chosen per axis, as
/// `torch.nn.functional.interpolate(uint8, antialias=True)` does on the CPU, or at Pillow's 22
/// fraction bits (`ImagingResample`), rounded away from zero where a cubic lobe is negative.
/// Pillow's NEAREST is one tap: the source pixel under a centre that Pillow steps by repeated
/// addition (`ImagingScaleAffine`).
///
/// Two passes, as torch and PIL run them: each source row is filtered horizontally and rounded
/// to u8, then those rows are combined vertically and rounded again (Pillow swaps them when the
/// height shrinks much more than the width: `vertical_first`). Every pass sums `byte *
/// weight` in 32-bit integers from half of the last unit, shifts right by the axis' precision and
/// clamps to [0, 255]. Integer sums are exact in any order, so both backends give the same bits
/// as each other and as the libraries (tested against them), and the kernel needs no float
/// conversions in its tap loops (the default filter's separable path sums two taps of a channel
/// in one `dp2a`; the other filters, whose weights are signed or 22-bit, take 32-bit
/// multiply-adds on its per-pixel path; Hamming and Lanczos are finished on the CPU, see
/// `exact_on_device`).
///
/// The weights are computed in double from the plan with the operations the libraries use,
/// written so that a compiler cannot contract them into different fused multiply-adds (the one
/// mul-add, the tap centre, is an explicit `fma`; with origin 0 it equals their rounded product;
/// the support's product is `exact::mul`, and the products by powers of two are exact).

#include <conveyor/config.hpp>
#include <conveyor/ops/filters.hpp>
#include <conveyor/ops/plan.hpp>

#include <cstdint>
#include <math.h>

namespace conveyor {
inline namespace v0 {
namespace ops {

/// The filter taps of one resized pixel along one axis: source pixels
/// [src_begin + first, src_begin + first + count) with unnormalised weights summing to `total`.
struct AxisTaps {
  std::int32_t first = 0;  ///< relative to the axis' src_begin
  std::int32_t count = 0;  ///< 0 for padding
  double center = 0.0;     ///< relative to src_begin
  double inv_support = 1.0;
  double total = 1.0;
  Resampling filter = Resampling::bilinear;
};

/// Pillow's NEAREST tap of resized pixel `r`: its centre stepped from the first by `r` additions
/// of the scale, truncated (ImagingScaleAffine's `xo += a[0]`, COORD()).
[[nodiscard]] CONVEYOR_HD inline AxisTaps nearest_tap(const AxisPlan& a, std::int32_t r) noexcept {
  AxisTaps t;
  t.filter = a.filter;
  double at = a.origin + a.scale * 0.5;
  for (std::int32_t k = 0; k < r; ++k) at += a.scale;
  const std::int32_t size = a.src_end - a.src_begin;
  const std::int32_t i = at < 0.0 ? -1 : static_cast<std::int32_t>(at);
  t.first = i;
  t.count = i >= 0 && i < size ? 1 : 0;
  t.center = at;
  return t;
}

/// torch's NEAREST and NEAREST_EXACT tap of resized pixel `r` (UpSample.h's nearest_idx): the
/// scale in / out in float32, `r * scale` in float32, or `(r + 0.5) * scale` in double rounded to
/// float32, floored and kept inside the source.
[[nodiscard]] CONVEYOR_HD inline AxisTaps torch_nearest_tap(const AxisPlan& a, std::int32_t r) noexcept {
  AxisTaps t;
  t.filter = a.filter;
  const std::int32_t size = a.src_end - a.src_begin;
  const float scale = exact::div(static_cast<float>(size), static_cast<float>(a.resized));
  const float at = a.filter == Resampling::nearest
                       ? exact::mul(static_cast<float>(r), scale)
                       : static_cast<float>(exact::mul(static_cast<double>(r) + 0.5, static_cast<double>(scale)));
  const auto i = static_cast<std::int32_t>(floorf(at));
  t.first = i < size - 1 ? i : size - 1;
  t.count = size > 0 ? 1 : 0;
  t.center = at;
  return t;
}

/// The taps a filter that `merges_edges` sums, inside the image or not: torch's `interp_size`,
/// twice the filter's support (4 for bicubic).
[[nodiscard]] CONVEYOR_HD constexpr std::int32_t window_taps(Resampling f) noexcept {
  return static_cast<std::int32_t>(2.0 * filter_support(f));
}

/// The first of those taps: floor(x) - (taps / 2 - 1) for x = centre - 0.5 (floor(x) - 1 for bicubic).
[[nodiscard]] CONVEYOR_HD inline std::int32_t window_start(const AxisTaps& t) noexcept {
  return static_cast<std::int32_t>(floor(t.center - 0.5)) - (window_taps(t.filter) / 2 - 1);
}

/// Taps of resized pixel `r` (0 <= r < a.resized) on axis `a`.
[[nodiscard]] CONVEYOR_HD inline AxisTaps resized_taps(const AxisPlan& a, std::int32_t r) noexcept {
  if (a.filter == Resampling::pil_nearest) return nearest_tap(a, r);
  if (is_nearest(a.filter)) return torch_nearest_tap(a, r);
  AxisTaps t;
  t.filter = a.filter;
  const bool widen = a.scale >= 1.0 && !unwidened(a.filter);
  const double support = exact::mul(filter_support(a.filter), widen ? a.scale : 1.0);
  t.inv_support = widen ? 1.0 / a.scale : 1.0;
  t.center = fma(static_cast<double>(r) + 0.5, a.scale, a.origin);
  const std::int32_t size = a.src_end - a.src_begin;
  // Truncation, not floor, as torch and PIL round these bounds.
  std::int32_t lo = static_cast<std::int32_t>(t.center - support + 0.5);
  std::int32_t hi = static_cast<std::int32_t>(t.center + support + 0.5);
  lo = lo < 0 ? 0 : lo;
  hi = hi > size ? size : hi;
  t.first = lo;
  t.count = hi > lo ? hi - lo : 0;
  double total = 0.0;
  if (merges_edges(a.filter)) {  // the window's taps, wherever they fall (tap_weight merges them)
    const std::int32_t from = window_start(t);
    for (std::int32_t k = from; k < from + window_taps(a.filter); ++k)
      total += filter_value(a.filter, static_cast<double>(k) - t.center + 0.5);
  } else {
    for (std::int32_t j = 0; j < t.count; ++j)
      total += filter_value(a.filter, (static_cast<double>(j + lo) - t.center + 0.5) * t.inv_support);
  }
  t.total = total;
  if (total == 0.0) t.count = 0;  // a degenerate box: treat as padding rather than divide by zero
  return t;
}

/// Taps of output pixel `o` on axis `a`. Zero padding gets `count == 0`; the other padding modes
/// the taps of the resized pixel they repeat.
[[nodiscard]] CONVEYOR_HD inline AxisTaps axis_taps(const AxisPlan& a, std::int32_t o) noexcept {
  std::int32_t r = o + a.offset;
  if (r < 0 || r >= a.resized) {
    if (a.padding == PadMode::constant || a.resized <= 0) return AxisTaps{};
    r = padded_pixel(a.padding, r, a.resized);
  }
  return resized_taps(a, r);
}

/// Normalised weight of tap `j` (0 <= j < count).
[[nodiscard]] CONVEYOR_HD inline double tap_weight(const AxisTaps& t, std::int32_t j) noexcept {
  if (is_nearest(t.filter)) return 1.0;
  if (merges_edges(t.filter)) {  // the edge pixels take the weights of the taps beyond them
    const std::int32_t from = window_start(t);
    const std::int32_t lo = j == 0 ? from : j + t.first;
    const std::int32_t hi = j == t.count - 1 ? from + window_taps(t.filter) - 1 : j + t.first;
    double w = 0.0;
    for (std::int32_t k = lo; k <= hi; ++k) w += filter_value(t.filter, static_cast<double>(k) - t.center + 0.5);
    return w / t.total;
  }
  return filter_value(t.filter, (static_cast<double>(j + t.first) - t.center + 0.5) * t.inv_support) / t.total;
}

/// The largest normalised weight of a pixel's taps (0 without taps).
[[nodiscard]] CONVEYOR_HD inline double max_weight(const AxisTaps& t) noexcept {
  double m = 0.0;
  for (std::int32_t j = 0; j < t.count; ++j) {
    const double w = tap_weight(t, j);
    m = w > m ? w : m;
  }
  return m;
}

/// The most fraction bits at which a weight of `max_weight` still fits 16 bits, as torch picks
/// them (at most 22). Smaller weights never lower it, so an axis' precision is the least of its
/// pixels'.
[[nodiscard]] CONVEYOR_HD inline int weight_precision(double max_weight) noexcept {
  int p = 0;
  for (; p < 22; ++p)
    if (static_cast<std::int32_t>(0.5 + max_weight * static_cast<double>(1 << (p + 1))) >= (1 << 15)) break;
  return p;
}

/// Pillow's precision, whatever the weights: `PRECISION_BITS`, 32 - 8 - 2.
inline constexpr int pil_precision = 22;

/// The precision of axis `a`: Pillow's, or torch's least over every resized pixel, those cropped
/// away included (torch resizes the whole image before CenterCrop cuts it).
[[nodiscard]] CONVEYOR_HD inline int axis_precision(const AxisPlan& a) noexcept {
  if (is_pil(a.filter)) return pil_precision;
  int p = 22;
  for (std::int32_t r = 0; r < a.resized; ++r) {
    const int q = weight_precision(max_weight(resized_taps(a, r)));
    p = q < p ? q : p;
  }
  return p;
}

/// Whether the vertical pass runs first: Pillow's (13) when the height shrinks by more than twice
/// what the width does (ImagingResampleInner's `horizontal_first`, on the sizes of the image it
/// resizes: the crop box, and the whole resized image before any CenterCrop). torch, and the
/// kernel, filter rows first.
[[nodiscard]] CONVEYOR_HD inline bool vertical_first(const SamplePlan& p) noexcept {
  if (!is_pil(p.x.filter)) return false;
  const std::int32_t dy = p.y.src_end - p.y.src_begin - p.y.resized, dx = p.x.src_end - p.x.src_begin - p.x.resized;
  return dy > 0 && dy > dx * 2;
}

/// A normalised weight (at most 1) as an integer with `precision` fraction bits, rounded half away
/// from zero (both libraries: `w < 0 ? w * 2^p - 0.5 : w * 2^p + 0.5`, truncated).
[[nodiscard]] CONVEYOR_HD inline std::int32_t fixed_weight(double w, int precision) noexcept {
  const double v = w * static_cast<double>(1 << precision);
  return static_cast<std::int32_t>(w < 0 ? v - 0.5 : 0.5 + v);
}

/// Where a pass' sum starts: half of the last unit, so the shift rounds to nearest.
[[nodiscard]] CONVEYOR_HD inline std::int32_t fixed_half(int precision) noexcept { return 1 << (precision - 1); }

/// A pass' sum (from `fixed_half`) as a byte: shifted and clamped to [0, 255].
[[nodiscard]] CONVEYOR_HD inline std::uint8_t fixed_to_u8(std::int32_t sum, int precision) noexcept {
  const std::int32_t v = sum >> precision;
  return static_cast<std::uint8_t>(v < 0 ? 0 : (v > 255 ? 255 : v));
}

}  // namespace ops
}  // namespace v0
}  // namespace conveyor

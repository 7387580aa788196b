#pragma once
/// @file
/// torchvision v1's tensor functionals (torchvision.transforms.functional on uint8 tensors) where
/// their arithmetic differs from v2's: what v1's AugMix runs, on tensors and on the tensor it makes
/// of a PIL image. v1 writes its blend as `(ratio * a + (1 - ratio) * b).clamp(0, 255).to(uint8)`:
/// both products rounded to float32, then their sum (v2 fuses the second product into the sum), and
/// its grey as `0.2989 * r + 0.587 * g + 0.114 * b`, three rounded products summed left to right (21
/// of the 2^24 colours truncate to another grey than v2's). Brightness, posterize, solarize,
/// equalize and invert are v2's numbers; affine and rotate are v2's kernel on v1's matrix, with
/// v1's bilinear fill blend (affine.hpp's `v1`).

#include <conveyor/config.hpp>
#include <conveyor/ops/exact_float.hpp>
#include <conveyor/ops/pixel/adjust_sharpness.hpp>
#include <conveyor/ops/pixel/blend.hpp>
#include <conveyor/ops/pixel/op.hpp>

#include <cmath>
#include <cstdint>

namespace conveyor {
inline namespace v0 {
namespace ops::pixel::v1 {

/// v1's `rgb_to_grayscale(img).to(uint8)` of one pixel: its float32 grey, truncated.
[[nodiscard]] CONVEYOR_HD inline std::uint8_t gray(const std::uint8_t* rgb) noexcept {
  using namespace exact;
  const float r = mul(static_cast<float>(0.2989), to_float(rgb[0]));
  const float g = mul(static_cast<float>(0.587), to_float(rgb[1]));
  const float b = mul(static_cast<float>(0.114), to_float(rgb[2]));
  return truncate_u8(add(add(r, g), b));
}

/// v1's `_blend` of one value `x` towards `other` with a blending record's ratio (blend.hpp).
[[nodiscard]] CONVEYOR_HD inline std::uint8_t blend(const PixelOp& op, std::uint8_t x, float other) noexcept {
  using namespace exact;
  return saturate_u8(add(mul(op.f[0], to_float(x)), mul(op.f[1], other)));
}

/// v1's `adjust_saturation`: each value blended towards the pixel's v1 grey.
struct AdjustSaturation {
  static constexpr std::int32_t code = 31;
  static constexpr OpKind kind = OpKind::point;
  static constexpr const char* name = "adjust_saturation";
  CONVEYOR_HD static void apply(const PixelOp& op, std::uint8_t* rgb) noexcept {
    const float g = to_float(gray(rgb));
    for (int c = 0; c < 3; ++c) rgb[c] = v1::blend(op, rgb[c], g);
  }
};

/// v1's `adjust_contrast`: each value blended towards the mean of the v1 greys (the float32 mean as
/// v2's AdjustContrast takes it, and with its bound).
struct AdjustContrast {
  static constexpr std::int32_t code = 32;
  static constexpr OpKind kind = OpKind::statistic;
  static constexpr unsigned statistics = v1_gray_sum;
  static constexpr const char* name = "adjust_contrast";
  CONVEYOR_HD static void table(const PixelOp& op, const ImageStats& s, int, std::uint8_t* lut) noexcept {
    const float m = exact::div(static_cast<float>(s.v1_gray_sum), static_cast<float>(s.pixels));
    for (int v = 0; v < 256; ++v) lut[v] = v1::blend(op, static_cast<std::uint8_t>(v), m);
  }
};

/// v1's `adjust_sharpness`: the 3 x 3 filter of v2's (rounded half to even) inside the border, the
/// value itself on it, and then v1's blend of every value, the border's too (where `ratio * x +
/// (1 - ratio) * x` may truncate to x - 1, as v1's does). Images of at most two rows or columns stay.
struct AdjustSharpness {
  static constexpr std::int32_t code = 33;
  static constexpr OpKind kind = OpKind::neighbourhood;
  static constexpr const char* name = "adjust_sharpness";
  struct Prepared {};
  CONVEYOR_HD static void prepare(const PixelOp&, int, int, Prepared&) noexcept {}
  CONVEYOR_HD static void apply(const PixelOp& op, const Prepared&, const std::uint8_t* src, int width, int height,
                                int x, int y, std::uint8_t* rgb) noexcept {
    const std::uint8_t* centre = src + (std::int64_t{y} * width + x) * 3;
    if (width <= 2 || height <= 2) {
      for (int c = 0; c < 3; ++c) rgb[c] = centre[c];
      return;
    }
    const bool border = x == 0 || y == 0 || x == width - 1 || y == height - 1;
    const std::int64_t row = std::int64_t{width} * 3;
    for (int c = 0; c < 3; ++c)
      rgb[c] = v1::blend(op, centre[c], border ? to_float(centre[c]) : sharpness_blur(centre, row, c));
  }
};

/// v1's `autocontrast`: per channel `(x - min) * (255 / (max - min))` in float32, clamped and
/// truncated, where Python's `255 / tensor` is torch's `tensor.reciprocal() * 255`; a channel whose
/// min equals its max is left as it is.
struct Autocontrast {
  static constexpr std::int32_t code = 34;
  static constexpr OpKind kind = OpKind::statistic;
  static constexpr unsigned statistics = channel_min_max;
  static constexpr const char* name = "autocontrast";
  CONVEYOR_HD static void table(const PixelOp&, const ImageStats& s, int channel, std::uint8_t* lut) noexcept {
    const int lo = s.min[channel], hi = s.max[channel];
    if (lo >= hi) {  // v1's infinite scale: minimum 0 and scale 1
      for (int v = 0; v < 256; ++v) lut[v] = static_cast<std::uint8_t>(v);
      return;
    }
    const float scale = exact::mul(exact::div(1.0f, static_cast<float>(hi - lo)), 255.0f);
    for (int v = 0; v < 256; ++v) lut[v] = saturate_u8(exact::mul(static_cast<float>(v - lo), scale));
  }
};

/// The record of v1's `adjust_saturation(img, saturation_factor)`.
/// @throws ConfigError unless the factor is finite and >= 0.
[[nodiscard]] inline PixelOp adjust_saturation(double saturation_factor) {
  detail::expect(std::isfinite(saturation_factor) && saturation_factor >= 0.0, AdjustSaturation::name,
                 "saturation_factor must be finite and >= 0", saturation_factor);
  return blend_record(AdjustSaturation::code, saturation_factor);
}

/// The record of v1's `adjust_contrast(img, contrast_factor)`.
/// @throws ConfigError unless the factor is finite and >= 0.
[[nodiscard]] inline PixelOp adjust_contrast(double contrast_factor) {
  detail::expect(std::isfinite(contrast_factor) && contrast_factor >= 0.0, AdjustContrast::name,
                 "contrast_factor must be finite and >= 0", contrast_factor);
  return blend_record(AdjustContrast::code, contrast_factor);
}

/// The record of v1's `adjust_sharpness(img, sharpness_factor)`.
/// @throws ConfigError unless the factor is finite and >= 0.
[[nodiscard]] inline PixelOp adjust_sharpness(double sharpness_factor) {
  detail::expect(std::isfinite(sharpness_factor) && sharpness_factor >= 0.0, AdjustSharpness::name,
                 "sharpness_factor must be finite and >= 0", sharpness_factor);
  return blend_record(AdjustSharpness::code, sharpness_factor);
}

/// The record of v1's `autocontrast(img)`.
[[nodiscard]] inline PixelOp autocontrast() { return {.code = Autocontrast::code}; }

}  // namespace ops::pixel::v1
}  // namespace v0
}  // namespace conveyor

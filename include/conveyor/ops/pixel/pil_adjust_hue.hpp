#pragma once
/// @file
/// torchvision's adjust_hue on a PIL image (ColorJitter's hue on PIL images): `convert("HSV")`,
/// the hue byte plus `np.int32(hue_factor * 255)` modulo 256, then `convert("RGB")`. The two
/// conversions are libImaging/Convert.c's rgb2hsv_row and hsv2rgb, following colorsys.py in a mix
/// of float32 and double that is kept here operation for operation (C promotes a float to double
/// where a double literal meets it).

#include <conveyor/config.hpp>
#include <conveyor/ops/exact_float.hpp>
#include <conveyor/ops/pixel/op.hpp>

#include <cmath>
#include <cstdint>
#include <math.h>

namespace conveyor {
inline namespace v0 {
namespace ops::pixel {

namespace pil_detail {

[[nodiscard]] CONVEYOR_HD inline std::uint8_t clip8(int v) noexcept {
  return static_cast<std::uint8_t>(v <= 0 ? 0 : v < 256 ? v : 255);
}

/// rgb2hsv_row: hue, saturation and value bytes of one pixel.
CONVEYOR_HD inline void rgb_to_hsv(const std::uint8_t* rgb, std::uint8_t* hsv) noexcept {
  const int r = rgb[0], g = rgb[1], b = rgb[2];
  const int maxc = r > g ? (r > b ? r : b) : (g > b ? g : b);
  const int minc = r < g ? (r < b ? r : b) : (g < b ? g : b);
  hsv[2] = static_cast<std::uint8_t>(maxc);
  if (minc == maxc) {
    hsv[0] = hsv[1] = 0;
    return;
  }
  const float cr = static_cast<float>(maxc - minc);
  const float s = exact::div(cr, static_cast<float>(maxc));
  const auto part = [&](int channel) { return exact::div(static_cast<float>(maxc - channel), cr); };  // rc, gc, bc
  float h;
  if (r == maxc) h = exact::sub(part(b), part(g));
  else if (g == maxc) h = static_cast<float>(exact::sub(exact::add(2.0, static_cast<double>(part(r))), static_cast<double>(part(b))));
  else h = static_cast<float>(exact::sub(exact::add(4.0, static_cast<double>(part(g))), static_cast<double>(part(r))));
  // fmod(h / 6 + 1, 1): the sum lies in [5/6, 11/6], where subtracting 1 is exact
  const double turns = exact::add(exact::div(static_cast<double>(h), 6.0), 1.0);
  h = static_cast<float>(turns >= 1.0 ? exact::sub(turns, 1.0) : turns);
  hsv[0] = clip8(static_cast<int>(exact::mul(static_cast<double>(h), 255.0)));
  hsv[1] = clip8(static_cast<int>(exact::mul(static_cast<double>(s), 255.0)));
}

/// C's `round` of a value in [0, 2^31): half away from zero, without the library call.
[[nodiscard]] CONVEYOR_HD inline int round_positive(double v) noexcept {
  const int whole = static_cast<int>(v);
  return whole + (exact::sub(v, static_cast<double>(whole)) >= 0.5 ? 1 : 0);  // the fraction is exact
}

/// hsv2rgb: one pixel back.
CONVEYOR_HD inline void hsv_to_rgb(const std::uint8_t* hsv, std::uint8_t* rgb) noexcept {
  const std::uint8_t h = hsv[0], s = hsv[1], v = hsv[2];
  if (s == 0) {
    rgb[0] = rgb[1] = rgb[2] = v;
    return;
  }
  const double sector = exact::div(exact::mul(static_cast<double>(h), 6.0), 255.0);
  const int i = static_cast<int>(sector);  // floor: the sector is not negative
  const float f = static_cast<float>(exact::sub(sector, static_cast<double>(i)));
  const float fs = static_cast<float>(exact::div(static_cast<double>(s), 255.0));
  const double value = static_cast<double>(v);
  // round(v * (1 - ...)): the products lie in [0, 255]
  const std::uint8_t p = clip8(round_positive(exact::mul(value, exact::sub(1.0, static_cast<double>(fs)))));
  const std::uint8_t q =
      clip8(round_positive(exact::mul(value, exact::sub(1.0, static_cast<double>(exact::mul(fs, f))))));
  const std::uint8_t t = clip8(round_positive(
      exact::mul(value, exact::sub(1.0, exact::mul(static_cast<double>(fs), exact::sub(1.0, static_cast<double>(f)))))));
  switch (i % 6) {
    case 0: rgb[0] = v, rgb[1] = t, rgb[2] = p; break;
    case 1: rgb[0] = q, rgb[1] = v, rgb[2] = p; break;
    case 2: rgb[0] = p, rgb[1] = v, rgb[2] = t; break;
    case 3: rgb[0] = p, rgb[1] = q, rgb[2] = v; break;
    case 4: rgb[0] = t, rgb[1] = p, rgb[2] = v; break;
    default: rgb[0] = v, rgb[1] = p, rgb[2] = q; break;
  }
}

}  // namespace pil_detail

struct PilAdjustHue {
  static constexpr std::int32_t code = 20;
  static constexpr OpKind kind = OpKind::point;
  static constexpr const char* name = "adjust_hue";
  static constexpr bool pillow = true;
  // i[0]: the hue bytes' shift, 0 to 255
  CONVEYOR_HD static void apply(const PixelOp& op, std::uint8_t* rgb) noexcept {
    std::uint8_t hsv[3];
    pil_detail::rgb_to_hsv(rgb, hsv);
    hsv[0] = static_cast<std::uint8_t>(hsv[0] + op.i[0]);
    pil_detail::hsv_to_rgb(hsv, rgb);
  }
};

namespace pil {
/// The record of `adjust_hue(image, hue_factor)` on a PIL image.
/// @throws ConfigError unless the factor is in [-0.5, 0.5], as torchvision requires.
[[nodiscard]] inline PixelOp adjust_hue(double hue_factor, SourceLocation where = SourceLocation::current()) {
  detail::expect(hue_factor >= -0.5 && hue_factor <= 0.5, PilAdjustHue::name, "hue_factor must be in [-0.5, 0.5]",
                 hue_factor, where);
  PixelOp op{.code = PilAdjustHue::code};
  op.i[0] = static_cast<int>(hue_factor * 255.0) & 0xFF;  // np.int32 truncates; .astype(np.uint8) wraps
  return op;
}
}  // namespace pil

}  // namespace ops::pixel
}  // namespace v0
}  // namespace conveyor

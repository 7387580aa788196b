#pragma once
/// @file
/// torchvision.transforms.v2.functional.adjust_hue on uint8 (ColorJitter's hue): to float32 in
/// [0, 1] (`x * float32(1 / 255)`), torchvision's `_rgb_to_hsv`, `h.add_(hue_factor).remainder_(1)`,
/// `_hsv_to_rgb`, and back with `x * float32(255.999)` truncated. Every step is a plain float32 op,
/// each rounded on its own: none of torchvision's products is fused with a sum, so none may be
/// here (checked over all 2^24 colours at several factors).

#include <conveyor/config.hpp>
#include <conveyor/ops/exact_float.hpp>
#include <conveyor/ops/pixel/op.hpp>

#include <cmath>
#include <cstdint>
#include <math.h>

namespace conveyor {
inline namespace v0 {
namespace ops::pixel {

struct AdjustHue {
  static constexpr std::int32_t code = 4;
  static constexpr OpKind kind = OpKind::point;
  static constexpr const char* name = "adjust_hue";

  // f[0]: float32(hue_factor)
  CONVEYOR_HD static void apply(const PixelOp& op, std::uint8_t* rgb) noexcept {
    using namespace exact;
    const float inv255 = static_cast<float>(1.0 / 255.0);
    const float r = mul(to_float(rgb[0]), inv255), g = mul(to_float(rgb[1]), inv255), b = mul(to_float(rgb[2]), inv255);

    // _rgb_to_hsv
    const float maxc = fmaxf(fmaxf(r, g), b), minc = fminf(fminf(r, g), b);
    const bool eqc = maxc == minc;
    const float range = sub(maxc, minc);
    const float s = div(range, eqc ? 1.0f : maxc);
    const float divisor = eqc ? 1.0f : range;
    const float rc = div(sub(maxc, r), divisor), gc = div(sub(maxc, g), divisor), bc = div(sub(maxc, b), divisor);
    // torchvision sums three masked terms (hr + hg) + hb, two of them zero: the sum is the third.
    float h;
    if (maxc == r) h = sub(bc, gc);
    else if (maxc == g) h = sub(add(rc, 2.0f), bc);
    else h = sub(add(gc, 4.0f), rc);
    h = unit_fmod(add(mul(h, static_cast<float>(1.0 / 6.0)), 1.0f));

    // h.add_(hue_factor).remainder_(1.0): torch's remainder is fmod, moved into [0, 1) when negative.
    h = unit_fmod(add(h, op.f[0]));
    if (h < 0.0f) h = add(h, 1.0f);

    // _hsv_to_rgb
    const float h6 = mul(h, 6.0f);
    const float i = floorf(h6);
    const float f = sub(h6, i);
    int sector = static_cast<int>(i) % 6;
    if (sector < 0) sector += 6;
    const float sxf = mul(s, f), one_minus_s = sub(1.0f, s);
    const float v = maxc;
    const float q = clamp_unit(mul(sub(1.0f, sxf), v));
    const float t = clamp_unit(mul(add(sxf, one_minus_s), v));
    const float p = clamp_unit(mul(one_minus_s, v));
    float out[3];
    switch (sector) {
      case 0: out[0] = v, out[1] = t, out[2] = p; break;
      case 1: out[0] = q, out[1] = v, out[2] = p; break;
      case 2: out[0] = p, out[1] = v, out[2] = t; break;
      case 3: out[0] = p, out[1] = q, out[2] = v; break;
      case 4: out[0] = t, out[1] = p, out[2] = v; break;
      default: out[0] = v, out[1] = p, out[2] = q; break;
    }
    const float to255 = static_cast<float>(255.999);  // to_dtype_image's `mul(255 + 1 - 1e-3)`
    for (int c = 0; c < 3; ++c) rgb[c] = truncate_u8(mul(out[c], to255));
  }

 private:
  /// fmod(x, 1): x less its integer part, which is exact.
  CONVEYOR_HD static float unit_fmod(float x) noexcept { return exact::sub(x, truncf(x)); }
  CONVEYOR_HD static float clamp_unit(float x) noexcept { return x < 0.0f ? 0.0f : (x > 1.0f ? 1.0f : x); }
};

/// The record of `adjust_hue(image, hue_factor)`.
/// @throws ConfigError unless -0.5 <= hue_factor <= 0.5, torchvision's range.
[[nodiscard]] inline PixelOp adjust_hue(double hue_factor) {
  detail::expect(hue_factor >= -0.5 && hue_factor <= 0.5, AdjustHue::name, "hue_factor must be in [-0.5, 0.5]",
                 hue_factor);
  PixelOp op{.code = AdjustHue::code};
  op.f[0] = static_cast<float>(hue_factor);
  return op;
}

}  // namespace ops::pixel
}  // namespace v0
}  // namespace conveyor

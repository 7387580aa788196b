#pragma once
/// @file
/// torchvision.transforms.v2.functional.adjust_saturation on uint8 (ColorJitter's saturation, the
/// policies' Color): each pixel blended (`_blend`, blend.hpp) towards floor of its own float32 grey
/// (rgb_to_grayscale.hpp).

#include <conveyor/config.hpp>
#include <conveyor/ops/pixel/blend.hpp>
#include <conveyor/ops/pixel/op.hpp>
#include <conveyor/ops/pixel/rgb_to_grayscale.hpp>

#include <cmath>
#include <cstdint>

namespace conveyor {
inline namespace v0 {
namespace ops::pixel {

struct AdjustSaturation {
  static constexpr std::int32_t code = 3;
  static constexpr OpKind kind = OpKind::point;
  static constexpr const char* name = "adjust_saturation";
  CONVEYOR_HD static void apply(const PixelOp& op, std::uint8_t* rgb) noexcept {
    const float gray = to_float(gray_floor(rgb));
    for (int c = 0; c < 3; ++c) rgb[c] = blend(op, rgb[c], gray);
  }
};

/// The record of `adjust_saturation(image, saturation_factor)`.
/// @throws ConfigError unless the factor is finite and >= 0.
[[nodiscard]] inline PixelOp adjust_saturation(double saturation_factor) {
  detail::expect(std::isfinite(saturation_factor) && saturation_factor >= 0.0, AdjustSaturation::name,
                 "saturation_factor must be finite and >= 0", saturation_factor);
  return blend_record(AdjustSaturation::code, saturation_factor);
}

}  // namespace ops::pixel
}  // namespace v0
}  // namespace conveyor

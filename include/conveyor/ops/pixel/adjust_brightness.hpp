#pragma once
/// @file
/// torchvision.transforms.v2.functional.adjust_brightness on uint8 (ColorJitter's brightness,
/// the policies' Brightness): `image.mul(factor).clamp_(0, 255).to(uint8)`, the product in float32
/// with the factor rounded to float32, then truncated.

#include <conveyor/config.hpp>
#include <conveyor/ops/exact_float.hpp>
#include <conveyor/ops/pixel/op.hpp>

#include <cstdint>

namespace conveyor {
inline namespace v0 {
namespace ops::pixel {

struct AdjustBrightness {
  static constexpr std::int32_t code = 1;
  static constexpr OpKind kind = OpKind::point;
  static constexpr const char* name = "adjust_brightness";
  // f[0]: float32(brightness_factor)
  CONVEYOR_HD static void apply(const PixelOp& op, std::uint8_t* rgb) noexcept {
    for (int c = 0; c < 3; ++c) rgb[c] = saturate_u8(exact::mul(to_float(rgb[c]), op.f[0]));
  }
};

/// The record of `adjust_brightness(image, brightness_factor)`.
/// @throws ConfigError unless the factor is finite and >= 0 (torchvision refuses a negative one).
[[nodiscard]] inline PixelOp adjust_brightness(double brightness_factor) {
  detail::expect(std::isfinite(brightness_factor) && brightness_factor >= 0.0, AdjustBrightness::name,
                 "brightness_factor must be finite and >= 0", brightness_factor);
  PixelOp op{.code = AdjustBrightness::code};
  op.f[0] = static_cast<float>(brightness_factor);
  return op;
}

}  // namespace ops::pixel
}  // namespace v0
}  // namespace conveyor

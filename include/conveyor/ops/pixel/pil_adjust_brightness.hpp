#pragma once
/// @file
/// torchvision's adjust_brightness on a PIL image (ColorJitter's brightness on PIL images):
/// `ImageEnhance.Brightness(image).enhance(factor)`, a blend from a black image.

#include <conveyor/config.hpp>
#include <conveyor/ops/pixel/op.hpp>
#include <conveyor/ops/pixel/pil_blend.hpp>

#include <cstdint>

namespace conveyor {
inline namespace v0 {
namespace ops::pixel {

struct PilAdjustBrightness {
  static constexpr std::int32_t code = 16;
  static constexpr OpKind kind = OpKind::point;
  static constexpr const char* name = "adjust_brightness";
  static constexpr bool pillow = true;
  // f[0]: float32(brightness_factor)
  CONVEYOR_HD static void apply(const PixelOp& op, std::uint8_t* rgb) noexcept {
    for (int c = 0; c < 3; ++c) rgb[c] = pil_blend(0, rgb[c], op.f[0]);
  }
};

namespace pil {
/// The record of `adjust_brightness(image, brightness_factor)` on a PIL image.
[[nodiscard]] inline PixelOp adjust_brightness(double brightness_factor,
                                               SourceLocation where = SourceLocation::current()) {
  return pil_enhance_record(PilAdjustBrightness::code, PilAdjustBrightness::name, brightness_factor, where);
}
}  // namespace pil

}  // namespace ops::pixel
}  // namespace v0
}  // namespace conveyor

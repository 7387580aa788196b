#pragma once
/// @file
/// torchvision's adjust_saturation on a PIL image (ColorJitter's saturation on PIL images):
/// `ImageEnhance.Color(image).enhance(factor)`, a blend from the image's `convert("L")` grey.

#include <conveyor/config.hpp>
#include <conveyor/ops/pixel/op.hpp>
#include <conveyor/ops/pixel/pil_blend.hpp>

#include <cstdint>

namespace conveyor {
inline namespace v0 {
namespace ops::pixel {

struct PilAdjustSaturation {
  static constexpr std::int32_t code = 17;
  static constexpr OpKind kind = OpKind::point;
  static constexpr const char* name = "adjust_saturation";
  static constexpr bool pillow = true;
  // f[0]: float32(saturation_factor)
  CONVEYOR_HD static void apply(const PixelOp& op, std::uint8_t* rgb) noexcept {
    const std::uint8_t grey = pil_luma(rgb);
    for (int c = 0; c < 3; ++c) rgb[c] = pil_blend(grey, rgb[c], op.f[0]);
  }
};

namespace pil {
/// The record of `adjust_saturation(image, saturation_factor)` on a PIL image.
[[nodiscard]] inline PixelOp adjust_saturation(double saturation_factor,
                                               SourceLocation where = SourceLocation::current()) {
  return pil_enhance_record(PilAdjustSaturation::code, PilAdjustSaturation::name, saturation_factor, where);
}
}  // namespace pil

}  // namespace ops::pixel
}  // namespace v0
}  // namespace conveyor

#pragma once
/// @file
/// torchvision's rgb_to_grayscale on a PIL image (Grayscale, RandomGrayscale on PIL images) with
/// three output channels: `image.convert("L")` stacked three times.

#include <conveyor/config.hpp>
#include <conveyor/ops/pixel/op.hpp>
#include <conveyor/ops/pixel/pil_blend.hpp>

#include <cstdint>

namespace conveyor {
inline namespace v0 {
namespace ops::pixel {

struct PilRgbToGrayscale {
  static constexpr std::int32_t code = 21;
  static constexpr OpKind kind = OpKind::point;
  static constexpr const char* name = "rgb_to_grayscale";
  static constexpr bool pillow = true;
  CONVEYOR_HD static void apply(const PixelOp&, std::uint8_t* rgb) noexcept {
    const std::uint8_t l = pil_luma(rgb);
    rgb[0] = rgb[1] = rgb[2] = l;
  }
};

namespace pil {
/// The record of `rgb_to_grayscale(image, num_output_channels=3)` on a PIL image.
[[nodiscard]] inline PixelOp rgb_to_grayscale() { return {.code = PilRgbToGrayscale::code}; }
}  // namespace pil

}  // namespace ops::pixel
}  // namespace v0
}  // namespace conveyor

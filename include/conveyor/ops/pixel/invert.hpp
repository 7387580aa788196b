#pragma once
/// @file
/// torchvision.transforms.v2.functional.invert on uint8 (RandomInvert, the policies' Invert):
/// `bitwise_not`, 255 - x.

#include <conveyor/config.hpp>
#include <conveyor/ops/pixel/op.hpp>

#include <cstdint>

namespace conveyor {
inline namespace v0 {
namespace ops::pixel {

struct Invert {
  static constexpr std::int32_t code = 6;
  static constexpr OpKind kind = OpKind::point;
  static constexpr const char* name = "invert";
  CONVEYOR_HD static void apply(const PixelOp&, std::uint8_t* rgb) noexcept {
    for (int c = 0; c < 3; ++c) rgb[c] = static_cast<std::uint8_t>(255 - rgb[c]);
  }
};

/// The record of `invert(image)`.
[[nodiscard]] inline PixelOp invert() { return {.code = Invert::code}; }

}  // namespace ops::pixel
}  // namespace v0
}  // namespace conveyor

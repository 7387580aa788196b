#pragma once
/// @file
/// torchvision.transforms.v2.functional.rgb_to_grayscale (Grayscale, RandomGrayscale) on uint8,
/// with three output channels: conveyor's images stay RGB. torchvision computes the grey in float32
/// as `r.mul(0.2989).add_(g, alpha=0.587).add_(b, alpha=0.114)`, where each `add_` with `alpha` is
/// a fused multiply-add (one rounding: checked over all 2^24 colours), and truncates it to uint8.

#include <conveyor/config.hpp>
#include <conveyor/ops/exact_float.hpp>
#include <conveyor/ops/pixel/op.hpp>

#include <cstdint>

namespace conveyor {
inline namespace v0 {
namespace ops::pixel {

/// torchvision's float32 grey of one pixel, before any rounding to an integer.
[[nodiscard]] CONVEYOR_HD inline float gray_float(const std::uint8_t* rgb) noexcept {
  const float r = exact::mul(to_float(rgb[0]), static_cast<float>(0.2989));
  return exact::fma(to_float(rgb[2]), static_cast<float>(0.114),
                    exact::fma(to_float(rgb[1]), static_cast<float>(0.587), r));
}

/// floor(grey): what adjust_saturation blends towards and adjust_contrast averages.
[[nodiscard]] CONVEYOR_HD inline std::uint8_t gray_floor(const std::uint8_t* rgb) noexcept {
  return truncate_u8(gray_float(rgb));  // the grey is never negative: truncation is floor
}

struct RgbToGrayscale {
  static constexpr std::int32_t code = 5;
  static constexpr OpKind kind = OpKind::point;
  static constexpr const char* name = "rgb_to_grayscale";
  CONVEYOR_HD static void apply(const PixelOp&, std::uint8_t* rgb) noexcept {
    const std::uint8_t l = gray_floor(rgb);
    rgb[0] = rgb[1] = rgb[2] = l;
  }
};

/// The record of `rgb_to_grayscale(image, num_output_channels=3)`.
[[nodiscard]] inline PixelOp rgb_to_grayscale() { return {.code = RgbToGrayscale::code}; }

}  // namespace ops::pixel
}  // namespace v0
}  // namespace conveyor

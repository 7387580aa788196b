#pragma once
/// @file
/// torchvision.transforms.v2.functional.adjust_contrast on uint8 (ColorJitter's contrast, the
/// policies' Contrast): every value blended (`_blend`, blend.hpp) towards the image's mean of
/// floor(grey) (rgb_to_grayscale.hpp). torchvision averages in float32 (`torch.mean`, a sum
/// divided by the pixel count); conveyor divides the exact integer sum, rounded to float32, which
/// is torch's sum too while that stays below 2^24 (always, up to 65,793 pixels, e.g. 256 x 256).
/// Past that torch's float32 summation may round (differently for different thread counts), and
/// the mean can differ in its last bit.

#include <conveyor/config.hpp>
#include <conveyor/ops/exact_float.hpp>
#include <conveyor/ops/pixel/blend.hpp>
#include <conveyor/ops/pixel/op.hpp>

#include <cmath>
#include <cstdint>

namespace conveyor {
inline namespace v0 {
namespace ops::pixel {

struct AdjustContrast {
  static constexpr std::int32_t code = 2;
  static constexpr OpKind kind = OpKind::statistic;
  static constexpr unsigned statistics = gray_sum;
  static constexpr const char* name = "adjust_contrast";
  /// The image's mean grey, as torchvision's float32.
  [[nodiscard]] CONVEYOR_HD static float mean(const ImageStats& s) noexcept {
    return exact::div(static_cast<float>(s.gray_sum), static_cast<float>(s.pixels));
  }
  CONVEYOR_HD static void table(const PixelOp& op, const ImageStats& s, int, std::uint8_t* lut) noexcept {
    const float m = mean(s);
    for (int v = 0; v < 256; ++v) lut[v] = blend(op, static_cast<std::uint8_t>(v), m);
  }
};

/// The record of `adjust_contrast(image, contrast_factor)`.
/// @throws ConfigError unless the factor is finite and >= 0.
[[nodiscard]] inline PixelOp adjust_contrast(double contrast_factor) {
  detail::expect(std::isfinite(contrast_factor) && contrast_factor >= 0.0, AdjustContrast::name,
                 "contrast_factor must be finite and >= 0", contrast_factor);
  return blend_record(AdjustContrast::code, contrast_factor);
}

}  // namespace ops::pixel
}  // namespace v0
}  // namespace conveyor

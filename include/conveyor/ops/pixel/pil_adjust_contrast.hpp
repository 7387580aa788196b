#pragma once
/// @file
/// torchvision's adjust_contrast on a PIL image (ColorJitter's contrast on PIL images):
/// `ImageEnhance.Contrast(image).enhance(factor)`, a blend from a flat image of the mean grey,
/// `int(ImageStat.Stat(image.convert("L")).mean[0] + 0.5)`: the exact sum of the greys over the
/// pixel count in double (Python's true division), plus 0.5, truncated.

#include <conveyor/config.hpp>
#include <conveyor/ops/exact_float.hpp>
#include <conveyor/ops/pixel/op.hpp>
#include <conveyor/ops/pixel/pil_blend.hpp>

#include <cstdint>

namespace conveyor {
inline namespace v0 {
namespace ops::pixel {

struct PilAdjustContrast {
  static constexpr std::int32_t code = 18;
  static constexpr OpKind kind = OpKind::statistic;
  static constexpr unsigned statistics = luma_sum;
  static constexpr const char* name = "adjust_contrast";
  static constexpr bool pillow = true;
  /// The degenerate image's grey.
  [[nodiscard]] CONVEYOR_HD static std::uint8_t mean(const ImageStats& s) noexcept {
    const double m = exact::div(static_cast<double>(s.luma_sum), static_cast<double>(s.pixels));
    return static_cast<std::uint8_t>(static_cast<int>(exact::add(m, 0.5)));
  }
  // f[0]: float32(contrast_factor)
  CONVEYOR_HD static void table(const PixelOp& op, const ImageStats& s, int, std::uint8_t* lut) noexcept {
    const std::uint8_t m = mean(s);
    for (int v = 0; v < 256; ++v) lut[v] = pil_blend(m, static_cast<std::uint8_t>(v), op.f[0]);
  }
};

namespace pil {
/// The record of `adjust_contrast(image, contrast_factor)` on a PIL image.
[[nodiscard]] inline PixelOp adjust_contrast(double contrast_factor,
                                             SourceLocation where = SourceLocation::current()) {
  return pil_enhance_record(PilAdjustContrast::code, PilAdjustContrast::name, contrast_factor, where);
}
}  // namespace pil

}  // namespace ops::pixel
}  // namespace v0
}  // namespace conveyor

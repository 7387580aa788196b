#pragma once
/// @file
/// torchvision's adjust_sharpness on a PIL image (RandomAdjustSharpness on PIL images):
/// `ImageEnhance.Sharpness(image).enhance(factor)`, a blend from `image.filter(ImageFilter.SMOOTH)`.
/// SMOOTH is libImaging/Filter.c's 3 x 3 filter with the weights 1/13 (5/13 in the middle) as
/// float32, each row's three products summed left to right onto 0.5, rows from the one below to
/// the one above, clipped and truncated; the outermost rows and columns keep their values, and an
/// image under 3 x 3 is left as it is.

#include <conveyor/config.hpp>
#include <conveyor/ops/exact_float.hpp>
#include <conveyor/ops/pixel/op.hpp>
#include <conveyor/ops/pixel/pil_blend.hpp>

#include <cstdint>

namespace conveyor {
inline namespace v0 {
namespace ops::pixel {

struct PilAdjustSharpness {
  static constexpr std::int32_t code = 19;
  static constexpr OpKind kind = OpKind::neighbourhood;
  static constexpr const char* name = "adjust_sharpness";
  static constexpr bool pillow = true;
  struct Prepared {};
  CONVEYOR_HD static void prepare(const PixelOp&, int, int, Prepared&) noexcept {}
  // f[0]: float32(sharpness_factor)
  CONVEYOR_HD static void apply(const PixelOp& op, const Prepared&, const std::uint8_t* src, int width, int height,
                                int x, int y, std::uint8_t* rgb) noexcept {
    const std::uint8_t* centre = src + (std::int64_t{y} * width + x) * 3;
    if (x == 0 || y == 0 || x == width - 1 || y == height - 1) {  // the degenerate image is the image there
      for (int c = 0; c < 3; ++c) rgb[c] = centre[c];
      return;
    }
    constexpr float edge = 1.0f / 13.0f, middle = 5.0f / 13.0f;
    const std::int64_t row = std::int64_t{width} * 3;
    for (int c = 0; c < 3; ++c) {
      float ss = 0.5f;
      for (int dy = 1; dy >= -1; --dy) {  // the row below first
        const std::uint8_t* in = centre + dy * row + c;
        const float k = dy == 0 ? middle : edge;
        const float line = exact::add(exact::add(exact::mul(to_float(in[-3]), edge), exact::mul(to_float(in[0]), k)),
                                      exact::mul(to_float(in[3]), edge));
        ss = exact::add(ss, line);
      }
      const std::uint8_t smooth = ss <= 0.0f ? 0 : ss >= 255.0f ? 255 : static_cast<std::uint8_t>(ss);
      rgb[c] = pil_blend(smooth, centre[c], op.f[0]);
    }
  }
};

namespace pil {
/// The record of `adjust_sharpness(image, sharpness_factor)` on a PIL image.
[[nodiscard]] inline PixelOp adjust_sharpness(double sharpness_factor,
                                              SourceLocation where = SourceLocation::current()) {
  return pil_enhance_record(PilAdjustSharpness::code, PilAdjustSharpness::name, sharpness_factor, where);
}
}  // namespace pil

}  // namespace ops::pixel
}  // namespace v0
}  // namespace conveyor

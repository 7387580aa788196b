#pragma once
/// @file
/// torchvision's autocontrast on a PIL image (RandomAutocontrast on PIL images):
/// `ImageOps.autocontrast(image)`, a table per channel from its least and greatest values lo and
/// hi, in double: `int(v * scale + offset)` with `scale = 255.0 / (hi - lo)` and `offset = -lo *
/// scale`, clamped to [0, 255]; a channel with one value is left as it is.

#include <conveyor/config.hpp>
#include <conveyor/ops/exact_float.hpp>
#include <conveyor/ops/pixel/op.hpp>

#include <cstdint>

namespace conveyor {
inline namespace v0 {
namespace ops::pixel {

struct PilAutocontrast {
  static constexpr std::int32_t code = 22;
  static constexpr OpKind kind = OpKind::statistic;
  static constexpr unsigned statistics = channel_min_max;
  static constexpr const char* name = "autocontrast";
  static constexpr bool pillow = true;
  CONVEYOR_HD static void table(const PixelOp&, const ImageStats& s, int channel, std::uint8_t* lut) noexcept {
    const int lo = s.min[channel], hi = s.max[channel];
    if (hi <= lo) {
      for (int v = 0; v < 256; ++v) lut[v] = static_cast<std::uint8_t>(v);
      return;
    }
    const double scale = exact::div(255.0, static_cast<double>(hi - lo));
    const double offset = exact::mul(static_cast<double>(-lo), scale);
    for (int v = 0; v < 256; ++v) {
      const int x = static_cast<int>(exact::add(exact::mul(static_cast<double>(v), scale), offset));
      lut[v] = static_cast<std::uint8_t>(x < 0 ? 0 : x > 255 ? 255 : x);
    }
  }
};

namespace pil {
/// The record of `autocontrast(image)` on a PIL image.
[[nodiscard]] inline PixelOp autocontrast() { return {.code = PilAutocontrast::code}; }
}  // namespace pil

}  // namespace ops::pixel
}  // namespace v0
}  // namespace conveyor

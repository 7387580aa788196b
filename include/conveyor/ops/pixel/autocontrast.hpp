#pragma once
/// @file
/// torchvision.transforms.v2.functional.autocontrast on uint8 (RandomAutocontrast, the policies'
/// AutoContrast): per channel, `(x - min) / inv_scale` in float32 with `inv_scale = (max - min) *
/// float32(1 / 255)`, clamped and truncated; a channel whose min equals its max is left as it is.

#include <conveyor/config.hpp>
#include <conveyor/ops/exact_float.hpp>
#include <conveyor/ops/pixel/op.hpp>

#include <cstdint>

namespace conveyor {
inline namespace v0 {
namespace ops::pixel {

struct Autocontrast {
  static constexpr std::int32_t code = 9;
  static constexpr OpKind kind = OpKind::statistic;
  static constexpr unsigned statistics = channel_min_max;
  static constexpr const char* name = "autocontrast";
  CONVEYOR_HD static void table(const PixelOp&, const ImageStats& s, int channel, std::uint8_t* lut) noexcept {
    const int lo = s.min[channel], hi = s.max[channel];
    if (lo >= hi) {  // torchvision's min 0 and scale 1: x / 1
      for (int v = 0; v < 256; ++v) lut[v] = static_cast<std::uint8_t>(v);
      return;
    }
    const float inv_scale = exact::mul(static_cast<float>(hi - lo), static_cast<float>(1.0 / 255.0));
    for (int v = 0; v < 256; ++v) lut[v] = saturate_u8(exact::div(static_cast<float>(v - lo), inv_scale));
  }
};

/// The record of `autocontrast(image)`.
[[nodiscard]] inline PixelOp autocontrast() { return {.code = Autocontrast::code}; }

}  // namespace ops::pixel
}  // namespace v0
}  // namespace conveyor

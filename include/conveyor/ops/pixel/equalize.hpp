#pragma once
/// @file
/// torchvision.transforms.v2.functional.equalize on uint8 (RandomEqualize, the policies'
/// Equalize): PIL's lookup table per channel, in integers. With `step = (pixels - count of the
/// channel's largest value) // 255`, value v maps to `(cum[v - 1] + step // 2) // step` clamped to
/// 255 (0 maps to 0); a channel with step 0 is left as it is.

#include <conveyor/config.hpp>
#include <conveyor/ops/pixel/op.hpp>

#include <cstdint>

namespace conveyor {
inline namespace v0 {
namespace ops::pixel {

struct Equalize {
  static constexpr std::int32_t code = 10;
  static constexpr OpKind kind = OpKind::statistic;
  static constexpr unsigned statistics = channel_histogram;
  static constexpr const char* name = "equalize";
  CONVEYOR_HD static void table(const PixelOp&, const ImageStats& s, int channel, std::uint8_t* lut) noexcept {
    const std::uint32_t* hist = s.histogram[channel];
    int last = 255;
    while (last > 0 && hist[last] == 0) --last;
    const std::int64_t step = (s.pixels - hist[last]) / 255;
    if (step == 0) {
      for (int v = 0; v < 256; ++v) lut[v] = static_cast<std::uint8_t>(v);
      return;
    }
    std::int64_t cum = 0;
    lut[0] = 0;
    for (int v = 1; v < 256; ++v) {
      cum += hist[v - 1];
      const std::int64_t e = (cum + step / 2) / step;
      lut[v] = static_cast<std::uint8_t>(e > 255 ? 255 : e);
    }
  }
};

/// The record of `equalize(image)`.
[[nodiscard]] inline PixelOp equalize() { return {.code = Equalize::code}; }

}  // namespace ops::pixel
}  // namespace v0
}  // namespace conveyor

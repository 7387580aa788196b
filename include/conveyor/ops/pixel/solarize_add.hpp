#pragma once
/// @file
/// timm's solarize_add (timm.data.auto_augment, its policies' SolarizeAdd): the table
/// `min(255, i + add) if i < thresh else i` through `Image.point`, every channel alike. Pillow's
/// table entries are integers, so the op is exact on the u8 image; on a PIL image or a tensor alike.

#include <conveyor/config.hpp>
#include <conveyor/ops/pixel/op.hpp>

#include <cstdint>

namespace conveyor {
inline namespace v0 {
namespace ops::pixel {

struct SolarizeAdd {
  static constexpr std::int32_t code = 29;
  static constexpr OpKind kind = OpKind::point;
  static constexpr const char* name = "solarize_add";
  // i[0]: add; i[1]: thresh
  CONVEYOR_HD static void apply(const PixelOp& op, std::uint8_t* rgb) noexcept {
    for (int c = 0; c < 3; ++c)
      if (rgb[c] < op.i[1]) {
        const std::int32_t v = rgb[c] + op.i[0];
        rgb[c] = static_cast<std::uint8_t>(v < 255 ? v : 255);
      }
  }
};

/// The record of timm's `solarize_add(img, add, thresh)`.
/// @throws ConfigError unless 0 <= add <= 255 and 0 <= thresh <= 256 (timm's levels give 0 to 128
/// and 128).
[[nodiscard]] inline PixelOp solarize_add(int add, int thresh = 128) {
  detail::expect(add >= 0 && add <= 255, SolarizeAdd::name, "add must be in [0, 255]", add);
  detail::expect(thresh >= 0 && thresh <= 256, SolarizeAdd::name, "thresh must be in [0, 256]", thresh);
  PixelOp op{.code = SolarizeAdd::code};
  op.i[0] = add;
  op.i[1] = thresh;
  return op;
}

}  // namespace ops::pixel
}  // namespace v0
}  // namespace conveyor

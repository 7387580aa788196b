#pragma once
/// @file
/// torchvision.transforms.v2.functional.posterize on uint8 (RandomPosterize, the policies'
/// Posterize): the `bits` high bits kept, `x & (((1 << bits) - 1) << (8 - bits))`; 8 keeps all.

#include <conveyor/config.hpp>
#include <conveyor/ops/pixel/op.hpp>

#include <cstdint>

namespace conveyor {
inline namespace v0 {
namespace ops::pixel {

struct Posterize {
  static constexpr std::int32_t code = 7;
  static constexpr OpKind kind = OpKind::point;
  static constexpr const char* name = "posterize";
  // i[0]: the mask
  CONVEYOR_HD static void apply(const PixelOp& op, std::uint8_t* rgb) noexcept {
    for (int c = 0; c < 3; ++c) rgb[c] = static_cast<std::uint8_t>(rgb[c] & op.i[0]);
  }
};

/// The record of `posterize(image, bits)`.
/// @throws ConfigError unless 0 <= bits <= 8, torchvision's range.
[[nodiscard]] inline PixelOp posterize(int bits) {
  detail::expect(bits >= 0 && bits <= 8, Posterize::name, "bits must be in [0, 8]", bits);
  PixelOp op{.code = Posterize::code};
  op.i[0] = ((1 << bits) - 1) << (8 - bits);
  return op;
}

}  // namespace ops::pixel
}  // namespace v0
}  // namespace conveyor

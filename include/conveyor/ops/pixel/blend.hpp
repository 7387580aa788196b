#pragma once
/// @file
/// torchvision's `_blend(image1, image2, ratio)` on uint8, which adjust_saturation and
/// adjust_contrast share: `image1.mul(ratio).add_(image2, alpha=1 - ratio)`, i.e. in float32
/// `fma(image2, 1 - ratio, image1 * ratio)` (the product rounded, the `add_` fused), clamped to
/// [0, 255] and truncated. `ratio` and `1 - ratio` are Python floats (double) rounded to float32.

#include <conveyor/config.hpp>
#include <conveyor/ops/exact_float.hpp>
#include <conveyor/ops/pixel/op.hpp>

#include <cstdint>

namespace conveyor {
inline namespace v0 {
namespace ops::pixel {

/// A blending op's record: f[0] = float32(ratio), f[1] = float32(1 - ratio), as torchvision uses them.
[[nodiscard]] inline PixelOp blend_record(std::int32_t code, double ratio) {
  PixelOp op{.code = code};
  op.f[0] = static_cast<float>(ratio);
  op.f[1] = static_cast<float>(1.0 - ratio);
  return op;
}

/// `_blend` of one value `x` towards `other` with a blending record's ratio.
[[nodiscard]] CONVEYOR_HD inline std::uint8_t blend(const PixelOp& op, std::uint8_t x, float other) noexcept {
  return saturate_u8(exact::fma(other, op.f[1], exact::mul(to_float(x), op.f[0])));
}

}  // namespace ops::pixel
}  // namespace v0
}  // namespace conveyor

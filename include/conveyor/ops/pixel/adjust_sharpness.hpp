#pragma once
/// @file
/// torchvision.transforms.v2.functional.adjust_sharpness on uint8 (RandomAdjustSharpness, the
/// policies' Sharpness): inside a one-pixel border, each value's 3 x 3 neighbourhood is filtered
/// in float32 with weights float32(1/13) and float32(5/13) at the centre (conv2d, summed as oneDNN's
/// depthwise kernel does: fused multiply-adds row by row; any order gives the same rounded value,
/// since a sum of k/13 never lies within float error of a half), rounded half to even, then
/// `fma(blurred - x, 1 - factor, x)`, clamped and truncated. The border, and images of at most
/// two rows or columns, stay as they are.

#include <conveyor/config.hpp>
#include <conveyor/ops/exact_float.hpp>
#include <conveyor/ops/pixel/op.hpp>

#include <cmath>
#include <cstdint>

namespace conveyor {
inline namespace v0 {
namespace ops::pixel {

/// The 3 x 3 filter of channel `c` at `centre` (a pixel inside the border; `row`: bytes a row),
/// rounded half to even: the blurred degenerate image's value.
[[nodiscard]] CONVEYOR_HD inline float sharpness_blur(const std::uint8_t* centre, std::int64_t row, int c) noexcept {
  const float edge = static_cast<float>(1.0 / 13.0), middle = static_cast<float>(5.0 / 13.0);
  float acc = 0.0f;
  for (int i = -1; i <= 1; ++i)
    for (int j = -1; j <= 1; ++j)
      acc = exact::fma(to_float(centre[i * row + j * 3 + c]), i == 0 && j == 0 ? middle : edge, acc);
  return rintf(acc);
}

struct AdjustSharpness {
  static constexpr std::int32_t code = 11;
  static constexpr OpKind kind = OpKind::neighbourhood;
  static constexpr const char* name = "adjust_sharpness";
  struct Prepared {};
  CONVEYOR_HD static void prepare(const PixelOp&, int, int, Prepared&) noexcept {}
  // f[0]: float32(1 - sharpness_factor)
  CONVEYOR_HD static void apply(const PixelOp& op, const Prepared&, const std::uint8_t* src, int width, int height,
                                int x, int y, std::uint8_t* rgb) noexcept {
    const std::uint8_t* centre = src + (std::int64_t{y} * width + x) * 3;
    if (x == 0 || y == 0 || x == width - 1 || y == height - 1) {
      for (int c = 0; c < 3; ++c) rgb[c] = centre[c];
      return;
    }
    const std::int64_t row = std::int64_t{width} * 3;
    for (int c = 0; c < 3; ++c) {
      const float x0 = to_float(centre[c]);
      rgb[c] = saturate_u8(exact::fma(exact::sub(sharpness_blur(centre, row, c), x0), op.f[0], x0));
    }
  }
};

/// The record of `adjust_sharpness(image, sharpness_factor)`.
/// @throws ConfigError unless the factor is finite and >= 0.
[[nodiscard]] inline PixelOp adjust_sharpness(double sharpness_factor) {
  detail::expect(std::isfinite(sharpness_factor) && sharpness_factor >= 0.0, AdjustSharpness::name,
                 "sharpness_factor must be finite and >= 0", sharpness_factor);
  PixelOp op{.code = AdjustSharpness::code};
  op.f[0] = static_cast<float>(1.0 - sharpness_factor);
  return op;
}

}  // namespace ops::pixel
}  // namespace v0
}  // namespace conveyor

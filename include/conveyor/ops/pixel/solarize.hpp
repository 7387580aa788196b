#pragma once
/// @file
/// torchvision.transforms.v2.functional.solarize on uint8 (RandomSolarize, the policies'
/// Solarize): `where(image >= threshold, 255 - image, image)`, compared in float32 with the
/// threshold rounded to float32 (so 127.0000001 inverts 127).

#include <conveyor/config.hpp>
#include <conveyor/ops/pixel/op.hpp>

#include <cmath>
#include <cstdint>

namespace conveyor {
inline namespace v0 {
namespace ops::pixel {

struct Solarize {
  static constexpr std::int32_t code = 8;
  static constexpr OpKind kind = OpKind::point;
  static constexpr const char* name = "solarize";
  // f[0]: float32(threshold)
  CONVEYOR_HD static void apply(const PixelOp& op, std::uint8_t* rgb) noexcept {
    for (int c = 0; c < 3; ++c)
      if (to_float(rgb[c]) >= op.f[0]) rgb[c] = static_cast<std::uint8_t>(255 - rgb[c]);
  }
};

/// The record of `solarize(image, threshold)`.
/// @throws ConfigError unless the threshold is a number <= 255 (torchvision refuses more).
[[nodiscard]] inline PixelOp solarize(double threshold) {
  detail::expect(!std::isnan(threshold) && threshold <= 255.0, Solarize::name, "threshold must be <= 255", threshold);
  PixelOp op{.code = Solarize::code};
  op.f[0] = static_cast<float>(threshold);
  return op;
}

namespace pil {
/// The record of `solarize(image, threshold)` on a PIL image: ImageOps.solarize keeps the values
/// `i < threshold`, compared exactly (a Python int against a float), which ceil(threshold) as the
/// op's threshold gives; Pillow takes any threshold (above 255 nothing is inverted).
/// @throws ConfigError for NaN.
[[nodiscard]] inline PixelOp solarize(double threshold, SourceLocation where = SourceLocation::current()) {
  detail::expect(!std::isnan(threshold), Solarize::name, "threshold must be a number", threshold, where);
  PixelOp op{.code = Solarize::code};
  op.f[0] = static_cast<float>(std::fmin(std::ceil(threshold), 256.0));
  return op;
}
}  // namespace pil

}  // namespace ops::pixel
}  // namespace v0
}  // namespace conveyor

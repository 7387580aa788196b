#pragma once
/// @file
/// torchvision.transforms.v2.functional.erase (RandomErasing), after normalisation as recipes
/// place it: the output elements of a rectangle become a value per channel (torchvision's
/// `value`, as float32), or standard normal values (`value="random"`, normal.hpp) indexed as
/// torchvision's `[C, h, w]` tensor is, or one normal value per channel (timm's mode "rand", a
/// `[C, 1, 1]` tensor). The value is stored as the output's dtype stores a
/// normalised value (`store_value`); for u8 output (no normalisation) it is truncated and clamped
/// to [0, 255].

#include <conveyor/config.hpp>
#include <conveyor/ops/pixel/normal.hpp>
#include <conveyor/ops/pixel/op.hpp>

#include <array>
#include <cmath>
#include <cstdint>

namespace conveyor {
inline namespace v0 {
namespace ops::pixel {

struct Erase {
  static constexpr std::int32_t code = 14;
  static constexpr OpKind kind = OpKind::erase;
  static constexpr const char* name = "erase";
  // i[0..4): top, left, height, width; i[4]: 1 for normal values per element, 2 per channel;
  // i[5], i[6]: their key's low and high words; f[0..3): float32 value per channel
  [[nodiscard]] CONVEYOR_HD static bool covers(const PixelOp& op, int x, int y) noexcept {
    return y >= op.i[0] && y < op.i[0] + op.i[2] && x >= op.i[1] && x < op.i[1] + op.i[3];
  }
  [[nodiscard]] CONVEYOR_HD static float value(const PixelOp& op, int channel, int x, int y) noexcept {
    if (op.i[4] == 0) return op.f[channel];
    const std::uint64_t key = static_cast<std::uint32_t>(op.i[5]) | (std::uint64_t{static_cast<std::uint32_t>(op.i[6])} << 32);
    if (op.i[4] == 2) return standard_normal(key, static_cast<std::uint64_t>(channel));
    // covers() holds: every term is non-negative.
    using U = std::uint64_t;
    const U index = (U(unsigned(channel)) * U(unsigned(op.i[2])) + U(unsigned(y - op.i[0]))) * U(unsigned(op.i[3])) +
                    U(unsigned(x - op.i[1]));
    return standard_normal(key, index);
  }
  /// The rectangle lies inside the image.
  static void check(const PixelOp& op, int width, int height) {
    detail::expect(op.i[0] + op.i[2] <= height && op.i[1] + op.i[3] <= width, name,
                   "the rectangle must lie inside the image", op.i[0] + op.i[2] <= height ? op.i[1] + op.i[3] : op.i[0] + op.i[2]);
  }
};

namespace detail {

inline PixelOp erase_rectangle(int top, int left, int height, int width) {
  expect(top >= 0 && left >= 0, Erase::name, "top and left must be >= 0", top >= 0 ? left : top);
  expect(height >= 0 && width >= 0, Erase::name, "height and width must be >= 0", height >= 0 ? width : height);
  PixelOp op{.code = Erase::code};
  op.i[0] = top;
  op.i[1] = left;
  op.i[2] = height;
  op.i[3] = width;
  return op;
}

}  // namespace detail

/// The record of `erase(image, i=top, j=left, h=height, w=width, v)` with `v` one float32 per channel.
/// @throws ConfigError unless the rectangle's numbers are >= 0 and the values finite.
[[nodiscard]] inline PixelOp erase(int top, int left, int height, int width, std::array<double, 3> value) {
  PixelOp op = detail::erase_rectangle(top, left, height, width);
  for (std::size_t c = 0; c < 3; ++c) {
    detail::expect(std::isfinite(value[c]), Erase::name, "values must be finite", value[c]);
    op.f[c] = static_cast<float>(value[c]);
  }
  return op;
}

/// The record of `erase(image, i=top, j=left, h=height, w=width, v)` with `v` standard normal
/// values from the stream `key`: one per element (RandomErasing's `value="random"`, timm's
/// "pixel"), or with `per_channel` one per channel (timm's "rand").
/// @throws ConfigError unless the rectangle's numbers are >= 0.
[[nodiscard]] inline PixelOp erase_random(int top, int left, int height, int width, std::uint64_t key,
                                          bool per_channel = false) {
  PixelOp op = detail::erase_rectangle(top, left, height, width);
  op.i[4] = per_channel ? 2 : 1;
  op.i[5] = static_cast<std::int32_t>(static_cast<std::uint32_t>(key));
  op.i[6] = static_cast<std::int32_t>(static_cast<std::uint32_t>(key >> 32));
  return op;
}

}  // namespace ops::pixel
}  // namespace v0
}  // namespace conveyor

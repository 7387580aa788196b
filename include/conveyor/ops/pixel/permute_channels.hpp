#pragma once
/// @file
/// torchvision.transforms.v2.functional.permute_channels (RandomChannelPermutation): channel k of
/// the result is channel `permutation[k]` of the image.

#include <conveyor/config.hpp>
#include <conveyor/ops/pixel/op.hpp>

#include <array>
#include <cstdint>

namespace conveyor {
inline namespace v0 {
namespace ops::pixel {

struct PermuteChannels {
  static constexpr std::int32_t code = 24;
  static constexpr OpKind kind = OpKind::point;
  static constexpr const char* name = "permute_channels";
  // i[0, 3): the permutation
  CONVEYOR_HD static void apply(const PixelOp& op, std::uint8_t* rgb) noexcept {
    const std::uint8_t in[3] = {rgb[0], rgb[1], rgb[2]};
    for (int c = 0; c < 3; ++c) rgb[c] = in[op.i[c]];
  }
  /// The record holds a permutation of the three channels.
  static void check(const PixelOp& op, int, int) {
    const bool permutation = op.i[0] >= 0 && op.i[0] < 3 && op.i[1] >= 0 && op.i[1] < 3 && op.i[2] >= 0 &&
                             op.i[2] < 3 && op.i[0] != op.i[1] && op.i[0] != op.i[2] && op.i[1] != op.i[2];
    detail::expect(permutation, name, "the record must hold a permutation of 0, 1, 2", op.i[0]);
  }
};

/// The record of `permute_channels(image, permutation)`.
/// @throws ConfigError unless `permutation` orders 0, 1 and 2.
[[nodiscard]] inline PixelOp permute_channels(std::array<int, 3> permutation) {
  PixelOp op{.code = PermuteChannels::code};
  for (std::size_t c = 0; c < 3; ++c) op.i[c] = permutation[c];
  PermuteChannels::check(op, 1, 1);
  return op;
}

}  // namespace ops::pixel
}  // namespace v0
}  // namespace conveyor

#pragma once
/// @file
/// torchvision.transforms.v2.functional.horizontal_flip and vertical_flip on uint8
/// (RandomHorizontalFlip, RandomVerticalFlip): pixel (x, y) of the result is pixel (W - 1 - x, y),
/// or (x, H - 1 - y), of the source; no arithmetic, so exact. A flip that only ops which commute
/// with it precede is folded into the resampler's store instead (transforms/program_draw.hpp);
/// this op keeps a flip in order after one that does not (a neighbourhood op).

#include <conveyor/config.hpp>
#include <conveyor/ops/pixel/op.hpp>

#include <cstdint>

namespace conveyor {
inline namespace v0 {
namespace ops::pixel {

struct Flip {
  static constexpr std::int32_t code = 15;
  static constexpr OpKind kind = OpKind::neighbourhood;
  static constexpr const char* name = "flip";
  // i[0]: 0 mirrors x (horizontal_flip), 1 mirrors y (vertical_flip)
  struct Prepared {};
  CONVEYOR_HD static void prepare(const PixelOp&, int, int, Prepared&) noexcept {}
  CONVEYOR_HD static void apply(const PixelOp& op, const Prepared&, const std::uint8_t* src, int width, int height,
                                int x, int y, std::uint8_t* rgb) noexcept {
    const int sx = op.i[0] == 0 ? width - 1 - x : x, sy = op.i[0] == 0 ? y : height - 1 - y;
    const std::uint8_t* from = src + (std::int64_t{sy} * width + sx) * 3;
    for (int c = 0; c < 3; ++c) rgb[c] = from[c];
  }
};

/// The record of `horizontal_flip(image)`.
[[nodiscard]] inline PixelOp horizontal_flip() { return {.code = Flip::code}; }

/// The record of `vertical_flip(image)`.
[[nodiscard]] inline PixelOp vertical_flip() {
  PixelOp op{.code = Flip::code};
  op.i[0] = 1;
  return op;
}

}  // namespace ops::pixel
}  // namespace v0
}  // namespace conveyor

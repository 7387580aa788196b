#pragma once
/// @file
/// torchvision's perspective on a PIL image (RandomPerspective on PIL images), NEAREST, BILINEAR
/// or BICUBIC: `Image.transform(size, PERSPECTIVE, coefficients, resample, fillcolor=fill)` as
/// libImaging/Geometry.c runs it: Pillow's generic engine, pixel (x, y) from source position
/// `((a x' + b y' + c) / (g x' + h y' + 1), (d x' + e y' + f) / (g x' + h y' + 1))` for
/// (x', y') = (x + 0.5, y + 0.5), in double (perspective_transform), then nearest_filter32 (the
/// position truncated, negatives to -1), bilinear_filter32RGB or bicubic_filter32RGB (pil_affine.hpp);
/// the fill outside. The coefficients
/// are torchvision's float32 ones (perspective.hpp).

#include <conveyor/config.hpp>
#include <conveyor/ops/exact_float.hpp>
#include <conveyor/ops/pixel/affine.hpp>
#include <conveyor/ops/pixel/op.hpp>
#include <conveyor/ops/pixel/perspective.hpp>
#include <conveyor/ops/pixel/pil_affine.hpp>

#include <array>
#include <cstdint>
#include <optional>

namespace conveyor {
inline namespace v0 {
namespace ops::pixel {

struct PilPerspective {
  static constexpr std::int32_t code = 26;
  static constexpr OpKind kind = OpKind::neighbourhood;
  static constexpr const char* name = "perspective";
  static constexpr bool pillow = true;
  // i[0]: Interpolation; i[1], i[2]: the width and height the record was made for; f[0, 3): the
  // fill (integers); d[0, 6): the coefficients a to f; f[3], f[4]: g and h
  struct Prepared {};
  CONVEYOR_HD static void prepare(const PixelOp&, int, int, Prepared&) noexcept {}
  CONVEYOR_HD static void apply(const PixelOp& op, const Prepared&, const std::uint8_t* src, int width, int height,
                                int x, int y, std::uint8_t* rgb) noexcept {
    using namespace exact;
    const double xin = static_cast<double>(x) + 0.5, yin = static_cast<double>(y) + 0.5;
    const double den = add(add(mul(static_cast<double>(op.f[3]), xin), mul(static_cast<double>(op.f[4]), yin)), 1.0);
    const double xx = div(add(add(mul(op.d[0], xin), mul(op.d[1], yin)), op.d[2]), den);
    const double yy = div(add(add(mul(op.d[3], xin), mul(op.d[4], yin)), op.d[5]), den);
    if (op.i[0] == static_cast<std::int32_t>(Interpolation::nearest))
      pil_pixel(src, width, height, pil_coord(xx), pil_coord(yy), op.f, rgb);
    else if (op.i[0] == static_cast<std::int32_t>(Interpolation::bilinear))
      pil_bilinear(src, width, height, xx, yy, op.f, rgb);
    else
      pil_bicubic(src, width, height, xx, yy, op.f, rgb);
  }
  static void check(const PixelOp& op, int width, int height) {
    detail::expect(op.i[1] == width && op.i[2] == height, name, "the record was made for another image size",
                   op.i[1] == width ? op.i[2] : op.i[1]);
    detail::expect_interpolation(op.i[0], name, true);
  }
};

namespace pil {

/// The record of torchvision's `perspective(image, interpolation=interpolation, fill=fill,
/// coefficients=c)` on a PIL image of `width` x `height`.
/// @throws ConfigError as `ops::pixel::perspective` does.
[[nodiscard]] inline PixelOp perspective(const std::array<float, 8>& c, Interpolation interpolation,
                                         const std::optional<std::array<double, 3>>& fill, int width, int height) {
  detail::expect_perspective(c, fill, width, height);
  PixelOp op{.code = PilPerspective::code};
  pil_detail::set_fill(op, fill);
  op.i[0] = static_cast<std::int32_t>(interpolation);
  op.i[1] = width;
  op.i[2] = height;
  for (std::size_t k = 0; k < 6; ++k) op.d[k] = c[k];
  op.f[3] = c[6];
  op.f[4] = c[7];
  return op;
}

}  // namespace pil

}  // namespace ops::pixel
}  // namespace v0
}  // namespace conveyor

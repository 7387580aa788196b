#pragma once
/// @file
/// torchvision's affine and rotate on a PIL image (RandomRotation, RandomAffine on PIL images),
/// same size out, NEAREST, BILINEAR or BICUBIC: `Image.transform(size, AFFINE, matrix, resample,
/// fillcolor=fill)` as libImaging/Geometry.c runs it, pixel (x, y) from source position
/// `matrix * (x + 0.5, y + 0.5, 1)`. NEAREST takes one of three engines, chosen as Pillow chooses:
/// a scale alone (ImagingScaleAffine: positions stepped by repeated double additions), 16.16 fixed
/// point while the corners map inside +-32768 (affine_fixed), else stepped doubles; each truncates a
/// position to a pixel (negatives to -1). BILINEAR is the generic engine: the position in double,
/// the two rows blended in double from the pixel at `position - 0.5` (edges clamped), truncated;
/// BICUBIC likewise over four rows and columns (Pillow's cubic with a = -1), clamped to [0, 255].
/// Outside the image: the fill (torchvision's `fill`, truncated to integers; 0 by default).
///
/// The matrices are the callers': `Image.rotate`'s (the angle modulo 360 in Python's sense, its
/// shortcuts for 0, 180 and, on a square image, 90 and 270 degrees without a centre; otherwise cos
/// and sin rounded to 15 decimals as Python's `round` does) and torchvision v2's (or v1's)
/// `_get_inverse_affine_matrix` about (w / 2, h / 2) for affine.

#include <conveyor/config.hpp>
#include <conveyor/core/error.hpp>
#include <conveyor/ops/exact_float.hpp>
#include <conveyor/ops/pixel/affine.hpp>
#include <conveyor/ops/pixel/op.hpp>

#include <array>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <math.h>

namespace conveyor {
inline namespace v0 {
namespace ops::pixel {

/// Geometry.c's COORD: a position's pixel, negatives to -1 (and, where Pillow's int conversion
/// would overflow or the position is NaN, past any image).
[[nodiscard]] CONVEYOR_HD inline int pil_coord(double v) noexcept {
  return v < 0.0 ? -1 : v < 2147483647.0 ? static_cast<int>(v) : INT_MAX;
}

/// Pixel (sx, sy) of a u8 RGB image, or `fill` outside it (nearest_filter32, then the fill of
/// Image.transform's new image: three integers, as float32 in a record).
CONVEYOR_HD inline void pil_pixel(const std::uint8_t* src, int width, int height, int sx, int sy, const float* fill,
                                  std::uint8_t* rgb) noexcept {
  if (sx < 0 || sx >= width || sy < 0 || sy >= height) {
    for (int c = 0; c < 3; ++c) rgb[c] = static_cast<std::uint8_t>(fill[c]);
    return;
  }
  const std::uint8_t* s = src + (std::int64_t{sy} * width + sx) * 3;
  for (int c = 0; c < 3; ++c) rgb[c] = s[c];
}

/// Geometry.c's bilinear_filter32RGB at source position (xx, yy), `fill` outside [0, size): the
/// two rows blended in double from the pixel at `position - 0.5` (edges clamped), truncated.
CONVEYOR_HD inline void pil_bilinear(const std::uint8_t* src, int width, int height, double xx, double yy,
                                     const float* fill, std::uint8_t* rgb) noexcept {
  using namespace exact;
  if (!(xx >= 0.0 && xx < static_cast<double>(width) && yy >= 0.0 && yy < static_cast<double>(height)))
    return pil_pixel(src, width, height, -1, -1, fill, rgb);
  xx = sub(xx, 0.5);
  yy = sub(yy, 0.5);
  const int x0 = static_cast<int>(::floor(xx)), y0 = static_cast<int>(::floor(yy));
  const double dx = sub(xx, static_cast<double>(x0)), dy = sub(yy, static_cast<double>(y0));
  const auto clip = [](int v, int size) { return v < 0 ? 0 : v < size ? v : size - 1; };
  const std::uint8_t* top = src + std::int64_t{clip(y0, height)} * width * 3;
  const std::uint8_t* below = y0 + 1 >= 0 && y0 + 1 < height ? src + std::int64_t{y0 + 1} * width * 3 : nullptr;
  const int left = clip(x0, width) * 3, right = clip(x0 + 1, width) * 3;
  const auto lerp = [&](const std::uint8_t* row, int c) {
    return add(static_cast<double>(row[left + c]), mul(static_cast<double>(row[right + c] - row[left + c]), dx));
  };
  for (int c = 0; c < 3; ++c) {
    const double v1 = lerp(top, c), v2 = below ? lerp(below, c) : v1;
    rgb[c] = static_cast<std::uint8_t>(add(v1, mul(sub(v2, v1), dy)));
  }
}

/// Geometry.c's BICUBIC(v, v1, v2, v3, v4, d): the cubic through four samples at offset `d`, its
/// coefficients summed in the order written (integers when the samples are a row's bytes).
[[nodiscard]] CONVEYOR_HD inline double pil_cubic(double v1, double v2, double v3, double v4, double d) noexcept {
  using namespace exact;
  const double p2 = add(-v1, v3), p3 = sub(add(mul(2.0, sub(v1, v2)), v3), v4), p4 = add(sub(add(-v1, v2), v3), v4);
  return add(v2, mul(d, add(p2, mul(d, add(p3, mul(d, p4))))));
}

/// Geometry.c's bicubic_filter32RGB at source position (xx, yy), `fill` outside [0, size): four
/// rows from the one above `position - 0.5` (the first clamped to the image, a later one outside it
/// repeating the one before), each a cubic of four clamped columns, then the cubic of the rows,
/// clamped to [0, 255] and truncated.
CONVEYOR_HD inline void pil_bicubic(const std::uint8_t* src, int width, int height, double xx, double yy,
                                    const float* fill, std::uint8_t* rgb) noexcept {
  using namespace exact;
  if (!(xx >= 0.0 && xx < static_cast<double>(width) && yy >= 0.0 && yy < static_cast<double>(height)))
    return pil_pixel(src, width, height, -1, -1, fill, rgb);
  xx = sub(xx, 0.5);
  yy = sub(yy, 0.5);
  const int x = static_cast<int>(::floor(xx)) - 1, y = static_cast<int>(::floor(yy)) - 1;
  const double dx = sub(xx, static_cast<double>(x + 1)), dy = sub(yy, static_cast<double>(y + 1));
  const auto clip = [](int v, int size) { return v < 0 ? 0 : v < size ? v : size - 1; };
  int column[4];
  for (int k = 0; k < 4; ++k) column[k] = clip(x + k, width) * 3;
  for (int c = 0; c < 3; ++c) {
    double v[4];
    for (int k = 0; k < 4; ++k) {
      const int row = y + k;
      if (k > 0 && (row < 0 || row >= height)) {
        v[k] = v[k - 1];
        continue;
      }
      const std::uint8_t* in = src + std::int64_t{clip(row, height)} * width * 3 + c;
      const int a = in[column[0]], b = in[column[1]], e = in[column[2]], f = in[column[3]];
      // the bytes' differences in integers, as the macro computes them on UINT8 samples
      v[k] = add(static_cast<double>(b), mul(dx, add(static_cast<double>(e - a),
                                                     mul(dx, add(static_cast<double>(2 * (a - b) + e - f),
                                                                 mul(dx, static_cast<double>(-a + b - e + f)))))));
    }
    const double out = pil_cubic(v[0], v[1], v[2], v[3], dy);
    rgb[c] = out <= 0.0 ? std::uint8_t{0} : out >= 255.0 ? std::uint8_t{255} : static_cast<std::uint8_t>(out);
  }
}

struct PilAffine {
  static constexpr std::int32_t code = 23;
  static constexpr OpKind kind = OpKind::neighbourhood;
  static constexpr const char* name = "affine";
  static constexpr bool pillow = true;
  /// How the record samples (i[0]).
  enum Engine : std::int32_t { turn = 0, scale = 1, fixed = 2, stepped = 3, bilinear = 4, bicubic = 5 };
  // turn: i[1] quarter turns counter-clockwise (0 copies); scale: d = a0, a2 + a0 / 2, a4, a5 + a4 / 2;
  // fixed: i[1..7) = a0, a1, a2 + (a0 + a1) / 2, a3, a4, a5 + (a3 + a4) / 2 in 16.16; stepped: d = a0,
  // a1, a2 + a1 / 2 + a0 / 2, a3, a4, a5 + a4 / 2 + a3 / 2; bilinear, bicubic: d = the matrix.
  // f[0, 3): the fill; f[3], f[4]: the width and height the record was made for.
  struct Prepared {};
  CONVEYOR_HD static void prepare(const PixelOp&, int, int, Prepared&) noexcept {}

  CONVEYOR_HD static void apply(const PixelOp& op, const Prepared&, const std::uint8_t* src, int width, int height,
                                int x, int y, std::uint8_t* rgb) noexcept {
    using namespace exact;
    const auto take = [&](int sx, int sy) { pil_pixel(src, width, height, sx, sy, op.f, rgb); };
    switch (op.i[0]) {
      case turn: {
        int sx = x, sy = y;
        quarter_turn_source(op.i[1], width, height, sx, sy);
        return take(sx, sy);
      }
      case scale: {  // the positions of row y and column x, stepped as Pillow steps them
        double xo = op.d[1], yo = op.d[3];
        for (unsigned k = 0; k < static_cast<unsigned>(x); ++k) xo = add(xo, op.d[0]);
        for (unsigned k = 0; k < static_cast<unsigned>(y); ++k) yo = add(yo, op.d[2]);
        return take(pil_coord(xo), pil_coord(yo));
      }
      case fixed: {
        const std::int64_t xx = op.i[3] + std::int64_t{y} * op.i[2] + std::int64_t{x} * op.i[1];
        const std::int64_t yy = op.i[6] + std::int64_t{y} * op.i[5] + std::int64_t{x} * op.i[4];
        return take(static_cast<int>(xx >> 16), static_cast<int>(yy >> 16));
      }
      case stepped: {
        double xx = op.d[2], yy = op.d[5];
        for (unsigned k = 0; k < static_cast<unsigned>(y); ++k) xx = add(xx, op.d[1]), yy = add(yy, op.d[4]);
        for (unsigned k = 0; k < static_cast<unsigned>(x); ++k) xx = add(xx, op.d[0]), yy = add(yy, op.d[3]);
        return take(pil_coord(xx), pil_coord(yy));
      }
      default: break;
    }
    // bilinear, bicubic: affine_transform, then bilinear_filter32RGB or bicubic_filter32RGB
    const double xin = static_cast<double>(x) + 0.5, yin = static_cast<double>(y) + 0.5;
    const double xx = add(add(mul(op.d[0], xin), mul(op.d[1], yin)), op.d[2]);
    const double yy = add(add(mul(op.d[3], xin), mul(op.d[4], yin)), op.d[5]);
    if (op.i[0] == bicubic) return pil_bicubic(src, width, height, xx, yy, op.f, rgb);
    pil_bilinear(src, width, height, xx, yy, op.f, rgb);
  }

  /// The record holds the size it was made for; a quarter turn keeps a square image square.
  static void check(const PixelOp& op, int width, int height) {
    detail::expect(op.f[3] == static_cast<float>(width) && op.f[4] == static_cast<float>(height), name,
                   "the record was made for another image size", op.f[3]);
    detail::expect(op.i[0] >= turn && op.i[0] <= bicubic, name, "no such sampling engine", op.i[0]);
    detail::expect(op.i[0] != turn || ((op.i[1] == 0 || op.i[1] == 2) || width == height), name,
                   "a quarter turn needs a square image", op.i[1]);
  }
};

namespace pil_detail {

/// Python's `round(v, 15)`: the double nearest the decimal with 15 places nearest to `v`.
[[nodiscard]] inline double round_15(double v) {
  char text[512];
  std::snprintf(text, sizeof text, "%.15f", v);
  return std::strtod(text, nullptr);
}

/// torchvision's `_parse_fill` for an RGB image: `int(v)` of each value, 0 without one.
inline void set_fill(PixelOp& op, const std::optional<std::array<double, 3>>& fill) {
  detail::expect_fill(fill);
  for (std::size_t c = 0; c < 3; ++c) op.f[c] = fill ? static_cast<float>(std::trunc((*fill)[c])) : 0.0f;
}

inline PixelOp turn_record(int quarter_turns, const std::optional<std::array<double, 3>>& fill, int width,
                           int height) {
  PixelOp op{.code = PilAffine::code};
  op.i[0] = PilAffine::turn;
  op.i[1] = quarter_turns;
  set_fill(op, fill);
  op.f[3] = static_cast<float>(width);
  op.f[4] = static_cast<float>(height);
  return op;
}

}  // namespace pil_detail

namespace pil {

/// The record of `Image.transform((width, height), AFFINE, matrix, resample, fillcolor=fill)` on a
/// `width` x `height` image, with the engine Pillow picks.
/// @throws ConfigError unless the matrix is finite, the fill in [0, 255] and the size positive.
[[nodiscard]] inline PixelOp transform_affine(const std::array<double, 6>& a, Interpolation interpolation,
                                              const std::optional<std::array<double, 3>>& fill, int width,
                                              int height) {
  using namespace exact;
  detail::expect(width > 0 && height > 0, PilAffine::name, "the image size must be positive",
                 width > 0 ? height : width);
  for (double v : a) detail::expect(std::isfinite(v), PilAffine::name, "the matrix must be finite", v);
  PixelOp op = pil_detail::turn_record(0, fill, width, height);
  const auto set = [&](PilAffine::Engine engine, std::array<double, 6> d) {
    op.i[0] = engine;
    for (std::size_t k = 0; k < 6; ++k) op.d[k] = d[k];
  };
  if (interpolation != Interpolation::nearest) {  // ImagingGenericTransform with the filter
    set(interpolation == Interpolation::bilinear ? PilAffine::bilinear : PilAffine::bicubic, a);
  } else if (a[1] == 0.0 && a[3] == 0.0) {
    set(PilAffine::scale, {a[0], add(a[2], mul(a[0], 0.5)), a[4], add(a[5], mul(a[4], 0.5)), 0.0, 0.0});
  } else {
    const auto inside = [&](double x, double y) {
      return std::fabs(add(add(mul(x, a[0]), mul(y, a[1])), a[2])) < 32768.0 &&
             std::fabs(add(add(mul(x, a[3]), mul(y, a[4])), a[5])) < 32768.0;
    };
    const double w = width, h = height;
    if (inside(0, 0) && inside(w, h) && inside(0, h) && inside(w, 0)) {
      const auto fix = [](double v) {  // FIX(v): FLOOR(v * 65536 + 0.5)
        const double f = add(mul(v, 65536.0), 0.5);
        return static_cast<std::int32_t>(f < 0.0 ? std::floor(f) : f);
      };
      op.i[0] = PilAffine::fixed;
      op.i[1] = fix(a[0]), op.i[2] = fix(a[1]), op.i[3] = fix(add(add(a[2], mul(a[0], 0.5)), mul(a[1], 0.5)));
      op.i[4] = fix(a[3]), op.i[5] = fix(a[4]), op.i[6] = fix(add(add(a[5], mul(a[3], 0.5)), mul(a[4], 0.5)));
    } else {
      set(PilAffine::stepped, {a[0], a[1], add(add(a[2], mul(a[1], 0.5)), mul(a[0], 0.5)), a[3], a[4],
                               add(add(a[5], mul(a[4], 0.5)), mul(a[3], 0.5))});
    }
  }
  return op;
}

/// The record of torchvision's `affine(image, ...)` on a PIL image (v2's `_affine_image_pil`, or
/// v1's `F.affine` where `p.v1`): its inverse matrix about `center`, (w / 2, h / 2) by default,
/// through `Image.transform`.
/// @throws ConfigError as `ops::pixel::affine` does.
[[nodiscard]] inline PixelOp affine(const AffineParams& p, int width, int height) {
  detail::expect_affine(p, width, height);
  const std::array<double, 2> center =
      p.center ? *p.center : std::array{exact::mul(static_cast<double>(width), 0.5), exact::mul(static_cast<double>(height), 0.5)};
  const auto matrix = p.v1 ? v1_inverse_affine_matrix : inverse_affine_matrix;
  return transform_affine(matrix(center, p.angle, p.translate, p.scale, p.shear), p.interpolation, p.fill, width,
                          height);
}

/// The record of torchvision's `rotate(image, angle, interpolation, expand=False, center, fill)` on
/// a PIL image: `Image.rotate`.
/// @throws ConfigError unless the angle and centre are finite, the fill in [0, 255] and the size positive.
[[nodiscard]] inline PixelOp rotate(const RotateParams& r, int width, int height) {
  using namespace exact;
  detail::expect(std::isfinite(r.angle), PilAffine::name, "angle must be finite", r.angle);
  const double angle = detail::python_degrees(r.angle);
  if (!r.center) {
    detail::expect(width > 0 && height > 0, PilAffine::name, "the image size must be positive",
                   width > 0 ? height : width);
    if (angle == 0.0) return pil_detail::turn_record(0, r.fill, width, height);
    if (angle == 180.0) return pil_detail::turn_record(2, r.fill, width, height);
    if ((angle == 90.0 || angle == 270.0) && width == height)
      return pil_detail::turn_record(angle == 90.0 ? 1 : 3, r.fill, width, height);
  }
  const double cx = r.center ? (*r.center)[0] : div(static_cast<double>(width), 2.0);
  const double cy = r.center ? (*r.center)[1] : div(static_cast<double>(height), 2.0);
  detail::expect(std::isfinite(cx) && std::isfinite(cy), PilAffine::name, "center must be finite", cx);
  const double radians = -mul(angle, 3.141592653589793 / 180.0);
  const double cos_a = pil_detail::round_15(std::cos(radians)), sin_a = pil_detail::round_15(std::sin(radians));
  std::array<double, 6> m{cos_a, sin_a, 0.0, pil_detail::round_15(-std::sin(radians)), cos_a, 0.0};
  const double px = sub(-cx, 0.0), py = sub(-cy, 0.0);  // -center - post_trans, post_trans (0, 0)
  const double m2 = add(add(mul(m[0], px), mul(m[1], py)), m[2]);
  const double m5 = add(add(mul(m[3], px), mul(m[4], py)), m[5]);
  m[2] = add(m2, cx);
  m[5] = add(m5, cy);
  return transform_affine(m, r.interpolation, r.fill, width, height);
}

}  // namespace pil

}  // namespace ops::pixel
}  // namespace v0
}  // namespace conveyor

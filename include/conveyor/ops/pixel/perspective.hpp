#pragma once
/// @file
/// torchvision.transforms.v2.functional.perspective on uint8 (RandomPerspective), NEAREST or
/// BILINEAR, bit for bit with torch's CPU result, and the coefficients torchvision solves for.
///
/// `_get_perspective_coeffs` solves the 8 x 8 system of the four corner pairs in float64 with
/// LAPACK's gels and rounds the solution to float32. conveyor solves the same system by Gaussian
/// elimination with partial pivoting in long double and rounds alike: both are within a few ulps of
/// double of the exact solution, so the float32 coefficients agree, except where a coefficient is
/// exactly 0 and LAPACK leaves a residue (below 1e-9 in magnitude, in a quarter of random draws),
/// which moves no grid value (it is added to or multiplied by values some 1e9 times larger).
/// Corners with three on a line (or two the same: those of an image 1 pixel wide, or drawn so at
/// distortion_scale near 1 on small images) leave no unique map: conveyor refuses them, found
/// exactly in integers; torch's lstsq fails on most of them and returns its rounding's numbers for
/// the rest, which no one could match.
///
/// Per output pixel, as `_perspective_grid` and `grid_sample(align_corners=False)` compute: with
/// the base grid point (x + 0.5, y + 0.5, 1), the numerators times `theta1^T / (W / 2, H / 2)`
/// and the denominator times (c6, c7, 1), each summed as `(x a + y b) + c` (torch's bmm, as in
/// affine.hpp), the grid value `num / den - 1`, then the source position
/// `fma(g + 1, size / 2, -0.5)` sampled as affine's `grid_sample`.

#include <conveyor/config.hpp>
#include <conveyor/ops/exact_float.hpp>
#include <conveyor/ops/pixel/affine.hpp>
#include <conveyor/ops/pixel/op.hpp>

#include <array>
#include <cmath>
#include <cstdint>
#include <optional>
#include <utility>

namespace conveyor {
inline namespace v0 {
namespace ops::pixel {

/// Four corners (x, y) in torchvision's order: top-left, top-right, bottom-right, bottom-left.
using Corners = std::array<std::array<std::int64_t, 2>, 4>;

/// The corners of a `width` x `height` image, torchvision's `startpoints`.
[[nodiscard]] inline Corners image_corners(int width, int height) {
  return {{{0, 0}, {width - 1, 0}, {width - 1, height - 1}, {0, height - 1}}};
}

/// torchvision's `_get_perspective_coeffs(startpoints, endpoints)`: (a, b, c, d, e, f, g, h) with
/// each end point mapped to its start point by `((a x + b y + c) / (g x + h y + 1), ...)`.
/// @throws ConfigError when the corners leave the system without a unique solution.
[[nodiscard]] inline std::array<float, 8> perspective_coefficients(const Corners& startpoints,
                                                                   const Corners& endpoints) {
  constexpr std::int64_t limit = std::int64_t{1} << 30;  // the cross products below fit in 64 bits
  const auto collinear = [&](const Corners& p) {
    for (const auto& point : p)
      for (const std::int64_t v : point)
        detail::expect(v > -limit && v < limit, "perspective", "corner coordinates must be within +-2^30",
                       static_cast<double>(v));
    for (std::size_t skip = 0; skip < 4; ++skip) {
      std::array<std::array<std::int64_t, 2>, 3> t{};
      for (std::size_t k = 0, n = 0; k < 4; ++k)
        if (k != skip) t[n++] = p[k];
      if ((t[1][0] - t[0][0]) * (t[2][1] - t[0][1]) == (t[1][1] - t[0][1]) * (t[2][0] - t[0][0])) return true;
    }
    return false;
  };
  const char* const degenerate =
      "perspective: the corners leave no unique map (three of them on a line, or two the same, as for an image 1 "
      "pixel wide); torchvision's lstsq fails on most such corners";
  if (collinear(startpoints) || collinear(endpoints)) throw ConfigError(degenerate);
  using Real = long double;
  Real a[8][9] = {};  // the system, its right-hand side in the last column
  for (std::size_t i = 0; i < 4; ++i) {
    const Real ex = static_cast<Real>(endpoints[i][0]), ey = static_cast<Real>(endpoints[i][1]);
    const Real sx = static_cast<Real>(startpoints[i][0]), sy = static_cast<Real>(startpoints[i][1]);
    Real* x = a[2 * i];
    Real* y = a[2 * i + 1];
    x[0] = ex, x[1] = ey, x[2] = 1, x[6] = -sx * ex, x[7] = -sx * ey, x[8] = sx;
    y[3] = ex, y[4] = ey, y[5] = 1, y[6] = -sy * ex, y[7] = -sy * ey, y[8] = sy;
  }
  for (int k = 0; k < 8; ++k) {
    int pivot = k;
    for (int r = k + 1; r < 8; ++r)
      if (std::fabs(a[r][k]) > std::fabs(a[pivot][k])) pivot = r;
    if (a[pivot][k] == 0) throw ConfigError(degenerate);  // the map sends (0, 0) to infinity
    if (pivot != k) std::swap(a[pivot], a[k]);
    for (int r = k + 1; r < 8; ++r) {
      const Real f = a[r][k] / a[k][k];
      for (int c = k; c < 9; ++c) a[r][c] -= f * a[k][c];
    }
  }
  Real solution[8];
  std::array<float, 8> out{};
  for (int k = 7; k >= 0; --k) {
    Real v = a[k][8];
    for (int c = k + 1; c < 8; ++c) v -= a[k][c] * solution[c];
    solution[k] = v / a[k][k];
    out[std::size_t(k)] = static_cast<float>(solution[k]);
  }
  return out;
}

namespace detail {

/// A record's interpolation: nearest (0) or bilinear (1), or bicubic (2) where `pillow`.
inline void expect_interpolation(std::int32_t mode, const char* op, bool pillow = false) {
  expect(mode == static_cast<std::int32_t>(Interpolation::nearest) ||
             mode == static_cast<std::int32_t>(Interpolation::bilinear) ||
             (pillow && mode == static_cast<std::int32_t>(Interpolation::bicubic)),
         op, pillow ? "interpolation is nearest (0), bilinear (1) or bicubic (2)" : "interpolation is nearest (0) or bilinear (1)", mode);
}

/// perspective's checks of its coefficients, fill and image size (both ops').
inline void expect_perspective(const std::array<float, 8>& c, const std::optional<std::array<double, 3>>& fill,
                               int width, int height) {
  expect(width > 0 && height > 0, "perspective", "the image size must be positive", width > 0 ? height : width);
  for (const float v : c) expect(std::isfinite(v), "perspective", "the coefficients must be finite", v);
  expect_fill(fill);
}

}  // namespace detail

struct Perspective {
  static constexpr std::int32_t code = 25;
  static constexpr OpKind kind = OpKind::neighbourhood;
  static constexpr const char* name = "perspective";
  // i[0]: Interpolation; i[1]: 1 with a fill; i[2], i[3]: the width and height the record was made
  // for; f[0, 8): the coefficients; d[0, 3): the float32 fill
  struct Prepared {
    float r[6];          ///< theta1^T / (W / 2, H / 2): r[2k + j] weighs base coordinate k for grid axis j
    float half_size[2];  ///< float32(W) / 2, float32(H) / 2
    float fill[3];
  };
  CONVEYOR_HD static void prepare(const PixelOp& op, int width, int height, Prepared& p) noexcept {
    scale_theta(op.f, width, height, p.r, p.half_size);
    for (int c = 0; c < 3; ++c) p.fill[c] = static_cast<float>(op.d[c]);
  }
  CONVEYOR_HD static void apply(const PixelOp& op, const Prepared& p, const std::uint8_t* src, int width, int height,
                                int x, int y, std::uint8_t* rgb) noexcept {
    using namespace exact;
    const float bx = static_cast<float>(x) + 0.5f, by = static_cast<float>(y) + 0.5f;  // linspace's, exact
    const float den = add(add(mul(bx, op.f[6]), mul(by, op.f[7])), 1.0f);
    const float gx = sub(div(add(add(mul(bx, p.r[0]), mul(by, p.r[2])), p.r[4]), den), 1.0f);
    const float gy = sub(div(add(add(mul(bx, p.r[1]), mul(by, p.r[3])), p.r[5]), den), 1.0f);
    const float ix = fma(add(gx, 1.0f), p.half_size[0], -0.5f), iy = fma(add(gy, 1.0f), p.half_size[1], -0.5f);
    grid_sample(static_cast<Interpolation>(op.i[0]), op.i[1] != 0 ? p.fill : nullptr, ix, iy, src, width, height,
                rgb);
  }
  /// The coefficients are scaled by the image size they were made for.
  static void check(const PixelOp& op, int width, int height) {
    detail::expect(op.i[2] == width && op.i[3] == height, name, "the record was made for another image size",
                   op.i[2] == width ? op.i[3] : op.i[2]);
    detail::expect_interpolation(op.i[0], name);
  }
};

/// The record of `perspective(image, interpolation=interpolation, fill=fill, coefficients=c)` on a
/// `width` x `height` image (`c` from `perspective_coefficients`, as torchvision solves them).
/// @throws ConfigError unless the coefficients are finite, the fill in [0, 255] and the size positive.
[[nodiscard]] inline PixelOp perspective(const std::array<float, 8>& c, Interpolation interpolation,
                                         const std::optional<std::array<double, 3>>& fill, int width, int height) {
  detail::expect_perspective(c, fill, width, height);
  detail::expect_tensor_interpolation(interpolation, Perspective::name);
  PixelOp op{.code = Perspective::code};
  op.i[0] = static_cast<std::int32_t>(interpolation);
  op.i[1] = fill ? 1 : 0;
  op.i[2] = width;
  op.i[3] = height;
  for (std::size_t k = 0; k < 8; ++k) op.f[k] = c[k];
  for (std::size_t k = 0; fill && k < 3; ++k) op.d[k] = static_cast<float>((*fill)[k]);
  return op;
}

}  // namespace ops::pixel
}  // namespace v0
}  // namespace conveyor

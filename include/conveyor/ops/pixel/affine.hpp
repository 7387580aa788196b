#pragma once
/// @file
/// torchvision.transforms.v2.functional.affine and rotate on uint8 (RandomAffine, RandomRotation,
/// the policies' ShearX/Y, TranslateX/Y and Rotate), same size out, NEAREST or BILINEAR, bit for
/// bit with torch's CPU result.
///
/// The host computes torchvision's inverse matrix in double, as Python does (libm's cos, sin and
/// tan; each operation rounded on its own), and rounds it to the float32 `theta` torchvision
/// makes. Per output pixel, as `_affine_grid` and `grid_sample(align_corners=False)` compute: the
/// base grid point (x - (W - 1) / 2, y - (H - 1) / 2, 1) times `theta^T / (W / 2, H / 2)` summed as
/// `(x a + y b) + c` (torch's bmm, no fused operation), then the source position
/// `fma(g + 1, size / 2, -0.5)` (torch's vectorised kernel fuses this one), sampled there as
/// `grid_sample` says (perspective.hpp samples alike).
///
/// rotate's shortcuts are torchvision's: an angle of 0 (mod 360) copies, 180 turns the image over,
/// and 90 or 270 on a square image turn it a quarter (`torch.rot90`), all without resampling.

#include <conveyor/config.hpp>
#include <conveyor/ops/exact_float.hpp>
#include <conveyor/ops/pixel/op.hpp>

#include <array>
#include <cmath>
#include <cstdint>
#include <math.h>
#include <optional>

namespace conveyor {
inline namespace v0 {
namespace ops::pixel {

/// torchvision's InterpolationMode for affine, rotate and perspective. Bicubic is Pillow's (on PIL
/// images; `expect_tensor_interpolation` refuses it for torch's kernels).
enum class Interpolation : std::int32_t { nearest = 0, bilinear = 1, bicubic = 2 };

/// affine's arguments, as torchvision's `F.affine` takes them.
struct AffineParams {
  double angle = 0.0;                          ///< degrees, clockwise
  std::array<double, 2> translate{0.0, 0.0};   ///< pixels
  double scale = 1.0;
  std::array<double, 2> shear{0.0, 0.0};       ///< degrees
  Interpolation interpolation = Interpolation::nearest;
  std::optional<std::array<double, 3>> fill{};   ///< per channel; none: zeros (torchvision's fill=None)
  std::optional<std::array<double, 2>> center{}; ///< pixels; none: the image's centre
  /// torchvision v1's `F.affine` (torchvision.transforms.functional): its matrix (`v1_inverse_affine_matrix`),
  /// and on a tensor its bilinear fill blend (`grid_sample`)
  bool v1 = false;
};

/// rotate's arguments, as torchvision's `F.rotate` takes them (expand=False).
struct RotateParams {
  double angle = 0.0;  ///< degrees, counter-clockwise
  Interpolation interpolation = Interpolation::nearest;
  std::optional<std::array<double, 3>> fill{};
  std::optional<std::array<double, 2>> center{};
  /// torchvision v1's `F.rotate` on a tensor: v1's matrix of the angle as given, no shortcuts, v1's fill blend
  bool v1 = false;
};

/// torchvision's `_get_inverse_affine_matrix`, in Python's double arithmetic.
[[nodiscard]] inline std::array<double, 6> inverse_affine_matrix(std::array<double, 2> center, double angle,
                                                                 std::array<double, 2> translate, double scale,
                                                                 std::array<double, 2> shear) {
  using namespace exact;
  constexpr double degrees = 3.141592653589793 / 180.0;  // math.radians' factor
  const double rot = mul(angle, degrees), sx = mul(shear[0], degrees), sy = mul(shear[1], degrees);
  const double cos_sy = std::cos(sy), tan_sx = std::tan(sx);
  const double rot_minus_sy = sub(rot, sy);
  const double cx_plus_tx = add(center[0], translate[0]), cy_plus_ty = add(center[1], translate[1]);
  const double a = div(std::cos(rot_minus_sy), cos_sy);
  const double b = -add(mul(a, tan_sx), std::sin(rot));
  const double c = div(std::sin(rot_minus_sy), cos_sy);
  const double d = sub(std::cos(rot), mul(c, tan_sx));
  std::array<double, 6> m{div(d, scale), div(-b, scale), 0.0, div(-c, scale), div(a, scale), 0.0};
  m[2] = add(m[2], sub(sub(center[0], mul(m[0], cx_plus_tx)), mul(m[1], cy_plus_ty)));
  m[5] = add(m[5], sub(sub(center[1], mul(m[3], cx_plus_tx)), mul(m[4], cy_plus_ty)));
  return m;
}

/// torchvision v1's `_get_inverse_affine_matrix` (transforms/functional.py): v2's numbers, each
/// rounded as v1's expressions round them (b and d from `cos(rot - sy) * tan(sx) / cos(sy)`, the
/// matrix divided by the scale after it is made, the translation added as `m0 (-cx - tx) + ...`).
[[nodiscard]] inline std::array<double, 6> v1_inverse_affine_matrix(std::array<double, 2> center, double angle,
                                                                    std::array<double, 2> translate, double scale,
                                                                    std::array<double, 2> shear) {
  using namespace exact;
  constexpr double degrees = 3.141592653589793 / 180.0;
  const double rot = mul(angle, degrees), sx = mul(shear[0], degrees), sy = mul(shear[1], degrees);
  const double cx = center[0], cy = center[1], tx = translate[0], ty = translate[1];
  const double a = div(std::cos(sub(rot, sy)), std::cos(sy));
  const double b = sub(div(mul(-std::cos(sub(rot, sy)), std::tan(sx)), std::cos(sy)), std::sin(rot));
  const double c = div(std::sin(sub(rot, sy)), std::cos(sy));
  const double d = add(div(mul(-std::sin(sub(rot, sy)), std::tan(sx)), std::cos(sy)), std::cos(rot));
  std::array<double, 6> m{div(d, scale), div(-b, scale), 0.0, div(-c, scale), div(a, scale), 0.0};
  m[2] = add(m[2], add(mul(m[0], sub(-cx, tx)), mul(m[1], sub(-cy, ty))));
  m[5] = add(m[5], add(mul(m[3], sub(-cx, tx)), mul(m[4], sub(-cy, ty))));
  m[2] = add(m[2], cx);
  m[5] = add(m[5], cy);
  return m;
}

/// The source pixel of output (x, y) after `turns` quarter turns counter-clockwise of a `width` x
/// `height` image (torch.rot90's and Pillow's transposes; 0 or 4 copies).
CONVEYOR_HD inline void quarter_turn_source(int turns, int width, int height, int& x, int& y) noexcept {
  const int ox = x, oy = y;
  switch (turns) {
    case 1: x = width - 1 - oy, y = ox; break;
    case 2: x = width - 1 - ox, y = height - 1 - oy; break;
    case 3: x = oy, y = height - 1 - ox; break;
    default: break;
  }
}

/// `grid_sample(align_corners=False)` of a u8 image at source position (ix, iy), then torchvision's
/// `_apply_grid_transform` to uint8: NEAREST rounds the position half to even; BILINEAR weighs the
/// four neighbours with `(1 - dy)(1 - dx)` etc. and sums them as a chain of fused multiply-adds,
/// north-west first. Outside the image: zeros without a fill; with one (`fill`, three float32
/// values), torchvision also samples a mask of ones and gives `(v - fill) * mask + fill` (BILINEAR;
/// v1's `v * mask + (1 - mask) * fill` where `v1_blend`) or the fill where the mask is below a half
/// (NEAREST). Rounded half to even.
CONVEYOR_HD inline void grid_sample(Interpolation interpolation, const float* fill, float ix, float iy,
                                    const std::uint8_t* src, int width, int height, std::uint8_t* rgb,
                                    bool v1_blend = false) noexcept {
  using namespace exact;
  if (interpolation == Interpolation::nearest) {
    const float nx = rintf(ix), ny = rintf(iy);
    if (nx >= 0.0f && nx <= static_cast<float>(width - 1) && ny >= 0.0f && ny <= static_cast<float>(height - 1)) {
      const std::uint8_t* s = src + (std::int64_t{static_cast<int>(ny)} * width + static_cast<int>(nx)) * 3;
      for (int c = 0; c < 3; ++c) rgb[c] = s[c];
    } else {
      for (int c = 0; c < 3; ++c) rgb[c] = fill != nullptr ? round_u8(fill[c]) : 0;
    }
    return;
  }
  const float west = floorf(ix), north = floorf(iy);
  const float dx = sub(ix, west), dy = sub(iy, north);
  const float east_w = sub(1.0f, dx), south_w = sub(1.0f, dy);
  const float weights[4] = {mul(south_w, east_w), mul(south_w, dx), mul(dy, east_w), mul(dy, dx)};  // nw ne sw se
  const std::uint8_t* corner[4] = {};
  for (int k = 0; k < 4; ++k) {
    const float cx = west + static_cast<float>(k & 1), cy = north + static_cast<float>(k >> 1);
    if (cx >= 0.0f && cx <= static_cast<float>(width - 1) && cy >= 0.0f && cy <= static_cast<float>(height - 1))
      corner[k] = src + (std::int64_t{static_cast<int>(cy)} * width + static_cast<int>(cx)) * 3;
  }
  const auto sample = [&](int c) {  // c = 3: the mask of ones
    float v[4];
    for (int k = 0; k < 4; ++k) v[k] = corner[k] == nullptr ? 0.0f : (c == 3 ? 1.0f : to_float(corner[k][c]));
    return fma(v[3], weights[3], fma(v[2], weights[2], fma(v[1], weights[1], mul(v[0], weights[0]))));
  };
  const float mask = fill != nullptr ? sample(3) : 1.0f;
  for (int c = 0; c < 3; ++c) {
    const float v = sample(c);
    if (fill == nullptr) rgb[c] = round_u8(v);
    else if (v1_blend) rgb[c] = round_u8(add(mul(v, mask), mul(sub(1.0f, mask), fill[c])));
    else rgb[c] = round_u8(add(mul(sub(v, fill[c]), mask), fill[c]));
  }
}

/// torchvision's `theta^T / (W / 2, H / 2)` of a 2 x 3 float32 `theta` (row-major), as its grids
/// make it: r[2k + j] weighs base coordinate k for grid axis j; and float32(W) / 2, float32(H) / 2.
CONVEYOR_HD inline void scale_theta(const float* theta, int width, int height, float r[6], float half_size[2]) noexcept {
  const float half_w = exact::mul(0.5f, static_cast<float>(width)), half_h = exact::mul(0.5f, static_cast<float>(height));
  for (int k = 0; k < 3; ++k) {
    r[2 * k] = exact::div(theta[k], half_w);
    r[2 * k + 1] = exact::div(theta[3 + k], half_h);
  }
  half_size[0] = exact::div(static_cast<float>(width), 2.0f);
  half_size[1] = exact::div(static_cast<float>(height), 2.0f);
}

struct Affine {
  static constexpr std::int32_t code = 13;
  static constexpr OpKind kind = OpKind::neighbourhood;
  static constexpr const char* name = "affine";
  // i[0]: Interpolation; i[1]: 1 with a fill (2: blended as v1 blends it); i[2]: quarter turns of a
  // shortcut, -1 to resample;
  // i[3], i[4]: the width and height theta was made for; f[0, 6): theta; f[6, 9): float32 fill
  struct Prepared {
    float r[6];          ///< theta^T / (W / 2, H / 2): r[2k + j] weighs base coordinate k for grid axis j
    float half_size[2];  ///< float32(W) / 2, float32(H) / 2
  };
  CONVEYOR_HD static void prepare(const PixelOp& op, int width, int height, Prepared& p) noexcept {
    scale_theta(op.f, width, height, p.r, p.half_size);
  }
  CONVEYOR_HD static void apply(const PixelOp& op, const Prepared& p, const std::uint8_t* src, int width, int height,
                                int x, int y, std::uint8_t* rgb) noexcept {
    using namespace exact;
    if (op.i[2] >= 0) {  // rotate's shortcuts
      int sx = x, sy = y;
      quarter_turn_source(op.i[2], width, height, sx, sy);
      const std::uint8_t* s = src + (std::int64_t{sy} * width + sx) * 3;
      for (int c = 0; c < 3; ++c) rgb[c] = s[c];
      return;
    }
    // the base grid's linspace values are half-integers: exact
    const float bx = static_cast<float>(2 * x + 1 - width) * 0.5f, by = static_cast<float>(2 * y + 1 - height) * 0.5f;
    const float gx = add(add(mul(bx, p.r[0]), mul(by, p.r[2])), p.r[4]);
    const float gy = add(add(mul(bx, p.r[1]), mul(by, p.r[3])), p.r[5]);
    const float ix = fma(add(gx, 1.0f), p.half_size[0], -0.5f), iy = fma(add(gy, 1.0f), p.half_size[1], -0.5f);
    grid_sample(static_cast<Interpolation>(op.i[0]), op.i[1] != 0 ? op.f + 6 : nullptr, ix, iy, src, width, height,
                rgb, op.i[1] == 2);
  }
  /// theta holds the image size it was made for; a quarter turn keeps a square image square.
  static void check(const PixelOp& op, int width, int height) {
    detail::expect(op.i[3] == width && op.i[4] == height, name, "the record was made for another image size",
                   op.i[3] == width ? op.i[4] : op.i[3]);
    detail::expect(op.i[0] == 0 || op.i[0] == 1, name, "interpolation is nearest (0) or bilinear (1)", op.i[0]);
    detail::expect(op.i[1] >= 0 && op.i[1] <= 2, name, "the fill is none (0), v2's (1) or v1's (2)", op.i[1]);
    detail::expect(op.i[2] >= -1 && op.i[2] <= 3, name, "a shortcut turns 0 to 3 quarters (-1: none)", op.i[2]);
    detail::expect((op.i[2] != 1 && op.i[2] != 3) || width == height, name, "a quarter turn needs a square image",
                   op.i[2]);
  }
};

namespace detail {

inline void expect_fill(const std::optional<std::array<double, 3>>& fill) {
  if (fill)
    for (double v : *fill) expect(v >= 0.0 && v <= 255.0, Affine::name, "fill values must be in [0, 255]", v);
}

/// The modes torch's kernels (grid_sample) run here: nearest and bilinear.
inline void expect_tensor_interpolation(Interpolation interpolation, const char* op,
                                        SourceLocation where = SourceLocation::current()) {
  expect(interpolation != Interpolation::bicubic, op,
         "bicubic runs on PIL images only (Pillow's); on a tensor, interpolation is nearest (0) or bilinear (1)",
         static_cast<std::int32_t>(interpolation), where);
}

inline PixelOp affine_record(const std::array<double, 6>& matrix, Interpolation interpolation,
                             const std::optional<std::array<double, 3>>& fill, int quarter_turns, int width,
                             int height, bool v1_fill = false) {
  expect_tensor_interpolation(interpolation, Affine::name);
  PixelOp op{.code = Affine::code};
  op.i[0] = static_cast<std::int32_t>(interpolation);
  op.i[1] = fill ? (v1_fill ? 2 : 1) : 0;
  op.i[2] = quarter_turns;
  op.i[3] = width;
  op.i[4] = height;
  for (std::size_t k = 0; k < 6; ++k) op.f[k] = static_cast<float>(matrix[k]);
  for (std::size_t c = 0; fill && c < 3; ++c) op.f[6 + c] = static_cast<float>((*fill)[c]);
  return op;
}

/// Python's `angle % 360`: in [0, 360), -1e-20 becoming 360 - 1e-20 rounded, 360 (resampled, as in Python).
[[nodiscard]] inline double python_degrees(double angle) {
  const double a = std::fmod(angle, 360.0);
  return a < 0.0 ? exact::add(a, 360.0) : a;
}

/// affine's checks of its arguments and image size.
inline void expect_affine(const AffineParams& a, int width, int height, SourceLocation where = SourceLocation::current()) {
  expect(width > 0 && height > 0, Affine::name, "the image size must be positive", width > 0 ? height : width, where);
  for (double v : {a.angle, a.translate[0], a.translate[1], a.shear[0], a.shear[1]})
    expect(std::isfinite(v), Affine::name, "angle, translate and shear must be finite", v, where);
  expect(std::isfinite(a.scale) && a.scale > 0.0, Affine::name, "scale must be finite and > 0", a.scale, where);
  expect_fill(a.fill);
}

/// torchvision's centre argument as `_get_inverse_affine_matrix` takes it: relative to the middle.
inline std::array<double, 2> relative_center(const std::optional<std::array<double, 2>>& center, int width,
                                             int height) {
  if (!center) return {0.0, 0.0};
  return {exact::sub((*center)[0], exact::mul(static_cast<double>(width), 0.5)),
          exact::sub((*center)[1], exact::mul(static_cast<double>(height), 0.5))};
}

}  // namespace detail

/// The record of `affine(image, angle, translate, scale, shear, interpolation, fill, center)` on a
/// `width` x `height` image.
/// @throws ConfigError unless the numbers are finite, the scale > 0, the fill in [0, 255] and the size positive.
[[nodiscard]] inline PixelOp affine(const AffineParams& a, int width, int height) {
  detail::expect_affine(a, width, height);
  const auto matrix = a.v1 ? v1_inverse_affine_matrix : inverse_affine_matrix;
  const auto m = matrix(detail::relative_center(a.center, width, height), a.angle, a.translate, a.scale, a.shear);
  return detail::affine_record(m, a.interpolation, a.fill, -1, width, height, a.v1);
}

/// The record of `rotate(image, angle, interpolation, expand=False, center, fill)` on a
/// `width` x `height` image, with torchvision's shortcuts.
/// @throws ConfigError unless the angle is finite, the fill in [0, 255] and the size positive.
[[nodiscard]] inline PixelOp rotate(const RotateParams& r, int width, int height) {
  detail::expect(width > 0 && height > 0, Affine::name, "the image size must be positive", width > 0 ? height : width);
  detail::expect(std::isfinite(r.angle), "rotate", "angle must be finite", r.angle);
  detail::expect_fill(r.fill);
  if (r.v1)
    return detail::affine_record(v1_inverse_affine_matrix(detail::relative_center(r.center, width, height), -r.angle,
                                                          {0.0, 0.0}, 1.0, {0.0, 0.0}),
                                 r.interpolation, r.fill, -1, width, height, true);
  const double angle = detail::python_degrees(r.angle);
  if (!r.center) {
    if (angle == 0.0) return detail::affine_record({}, r.interpolation, r.fill, 0, width, height);
    if (angle == 180.0) return detail::affine_record({}, r.interpolation, r.fill, 2, width, height);
    if (width == height && (angle == 90.0 || angle == 270.0))
      return detail::affine_record({}, r.interpolation, r.fill, angle == 90.0 ? 1 : 3, width, height);
  }
  const auto m = inverse_affine_matrix(detail::relative_center(r.center, width, height), -angle, {0.0, 0.0}, 1.0,
                                       {0.0, 0.0});
  return detail::affine_record(m, r.interpolation, r.fill, -1, width, height);
}

}  // namespace ops::pixel
}  // namespace v0
}  // namespace conveyor

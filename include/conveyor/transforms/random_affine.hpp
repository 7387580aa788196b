#pragma once
/// @file
/// torchvision.transforms.v2.RandomAffine(degrees, translate=None, scale=None, shear=None,
/// interpolation=NEAREST, fill=0, center=None): `affine(angle, translate, scale, shear, ...)` on
/// every sample, drawn as v2's `make_params` (_geometry.py:743-769), each a float32
/// `torch.empty(1).uniform_(lo, hi)` in this order: the angle from `degrees`; with `translate`,
/// `tx = int(round(uniform(-max_dx, max_dx)))` for `max_dx = translate[0] * width` (Python's round,
/// half to even), then ty alike from the height; with `scale`, the scale; with `shear`, shear_x from
/// its first pair and, given four values, shear_y from the second. NEAREST and BILINEAR only.
/// `v1`: torchvision v1's RandomAffine (torchvision.transforms; on PIL images only), which draws
/// alike (`get_params`, transforms.py) but makes its matrix as v1's `F.affine` does
/// (`ops::pixel::v1_inverse_affine_matrix`).

#include <conveyor/config.hpp>
#include <conveyor/ops/augment.hpp>
#include <conveyor/ops/pixel/affine.hpp>
#include <conveyor/ops/pixel/pil_affine.hpp>
#include <conveyor/transforms/arguments.hpp>
#include <conveyor/transforms/fields.hpp>
#include <conveyor/transforms/program_draw.hpp>

#include <array>
#include <cmath>
#include <cstdint>
#include <optional>
#include <utility>

namespace conveyor {
inline namespace v0 {

struct RandomAffine {
  static constexpr const char* name = "RandomAffine";
  static constexpr const char* summary =
      "An affine map drawn as torchvision draws it: angle in `degrees`, shifts up to `translate` (fractions of the "
      "width and height), a factor in `scale`, shears in `shear` (degrees).";
  static constexpr FieldName fields[] = {
      required("degrees"), "translate", "scale", "shear", "interpolation", "fill", "center", "v1"};
  std::optional<Numbers> degrees{};                  ///< required: d for [-d, d], or (min, max); 0 for none
  std::optional<std::array<double, 2>> translate{};  ///< the most shift, as fractions of the width and height
  std::optional<std::array<double, 2>> scale{};      ///< (min, max)
  std::optional<Numbers> shear{};  ///< s for x in [-s, s], (min, max) for x, or four values for x then y; degrees
  ops::pixel::Interpolation interpolation = ops::pixel::Interpolation::nearest;
  Fill fill = 0.0;
  std::optional<std::array<double, 2>> center{};  ///< pixels from the top left; none: the image's centre
  bool v1 = false;  ///< torchvision v1's class (its matrix), on PIL images

  /// shear's x and y ranges ({0, 0} for y unless four values are given).
  [[nodiscard]] std::array<std::array<double, 2>, 2> shear_ranges() const {
    if (!shear) return {};
    if (shear->size() == 4) {
      const std::array<double, 2> x = detail::angle_range(name, "shear", Numbers{(*shear)[0], (*shear)[1]});
      return {x, detail::angle_range(name, "shear", Numbers{(*shear)[2], (*shear)[3]})};
    }
    return {detail::angle_range(name, "shear", *shear), std::array<double, 2>{}};
  }
  void validate() const {
    detail::expect_transform(degrees.has_value(), name, "degrees is required (a number, or (min, max); 0 for none)");
    (void)detail::angle_range(name, "degrees", *degrees);
    if (translate)
      for (const double t : *translate)
        detail::expect_transform(t >= 0.0 && t <= 1.0, name, "translate values should be between 0 and 1, got " +
                                                                  detail::shown(t));
    if (scale) {
      for (const double s : *scale)
        detail::expect_transform(static_cast<float>(s) > 0.0f && std::isfinite(static_cast<float>(s)), name,
                                 "scale values should be positive and finite in float32, got " + detail::shown(s));
      detail::expect_transform((*scale)[0] <= (*scale)[1], name,
                               "scale must be (min, max) with min <= max, got (" + detail::shown((*scale)[0]) + ", " +
                                   detail::shown((*scale)[1]) + ")");
    }
    (void)shear_ranges();
    detail::expect_finite_pair(name, "center", center);
    detail::expect_fill(name, fill);
  }
  void validate_pil() const {}  // ops::pixel::pil::affine: Image.transform with v2's (or v1's) matrix
  void validate_tensor() const { detail::expect_v1_on_pil(name, v1); }
  [[nodiscard]] int max_ops() const { return 1; }
  void draw(ProgramDraw& d, int position) const {
    CounterRng rng = d.stream(position);
    const auto range = detail::angle_range(name, "degrees", *degrees);
    ops::pixel::AffineParams a{.interpolation = interpolation, .fill = fill.values(), .center = center, .v1 = v1};
    a.angle = uniform_float32(rng, range[0], range[1]);
    std::int64_t tx = 0, ty = 0;
    if (translate) {
      const double max_dx = (*translate)[0] * d.width(), max_dy = (*translate)[1] * d.height();
      tx = ops::round_half_even(uniform_float32(rng, -max_dx, max_dx));
      ty = ops::round_half_even(uniform_float32(rng, -max_dy, max_dy));
    }
    a.translate = {static_cast<double>(tx), static_cast<double>(ty)};
    if (scale) a.scale = uniform_float32(rng, (*scale)[0], (*scale)[1]);
    if (shear) {
      const auto s = shear_ranges();
      a.shear[0] = uniform_float32(rng, s[0][0], s[0][1]);
      if (shear->size() == 4) a.shear[1] = uniform_float32(rng, s[1][0], s[1][1]);
    }
    d.add(d.pil(position) ? ops::pixel::pil::affine(a, d.width(), d.height())
                          : ops::pixel::affine(a, d.width(), d.height()));
    if (d.describing()) {
      DrawnCall call{"affine",
                     {DrawnArg::number("angle", a.angle), DrawnArg::integers("translate", {tx, ty}),
                      DrawnArg::number("scale", a.scale), DrawnArg::list("shear", {a.shear[0], a.shear[1]})}};
      detail::describe_sampling(call, interpolation, fill, center);
      d.describe(std::move(call));
    }
  }
};

}  // namespace v0
}  // namespace conveyor

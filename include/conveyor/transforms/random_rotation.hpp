#pragma once
/// @file
/// torchvision.transforms.v2.RandomRotation(degrees, interpolation=NEAREST, expand=False,
/// center=None, fill=0): `rotate(angle, interpolation, expand, center, fill)` on every sample,
/// `angle = torch.empty(1).uniform_(degrees[0], degrees[1])` (_geometry.py:641-643), a float32.
/// `expand=True` is refused: it changes the image's size, and a sample's output size is fixed.
/// NEAREST and BILINEAR only (what torchvision's tensor path takes, bar the PIL-only modes).

#include <conveyor/config.hpp>
#include <conveyor/ops/pixel/affine.hpp>
#include <conveyor/ops/pixel/pil_affine.hpp>
#include <conveyor/transforms/arguments.hpp>
#include <conveyor/transforms/fields.hpp>
#include <conveyor/transforms/program_draw.hpp>

#include <array>
#include <optional>
#include <utility>

namespace conveyor {
inline namespace v0 {

struct RandomRotation {
  static constexpr const char* name = "RandomRotation";
  static constexpr const char* summary =
      "A rotation by an angle uniform in `degrees` (d: [-d, d]; counter-clockwise) about `center` (the image's by "
      "default); `expand=True` is refused (a batch's size is fixed).";
  static constexpr FieldName fields[] = {required("degrees"), "interpolation", "expand", "center", "fill"};
  std::optional<Numbers> degrees{};  ///< required: d for [-d, d], or (min, max); counter-clockwise
  ops::pixel::Interpolation interpolation = ops::pixel::Interpolation::nearest;
  bool expand = false;
  std::optional<std::array<double, 2>> center{};  ///< pixels from the top left; none: the image's centre
  Fill fill = 0.0;

  void validate() const {
    detail::expect_transform(degrees.has_value(), name, "degrees is required (a number, or (min, max))");
    (void)detail::angle_range(name, "degrees", *degrees);
    detail::expect_transform(!expand, name,
                             "expand=True is not supported: it changes the image's size, and a sample's output "
                             "size is fixed (rotate without expanding, then crop or resize)");
    detail::expect_finite_pair(name, "center", center);
    detail::expect_fill(name, fill);
  }
  void validate_pil() const {}  // ops::pixel::pil::rotate: Image.rotate
  [[nodiscard]] int max_ops() const { return 1; }
  void draw(ProgramDraw& d, int position) const {
    CounterRng rng = d.stream(position);
    const auto range = detail::angle_range(name, "degrees", *degrees);
    const double angle = uniform_float32(rng, range[0], range[1]);
    const ops::pixel::RotateParams r{.angle = angle, .interpolation = interpolation, .fill = fill.values(), .center = center};
    d.add(d.pil(position) ? ops::pixel::pil::rotate(r, d.width(), d.height())
                          : ops::pixel::rotate(r, d.width(), d.height()));
    if (d.describing()) {
      DrawnCall call{"rotate", {DrawnArg::number("angle", angle)}};
      detail::describe_sampling(call, interpolation, fill, center);
      d.describe(std::move(call));
    }
  }
};

}  // namespace v0
}  // namespace conveyor

#pragma once
/// @file
/// torchvision.transforms.v2.RandomAdjustSharpness(sharpness_factor, p=0.5): `adjust_sharpness(
/// sharpness_factor)` with probability p (skipped when `torch.rand(1) >= p`, _transform.py:187).
/// `sharpness_factor` has no default, as in torchvision.

#include <conveyor/config.hpp>
#include <conveyor/ops/pixel/adjust_sharpness.hpp>
#include <conveyor/ops/pixel/pil_adjust_sharpness.hpp>
#include <conveyor/transforms/fields.hpp>
#include <conveyor/transforms/program_draw.hpp>

#include <cmath>
#include <optional>

namespace conveyor {
inline namespace v0 {

struct RandomAdjustSharpness {
  static constexpr const char* name = "RandomAdjustSharpness";
  static constexpr const char* summary =
      "adjust_sharpness(sharpness_factor) with probability `p` (0 blurs, 1 keeps, 2 sharpens).";
  static constexpr FieldName fields[] = {required("sharpness_factor"), "p"};
  std::optional<double> sharpness_factor{};  ///< required: 0 blurs, 1 keeps, 2 sharpens twice as much
  double p = 0.5;

  void validate() const {
    detail::expect_transform(sharpness_factor.has_value(), name, "sharpness_factor is required (a number >= 0)");
    detail::expect_transform(std::isfinite(*sharpness_factor) && *sharpness_factor >= 0.0, name,
                             "sharpness_factor must be finite and >= 0, got " + detail::shown(*sharpness_factor));
    detail::expect_probability(name, p);
  }
  void validate_pil() const {}  // ops::pixel::pil::adjust_sharpness
  [[nodiscard]] int max_ops() const { return 1; }
  void draw(ProgramDraw& d, int position) const {
    CounterRng rng = d.stream(position);
    if (!applies(rng, p)) return;
    d.add(d.pil(position) ? ops::pixel::pil::adjust_sharpness(*sharpness_factor)
                          : ops::pixel::adjust_sharpness(*sharpness_factor));
    if (d.describing()) d.describe({"adjust_sharpness", {DrawnArg::number("sharpness_factor", *sharpness_factor)}});
  }
};

}  // namespace v0
}  // namespace conveyor

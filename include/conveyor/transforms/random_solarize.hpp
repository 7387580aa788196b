#pragma once
/// @file
/// torchvision.transforms.v2.RandomSolarize(threshold, p=0.5): `solarize(threshold)` with
/// probability p (skipped when `torch.rand(1) >= p`). `threshold` has no default, as in torchvision;
/// on uint8 images it is at most 255.

#include <conveyor/config.hpp>
#include <conveyor/ops/pixel/solarize.hpp>
#include <conveyor/transforms/fields.hpp>
#include <conveyor/transforms/program_draw.hpp>

#include <cmath>
#include <optional>

namespace conveyor {
inline namespace v0 {

struct RandomSolarize {
  static constexpr const char* name = "RandomSolarize";
  static constexpr const char* summary = "Inverts the values at or above `threshold` with probability `p`.";
  static constexpr FieldName fields[] = {required("threshold"), "p"};
  std::optional<double> threshold{};  ///< required: values at or above it are inverted
  double p = 0.5;

  void validate() const {
    detail::expect_transform(threshold.has_value(), name, "threshold is required (at most 255 for uint8 images)");
    detail::expect_transform(!std::isnan(*threshold) && *threshold <= 255.0, name,
                             "threshold must be at most 255 for uint8 images, got " + detail::shown(*threshold));
    detail::expect_probability(name, p);
  }
  void validate_pil() const {}  // ops::pixel::pil::solarize
  [[nodiscard]] int max_ops() const { return 1; }
  void draw(ProgramDraw& d, int position) const {
    CounterRng rng = d.stream(position);
    if (!applies(rng, p)) return;
    d.add(d.pil(position) ? ops::pixel::pil::solarize(*threshold) : ops::pixel::solarize(*threshold));
    if (d.describing()) d.describe({"solarize", {DrawnArg::number("threshold", *threshold)}});
  }
};

}  // namespace v0
}  // namespace conveyor

#pragma once
/// @file
/// torchvision.transforms.v2.RandomInvert: `invert` with probability p (skipped when
/// `torch.rand(1) >= p`).

#include <conveyor/config.hpp>
#include <conveyor/ops/pixel/invert.hpp>
#include <conveyor/transforms/fields.hpp>
#include <conveyor/transforms/program_draw.hpp>

namespace conveyor {
inline namespace v0 {

struct RandomInvert {
  static constexpr const char* name = "RandomInvert";
  static constexpr const char* summary = "255 - v with probability `p`.";
  static constexpr FieldName fields[] = {"p"};
  double p = 0.5;

  void validate() const { detail::expect_probability(name, p); }
  /// On a PIL image: the same op (Pillow's result is torchvision's tensor kernel's).
  void validate_pil() const {}
  [[nodiscard]] int max_ops() const { return 1; }
  void draw(ProgramDraw& d, int position) const {
    CounterRng rng = d.stream(position);
    if (!applies(rng, p)) return;
    d.add(ops::pixel::invert());
    if (d.describing()) d.describe({"invert"});
  }
};

}  // namespace v0
}  // namespace conveyor

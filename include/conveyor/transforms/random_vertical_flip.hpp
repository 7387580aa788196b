#pragma once
/// @file
/// torchvision.transforms.v2.RandomVerticalFlip: `vertical_flip` with probability p
/// (`_RandomApplyTransform`: skipped when `torch.rand(1) >= p`). Folded into the plan where the
/// ops before it allow (`ProgramDraw::flip`).

#include <conveyor/config.hpp>
#include <conveyor/transforms/fields.hpp>
#include <conveyor/transforms/program_draw.hpp>

namespace conveyor {
inline namespace v0 {

struct RandomVerticalFlip {
  static constexpr const char* name = "RandomVerticalFlip";
  static constexpr const char* summary = "Flips the image top to bottom with probability `p`.";
  static constexpr FieldName fields[] = {"p"};
  double p = 0.5;

  void validate() const { detail::expect_probability(name, p); }
  /// On a PIL image: the same op (Pillow's result is torchvision's tensor kernel's).
  void validate_pil() const {}
  [[nodiscard]] int max_ops() const { return 1; }
  void draw(ProgramDraw& d, int position) const {
    CounterRng rng = d.stream(position);
    if (!applies(rng, p)) return;
    d.flip(true);
    if (d.describing()) d.describe({"vertical_flip"});
  }
};

}  // namespace v0
}  // namespace conveyor

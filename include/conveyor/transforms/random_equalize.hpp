#pragma once
/// @file
/// torchvision.transforms.v2.RandomEqualize: `equalize` with probability p (skipped when
/// `torch.rand(1) >= p`, _transform.py:187).

#include <conveyor/config.hpp>
#include <conveyor/ops/pixel/equalize.hpp>
#include <conveyor/transforms/fields.hpp>
#include <conveyor/transforms/program_draw.hpp>

namespace conveyor {
inline namespace v0 {

struct RandomEqualize {
  static constexpr const char* name = "RandomEqualize";
  static constexpr const char* summary = "Equalizes each channel's histogram with probability `p`.";
  static constexpr FieldName fields[] = {"p"};
  double p = 0.5;

  void validate() const { detail::expect_probability(name, p); }
  /// On a PIL image: the same op (Pillow's result is torchvision's tensor kernel's).
  void validate_pil() const {}
  [[nodiscard]] int max_ops() const { return 1; }
  void draw(ProgramDraw& d, int position) const {
    CounterRng rng = d.stream(position);
    if (!applies(rng, p)) return;
    d.add(ops::pixel::equalize());
    if (d.describing()) d.describe({"equalize"});
  }
};

}  // namespace v0
}  // namespace conveyor

#pragma once
/// @file
/// torchvision.transforms.v2.RandomAutocontrast: `autocontrast` with probability p (skipped when
/// `torch.rand(1) >= p`, _transform.py:187).

#include <conveyor/config.hpp>
#include <conveyor/ops/pixel/autocontrast.hpp>
#include <conveyor/ops/pixel/pil_autocontrast.hpp>
#include <conveyor/transforms/fields.hpp>
#include <conveyor/transforms/program_draw.hpp>

namespace conveyor {
inline namespace v0 {

struct RandomAutocontrast {
  static constexpr const char* name = "RandomAutocontrast";
  static constexpr const char* summary = "Stretches each channel to [0, 255] with probability `p`.";
  static constexpr FieldName fields[] = {"p"};
  double p = 0.5;

  void validate() const { detail::expect_probability(name, p); }
  void validate_pil() const {}  // ops::pixel::pil::autocontrast
  [[nodiscard]] int max_ops() const { return 1; }
  void draw(ProgramDraw& d, int position) const {
    CounterRng rng = d.stream(position);
    if (!applies(rng, p)) return;
    d.add(d.pil(position) ? ops::pixel::pil::autocontrast() : ops::pixel::autocontrast());
    if (d.describing()) d.describe({"autocontrast"});
  }
};

}  // namespace v0
}  // namespace conveyor

#pragma once
/// @file
/// torchvision.transforms.v2.RandomGrayscale: `rgb_to_grayscale` with as many output channels as
/// input ones (three), with probability p (skipped when `torch.rand(1) >= p`).

#include <conveyor/config.hpp>
#include <conveyor/ops/pixel/pil_rgb_to_grayscale.hpp>
#include <conveyor/ops/pixel/rgb_to_grayscale.hpp>
#include <conveyor/transforms/fields.hpp>
#include <conveyor/transforms/program_draw.hpp>

namespace conveyor {
inline namespace v0 {

struct RandomGrayscale {
  static constexpr const char* name = "RandomGrayscale";
  static constexpr const char* summary = "Grayscale with probability `p`.";
  static constexpr FieldName fields[] = {"p"};
  double p = 0.1;

  void validate() const { detail::expect_probability(name, p); }
  void validate_pil() const {}  // ops::pixel::pil::rgb_to_grayscale
  [[nodiscard]] int max_ops() const { return 1; }
  void draw(ProgramDraw& d, int position) const {
    CounterRng rng = d.stream(position);
    if (!applies(rng, p)) return;
    d.add(d.pil(position) ? ops::pixel::pil::rgb_to_grayscale() : ops::pixel::rgb_to_grayscale());
    if (d.describing()) d.describe({"rgb_to_grayscale", {DrawnArg::integer("num_output_channels", 3)}});
  }
};

}  // namespace v0
}  // namespace conveyor

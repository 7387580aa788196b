#pragma once
/// @file
/// torchvision.transforms.v2.Grayscale: `rgb_to_grayscale` on every sample. conveyor's images keep
/// three channels, so `num_output_channels` must be 3 (torchvision's default, 1, is refused).

#include <conveyor/config.hpp>
#include <conveyor/ops/pixel/pil_rgb_to_grayscale.hpp>
#include <conveyor/ops/pixel/rgb_to_grayscale.hpp>
#include <conveyor/transforms/fields.hpp>
#include <conveyor/transforms/program_draw.hpp>

#include <string>

namespace conveyor {
inline namespace v0 {

struct Grayscale {
  static constexpr const char* name = "Grayscale";
  static constexpr const char* summary = "The image's luma (torchvision's weights) in all three channels.";
  static constexpr FieldName fields[] = {"num_output_channels"};
  int num_output_channels = 3;

  void validate() const {
    detail::expect_transform(num_output_channels == 3, name,
                             "num_output_channels must be 3 (conveyor's images keep three channels), got " +
                                 std::to_string(num_output_channels));
  }
  void validate_pil() const {}  // ops::pixel::pil::rgb_to_grayscale
  [[nodiscard]] int max_ops() const { return 1; }
  void draw(ProgramDraw& d, int position) const {
    d.add(d.pil(position) ? ops::pixel::pil::rgb_to_grayscale() : ops::pixel::rgb_to_grayscale());
    if (d.describing()) d.describe({"rgb_to_grayscale", {DrawnArg::integer("num_output_channels", 3)}});
  }
};

}  // namespace v0
}  // namespace conveyor

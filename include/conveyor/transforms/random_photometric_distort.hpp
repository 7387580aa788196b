#pragma once
/// @file
/// torchvision.transforms.v2.RandomPhotometricDistort (SSD's distortion, torchvision's detection
/// reference): as v2's `make_params` (_color.py), each of brightness, contrast, saturation and hue
/// drawn with probability p (`torch.rand(1) < p`), its factor uniform on its range (float32); the
/// contrast before or after saturation and hue with even odds (`torch.rand(()) < 0.5`); a uniform
/// channel permutation with probability p. Applied in the order brightness, contrast (before),
/// saturation, hue, contrast (after), permutation; on a PIL image Pillow's adjustments.

#include <conveyor/config.hpp>
#include <conveyor/transforms/color_jitter.hpp>
#include <conveyor/transforms/fields.hpp>
#include <conveyor/transforms/program_draw.hpp>
#include <conveyor/transforms/random_channel_permutation.hpp>

#include <array>
#include <cmath>
#include <optional>
#include <string>

namespace conveyor {
inline namespace v0 {

struct RandomPhotometricDistort {
  static constexpr const char* name = "RandomPhotometricDistort";
  static constexpr const char* summary =
      "Brightness, contrast, saturation and hue adjustments and a channel permutation, each with probability `p`, "
      "factors uniform on their (min, max) ranges, the contrast before or after saturation and hue.";
  static constexpr FieldName fields[] = {"brightness", "contrast", "saturation", "hue", "p"};
  std::array<double, 2> brightness{0.875, 1.125};  ///< (min, max)
  std::array<double, 2> contrast{0.5, 1.5};
  std::array<double, 2> saturation{0.5, 1.5};
  std::array<double, 2> hue{-0.05, 0.05};  ///< within [-0.5, 0.5]
  double p = 0.5;

  void validate() const {
    const auto expect_range = [](const char* argument, const std::array<double, 2>& r, double lowest, double highest) {
      detail::expect_transform(std::isfinite(r[0]) && std::isfinite(r[1]) && lowest <= r[0] && r[0] <= r[1] &&
                                   r[1] <= highest,
                               name,
                               std::string(argument) + " must be (min, max) with " + detail::shown(lowest) +
                                   " <= min <= max <= " + detail::shown(highest) + ", got (" + detail::shown(r[0]) +
                                   ", " + detail::shown(r[1]) + ")");
    };
    const double inf = INFINITY;
    expect_range("brightness", brightness, 0.0, inf);
    expect_range("contrast", contrast, 0.0, inf);
    expect_range("saturation", saturation, 0.0, inf);
    expect_range("hue", hue, -0.5, 0.5);
    detail::expect_probability(name, p);
  }
  void validate_pil() const {}  // Pillow's ImageEnhance and HSV round trip, as ColorJitter's
  [[nodiscard]] int max_ops() const { return 5; }
  void draw(ProgramDraw& d, int position) const {
    CounterRng rng = d.stream(position);
    const std::array<double, 2> ranges[4] = {brightness, contrast, saturation, hue};
    std::optional<double> factor[4];
    for (int k = 0; k < 4; ++k)
      if (applies(rng, p)) factor[k] = uniform_float32(rng, ranges[k][0], ranges[k][1]);
    const bool contrast_before = applies(rng, 0.5);
    const bool permute = applies(rng, p);
    const auto adjust = [&](int k) {
      if (factor[k]) detail::add_colour_adjustment(d, position, k, *factor[k]);
    };
    adjust(0);
    if (contrast_before) adjust(1);
    adjust(2);
    adjust(3);
    if (!contrast_before) adjust(1);
    if (permute) detail::add_channel_permutation(d, rng);
  }
};

}  // namespace v0
}  // namespace conveyor

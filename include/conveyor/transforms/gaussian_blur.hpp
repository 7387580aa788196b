#pragma once
/// @file
/// torchvision.transforms.v2.GaussianBlur(kernel_size, sigma=(0.1, 2.0)): `gaussian_blur(
/// kernel_size, [s, s])` on every sample, s drawn as v2's `make_params` draws it (_misc.py:209-211):
/// `torch.empty(1).uniform_(sigma[0], sigma[1])`, a float32 (a single number sigma is the range
/// (sigma, sigma), so it is rounded to float32 too). Kernel sizes as torchvision takes them (odd,
/// positive; an int for both axes or (width, height)), at most 63 here.

#include <conveyor/config.hpp>
#include <conveyor/ops/pixel/gaussian_blur.hpp>
#include <conveyor/transforms/arguments.hpp>
#include <conveyor/transforms/fields.hpp>
#include <conveyor/transforms/program_draw.hpp>

#include <array>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>

namespace conveyor {
inline namespace v0 {

struct GaussianBlur {
  static constexpr const char* name = "GaussianBlur";
  static constexpr const char* summary =
      "A Gaussian blur of `kernel_size` (one odd size, or (width, height)), sigma drawn uniformly from `sigma` (a "
      "(min, max) pair, or one value) for every sample.";
  static constexpr FieldName fields[] = {required("kernel_size"), "sigma"};
  std::optional<KernelSize> kernel_size{};  ///< required
  Numbers sigma{0.1, 2.0};                  ///< the range sigma is drawn from, or one fixed value

  /// sigma's (min, max), as torchvision's `_setup_number_or_seq` and its check (_misc.py:204-207).
  [[nodiscard]] std::array<double, 2> sigma_range() const {
    detail::expect_transform(sigma.size() <= 2, name, "sigma should be a single number or a sequence of length 2");
    const std::array<double, 2> s{sigma[0], sigma.size() == 1 ? sigma[0] : sigma[1]};
    detail::expect_transform(0.0 < s[0] && s[0] <= s[1] && std::isfinite(s[1]), name,
                             "sigma values should be positive and of the form (min, max), got (" + detail::shown(s[0]) +
                                 ", " + detail::shown(s[1]) + ")");
    return s;
  }
  void validate() const {
    detail::expect_transform(kernel_size.has_value(), name, "kernel_size is required (an odd number, or two)");
    for (const int k : {kernel_size->width, kernel_size->height})
      detail::expect_transform(k > 0 && k % 2 == 1 && k <= ops::pixel::max_blur_kernel, name,
                               "kernel_size values must be odd, positive and at most " +
                                   std::to_string(ops::pixel::max_blur_kernel) + ", got " + std::to_string(k));
    const auto s = sigma_range();
    // the smallest sigma drawn makes the most extreme kernel: torch's must be numbers there
    for (const int k : {kernel_size->width, kernel_size->height})
      detail::expect_transform(ops::pixel::gaussian_kernel_finite(k, s[0]), name,
                               "sigma " + detail::shown(s[0]) + " is too small: torch's float32 kernel of " +
                                   std::to_string(k) + " taps is not a number there (0 / 0), and torchvision's "
                                   "pixels undefined");
  }
  /// torchvision reflect-pads the image by half the kernel, which `torch.nn.functional.pad` takes
  /// only below the image's side ("Padding size should be less than the corresponding input
  /// dimension"): a kernel half the image's size or more is refused here, before any sample.
  /// On a PIL image: torchvision v2's gaussian_blur blurs it as a uint8 tensor.
  void validate_pil() const {}
  void validate_for(const ProgramImage& image) const {
    const int width = image.width, height = image.height;
    const int half_x = kernel_size->width / 2, half_y = kernel_size->height / 2;
    detail::expect_transform(half_x < width && half_y < height, name,
                             "kernel_size (" + std::to_string(kernel_size->width) + ", " +
                                 std::to_string(kernel_size->height) + ") reflect-pads by (" + std::to_string(half_x) +
                                 ", " + std::to_string(half_y) + "), which must be less than the image's width and " +
                                 "height; the image is " + std::to_string(width) + " x " + std::to_string(height) +
                                 " (torchvision: 'Padding size should be less than the corresponding input "
                                 "dimension')");
  }
  [[nodiscard]] int max_ops() const { return 1; }
  void draw(ProgramDraw& d, int position) const {
    CounterRng rng = d.stream(position);
    const auto range = sigma_range();
    const double s = uniform_float32(rng, range[0], range[1]);
    d.add(ops::pixel::gaussian_blur(kernel_size->width, kernel_size->height, s, s));
    if (d.describing())
      d.describe({"gaussian_blur",
                  {DrawnArg::integers("kernel_size", {kernel_size->width, kernel_size->height}),
                   DrawnArg::list("sigma", {s, s})}});
  }
};

}  // namespace v0
}  // namespace conveyor

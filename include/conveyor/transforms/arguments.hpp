#pragma once
/// @file
/// Arguments torchvision's geometric and blur transforms take in more than one shape: a number or
/// a sequence (`degrees`, `shear`, `sigma`), an int or a pair (`kernel_size`), a fill (None, a
/// number or one per channel); and how the drawn calls spell an interpolation and a fill.

#include <conveyor/config.hpp>
#include <conveyor/ops/pixel/affine.hpp>
#include <conveyor/transforms/program_draw.hpp>

#include <array>
#include <cmath>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace conveyor {
inline namespace v0 {

namespace detail {
inline constexpr const char* interpolation_names[] = {"nearest", "bilinear", "bicubic"};
}  // namespace detail

/// One number or a sequence of two or four, as torchvision takes `degrees`, `shear` and `sigma`:
/// `.degrees = 30.0`, `.degrees = Numbers{-10.0, 20.0}`, `.shear = Numbers{-5.0, 5.0, 0.0, 10.0}`.
class Numbers {
 public:
  constexpr Numbers(double v) noexcept : size_(1), v_{v, 0, 0, 0} {}  // NOLINT: `= 30.0` reads as torchvision
  constexpr Numbers(double a, double b) noexcept : size_(2), v_{a, b, 0, 0} {}
  constexpr Numbers(double a, double b, double c, double d) noexcept : size_(4), v_{a, b, c, d} {}
  /// A sequence of one value (`[v]`): `sigma` takes it as v, `degrees` and `shear` refuse it, as torchvision does.
  [[nodiscard]] static constexpr Numbers listed(double v) noexcept {
    Numbers n(v);
    n.listed_ = true;
    return n;
  }
  [[nodiscard]] constexpr int size() const noexcept { return size_; }
  [[nodiscard]] constexpr double operator[](int k) const noexcept { return v_[static_cast<std::size_t>(k)]; }
  /// Given as a sequence rather than one number.
  [[nodiscard]] constexpr bool is_sequence() const noexcept { return size_ > 1 || listed_; }

 private:
  int size_;
  std::array<double, 4> v_;
  bool listed_ = false;
};

/// GaussianBlur's `kernel_size`: one odd size for both axes or (width, height), torchvision's order.
class KernelSize {
 public:
  constexpr KernelSize(int k) noexcept : width(k), height(k) {}  // NOLINT: `= 23` reads as torchvision
  constexpr KernelSize(int kernel_width, int kernel_height) noexcept : width(kernel_width), height(kernel_height) {}
  int width, height;
};

/// The value of pixels a geometric transform brings in from outside the image: none (torchvision's
/// `fill=None`: zeros, by plain zero padding), one number for every channel, or one per channel.
/// torchvision treats `fill=0` and `fill=None` apart (issue 6517: BILINEAR blends a given fill in
/// through a sampled mask), and so does conveyor.
class Fill {
 public:
  constexpr Fill() noexcept = default;  ///< None
  constexpr Fill(double v) noexcept : v_{std::array<double, 3>{v, v, v}} {}  // NOLINT: `= 128.0` reads as torchvision
  constexpr Fill(double r, double g, double b) noexcept : v_{std::array<double, 3>{r, g, b}} {}
  [[nodiscard]] static constexpr Fill none() noexcept { return {}; }
  [[nodiscard]] constexpr const std::optional<std::array<double, 3>>& values() const noexcept { return v_; }

 private:
  std::optional<std::array<double, 3>> v_{};
};

/// An interpolation's names, as torchvision's InterpolationMode values spell them, in the enum's order.
[[nodiscard]] constexpr std::span<const char* const> enum_names(ops::pixel::Interpolation) noexcept {
  constexpr std::span<const char* const> names = detail::interpolation_names;
  return names;
}

namespace detail {

/// torchvision's `_setup_angle` (transforms.py:1848): a number d >= 0 is [-d, d], a pair is itself;
/// drawn with `uniform_`, which needs min <= max.
[[nodiscard]] inline std::array<double, 2> angle_range(const char* transform, const char* argument, const Numbers& n) {
  const std::string arg(argument);
  expect_transform(n.size() == 2 || !n.is_sequence(), transform, "if " + arg + " is a sequence, it must be of len 2");
  for (int k = 0; k < n.size(); ++k)
    expect_transform(std::isfinite(static_cast<float>(n[k])), transform,
                     arg + " must be finite (in float32), got " + shown(n[k]));
  if (n.size() == 1) {
    expect_transform(n[0] >= 0, transform, "if " + arg + " is a single number, it must be positive, got " + shown(n[0]));
    return {-n[0], n[0]};
  }
  expect_transform(n[0] <= n[1], transform,
                   arg + " must be (min, max) with min <= max, got (" + shown(n[0]) + ", " + shown(n[1]) + ")");
  return {n[0], n[1]};
}

/// The fill's values in [0, 255] (uint8 images), or none.
inline void expect_fill(const char* transform, const Fill& fill) {
  if (fill.values())
    for (const double v : *fill.values())
      expect_transform(v >= 0.0 && v <= 255.0, transform,
                       "fill values must be in [0, 255] for uint8 images, got " + shown(v));
}

/// A transform's `v1` (torchvision.transforms' class rather than v2's) on a tensor, where v1 runs
/// tensor functionals of its own, which conveyor does not: refused.
inline void expect_v1_on_pil(const char* transform, bool v1) {
  expect_transform(!v1, transform, "v1 = true (torchvision v1's arithmetic) runs on PIL images only: on a tensor, "
                                   "torchvision v1 runs tensor functionals of its own; give v2's there (v1 = false)");
}

/// An optional pair of finite numbers (`center`).
inline void expect_finite_pair(const char* transform, const char* argument,
                               const std::optional<std::array<double, 2>>& pair) {
  if (pair)
    for (const double v : *pair)
      expect_transform(std::isfinite(v), transform, std::string(argument) + " must be finite, got " + shown(v));
}

/// torchvision's spelling of an interpolation (`InterpolationMode.NEAREST.value`).
[[nodiscard]] inline const char* interpolation_name(ops::pixel::Interpolation mode) noexcept {
  return enum_names(mode)[static_cast<std::size_t>(mode)];
}

/// The interpolation, fill and centre arguments of a drawn affine or rotate call (None left out).
inline void describe_sampling(DrawnCall& call, ops::pixel::Interpolation mode, const Fill& fill,
                              const std::optional<std::array<double, 2>>& center) {
  call.args.push_back(DrawnArg::text("interpolation", interpolation_name(mode)));
  if (fill.values()) {
    const auto& f = *fill.values();
    call.args.push_back(DrawnArg::list("fill", {f[0], f[1], f[2]}));
  }
  if (center) call.args.push_back(DrawnArg::list("center", {(*center)[0], (*center)[1]}));
}

}  // namespace detail
}  // namespace v0
}  // namespace conveyor

#pragma once
/// @file
/// torchvision.transforms.v2.ColorJitter: brightness, contrast, saturation and hue adjusted in an
/// order drawn per sample. As v2's `make_params` (transforms/v2/_color.py): `fn_idx =
/// torch.randperm(4)`, then each factor that is not None drawn uniformly from its range
/// (`torch.empty(1).uniform_(lo, hi)`, a float32), and the adjustments applied in `fn_idx`'s order
/// (0 brightness, 1 contrast, 2 saturation, 3 hue), skipping those that are None.

#include <conveyor/config.hpp>
#include <conveyor/ops/pixel/adjust_brightness.hpp>
#include <conveyor/ops/pixel/adjust_contrast.hpp>
#include <conveyor/ops/pixel/adjust_hue.hpp>
#include <conveyor/ops/pixel/adjust_saturation.hpp>
#include <conveyor/ops/pixel/pil_adjust_brightness.hpp>
#include <conveyor/ops/pixel/pil_adjust_contrast.hpp>
#include <conveyor/ops/pixel/pil_adjust_hue.hpp>
#include <conveyor/ops/pixel/pil_adjust_saturation.hpp>
#include <conveyor/transforms/fields.hpp>
#include <conveyor/transforms/program_draw.hpp>

#include <algorithm>
#include <array>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <utility>

namespace conveyor {
inline namespace v0 {

/// A ColorJitter argument as torchvision takes one: unset (None), a number v (brightness,
/// contrast and saturation factors from [max(0, 1 - v), 1 + v], hue factors from [-v, v]), or a
/// (min, max) pair: `.brightness = 0.4`, `.hue = {-0.1, 0.05}`.
class Jitter {
 public:
  constexpr Jitter() noexcept = default;
  constexpr Jitter(double amount) noexcept : kind_(Kind::amount), a_(amount) {}  // NOLINT: `= 0.4` reads as torchvision
  constexpr Jitter(double min, double max) noexcept : kind_(Kind::range), a_(min), b_(max) {}

  /// torchvision's `ColorJitter._check_input`: the range factors are drawn from, or nothing where
  /// torchvision has None (unset, or the range {center, center}).
  /// @throws ConfigError for a negative number or a range outside [`lowest`, `highest`] or decreasing.
  [[nodiscard]] std::optional<std::array<double, 2>> range(const char* argument, double center, double lowest,
                                                           double highest, bool clip_first_on_zero) const {
    if (kind_ == Kind::none) return std::nullopt;
    std::array<double, 2> r{a_, b_};
    if (kind_ == Kind::amount) {
      detail::expect_transform(a_ >= 0, "ColorJitter",
                               std::string(argument) + " as a single number must be non negative, got " + detail::shown(a_));
      r = {center - a_, center + a_};
      if (clip_first_on_zero) r[0] = std::max(r[0], 0.0);
    }
    detail::expect_transform(lowest <= r[0] && r[0] <= r[1] && r[1] <= highest, "ColorJitter",
                             std::string(argument) + " values should be between (" + detail::shown(lowest) + ", " +
                                 detail::shown(highest) + ") and increasing, but got (" + detail::shown(r[0]) + ", " +
                                 detail::shown(r[1]) + ")");
    if (r[0] == center && r[1] == center) return std::nullopt;
    return r;
  }

  /// What was given: none (None), one number or a range, the first `count()` of `values()`.
  [[nodiscard]] constexpr int count() const noexcept { return static_cast<int>(kind_); }
  [[nodiscard]] constexpr std::array<double, 2> values() const noexcept { return {a_, b_}; }

 private:
  enum class Kind : std::uint8_t { none, amount, range };
  Kind kind_ = Kind::none;
  double a_ = 0, b_ = 0;
};

namespace detail {

/// Adds adjustment `k` (0 brightness, 1 contrast, 2 saturation, 3 hue) by `factor` to the program,
/// Pillow's op on a PIL image, and describes it as torchvision's call.
inline void add_colour_adjustment(ProgramDraw& d, int position, int k, double factor) {
  namespace px = ops::pixel;
  static constexpr const char* functions[4] = {"adjust_brightness", "adjust_contrast", "adjust_saturation",
                                               "adjust_hue"};
  static constexpr const char* arguments[4] = {"brightness_factor", "contrast_factor", "saturation_factor",
                                               "hue_factor"};
  const bool pil = d.pil(position);
  switch (k) {
    case 0: d.add(pil ? px::pil::adjust_brightness(factor) : px::adjust_brightness(factor)); break;
    case 1: d.add(pil ? px::pil::adjust_contrast(factor) : px::adjust_contrast(factor)); break;
    case 2: d.add(pil ? px::pil::adjust_saturation(factor) : px::adjust_saturation(factor)); break;
    default: d.add(pil ? px::pil::adjust_hue(factor) : px::adjust_hue(factor)); break;
  }
  if (d.describing()) d.describe({functions[k], {DrawnArg::number(arguments[k], factor)}});
}

}  // namespace detail

struct ColorJitter {
  static constexpr const char* name = "ColorJitter";
  static constexpr const char* summary =
      "Brightness, contrast, saturation and hue factors drawn uniformly from their ranges (a number v: [max(0, 1 - "
      "v), 1 + v], hue [-v, v]; or a (min, max) pair), applied in a random order.";
  static constexpr FieldName fields[] = {"brightness", "contrast", "saturation", "hue"};
  Jitter brightness{};
  Jitter contrast{};
  Jitter saturation{};
  Jitter hue{};

  /// The four factors' ranges (brightness, contrast, saturation, hue), None where unset.
  [[nodiscard]] std::array<std::optional<std::array<double, 2>>, 4> ranges() const {
    constexpr double inf = std::numeric_limits<double>::infinity();
    return {brightness.range("brightness", 1.0, 0.0, inf, true), contrast.range("contrast", 1.0, 0.0, inf, true),
            saturation.range("saturation", 1.0, 0.0, inf, true), hue.range("hue", 0.0, -0.5, 0.5, false)};
  }
  void validate() const { (void)ranges(); }
  void validate_pil() const {}  // ops::pixel::pil::adjust_brightness, ...
  /// One op per factor that is set.
  [[nodiscard]] int max_ops() const {
    int n = 0;
    for (const auto& r : ranges()) n += r.has_value() ? 1 : 0;
    return n;
  }
  void draw(ProgramDraw& d, int position) const {
    CounterRng rng = d.stream(position);
    int order[4] = {0, 1, 2, 3};  // torch.randperm(4): any uniform permutation
    for (int i = 3; i > 0; --i) std::swap(order[i], order[rng.below(static_cast<std::uint64_t>(i + 1))]);
    const auto r = ranges();
    double factor[4] = {};
    for (int k = 0; k < 4; ++k)
      if (r[std::size_t(k)]) factor[k] = uniform_float32(rng, (*r[std::size_t(k)])[0], (*r[std::size_t(k)])[1]);
    for (const int k : order)
      if (r[std::size_t(k)]) detail::add_colour_adjustment(d, position, k, factor[k]);
  }
};

}  // namespace v0
}  // namespace conveyor

#pragma once
/// @file
/// torchvision.transforms.v2.RandomErasing: with probability p, a rectangle of the normalised
/// output (recipes place it after Normalize; so does conveyor, whatever its place in the list)
/// replaced by `value`. The rectangle is v2's `make_params` (transforms/v2/_augment.py): up to 10
/// tries of `erase_area = area * uniform(scale)` (float32), `aspect = exp(uniform(log(ratio)))`
/// (float32 logs and exponent), `h = round(sqrt(erase_area * aspect))`, `w = round(sqrt(erase_area
/// / aspect))` (Python's round, half to even), kept when `h < H and w < W`, then `i = randint(0, H -
/// h + 1)`, `j = randint(0, W - w + 1)`; no erasing when no try fits. `value`: one number for
/// every channel, one per channel, or "random" (standard normal values: their distribution, not
/// torch's generator, is matched; ops/pixel/normal.hpp).

#include <conveyor/config.hpp>
#include <conveyor/ops/augment.hpp>
#include <conveyor/ops/pixel/erase.hpp>
#include <conveyor/transforms/fields.hpp>
#include <conveyor/transforms/program_draw.hpp>

#include <array>
#include <cmath>
#include <cstdint>
#include <string>
#include <utility>

namespace conveyor {
inline namespace v0 {

/// RandomErasing's `value`: a number (every channel), three numbers (one per channel), or
/// `ErasingValue::random()`: `.value = 0.5`, `.value = {0.485, 0.456, 0.406}`.
class ErasingValue {
 public:
  constexpr ErasingValue(double v = 0.0) noexcept : v_{v, v, v} {}  // NOLINT: `= 0.5` reads as torchvision
  constexpr ErasingValue(double r, double g, double b) noexcept : v_{r, g, b} {}
  /// Standard normal values (torchvision's `value="random"`).
  [[nodiscard]] static constexpr ErasingValue random() noexcept {
    ErasingValue e;
    e.random_ = true;
    return e;
  }
  [[nodiscard]] constexpr bool is_random() const noexcept { return random_; }
  [[nodiscard]] constexpr const std::array<double, 3>& values() const noexcept { return v_; }

 private:
  std::array<double, 3> v_;
  bool random_ = false;
};

struct RandomErasing {
  static constexpr const char* name = "RandomErasing";
  static constexpr const char* summary =
      "With probability `p`, a rectangle of the normalised output (`scale` of its area, height to width in `ratio`) "
      "becomes `value`: a number, one per channel, or \"random\" (standard normal values).";
  static constexpr FieldName fields[] = {"p", "scale", "ratio", "value"};
  double p = 0.5;
  std::array<double, 2> scale{0.02, 0.33};  ///< of the image's area
  std::array<double, 2> ratio{0.3, 3.3};    ///< of the rectangle's height to width
  ErasingValue value{};

  void validate() const {
    detail::expect_probability(name, p);
    detail::expect_transform(scale[0] >= 0 && scale[0] <= scale[1] && scale[1] <= 1, name,
                             "scale must satisfy 0 <= min <= max <= 1, got (" + detail::shown(scale[0]) + ", " +
                                 detail::shown(scale[1]) + ")");
    // torch takes the ratio's log in float32, and its uniform_ needs a finite range of them
    detail::expect_transform(static_cast<float>(ratio[0]) > 0 && ratio[0] <= ratio[1] &&
                                 std::isfinite(static_cast<float>(ratio[1])),
                             name,
                             "ratio must satisfy 0 < min <= max, each positive and finite in float32, got (" +
                                 detail::shown(ratio[0]) + ", " + detail::shown(ratio[1]) + ")");
    if (!value.is_random())
      for (const double v : value.values())
        detail::expect_transform(std::isfinite(v), name, "value must be finite, got " + detail::shown(v));
  }
  /// A uint8 output holds the values torch's cast to uint8 defines: (-1, 256), truncated (beyond,
  /// and for "random"'s normal values, the cast is undefined and platforms differ).
  void validate_for(const ProgramImage& image) const {
    if (image.dtype != DType::u8) return;
    detail::expect_transform(!value.is_random(), name,
                             "value=\"random\" writes normal values, negative ones among them, which a uint8 output "
                             "cannot hold (torch's cast to uint8 is undefined there): normalise to a float output");
    for (const double v : value.values())
      detail::expect_transform(v > -1.0 && v < 256.0, name,
                               "value " + detail::shown(v) + " is outside (-1, 256), which a uint8 output cannot hold "
                               "(torch's cast to uint8 is undefined there)");
  }
  [[nodiscard]] int max_ops() const { return 1; }
  [[nodiscard]] Stage stage() const { return Stage::normalised; }

  void draw(ProgramDraw& d, int position) const {
    CounterRng rng = d.stream(position);
    if (!applies(rng, p)) return;
    const int img_h = d.height(), img_w = d.width();
    const double area = double(img_h) * double(img_w);
    // torch.log(torch.tensor(ratio)): float32
    const double log_lo = std::log(static_cast<float>(ratio[0])), log_hi = std::log(static_cast<float>(ratio[1]));
    for (int attempt = 0; attempt < 10; ++attempt) {
      const double erase_area = area * uniform_float32(rng, scale[0], scale[1]);
      const double aspect = std::exp(static_cast<float>(uniform_float32(rng, static_cast<float>(log_lo),
                                                                        static_cast<float>(log_hi))));
      // Rounded and compared as Python's ints are (finite: the ratio's range is, in float32).
      const double hd = std::nearbyint(std::sqrt(erase_area * aspect));
      const double wd = std::nearbyint(std::sqrt(erase_area / aspect));
      if (!(hd < img_h && wd < img_w)) continue;
      const int h = static_cast<int>(hd), w = static_cast<int>(wd);
      const int i = static_cast<int>(rng.below(static_cast<std::uint64_t>(img_h - h + 1)));
      const int j = static_cast<int>(rng.below(static_cast<std::uint64_t>(img_w - w + 1)));
      const std::uint64_t key = value.is_random() ? rng.next_u64() : 0;
      d.add(value.is_random() ? ops::pixel::erase_random(i, j, h, w, key) : ops::pixel::erase(i, j, h, w, value.values()));
      if (d.describing()) {
        DrawnCall call{"erase", {DrawnArg::integer("i", i), DrawnArg::integer("j", j), DrawnArg::integer("h", h),
                                 DrawnArg::integer("w", w)}};
        const auto& v = value.values();
        // random: the key of conveyor's normal values (ops/pixel/normal.hpp), where torchvision draws a tensor
        call.args.push_back(value.is_random() ? DrawnArg::key("key", key) : DrawnArg::list("v", {v[0], v[1], v[2]}));
        d.describe(std::move(call));
      }
      return;
    }
  }
};

}  // namespace v0
}  // namespace conveyor

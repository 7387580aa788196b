#pragma once
/// @file
/// timm.data.random_erasing.RandomErasing (timm's `create_transform(re_prob=...)`), on the
/// normalised output as timm places it: skipped when `random.random() > probability`; else
/// `count` boxes (`min_count`, or `random.randint(min_count, max_count)`), each of up to 10 tries
/// of `target_area = uniform(min_area, max_area) * area / count`, `aspect = exp(uniform(log
/// min_aspect, log max_aspect))`, `h = round(sqrt(target_area * aspect))`, `w = round(sqrt(
/// target_area / aspect))` (Python's round), kept when `w < W and h < H`, at `top = randint(0, H -
/// h)`, `left = randint(0, W - w)`; its values zeros ("const"), a normal value per channel ("rand")
/// or per element ("pixel"), conveyor's keyed normal values (ops/pixel/normal.hpp) where timm
/// draws torch's. timm draws with Python's `random` in double; conveyor's uniforms are doubles too.
/// `num_splits` concerns batches of images (timm skips their first split), not one image: taken
/// and ignored, as timm's transform ignores it on an image.

#include <conveyor/config.hpp>
#include <conveyor/core/tensor.hpp>
#include <conveyor/ops/pixel/erase.hpp>
#include <conveyor/transforms/fields.hpp>
#include <conveyor/transforms/program_draw.hpp>

#include <cmath>
#include <cstdint>
#include <optional>
#include <span>
#include <string>

namespace conveyor {
inline namespace v0 {

/// timm's RandomErasing modes.
enum class ErasingMode : std::int32_t { const_, rand, pixel };

namespace detail {
inline constexpr const char* erasing_mode_names[] = {"const", "rand", "pixel"};
}  // namespace detail

[[nodiscard]] constexpr std::span<const char* const> enum_names(ErasingMode) noexcept {
  constexpr std::span<const char* const> names = detail::erasing_mode_names;
  return names;
}

struct TimmRandomErasing {
  static constexpr const char* name = "TimmRandomErasing";
  static constexpr const char* summary =
      "timm's RandomErasing: with probability `probability`, one to `max_count` boxes of the normalised output, "
      "each `min_area` to `max_area` of it shared by their count, become zeros (\"const\"), a normal value per "
      "channel (\"rand\") or per element (\"pixel\").";
  static constexpr FieldName fields[] = {"probability", "min_area",  "max_area",  "min_aspect", "max_aspect",
                                         "mode",        "min_count", "max_count", "num_splits"};
  double probability = 0.5;
  double min_area = 0.02;
  double max_area = 1.0 / 3.0;
  double min_aspect = 0.3;
  std::optional<double> max_aspect{};  ///< none: 1 / min_aspect
  ErasingMode mode = ErasingMode::const_;
  int min_count = 1;
  std::optional<int> max_count{};  ///< none: min_count
  int num_splits = 0;

  void validate() const {
    detail::expect_probability(name, probability);
    detail::expect_transform(min_area >= 0 && min_area <= max_area && std::isfinite(max_area), name,
                             "min_area and max_area must satisfy 0 <= min_area <= max_area, got (" +
                                 detail::shown(min_area) + ", " + detail::shown(max_area) + ")");
    const double top = max_aspect.value_or(1.0 / min_aspect);
    detail::expect_transform(min_aspect > 0 && top >= min_aspect && std::isfinite(top), name,
                             "min_aspect and max_aspect must satisfy 0 < min_aspect <= max_aspect, got (" +
                                 detail::shown(min_aspect) + ", " + detail::shown(top) + ")");
    detail::expect_transform(min_count >= 1 && max_count.value_or(min_count) >= min_count &&
                                 max_count.value_or(min_count) <= ops::pixel::max_program_ops,
                             name,
                             "min_count and max_count must satisfy 1 <= min_count <= max_count <= " +
                                 std::to_string(ops::pixel::max_program_ops) + ", got (" + std::to_string(min_count) +
                                 ", " + std::to_string(max_count.value_or(min_count)) + ")");
    detail::expect_transform(num_splits >= 0, name, "num_splits must be >= 0, got " + std::to_string(num_splits));
  }
  /// A uint8 output cannot hold normal values (torch's cast of negative ones is undefined).
  void validate_for(const ProgramImage& image) const {
    detail::expect_transform(image.dtype != DType::u8 || mode == ErasingMode::const_, name,
                             "mode \"" + std::string(enum_names(mode)[static_cast<std::size_t>(mode)]) +
                                 "\" writes normal values, negative ones among them, which a uint8 output cannot hold: "
                                 "normalise to a float output");
  }
  [[nodiscard]] Stage stage() const { return Stage::normalised; }
  [[nodiscard]] int max_ops() const { return max_count.value_or(min_count); }

  void draw(ProgramDraw& d, int position) const {
    CounterRng rng = d.stream(position);
    if (rng.uniform() > probability) return;
    const int img_h = d.height(), img_w = d.width(), most = max_count.value_or(min_count);
    const double area = double(img_h) * double(img_w);
    const double log_lo = std::log(min_aspect), log_hi = std::log(max_aspect.value_or(1.0 / min_aspect));
    const int count = min_count == most ? min_count : min_count + static_cast<int>(rng.below(std::uint64_t(most - min_count + 1)));
    for (int box = 0; box < count; ++box)
      for (int attempt = 0; attempt < 10; ++attempt) {
        const double target_area = rng.uniform(min_area, max_area) * area / count;
        const double aspect = std::exp(rng.uniform(log_lo, log_hi));
        const double hd = std::nearbyint(std::sqrt(target_area * aspect)), wd = std::nearbyint(std::sqrt(target_area / aspect));
        if (!(wd < img_w && hd < img_h)) continue;
        const int h = static_cast<int>(hd), w = static_cast<int>(wd);
        const int top = static_cast<int>(rng.below(std::uint64_t(img_h - h + 1)));
        const int left = static_cast<int>(rng.below(std::uint64_t(img_w - w + 1)));
        const std::uint64_t key = mode == ErasingMode::const_ ? 0 : rng.next_u64();
        d.add(mode == ErasingMode::const_ ? ops::pixel::erase(top, left, h, w, {0.0, 0.0, 0.0})
                                          : ops::pixel::erase_random(top, left, h, w, key, mode == ErasingMode::rand));
        if (d.describing()) {
          DrawnCall call{"erase", {DrawnArg::integer("i", top), DrawnArg::integer("j", left), DrawnArg::integer("h", h),
                                   DrawnArg::integer("w", w)}};
          // "rand": the key of one normal value per channel; "pixel": of one per element
          if (mode == ErasingMode::const_) call.args.push_back(DrawnArg::list("v", {0.0, 0.0, 0.0}));
          else call.args.push_back(DrawnArg::key(mode == ErasingMode::rand ? "channel_key" : "key", key));
          d.describe(std::move(call));
        }
        break;
      }
  }
};

}  // namespace v0
}  // namespace conveyor

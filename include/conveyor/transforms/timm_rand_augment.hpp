#pragma once
/// @file
/// timm's RandAugment (timm.data.auto_augment.rand_augment_transform, the `auto_augment="rand-..."`
/// of `create_transform`), on PIL images: `num_layers` ops of timm's list (`_RAND_TRANSFORMS`, or
/// `_RAND_INCREASING_TRANSFORMS` where `increasing`: its "inc1"), each chosen uniformly with
/// repetition (`np.random.choice(ops, num_layers)`), or where `weighted` (its "tweights") from
/// `_RAND_WEIGHTED_0`'s ops by their weights without repetition (`np.random.choice(ops, num_layers,
/// replace=False, p=weights)`: one after another, each by the weights of those not yet chosen);
/// each applied unless `random.random() > prob`, at level `magnitude`, or `random.gauss(magnitude,
/// magnitude_std)` ("mstd"), or `random.uniform(0, magnitude)` when magnitude_std is infinite,
/// clipped to [0, magnitude_max or 10] ("mmax"); the op's arguments from its level as
/// timm_augment_ops.hpp says. The fields are the parts of timm's config string and hparams
/// (`img_mean`, `interpolation`, `translate_pct`). The "3a" op sets (Pillow's GaussianBlur,
/// Desaturate) are not run. Host-only: it chooses records.

#include <conveyor/config.hpp>
#include <conveyor/ops/pixel/op.hpp>
#include <conveyor/transforms/arguments.hpp>
#include <conveyor/transforms/fields.hpp>
#include <conveyor/transforms/program_draw.hpp>
#include <conveyor/transforms/timm_augment_ops.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <optional>
#include <string>

namespace conveyor {
inline namespace v0 {

namespace detail {

/// timm's `_RAND_TRANSFORMS` and `_RAND_INCREASING_TRANSFORMS`, in their order.
inline constexpr std::array<TimmOp, 15> timm_rand_ops{
    TimmOp::auto_contrast, TimmOp::equalize, TimmOp::invert,   TimmOp::rotate,     TimmOp::posterize,
    TimmOp::solarize,      TimmOp::solarize_add, TimmOp::color, TimmOp::contrast,  TimmOp::brightness,
    TimmOp::sharpness,     TimmOp::shear_x,  TimmOp::shear_y,  TimmOp::translate_x_rel, TimmOp::translate_y_rel};
inline constexpr std::array<TimmOp, 15> timm_rand_increasing_ops{
    TimmOp::auto_contrast,        TimmOp::equalize,           TimmOp::invert,
    TimmOp::rotate,               TimmOp::posterize_increasing, TimmOp::solarize_increasing,
    TimmOp::solarize_add,         TimmOp::color_increasing,   TimmOp::contrast_increasing,
    TimmOp::brightness_increasing, TimmOp::sharpness_increasing, TimmOp::shear_x,
    TimmOp::shear_y,              TimmOp::translate_x_rel,    TimmOp::translate_y_rel};

/// An index drawn by the weights `left`, whose weight then becomes 0 (a choice without repetition;
/// `left` holds a positive weight).
template <std::size_t N>
[[nodiscard]] std::size_t weighted_index(CounterRng& rng, std::array<double, N>& left) {
  double total = 0.0;
  for (const double w : left) total += w;
  const double u = rng.uniform() * total;
  std::size_t chosen = 0;
  double below = 0.0;
  for (std::size_t k = 0; k < N; ++k) {
    if (left[k] == 0.0) continue;
    chosen = k;  // the last weighted one, should rounding carry u past every sum
    below += left[k];
    if (u < below) break;
  }
  left[chosen] = 0.0;
  return chosen;
}

/// timm's `_RAND_WEIGHTED_0` ("tweights"): its ops in its order, and their weights.
inline constexpr std::array<TimmOp, 15> timm_rand_weighted_ops{
    TimmOp::rotate,           TimmOp::shear_x,           TimmOp::shear_y,
    TimmOp::translate_x_rel,  TimmOp::translate_y_rel,   TimmOp::color_increasing,
    TimmOp::sharpness_increasing, TimmOp::auto_contrast, TimmOp::solarize_increasing,
    TimmOp::solarize_add,     TimmOp::contrast_increasing, TimmOp::brightness_increasing,
    TimmOp::equalize,         TimmOp::posterize_increasing, TimmOp::invert};
inline constexpr std::array<double, 15> timm_rand_weights{3, 2, 2, 1, 1, .25, .25, .25, .05, .05, .05, .05, .05, .05, .05};

}  // namespace detail

struct TimmRandAugment {
  static constexpr const char* name = "TimmRandAugment";
  static constexpr const char* summary =
      "timm's RandAugment on PIL images: `num_layers` of its ops, each applied with probability `prob` at level "
      "`magnitude` (with noise of `magnitude_std`, clipped to `magnitude_max`).";
  static constexpr FieldName fields[] = {"num_layers",    "magnitude",  "prob",     "magnitude_std",
                                         "magnitude_max", "increasing", "weighted", "img_mean",
                                         "interpolation", "translate_pct"};
  int num_layers = 2;
  double magnitude = 10.0;
  double prob = 0.5;
  double magnitude_std = 0.0;  ///< 0: none; infinite: uniform in [0, magnitude]
  std::optional<double> magnitude_max{};  ///< none (or 0): 10
  bool increasing = false;
  bool weighted = false;  ///< timm's "tweights": `_RAND_WEIGHTED_0`, by weight, no op twice
  Fill img_mean{128.0, 128.0, 128.0};  ///< the geometric ops' fillcolor; none: timm's _FILL, the same
  std::optional<ops::pixel::Interpolation> interpolation{};  ///< none: bilinear or bicubic per op, at random
  double translate_pct = 0.45;

  void validate() const {
    detail::expect_transform(num_layers >= 0 && num_layers <= ops::pixel::max_program_ops, name,
                             "num_layers must be in [0, " + std::to_string(ops::pixel::max_program_ops) +
                                 "] (a sample's program holds " + std::to_string(ops::pixel::max_program_ops) +
                                 " ops), got " + std::to_string(num_layers));
    detail::expect_transform(std::isfinite(magnitude), name,
                             "magnitude must be finite, got " + detail::shown(magnitude));
    detail::expect_transform(prob >= 0.0 && prob <= 1.0, name, "prob must be in [0, 1], got " + detail::shown(prob));
    detail::expect_transform(!weighted || !increasing, name,
                             "weighted names its own ops (timm's _RAND_WEIGHTED_0), increasing picks another list: "
                             "give one");
    detail::expect_transform(!weighted || num_layers <= static_cast<int>(detail::timm_rand_weighted_ops.size()), name,
                             "weighted chooses each op once: num_layers must be at most 15, got " +
                                 std::to_string(num_layers));
    detail::expect_timm_hparams(name, magnitude_std, magnitude_max, img_mean, translate_pct);
  }
  void validate_pil() const {}  // timm's ops are Pillow's
  void validate_tensor() const { detail::refuse_timm_on_tensor(name); }
  [[nodiscard]] int max_ops() const { return num_layers; }

  void draw(ProgramDraw& d, int position) const {
    CounterRng rng = d.stream(position);
    const auto& table = increasing ? detail::timm_rand_increasing_ops : detail::timm_rand_ops;
    const TimmOpParams params = detail::timm_op_params(img_mean, interpolation, translate_pct);
    std::array<double, detail::timm_rand_weights.size()> left = detail::timm_rand_weights;  // not yet chosen
    for (int k = 0; k < num_layers; ++k) {
      const TimmOp op = weighted ? detail::timm_rand_weighted_ops[detail::weighted_index(rng, left)]
                                 : table[rng.below(table.size())];
      if (prob < 1.0 && rng.uniform() > prob) continue;
      detail::apply_timm_op(d, rng, op, detail::timm_level(rng, magnitude, magnitude_std, magnitude_max), params);
    }
  }
};

}  // namespace v0
}  // namespace conveyor

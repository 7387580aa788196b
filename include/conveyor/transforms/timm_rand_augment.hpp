#pragma once
/// @file
/// timm's RandAugment (timm.data.auto_augment.rand_augment_transform, the `auto_augment="rand-..."`
/// of `create_transform`), on PIL images: `num_layers` ops of timm's list (`_RAND_TRANSFORMS`, or
/// `_RAND_INCREASING_TRANSFORMS` where `increasing`: its "inc1"), each chosen uniformly with
/// repetition (`np.random.choice(ops, num_layers)`), applied unless `random.random() > prob`, at
/// level `magnitude`, or `random.gauss(magnitude, magnitude_std)` ("mstd"), or
/// `random.uniform(0, magnitude)` when magnitude_std is infinite, clipped to [0, magnitude_max or
/// 10] ("mmax"); the op's arguments from its level as timm_augment_ops.hpp says. The fields are
/// the parts of timm's config string and hparams (`img_mean`, `interpolation`, `translate_pct`).
/// Weighted choice and the other op sets (the config's "t" part) are not run. Host-only: it chooses records.

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

}  // namespace detail

struct TimmRandAugment {
  static constexpr const char* name = "TimmRandAugment";
  static constexpr const char* summary =
      "timm's RandAugment on PIL images: `num_layers` of its ops, each applied with probability `prob` at level "
      "`magnitude` (with noise of `magnitude_std`, clipped to `magnitude_max`).";
  static constexpr FieldName fields[] = {"num_layers",    "magnitude",  "prob",          "magnitude_std",
                                         "magnitude_max", "increasing", "img_mean",      "interpolation",
                                         "translate_pct"};
  int num_layers = 2;
  double magnitude = 10.0;
  double prob = 0.5;
  double magnitude_std = 0.0;  ///< 0: none; infinite: uniform in [0, magnitude]
  std::optional<double> magnitude_max{};  ///< none (or 0): 10
  bool increasing = false;
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
    detail::expect_timm_hparams(name, magnitude_std, magnitude_max, img_mean, translate_pct);
  }
  void validate_pil() const {}  // timm's ops are Pillow's
  void validate_tensor() const { detail::refuse_timm_on_tensor(name); }
  [[nodiscard]] int max_ops() const { return num_layers; }

  void draw(ProgramDraw& d, int position) const {
    CounterRng rng = d.stream(position);
    const auto& table = increasing ? detail::timm_rand_increasing_ops : detail::timm_rand_ops;
    const TimmOpParams params = detail::timm_op_params(img_mean, interpolation, translate_pct);
    for (int k = 0; k < num_layers; ++k) {
      const TimmOp op = table[rng.below(table.size())];
      if (prob < 1.0 && rng.uniform() > prob) continue;
      detail::apply_timm_op(d, rng, op, detail::timm_level(rng, magnitude, magnitude_std, magnitude_max), params);
    }
  }
};

}  // namespace v0
}  // namespace conveyor

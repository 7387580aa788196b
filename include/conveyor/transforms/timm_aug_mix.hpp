#pragma once
/// @file
/// timm's AugMix (timm.data.auto_augment.augment_and_mix_transform, `auto_augment="augmix-..."` of
/// `create_transform`), on PIL images: `mixing_weights = np.float32(Dirichlet([alpha] * width))` and
/// `m = np.float32(Beta(alpha, alpha))`, then `width` chains, each of `depth` ops (or
/// `np.random.randint(1, 4)`), chosen from `_AUGMIX_TRANSFORMS` uniformly with repetition, each at
/// level `random.uniform(0, magnitude)` (magnitude_std infinite, its default) or as TimmRandAugment
/// draws it. `_apply_basic`: the chains summed in float32 (`mixed += mw * chain`), clipped and
/// truncated, then `Image.blend(image, mixed, m)`; `blended` ("b1"), `_apply_blended`: each chain
/// blended into the running image with `_calc_blended_weights`' float32 alphas (ops/pixel/mix.hpp).
/// The fields are the parts of timm's config string and hparams. Host-only: it chooses records.

#include <conveyor/batch/beta.hpp>
#include <conveyor/config.hpp>
#include <conveyor/ops/exact_float.hpp>
#include <conveyor/ops/pixel/mix.hpp>
#include <conveyor/transforms/arguments.hpp>
#include <conveyor/transforms/aug_mix.hpp>
#include <conveyor/transforms/fields.hpp>
#include <conveyor/transforms/program_draw.hpp>
#include <conveyor/transforms/timm_augment_ops.hpp>

#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <span>

namespace conveyor {
inline namespace v0 {

namespace detail {

/// timm's `_AUGMIX_TRANSFORMS`, in its order.
inline constexpr std::array<TimmOp, 13> timm_aug_mix_ops{
    TimmOp::auto_contrast,       TimmOp::color_increasing, TimmOp::contrast_increasing, TimmOp::brightness_increasing,
    TimmOp::sharpness_increasing, TimmOp::equalize,        TimmOp::rotate,              TimmOp::posterize_increasing,
    TimmOp::solarize_increasing, TimmOp::shear_x,          TimmOp::shear_y,             TimmOp::translate_x_rel,
    TimmOp::translate_y_rel};

/// `_calc_blended_weights(ws, m)` in numpy's float32: `ws * m`, then from the last chain back each
/// `w / cump` and `cump *= 1 - alpha` (NumPy 2 keeps a float32 with a Python float float32).
inline void timm_blended_weights(std::span<float> ws, float m) {
  float cump = 1.0f;
  for (std::size_t k = ws.size(); k-- > 0;) {
    const float alpha = ops::exact::div(ops::exact::mul(ws[k], m), cump);
    cump = ops::exact::mul(cump, ops::exact::sub(1.0f, alpha));
    ws[k] = alpha;
  }
}

}  // namespace detail

struct TimmAugMix {
  static constexpr const char* name = "TimmAugMix";
  static constexpr const char* summary =
      "timm's AugMix on PIL images: `width` chains of its ops at levels up to `magnitude`, mixed with Dirichlet "
      "weights and blended with the image.";
  static constexpr FieldName fields[] = {"magnitude",     "width",         "depth",    "alpha",
                                         "blended",       "magnitude_std", "magnitude_max", "img_mean",
                                         "interpolation", "translate_pct"};
  static constexpr bool mixes = true;
  double magnitude = 3.0;
  int width = 3;
  int depth = -1;  ///< <= 0: 1 to 3 ops a chain, at random
  double alpha = 1.0;
  bool blended = false;
  double magnitude_std = std::numeric_limits<double>::infinity();  ///< infinite: uniform in [0, magnitude]
  std::optional<double> magnitude_max{};  ///< none (or 0): 10
  Fill img_mean{128.0, 128.0, 128.0};  ///< the geometric ops' fillcolor; none: timm's _FILL, the same
  std::optional<ops::pixel::Interpolation> interpolation{};  ///< none: bilinear or bicubic per op, at random
  double translate_pct = 0.45;

  void validate() const {
    detail::expect_transform(std::isfinite(magnitude), name, "magnitude must be finite, got " + detail::shown(magnitude));
    detail::expect_mixture(name, width, depth, alpha);
    detail::expect_timm_hparams(name, magnitude_std, magnitude_max, img_mean, translate_pct);
  }
  void validate_pil() const {}  // timm's ops are Pillow's
  void validate_tensor() const { detail::refuse_timm_on_tensor(name); }
  [[nodiscard]] int max_ops() const { return detail::mixture_max_ops(width, depth); }

  void draw(ProgramDraw& d, int position) const {
    namespace px = ops::pixel;
    CounterRng rng = d.stream(position);
    std::array<float, detail::max_dirichlet_parts> weights{};
    const std::span<float> w(weights.data(), static_cast<std::size_t>(width));
    detail::dirichlet_variate(rng, alpha, w);
    const float m = static_cast<float>(detail::beta_variate(rng, alpha, alpha));
    if (d.describing())
      d.describe({"timm.augmix", {DrawnArg::list("mixing_weights", {w.begin(), w.end()}), DrawnArg::number("m", m),
                                  DrawnArg::flag("blended", blended)}});
    if (blended) detail::timm_blended_weights(w, m);
    d.add(px::mix(px::Mix::begin, blended ? 1.0 : 0.0));  // the running image, or numpy's zeros
    const TimmOpParams params = detail::timm_op_params(img_mean, interpolation, translate_pct);
    for (const float chain_weight : w) {
      const int ops = depth > 0 ? depth : 1 + static_cast<int>(rng.below(3));
      if (d.describing()) d.describe({"timm.augmix_chain", {DrawnArg::integer("depth", ops)}});
      for (int k = 0; k < ops; ++k) {
        const TimmOp op = detail::timm_aug_mix_ops[rng.below(detail::timm_aug_mix_ops.size())];
        detail::apply_timm_op(d, rng, op, detail::timm_level(rng, magnitude, magnitude_std, magnitude_max), params);
      }
      d.add(px::mix(blended ? px::Mix::blend_add : px::Mix::add, chain_weight));
    }
    d.add(blended ? px::mix(px::Mix::end) : px::mix(px::Mix::end_blend, m));
  }
};

}  // namespace v0
}  // namespace conveyor

#pragma once
/// @file
/// The ops timm's policies choose from (timm.data.auto_augment: NAME_TO_OP, LEVEL_TO_ARG, AugmentOp),
/// on PIL images as timm runs them: an op's level (its magnitude, after noise and clipping) made
/// into its arguments as LEVEL_TO_ARG's functions make them in Python's doubles, a sign drawn where
/// timm's `_randomly_negate` draws one, and the Pillow call timm makes (ImageOps, ImageEnhance,
/// `Image.rotate`, `Image.transform` with its own matrices, `Image.point` for solarize_add), drawn
/// as conveyor's Pillow ops. The policies only choose; the pixel ops (ops/pixel/) do the work.
///
/// One divergence, stated: Pillow 13's ImageOps.posterize refuses fewer than one bit, which timm's
/// PosterizeIncreasing asks for at level 10 (`4 - int(level / 10 * 4)`), so timm raises ValueError
/// there; conveyor gives what Pillow 12 gave, an image of zeros (`i & ~255`).

#include <conveyor/config.hpp>
#include <conveyor/core/rng.hpp>
#include <conveyor/ops/exact_float.hpp>
#include <conveyor/ops/pixel/equalize.hpp>
#include <conveyor/ops/pixel/invert.hpp>
#include <conveyor/ops/pixel/pil_adjust_brightness.hpp>
#include <conveyor/ops/pixel/pil_adjust_contrast.hpp>
#include <conveyor/ops/pixel/pil_adjust_saturation.hpp>
#include <conveyor/ops/pixel/pil_adjust_sharpness.hpp>
#include <conveyor/ops/pixel/pil_affine.hpp>
#include <conveyor/ops/pixel/pil_autocontrast.hpp>
#include <conveyor/ops/pixel/posterize.hpp>
#include <conveyor/ops/pixel/solarize.hpp>
#include <conveyor/ops/pixel/solarize_add.hpp>
#include <conveyor/transforms/arguments.hpp>
#include <conveyor/transforms/program_draw.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>

namespace conveyor {
inline namespace v0 {

/// timm's op names (NAME_TO_OP's keys), those of its RandAugment lists and AutoAugment policies.
enum class TimmOp : std::int32_t {
  auto_contrast,
  equalize,
  invert,
  rotate,
  posterize,
  posterize_increasing,
  posterize_original,
  solarize,
  solarize_increasing,
  solarize_add,
  color,
  color_increasing,
  contrast,
  contrast_increasing,
  brightness,
  brightness_increasing,
  sharpness,
  sharpness_increasing,
  shear_x,
  shear_y,
  translate_x_rel,
  translate_y_rel,
};

/// What every op of one timm policy shares (AugmentOp's `hparams` and `kwargs`).
struct TimmOpParams {
  Fill fill;  ///< `img_mean`, Image.transform's fillcolor
  std::optional<ops::pixel::Interpolation> interpolation;  ///< none: random.choice of bilinear and bicubic
  double translate_pct = 0.45;
};

namespace detail {

/// Python's `random.gauss(mu, sigma)` (without its cached second value): Box-Muller in double.
[[nodiscard]] inline double python_gauss(CounterRng& rng, double mu, double sigma) {
  const double angle = rng.uniform() * 6.283185307179586;
  const double radius = std::sqrt(-2.0 * std::log(1.0 - rng.uniform()));
  return ops::exact::add(mu, ops::exact::mul(ops::exact::mul(std::cos(angle), radius), sigma));
}

/// timm's `_randomly_negate(v)`: -v when `random.random() > 0.5`.
[[nodiscard]] inline double randomly_negate(CounterRng& rng, double v) { return rng.uniform() > 0.5 ? -v : v; }

/// AugmentOp's level for an op of `magnitude`: itself, or `random.gauss(magnitude, std)` where std > 0,
/// `random.uniform(0, magnitude)` where it is infinite; clipped to [0, magnitude_max or 10].
[[nodiscard]] inline double timm_level(CounterRng& rng, double magnitude, double std,
                                       const std::optional<double>& magnitude_max) {
  double m = magnitude;
  if (std > 0.0) m = std::isinf(std) ? rng.uniform(0.0, magnitude) : python_gauss(rng, magnitude, std);
  const double upper = magnitude_max.value_or(0.0) != 0.0 ? *magnitude_max : 10.0;  // `magnitude_max or 10`
  return std::max(0.0, std::min(m, upper));
}

/// The checks of what a timm policy's ops share (AugmentOp's hparams).
inline void expect_timm_hparams(const char* policy, double magnitude_std, const std::optional<double>& magnitude_max,
                                const Fill& img_mean, double translate_pct) {
  expect_transform(!std::isnan(magnitude_std), policy, "magnitude_std must be a number");
  expect_transform(!magnitude_max || (*magnitude_max >= 0.0 && std::isfinite(*magnitude_max)), policy,
                   "magnitude_max must be finite and >= 0, got " + shown(magnitude_max.value_or(0)));
  expect_transform(std::isfinite(translate_pct), policy, "translate_pct must be finite, got " + shown(translate_pct));
  expect_fill(policy, img_mean);
}

/// timm's policies on a tensor: refused (their ops are Pillow's).
inline void refuse_timm_on_tensor(const char* policy) {
  expect_transform(false, policy, "timm's ops run on PIL images only, as timm runs them: place it before the "
                                  "conversion to a tensor (MaybeToTensor, ToTensor)");
}

/// What the ops share: `img_mean` (timm's _FILL, 128 each, where none), the filter, translate_pct.
[[nodiscard]] inline TimmOpParams timm_op_params(const Fill& img_mean,
                                                 const std::optional<ops::pixel::Interpolation>& interpolation,
                                                 double translate_pct) {
  return {img_mean.values() ? img_mean : Fill{128.0, 128.0, 128.0}, interpolation, translate_pct};
}

/// Pillow's resampling constant for a mode (Image.Resampling), as timm passes `resample`.
[[nodiscard]] constexpr std::int64_t pillow_resample(ops::pixel::Interpolation mode) noexcept {
  return mode == ops::pixel::Interpolation::nearest ? 0 : mode == ops::pixel::Interpolation::bilinear ? 2 : 3;
}

/// The record and call of timm's `aug_fn(img, *level_args, **kwargs)` for `op` at `level`
/// (LEVEL_TO_ARG's arithmetic, its signs drawn from `rng`), on the image `d` draws for.
inline void apply_timm_op(ProgramDraw& d, CounterRng& rng, TimmOp op, double level, const TimmOpParams& p) {
  namespace px = ops::pixel;
  const double fraction = level / 10.0;  // level / _LEVEL_DENOM
  const auto plain = [&](const px::PixelOp& record, const char* function) {
    d.add(record);
    if (d.describing()) d.describe({function});
  };
  const auto number = [&](const px::PixelOp& record, const char* function, const char* argument, double v) {
    d.add(record);
    if (d.describing()) d.describe({function, {DrawnArg::number(argument, v)}});
  };
  const auto integer = [&](const px::PixelOp& record, const char* function, const char* argument, std::int64_t v) {
    d.add(record);
    if (d.describing()) d.describe({function, {DrawnArg::integer(argument, v)}});
  };
  // the geometric ops' kwargs: the fill, and a resample drawn per call where timm draws one
  const auto resample = [&] {
    return p.interpolation ? *p.interpolation
                           : rng.below(2) == 0 ? px::Interpolation::bilinear : px::Interpolation::bicubic;
  };
  const auto geometric = [&](const px::PixelOp& record, const char* function, const char* argument, double v,
                             px::Interpolation mode) {
    d.add(record);
    if (!d.describing()) return;
    const auto& f = *p.fill.values();
    d.describe({function,
                {DrawnArg::number(argument, v),
                 DrawnArg::integers("fillcolor", {std::int64_t(std::trunc(f[0])), std::int64_t(std::trunc(f[1])),
                                                  std::int64_t(std::trunc(f[2]))}),
                 DrawnArg::integer("resample", pillow_resample(mode))}});
  };
  // ImageEnhance's Color, Contrast, Brightness, Sharpness at _enhance_level_to_arg's factor (fraction
  // * 1.8 + 0.1), or _enhance_increasing_level_to_arg's (max(0.1, 1.0 +- fraction * 0.9))
  const auto enhance = [&](auto factory, const char* function, bool increasing) {
    const double factor = increasing ? std::max(0.1, 1.0 + randomly_negate(rng, fraction * 0.9))
                                     : ops::exact::add(ops::exact::mul(fraction, 1.8), 0.1);
    number(factory(factor), function, "factor", factor);
  };
  const auto saturation = [](double f) { return px::pil::adjust_saturation(f); };
  const auto contrast = [](double f) { return px::pil::adjust_contrast(f); };
  const auto brightness = [](double f) { return px::pil::adjust_brightness(f); };
  const auto sharpness = [](double f) { return px::pil::adjust_sharpness(f); };
  const auto posterize = [&](int bits) {  // timm's posterize: 8 bits and more keep the image
    if (bits >= 8) {
      if (d.describing()) d.describe({"timm.posterize", {DrawnArg::integer("bits_to_keep", bits)}});
      return;
    }
    integer(px::posterize(std::max(bits, 0)), "timm.posterize", "bits_to_keep", bits);
  };
  const auto affine = [&](const std::array<double, 6>& m, const char* function, const char* argument, double v) {
    const px::Interpolation mode = resample();
    geometric(px::pil::transform_affine(m, mode, p.fill.values(), d.width(), d.height()), function, argument, v, mode);
  };
  switch (op) {
    case TimmOp::auto_contrast: return plain(px::pil::autocontrast(), "timm.auto_contrast");
    case TimmOp::equalize: return plain(px::equalize(), "timm.equalize");
    case TimmOp::invert: return plain(px::invert(), "timm.invert");
    case TimmOp::rotate: {
      const double degrees = randomly_negate(rng, fraction * 30.0);
      const px::Interpolation mode = resample();
      return geometric(px::pil::rotate({.angle = degrees, .interpolation = mode, .fill = p.fill.values()}, d.width(),
                                       d.height()),
                       "timm.rotate", "degrees", degrees, mode);
    }
    case TimmOp::posterize: return posterize(static_cast<int>(fraction * 4.0));
    case TimmOp::posterize_increasing: return posterize(4 - static_cast<int>(fraction * 4.0));
    case TimmOp::posterize_original: return posterize(static_cast<int>(fraction * 4.0) + 4);
    case TimmOp::solarize:
    case TimmOp::solarize_increasing: {
      const int thresh = std::min(256, static_cast<int>(fraction * 256.0));
      const int t = op == TimmOp::solarize ? thresh : 256 - thresh;
      return integer(px::pil::solarize(t), "timm.solarize", "thresh", t);
    }
    case TimmOp::solarize_add: {
      const int add = std::min(128, static_cast<int>(fraction * 110.0));
      return integer(px::solarize_add(add), "timm.solarize_add", "add", add);
    }
    case TimmOp::color: return enhance(saturation, "timm.color", false);
    case TimmOp::color_increasing: return enhance(saturation, "timm.color", true);
    case TimmOp::contrast: return enhance(contrast, "timm.contrast", false);
    case TimmOp::contrast_increasing: return enhance(contrast, "timm.contrast", true);
    case TimmOp::brightness: return enhance(brightness, "timm.brightness", false);
    case TimmOp::brightness_increasing: return enhance(brightness, "timm.brightness", true);
    case TimmOp::sharpness: return enhance(sharpness, "timm.sharpness", false);
    case TimmOp::sharpness_increasing: return enhance(sharpness, "timm.sharpness", true);
    case TimmOp::shear_x:
    case TimmOp::shear_y: {
      const double factor = randomly_negate(rng, fraction * 0.3);
      return op == TimmOp::shear_x ? affine({1.0, factor, 0.0, 0.0, 1.0, 0.0}, "timm.shear_x", "factor", factor)
                                   : affine({1.0, 0.0, 0.0, factor, 1.0, 0.0}, "timm.shear_y", "factor", factor);
    }
    case TimmOp::translate_x_rel:
    case TimmOp::translate_y_rel: {
      const double pct = randomly_negate(rng, fraction * p.translate_pct);
      if (op == TimmOp::translate_x_rel)
        return affine({1.0, 0.0, pct * d.width(), 0.0, 1.0, 0.0}, "timm.translate_x_rel", "pct", pct);
      return affine({1.0, 0.0, 0.0, 0.0, 1.0, pct * d.height()}, "timm.translate_y_rel", "pct", pct);
    }
  }
}

}  // namespace detail
}  // namespace v0
}  // namespace conveyor

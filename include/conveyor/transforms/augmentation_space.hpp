#pragma once
/// @file
/// What torchvision's policies (TrivialAugmentWide, RandAugment, AutoAugment) choose from: their
/// `_AUGMENTATION_SPACE` tables of (op, magnitudes, signed) (transforms/v2/_auto_augment.py), the
/// magnitudes as torch computes them, and the functional call each op stands for
/// (`_apply_image_or_video_transform`, _auto_augment.py:88-174). The policies only choose; the
/// pixel ops (ops/pixel/) do the work.
///
/// Magnitudes are float32 tensors in torchvision, read back with `float(...)`: `torch.linspace`
/// in float32 (step `(end - start) / (steps - 1)`, then `start + step * i` below the middle and
/// `end - step * (steps - 1 - i)` from it on, each a fused multiply-add as torch's compiled kernel
/// computes it), and Posterize's `(8 - arange(n) / ((n - 1) / k)).round().int()` in float32.
///
/// torchvision v1's policies (transforms/autoaugment.py, PIL images; `v1` here) have the same
/// tables but Solarize's: `linspace(255.0, 0.0, n)`, the threshold itself (v2's `linspace(1.0, 0.0,
/// n)` is scaled by 255 after), and draw a sign from `torch.randint(2)` (exactly one half) rather
/// than `torch.rand(()) <= 0.5`; their affine maps are v1's `F.affine`'s.

#include <conveyor/config.hpp>
#include <conveyor/ops/exact_float.hpp>
#include <conveyor/ops/pixel/adjust_brightness.hpp>
#include <conveyor/ops/pixel/adjust_contrast.hpp>
#include <conveyor/ops/pixel/adjust_saturation.hpp>
#include <conveyor/ops/pixel/adjust_sharpness.hpp>
#include <conveyor/ops/pixel/affine.hpp>
#include <conveyor/ops/pixel/pil_adjust_brightness.hpp>
#include <conveyor/ops/pixel/pil_adjust_contrast.hpp>
#include <conveyor/ops/pixel/pil_adjust_saturation.hpp>
#include <conveyor/ops/pixel/pil_adjust_sharpness.hpp>
#include <conveyor/ops/pixel/pil_affine.hpp>
#include <conveyor/ops/pixel/pil_autocontrast.hpp>
#include <conveyor/ops/pixel/autocontrast.hpp>
#include <conveyor/ops/pixel/equalize.hpp>
#include <conveyor/ops/pixel/invert.hpp>
#include <conveyor/ops/pixel/posterize.hpp>
#include <conveyor/ops/pixel/solarize.hpp>
#include <conveyor/ops/pixel/v1_color.hpp>
#include <conveyor/transforms/arguments.hpp>
#include <conveyor/transforms/program_draw.hpp>

#include <array>
#include <cmath>
#include <cstdint>
#include <math.h>
#include <optional>
#include <string>
#include <utility>

namespace conveyor {
inline namespace v0 {

/// The ops of torchvision's policies, by their `transform_id`.
enum class PolicyOp : std::int32_t {
  identity,
  shear_x,
  shear_y,
  translate_x,
  translate_y,
  rotate,
  brightness,
  color,
  contrast,
  sharpness,
  posterize,
  solarize,
  autocontrast,
  equalize,
  invert,
};

/// torchvision's `transform_id` of `op` ("ShearX", ...).
[[nodiscard]] constexpr const char* policy_op_name(PolicyOp op) noexcept {
  constexpr const char* names[] = {"Identity",   "ShearX",    "ShearY",   "TranslateX", "TranslateY",
                                   "Rotate",     "Brightness", "Color",   "Contrast",   "Sharpness",
                                   "Posterize",  "Solarize",  "AutoContrast", "Equalize", "Invert"};
  return names[static_cast<std::size_t>(op)];
}

/// How an op's magnitudes are made from the number of bins (and the image's size).
struct Magnitudes {
  enum class Kind : std::int32_t {
    none,       ///< the op takes none (magnitude 0.0)
    linspace,   ///< torch.linspace(start, end, bins), end times the width or height where `side` says
    posterize,  ///< (8 - arange(bins) / ((bins - 1) / end)).round().int()
  };
  enum class Side : std::int32_t { none, width, height };
  Kind kind = Kind::none;
  double start = 0.0;
  double end = 0.0;
  Side side = Side::none;
  bool over = false;  ///< the end is the side over `end` (AugMix's `width / 3.0`), not times it
};

/// One row of an `_AUGMENTATION_SPACE`.
struct PolicyEntry {
  PolicyOp op;
  Magnitudes magnitudes;
  bool is_signed;  ///< the magnitude is negated when `torch.rand(()) <= 0.5`
};

namespace detail {

inline constexpr Magnitudes no_magnitudes{};
[[nodiscard]] constexpr Magnitudes linspace(double start, double end, Magnitudes::Side side = Magnitudes::Side::none) {
  return {Magnitudes::Kind::linspace, start, end, side};
}
[[nodiscard]] constexpr Magnitudes posterize_bits(double divisor, double from = 8.0) {
  return {Magnitudes::Kind::posterize, from, divisor, Magnitudes::Side::none};
}
[[nodiscard]] constexpr Magnitudes side_over(double divisor, Magnitudes::Side side) {
  return {Magnitudes::Kind::linspace, 0.0, divisor, side, true};
}

}  // namespace detail

/// TrivialAugmentWide's `_AUGMENTATION_SPACE` (_auto_augment.py:469-487), in its order.
inline constexpr std::array<PolicyEntry, 14> trivial_augment_wide_space{{
    {PolicyOp::identity, detail::no_magnitudes, false},
    {PolicyOp::shear_x, detail::linspace(0.0, 0.99), true},
    {PolicyOp::shear_y, detail::linspace(0.0, 0.99), true},
    {PolicyOp::translate_x, detail::linspace(0.0, 32.0), true},
    {PolicyOp::translate_y, detail::linspace(0.0, 32.0), true},
    {PolicyOp::rotate, detail::linspace(0.0, 135.0), true},
    {PolicyOp::brightness, detail::linspace(0.0, 0.99), true},
    {PolicyOp::color, detail::linspace(0.0, 0.99), true},
    {PolicyOp::contrast, detail::linspace(0.0, 0.99), true},
    {PolicyOp::sharpness, detail::linspace(0.0, 0.99), true},
    {PolicyOp::posterize, detail::posterize_bits(6.0), false},
    {PolicyOp::solarize, detail::linspace(1.0, 0.0), false},
    {PolicyOp::autocontrast, detail::no_magnitudes, false},
    {PolicyOp::equalize, detail::no_magnitudes, false},
}};

/// RandAugment's `_AUGMENTATION_SPACE` (_auto_augment.py:384-408), in its order. TranslateX/Y reach
/// `150 / 331` of the width or height.
inline constexpr std::array<PolicyEntry, 14> rand_augment_space{{
    {PolicyOp::identity, detail::no_magnitudes, false},
    {PolicyOp::shear_x, detail::linspace(0.0, 0.3), true},
    {PolicyOp::shear_y, detail::linspace(0.0, 0.3), true},
    {PolicyOp::translate_x, detail::linspace(0.0, 150.0 / 331.0, Magnitudes::Side::width), true},
    {PolicyOp::translate_y, detail::linspace(0.0, 150.0 / 331.0, Magnitudes::Side::height), true},
    {PolicyOp::rotate, detail::linspace(0.0, 30.0), true},
    {PolicyOp::brightness, detail::linspace(0.0, 0.9), true},
    {PolicyOp::color, detail::linspace(0.0, 0.9), true},
    {PolicyOp::contrast, detail::linspace(0.0, 0.9), true},
    {PolicyOp::sharpness, detail::linspace(0.0, 0.9), true},
    {PolicyOp::posterize, detail::posterize_bits(4.0), false},
    {PolicyOp::solarize, detail::linspace(1.0, 0.0), false},
    {PolicyOp::autocontrast, detail::no_magnitudes, false},
    {PolicyOp::equalize, detail::no_magnitudes, false},
}};

/// AutoAugment's `_AUGMENTATION_SPACE` (_auto_augment.py:203-227): RandAugment's without Identity,
/// with Invert.
inline constexpr std::array<PolicyEntry, 14> auto_augment_space{{
    {PolicyOp::shear_x, detail::linspace(0.0, 0.3), true},
    {PolicyOp::shear_y, detail::linspace(0.0, 0.3), true},
    {PolicyOp::translate_x, detail::linspace(0.0, 150.0 / 331.0, Magnitudes::Side::width), true},
    {PolicyOp::translate_y, detail::linspace(0.0, 150.0 / 331.0, Magnitudes::Side::height), true},
    {PolicyOp::rotate, detail::linspace(0.0, 30.0), true},
    {PolicyOp::brightness, detail::linspace(0.0, 0.9), true},
    {PolicyOp::color, detail::linspace(0.0, 0.9), true},
    {PolicyOp::contrast, detail::linspace(0.0, 0.9), true},
    {PolicyOp::sharpness, detail::linspace(0.0, 0.9), true},
    {PolicyOp::posterize, detail::posterize_bits(4.0), false},
    {PolicyOp::solarize, detail::linspace(1.0, 0.0), false},
    {PolicyOp::autocontrast, detail::no_magnitudes, false},
    {PolicyOp::equalize, detail::no_magnitudes, false},
    {PolicyOp::invert, detail::no_magnitudes, false},
}};

/// AugMix's `_AUGMENTATION_SPACE` (_auto_augment.py:548-568, v1's autoaugment.py:508-530 alike), in
/// its order: the first 9 are its `_PARTIAL_AUGMENTATION_SPACE` (`all_ops=False`). Posterize's
/// `(4 - arange(n) / ((n - 1) / 4)).round()` (v1 rounds before subtracting: the same for its 10 bins).
inline constexpr std::array<PolicyEntry, 13> aug_mix_space{{
    {PolicyOp::shear_x, detail::linspace(0.0, 0.3), true},
    {PolicyOp::shear_y, detail::linspace(0.0, 0.3), true},
    {PolicyOp::translate_x, detail::side_over(3.0, Magnitudes::Side::width), true},
    {PolicyOp::translate_y, detail::side_over(3.0, Magnitudes::Side::height), true},
    {PolicyOp::rotate, detail::linspace(0.0, 30.0), true},
    {PolicyOp::posterize, detail::posterize_bits(4.0, 4.0), false},
    {PolicyOp::solarize, detail::linspace(1.0, 0.0), false},
    {PolicyOp::autocontrast, detail::no_magnitudes, false},
    {PolicyOp::equalize, detail::no_magnitudes, false},
    {PolicyOp::brightness, detail::linspace(0.0, 0.9), true},
    {PolicyOp::color, detail::linspace(0.0, 0.9), true},
    {PolicyOp::contrast, detail::linspace(0.0, 0.9), true},
    {PolicyOp::sharpness, detail::linspace(0.0, 0.9), true},
}};

/// Element `i` of `torch.linspace(start, end, steps)` (float32), as a double.
[[nodiscard]] inline double linspace_float32(double start, double end, int steps, int i) noexcept {
  const float s = static_cast<float>(start), e = static_cast<float>(end);
  if (steps <= 1) return s;
  const float step = ops::exact::div(ops::exact::sub(e, s), static_cast<float>(steps - 1));
  return i < steps / 2 ? ops::exact::fma(step, static_cast<float>(i), s)
                       : ops::exact::fma(-step, static_cast<float>(steps - 1 - i), e);
}

/// `float(magnitudes[bin])` of `entry` with `bins` bins on a `width` x `height` image: torchvision's
/// magnitude before its sign (0.0 for an op without magnitudes).
[[nodiscard]] inline double policy_magnitude(const PolicyEntry& entry, int bins, int bin, int width, int height) {
  const Magnitudes& m = entry.magnitudes;
  switch (m.kind) {
    case Magnitudes::Kind::linspace: {
      double end = m.end;  // Python's `150.0 / 331.0 * width`, or `width / 3.0`
      const double side = m.side == Magnitudes::Side::width ? width : height;
      if (m.side != Magnitudes::Side::none)
        end = m.over ? ops::exact::div(side, m.end) : ops::exact::mul(end, side);
      return linspace_float32(m.start, end, bins, bin);
    }
    case Magnitudes::Kind::posterize: {
      // arange(bins) / ((bins - 1) / k): an int64 tensor over a Python float, divided in float32
      const float divisor = static_cast<float>(static_cast<double>(bins - 1) / m.end);
      const float v = rintf(ops::exact::sub(static_cast<float>(m.start), ops::exact::div(static_cast<float>(bin), divisor)));
      return static_cast<double>(static_cast<std::int32_t>(v));
    }
    default: return 0.0;
  }
}

/// What a policy chose for one of its steps.
struct PolicyChoice {
  PolicyOp op = PolicyOp::identity;
  int bin = -1;           ///< the magnitude's bin (-1: the op has none)
  bool negated = false;   ///< a signed op's magnitude negated
  double magnitude = 0.0; ///< what torchvision hands `_apply_image_or_video_transform`
};

namespace detail {

/// Whether `torch.rand(()) <= p` (a float32 tensor against a Python float, compared in float32).
[[nodiscard]] inline bool rand_at_most(CounterRng& rng, double p) noexcept {
  return static_cast<float>(uniform_float32(rng, 0.0, 1.0)) <= static_cast<float>(p);
}

/// `entry`'s magnitude at `bin`, negated when a signed op draws `torch.rand(()) <= 0.5`
/// (_auto_augment.py:343-345, 432-435, 505-508); v1's (`v1`) as the file's comment says.
[[nodiscard]] inline PolicyChoice choose_magnitude(CounterRng& rng, const PolicyEntry& entry, int bins, int bin,
                                                   int width, int height, bool v1) {
  PolicyChoice c{entry.op};
  if (entry.magnitudes.kind == Magnitudes::Kind::none) return c;
  c.bin = bin;
  c.magnitude = v1 && entry.op == PolicyOp::solarize
                    ? linspace_float32(255.0 * entry.magnitudes.start, 255.0 * entry.magnitudes.end, bins, bin)
                    : policy_magnitude(entry, bins, bin, width, height);
  if (entry.is_signed && (v1 ? rng.below(2) == 1 : rand_at_most(rng, 0.5))) {
    c.negated = true;
    c.magnitude = -c.magnitude;
  }
  return c;
}

/// Python's `math.degrees(math.atan(m))`.
[[nodiscard]] inline double atan_degrees(double m) { return ops::exact::mul(std::atan(m), 180.0 / 3.141592653589793); }

/// Appends the record of `_apply_image_or_video_transform(image, op, magnitude, interpolation,
/// fill)` (_auto_augment.py:88-174), on a PIL image (`pil`: Pillow's ops) or a tensor, and, when
/// describing, torchvision's functional call; v1's `_apply_op` (autoaugment.py) where `v1`.
inline void apply_policy_op(ProgramDraw& d, const PolicyChoice& c, ops::pixel::Interpolation mode, const Fill& fill,
                            bool pil, bool v1) {
  namespace px = ops::pixel;
  const double m = c.magnitude;
  const auto factor = [&](px::PixelOp op, const char* function, const char* argument) {
    d.add(op);
    if (d.describing()) d.describe({function, {DrawnArg::number(argument, 1.0 + m)}});
  };
  const auto plain = [&](px::PixelOp op, const char* function) {
    d.add(op);
    if (d.describing()) d.describe({function});
  };
  switch (c.op) {
    case PolicyOp::identity: return;
    case PolicyOp::shear_x:
    case PolicyOp::shear_y:
    case PolicyOp::translate_x:
    case PolicyOp::translate_y: {
      // shears about the top-left corner (center=[0, 0]); translations by int(magnitude) pixels
      px::AffineParams a{.interpolation = mode, .fill = fill.values(), .v1 = v1};
      std::int64_t tx = 0, ty = 0;
      if (c.op == PolicyOp::shear_x) a.shear[0] = atan_degrees(m);
      if (c.op == PolicyOp::shear_y) a.shear[1] = atan_degrees(m);
      if (c.op == PolicyOp::translate_x) tx = static_cast<std::int64_t>(m);
      if (c.op == PolicyOp::translate_y) ty = static_cast<std::int64_t>(m);
      if (c.op == PolicyOp::shear_x || c.op == PolicyOp::shear_y) a.center = std::array<double, 2>{0.0, 0.0};
      a.translate = {static_cast<double>(tx), static_cast<double>(ty)};
      d.add(pil ? px::pil::affine(a, d.width(), d.height()) : px::affine(a, d.width(), d.height()));
      if (d.describing()) {
        DrawnCall call{"affine",
                       {DrawnArg::number("angle", 0.0), DrawnArg::integers("translate", {tx, ty}),
                        DrawnArg::number("scale", 1.0), DrawnArg::list("shear", {a.shear[0], a.shear[1]})}};
        describe_sampling(call, mode, fill, a.center);
        d.describe(std::move(call));
      }
      return;
    }
    case PolicyOp::rotate:
    {
      const px::RotateParams r{.angle = m, .interpolation = mode, .fill = fill.values(), .v1 = v1};
      d.add(pil ? px::pil::rotate(r, d.width(), d.height()) : px::rotate(r, d.width(), d.height()));
      if (d.describing()) {
        DrawnCall call{"rotate", {DrawnArg::number("angle", m)}};
        describe_sampling(call, mode, fill, std::nullopt);
        d.describe(std::move(call));
      }
      return;
    }
    case PolicyOp::brightness:
      factor(pil ? px::pil::adjust_brightness(1.0 + m) : px::adjust_brightness(1.0 + m), "adjust_brightness",
             "brightness_factor");
      return;
    case PolicyOp::color:
      factor(pil ? px::pil::adjust_saturation(1.0 + m)
                 : (v1 ? px::v1::adjust_saturation(1.0 + m) : px::adjust_saturation(1.0 + m)),
             "adjust_saturation", "saturation_factor");
      return;
    case PolicyOp::contrast:
      factor(pil ? px::pil::adjust_contrast(1.0 + m) : (v1 ? px::v1::adjust_contrast(1.0 + m) : px::adjust_contrast(1.0 + m)),
             "adjust_contrast", "contrast_factor");
      return;
    case PolicyOp::sharpness:
      factor(pil ? px::pil::adjust_sharpness(1.0 + m)
                 : (v1 ? px::v1::adjust_sharpness(1.0 + m) : px::adjust_sharpness(1.0 + m)),
             "adjust_sharpness", "sharpness_factor");
      return;
    case PolicyOp::posterize: {
      const int bits = static_cast<int>(m);
      d.add(px::posterize(bits));
      if (d.describing()) d.describe({"posterize", {DrawnArg::integer("bits", bits)}});
      return;
    }
    case PolicyOp::solarize: {
      const double threshold = v1 ? m : 255.0 * m;  // v2's: the uint8 image's largest value times the magnitude
      d.add(pil ? px::pil::solarize(threshold) : px::solarize(threshold));
      if (d.describing()) d.describe({"solarize", {DrawnArg::number("threshold", threshold)}});
      return;
    }
    case PolicyOp::autocontrast:
      plain(pil ? px::pil::autocontrast() : (v1 ? px::v1::autocontrast() : px::autocontrast()), "autocontrast");
      return;
    case PolicyOp::equalize: plain(px::equalize(), "equalize"); return;
    case PolicyOp::invert: plain(px::invert(), "invert"); return;
  }
}

/// The checks every policy makes of its `num_magnitude_bins`, interpolation and fill.
inline void expect_policy_arguments(const char* policy, int num_magnitude_bins, const Fill& fill) {
  expect_transform(num_magnitude_bins >= 2, policy,
                   "num_magnitude_bins must be at least 2 (Posterize's magnitudes divide by num_magnitude_bins - 1), "
                   "got " + std::to_string(num_magnitude_bins));
  expect_fill(policy, fill);
}

}  // namespace detail
}  // namespace v0
}  // namespace conveyor

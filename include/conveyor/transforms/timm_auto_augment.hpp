#pragma once
/// @file
/// timm's AutoAugment (timm.data.auto_augment.auto_augment_transform, the `auto_augment="original"`,
/// "originalr", "v0" or "v0r" of `create_transform`, with "mstd"), on PIL images: a sub-policy
/// chosen uniformly (`random.choice(policy)`), then its two ops in order, each applied unless
/// `random.random() > prob`, at its own magnitude with timm's noise (timm_augment_ops.hpp's level
/// and arguments). The tables are timm's `auto_augment_policy_*`, in their order. Host-only: it
/// chooses records.

#include <conveyor/config.hpp>
#include <conveyor/transforms/arguments.hpp>
#include <conveyor/transforms/fields.hpp>
#include <conveyor/transforms/program_draw.hpp>
#include <conveyor/transforms/timm_augment_ops.hpp>

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>

namespace conveyor {
inline namespace v0 {

/// timm's AutoAugment policies (auto_augment_policy's names).
enum class TimmPolicy : std::int32_t { original, originalr, v0, v0r };

namespace detail {
inline constexpr const char* timm_policy_names[] = {"original", "originalr", "v0", "v0r"};
}  // namespace detail

[[nodiscard]] constexpr std::span<const char* const> enum_names(TimmPolicy) noexcept {
  constexpr std::span<const char* const> names = detail::timm_policy_names;
  return names;
}

/// One op of a sub-policy: timm's (name, prob, magnitude).
struct TimmStep {
  TimmOp op;
  double prob;
  double magnitude;
};

/// A sub-policy: two ops, in order.
struct TimmSubPolicy {
  std::array<TimmStep, 2> steps;
};

namespace detail {

/// auto_augment_policy_original, _originalr, _v0 and _v0r, in TimmPolicy's order.
inline constexpr std::array<std::array<TimmSubPolicy, 25>, 4> timm_policies{{
    {{  // original
        {{{{TimmOp::posterize_original, 0.4, 8}, {TimmOp::rotate, 0.6, 9}}}},
        {{{{TimmOp::solarize, 0.6, 5}, {TimmOp::auto_contrast, 0.6, 5}}}},
        {{{{TimmOp::equalize, 0.8, 8}, {TimmOp::equalize, 0.6, 3}}}},
        {{{{TimmOp::posterize_original, 0.6, 7}, {TimmOp::posterize_original, 0.6, 6}}}},
        {{{{TimmOp::equalize, 0.4, 7}, {TimmOp::solarize, 0.2, 4}}}},
        {{{{TimmOp::equalize, 0.4, 4}, {TimmOp::rotate, 0.8, 8}}}},
        {{{{TimmOp::solarize, 0.6, 3}, {TimmOp::equalize, 0.6, 7}}}},
        {{{{TimmOp::posterize_original, 0.8, 5}, {TimmOp::equalize, 1.0, 2}}}},
        {{{{TimmOp::rotate, 0.2, 3}, {TimmOp::solarize, 0.6, 8}}}},
        {{{{TimmOp::equalize, 0.6, 8}, {TimmOp::posterize_original, 0.4, 6}}}},
        {{{{TimmOp::rotate, 0.8, 8}, {TimmOp::color, 0.4, 0}}}},
        {{{{TimmOp::rotate, 0.4, 9}, {TimmOp::equalize, 0.6, 2}}}},
        {{{{TimmOp::equalize, 0.0, 7}, {TimmOp::equalize, 0.8, 8}}}},
        {{{{TimmOp::invert, 0.6, 4}, {TimmOp::equalize, 1.0, 8}}}},
        {{{{TimmOp::color, 0.6, 4}, {TimmOp::contrast, 1.0, 8}}}},
        {{{{TimmOp::rotate, 0.8, 8}, {TimmOp::color, 1.0, 2}}}},
        {{{{TimmOp::color, 0.8, 8}, {TimmOp::solarize, 0.8, 7}}}},
        {{{{TimmOp::sharpness, 0.4, 7}, {TimmOp::invert, 0.6, 8}}}},
        {{{{TimmOp::shear_x, 0.6, 5}, {TimmOp::equalize, 1.0, 9}}}},
        {{{{TimmOp::color, 0.4, 0}, {TimmOp::equalize, 0.6, 3}}}},
        {{{{TimmOp::equalize, 0.4, 7}, {TimmOp::solarize, 0.2, 4}}}},
        {{{{TimmOp::solarize, 0.6, 5}, {TimmOp::auto_contrast, 0.6, 5}}}},
        {{{{TimmOp::invert, 0.6, 4}, {TimmOp::equalize, 1.0, 8}}}},
        {{{{TimmOp::color, 0.6, 4}, {TimmOp::contrast, 1.0, 8}}}},
        {{{{TimmOp::equalize, 0.8, 8}, {TimmOp::equalize, 0.6, 3}}}},
    }},
    {{  // originalr
        {{{{TimmOp::posterize_increasing, 0.4, 8}, {TimmOp::rotate, 0.6, 9}}}},
        {{{{TimmOp::solarize, 0.6, 5}, {TimmOp::auto_contrast, 0.6, 5}}}},
        {{{{TimmOp::equalize, 0.8, 8}, {TimmOp::equalize, 0.6, 3}}}},
        {{{{TimmOp::posterize_increasing, 0.6, 7}, {TimmOp::posterize_increasing, 0.6, 6}}}},
        {{{{TimmOp::equalize, 0.4, 7}, {TimmOp::solarize, 0.2, 4}}}},
        {{{{TimmOp::equalize, 0.4, 4}, {TimmOp::rotate, 0.8, 8}}}},
        {{{{TimmOp::solarize, 0.6, 3}, {TimmOp::equalize, 0.6, 7}}}},
        {{{{TimmOp::posterize_increasing, 0.8, 5}, {TimmOp::equalize, 1.0, 2}}}},
        {{{{TimmOp::rotate, 0.2, 3}, {TimmOp::solarize, 0.6, 8}}}},
        {{{{TimmOp::equalize, 0.6, 8}, {TimmOp::posterize_increasing, 0.4, 6}}}},
        {{{{TimmOp::rotate, 0.8, 8}, {TimmOp::color, 0.4, 0}}}},
        {{{{TimmOp::rotate, 0.4, 9}, {TimmOp::equalize, 0.6, 2}}}},
        {{{{TimmOp::equalize, 0.0, 7}, {TimmOp::equalize, 0.8, 8}}}},
        {{{{TimmOp::invert, 0.6, 4}, {TimmOp::equalize, 1.0, 8}}}},
        {{{{TimmOp::color, 0.6, 4}, {TimmOp::contrast, 1.0, 8}}}},
        {{{{TimmOp::rotate, 0.8, 8}, {TimmOp::color, 1.0, 2}}}},
        {{{{TimmOp::color, 0.8, 8}, {TimmOp::solarize, 0.8, 7}}}},
        {{{{TimmOp::sharpness, 0.4, 7}, {TimmOp::invert, 0.6, 8}}}},
        {{{{TimmOp::shear_x, 0.6, 5}, {TimmOp::equalize, 1.0, 9}}}},
        {{{{TimmOp::color, 0.4, 0}, {TimmOp::equalize, 0.6, 3}}}},
        {{{{TimmOp::equalize, 0.4, 7}, {TimmOp::solarize, 0.2, 4}}}},
        {{{{TimmOp::solarize, 0.6, 5}, {TimmOp::auto_contrast, 0.6, 5}}}},
        {{{{TimmOp::invert, 0.6, 4}, {TimmOp::equalize, 1.0, 8}}}},
        {{{{TimmOp::color, 0.6, 4}, {TimmOp::contrast, 1.0, 8}}}},
        {{{{TimmOp::equalize, 0.8, 8}, {TimmOp::equalize, 0.6, 3}}}},
    }},
    {{  // v0
        {{{{TimmOp::equalize, 0.8, 1}, {TimmOp::shear_y, 0.8, 4}}}},
        {{{{TimmOp::color, 0.4, 9}, {TimmOp::equalize, 0.6, 3}}}},
        {{{{TimmOp::color, 0.4, 1}, {TimmOp::rotate, 0.6, 8}}}},
        {{{{TimmOp::solarize, 0.8, 3}, {TimmOp::equalize, 0.4, 7}}}},
        {{{{TimmOp::solarize, 0.4, 2}, {TimmOp::solarize, 0.6, 2}}}},
        {{{{TimmOp::color, 0.2, 0}, {TimmOp::equalize, 0.8, 8}}}},
        {{{{TimmOp::equalize, 0.4, 8}, {TimmOp::solarize_add, 0.8, 3}}}},
        {{{{TimmOp::shear_x, 0.2, 9}, {TimmOp::rotate, 0.6, 8}}}},
        {{{{TimmOp::color, 0.6, 1}, {TimmOp::equalize, 1.0, 2}}}},
        {{{{TimmOp::invert, 0.4, 9}, {TimmOp::rotate, 0.6, 0}}}},
        {{{{TimmOp::equalize, 1.0, 9}, {TimmOp::shear_y, 0.6, 3}}}},
        {{{{TimmOp::color, 0.4, 7}, {TimmOp::equalize, 0.6, 0}}}},
        {{{{TimmOp::posterize, 0.4, 6}, {TimmOp::auto_contrast, 0.4, 7}}}},
        {{{{TimmOp::solarize, 0.6, 8}, {TimmOp::color, 0.6, 9}}}},
        {{{{TimmOp::solarize, 0.2, 4}, {TimmOp::rotate, 0.8, 9}}}},
        {{{{TimmOp::rotate, 1.0, 7}, {TimmOp::translate_y_rel, 0.8, 9}}}},
        {{{{TimmOp::shear_x, 0.0, 0}, {TimmOp::solarize, 0.8, 4}}}},
        {{{{TimmOp::shear_y, 0.8, 0}, {TimmOp::color, 0.6, 4}}}},
        {{{{TimmOp::color, 1.0, 0}, {TimmOp::rotate, 0.6, 2}}}},
        {{{{TimmOp::equalize, 0.8, 4}, {TimmOp::equalize, 0.0, 8}}}},
        {{{{TimmOp::equalize, 1.0, 4}, {TimmOp::auto_contrast, 0.6, 2}}}},
        {{{{TimmOp::shear_y, 0.4, 7}, {TimmOp::solarize_add, 0.6, 7}}}},
        {{{{TimmOp::posterize, 0.8, 2}, {TimmOp::solarize, 0.6, 10}}}},
        {{{{TimmOp::solarize, 0.6, 8}, {TimmOp::equalize, 0.6, 1}}}},
        {{{{TimmOp::color, 0.8, 6}, {TimmOp::rotate, 0.4, 5}}}},
    }},
    {{  // v0r
        {{{{TimmOp::equalize, 0.8, 1}, {TimmOp::shear_y, 0.8, 4}}}},
        {{{{TimmOp::color, 0.4, 9}, {TimmOp::equalize, 0.6, 3}}}},
        {{{{TimmOp::color, 0.4, 1}, {TimmOp::rotate, 0.6, 8}}}},
        {{{{TimmOp::solarize, 0.8, 3}, {TimmOp::equalize, 0.4, 7}}}},
        {{{{TimmOp::solarize, 0.4, 2}, {TimmOp::solarize, 0.6, 2}}}},
        {{{{TimmOp::color, 0.2, 0}, {TimmOp::equalize, 0.8, 8}}}},
        {{{{TimmOp::equalize, 0.4, 8}, {TimmOp::solarize_add, 0.8, 3}}}},
        {{{{TimmOp::shear_x, 0.2, 9}, {TimmOp::rotate, 0.6, 8}}}},
        {{{{TimmOp::color, 0.6, 1}, {TimmOp::equalize, 1.0, 2}}}},
        {{{{TimmOp::invert, 0.4, 9}, {TimmOp::rotate, 0.6, 0}}}},
        {{{{TimmOp::equalize, 1.0, 9}, {TimmOp::shear_y, 0.6, 3}}}},
        {{{{TimmOp::color, 0.4, 7}, {TimmOp::equalize, 0.6, 0}}}},
        {{{{TimmOp::posterize_increasing, 0.4, 6}, {TimmOp::auto_contrast, 0.4, 7}}}},
        {{{{TimmOp::solarize, 0.6, 8}, {TimmOp::color, 0.6, 9}}}},
        {{{{TimmOp::solarize, 0.2, 4}, {TimmOp::rotate, 0.8, 9}}}},
        {{{{TimmOp::rotate, 1.0, 7}, {TimmOp::translate_y_rel, 0.8, 9}}}},
        {{{{TimmOp::shear_x, 0.0, 0}, {TimmOp::solarize, 0.8, 4}}}},
        {{{{TimmOp::shear_y, 0.8, 0}, {TimmOp::color, 0.6, 4}}}},
        {{{{TimmOp::color, 1.0, 0}, {TimmOp::rotate, 0.6, 2}}}},
        {{{{TimmOp::equalize, 0.8, 4}, {TimmOp::equalize, 0.0, 8}}}},
        {{{{TimmOp::equalize, 1.0, 4}, {TimmOp::auto_contrast, 0.6, 2}}}},
        {{{{TimmOp::shear_y, 0.4, 7}, {TimmOp::solarize_add, 0.6, 7}}}},
        {{{{TimmOp::posterize_increasing, 0.8, 2}, {TimmOp::solarize, 0.6, 10}}}},
        {{{{TimmOp::solarize, 0.6, 8}, {TimmOp::equalize, 0.6, 1}}}},
        {{{{TimmOp::color, 0.8, 6}, {TimmOp::rotate, 0.4, 5}}}},
    }},
}};

}  // namespace detail

struct TimmAutoAugment {
  static constexpr const char* name = "TimmAutoAugment";
  static constexpr const char* summary =
      "timm's AutoAugment on PIL images: one of `policy`'s 25 sub-policies, its two ops each applied with its "
      "probability at its magnitude (with noise of `magnitude_std`, clipped to `magnitude_max`).";
  static constexpr FieldName fields[] = {"policy",   "magnitude_std", "magnitude_max",
                                         "img_mean", "interpolation", "translate_pct"};
  TimmPolicy policy = TimmPolicy::v0;
  double magnitude_std = 0.0;  ///< 0: none; infinite: uniform in [0, magnitude]
  std::optional<double> magnitude_max{};  ///< none (or 0): 10
  Fill img_mean{128.0, 128.0, 128.0};  ///< the geometric ops' fillcolor; none: timm's _FILL, the same
  std::optional<ops::pixel::Interpolation> interpolation{};  ///< none: bilinear or bicubic per op, at random
  double translate_pct = 0.45;

  void validate() const {
    detail::expect_transform(static_cast<std::size_t>(policy) < detail::timm_policies.size(), name,
                             "policy must be original, originalr, v0 or v0r");
    detail::expect_timm_hparams(name, magnitude_std, magnitude_max, img_mean, translate_pct);
  }
  void validate_pil() const {}  // timm's ops are Pillow's
  void validate_tensor() const { detail::refuse_timm_on_tensor(name); }
  [[nodiscard]] int max_ops() const { return 2; }

  void draw(ProgramDraw& d, int position) const {
    CounterRng rng = d.stream(position);
    const auto& table = detail::timm_policies[static_cast<std::size_t>(policy)];
    const TimmOpParams params = detail::timm_op_params(img_mean, interpolation, translate_pct);
    for (const TimmStep& step : table[rng.below(table.size())].steps) {
      if (step.prob < 1.0 && rng.uniform() > step.prob) continue;
      detail::apply_timm_op(d, rng, step.op, detail::timm_level(rng, step.magnitude, magnitude_std, magnitude_max),
                            params);
    }
  }
};

}  // namespace v0
}  // namespace conveyor

#pragma once
/// @file
/// torchvision.transforms.v2.AutoAugment(policy=IMAGENET, interpolation=NEAREST, fill=None): one of
/// the policy's 25 sub-policies per sample (`torch.randint(25)`), then each of its two steps
/// (op, probability, magnitude bin) applied when `torch.rand(()) <= probability`, its magnitude
/// the bin of its op's 10 magnitudes in `_AUGMENTATION_SPACE` (augmentation_space.hpp), negated for
/// a signed op when `torch.rand(()) <= 0.5` (`forward`, _auto_augment.py:329-353). The ImageNet,
/// CIFAR10 and SVHN sub-policies are torchvision's (`_get_policies`, _auto_augment.py:239-327).
/// Host-only: it chooses records.

#include <conveyor/config.hpp>
#include <conveyor/ops/pixel/affine.hpp>
#include <conveyor/transforms/arguments.hpp>
#include <conveyor/transforms/augmentation_space.hpp>
#include <conveyor/transforms/fields.hpp>
#include <conveyor/transforms/program_draw.hpp>

#include <array>
#include <cstdint>
#include <span>

namespace conveyor {
inline namespace v0 {

/// torchvision's AutoAugmentPolicy.
enum class AutoAugmentPolicy : std::int32_t { imagenet, cifar10, svhn };

namespace detail {
inline constexpr const char* policy_names[] = {"imagenet", "cifar10", "svhn"};
}  // namespace detail

/// The policies' names, as torchvision's AutoAugmentPolicy values spell them, in the enum's order.
[[nodiscard]] constexpr std::span<const char* const> enum_names(AutoAugmentPolicy) noexcept {
  constexpr std::span<const char* const> names = detail::policy_names;
  return names;
}

/// One step of a sub-policy: its op, the probability it applies, its magnitude bin (-1: None).
struct SubPolicyStep {
  PolicyOp op;
  double probability;
  int magnitude_bin;
};
using SubPolicy = std::array<SubPolicyStep, 2>;

namespace detail {

// Written from torchvision's source, line for line.
// _auto_augment.py:244-268
inline constexpr std::array<SubPolicy, 25> imagenet_policy{{
    {{{PolicyOp::posterize, 0.4, 8}, {PolicyOp::rotate, 0.6, 9}}},
    {{{PolicyOp::solarize, 0.6, 5}, {PolicyOp::autocontrast, 0.6, -1}}},
    {{{PolicyOp::equalize, 0.8, -1}, {PolicyOp::equalize, 0.6, -1}}},
    {{{PolicyOp::posterize, 0.6, 7}, {PolicyOp::posterize, 0.6, 6}}},
    {{{PolicyOp::equalize, 0.4, -1}, {PolicyOp::solarize, 0.2, 4}}},
    {{{PolicyOp::equalize, 0.4, -1}, {PolicyOp::rotate, 0.8, 8}}},
    {{{PolicyOp::solarize, 0.6, 3}, {PolicyOp::equalize, 0.6, -1}}},
    {{{PolicyOp::posterize, 0.8, 5}, {PolicyOp::equalize, 1.0, -1}}},
    {{{PolicyOp::rotate, 0.2, 3}, {PolicyOp::solarize, 0.6, 8}}},
    {{{PolicyOp::equalize, 0.6, -1}, {PolicyOp::posterize, 0.4, 6}}},
    {{{PolicyOp::rotate, 0.8, 8}, {PolicyOp::color, 0.4, 0}}},
    {{{PolicyOp::rotate, 0.4, 9}, {PolicyOp::equalize, 0.6, -1}}},
    {{{PolicyOp::equalize, 0.0, -1}, {PolicyOp::equalize, 0.8, -1}}},
    {{{PolicyOp::invert, 0.6, -1}, {PolicyOp::equalize, 1.0, -1}}},
    {{{PolicyOp::color, 0.6, 4}, {PolicyOp::contrast, 1.0, 8}}},
    {{{PolicyOp::rotate, 0.8, 8}, {PolicyOp::color, 1.0, 2}}},
    {{{PolicyOp::color, 0.8, 8}, {PolicyOp::solarize, 0.8, 7}}},
    {{{PolicyOp::sharpness, 0.4, 7}, {PolicyOp::invert, 0.6, -1}}},
    {{{PolicyOp::shear_x, 0.6, 5}, {PolicyOp::equalize, 1.0, -1}}},
    {{{PolicyOp::color, 0.4, 0}, {PolicyOp::equalize, 0.6, -1}}},
    {{{PolicyOp::equalize, 0.4, -1}, {PolicyOp::solarize, 0.2, 4}}},
    {{{PolicyOp::solarize, 0.6, 5}, {PolicyOp::autocontrast, 0.6, -1}}},
    {{{PolicyOp::invert, 0.6, -1}, {PolicyOp::equalize, 1.0, -1}}},
    {{{PolicyOp::color, 0.6, 4}, {PolicyOp::contrast, 1.0, 8}}},
    {{{PolicyOp::equalize, 0.8, -1}, {PolicyOp::equalize, 0.6, -1}}},
}};
// _auto_augment.py:272-296
inline constexpr std::array<SubPolicy, 25> cifar10_policy{{
    {{{PolicyOp::invert, 0.1, -1}, {PolicyOp::contrast, 0.2, 6}}},
    {{{PolicyOp::rotate, 0.7, 2}, {PolicyOp::translate_x, 0.3, 9}}},
    {{{PolicyOp::sharpness, 0.8, 1}, {PolicyOp::sharpness, 0.9, 3}}},
    {{{PolicyOp::shear_y, 0.5, 8}, {PolicyOp::translate_y, 0.7, 9}}},
    {{{PolicyOp::autocontrast, 0.5, -1}, {PolicyOp::equalize, 0.9, -1}}},
    {{{PolicyOp::shear_y, 0.2, 7}, {PolicyOp::posterize, 0.3, 7}}},
    {{{PolicyOp::color, 0.4, 3}, {PolicyOp::brightness, 0.6, 7}}},
    {{{PolicyOp::sharpness, 0.3, 9}, {PolicyOp::brightness, 0.7, 9}}},
    {{{PolicyOp::equalize, 0.6, -1}, {PolicyOp::equalize, 0.5, -1}}},
    {{{PolicyOp::contrast, 0.6, 7}, {PolicyOp::sharpness, 0.6, 5}}},
    {{{PolicyOp::color, 0.7, 7}, {PolicyOp::translate_x, 0.5, 8}}},
    {{{PolicyOp::equalize, 0.3, -1}, {PolicyOp::autocontrast, 0.4, -1}}},
    {{{PolicyOp::translate_y, 0.4, 3}, {PolicyOp::sharpness, 0.2, 6}}},
    {{{PolicyOp::brightness, 0.9, 6}, {PolicyOp::color, 0.2, 8}}},
    {{{PolicyOp::solarize, 0.5, 2}, {PolicyOp::invert, 0.0, -1}}},
    {{{PolicyOp::equalize, 0.2, -1}, {PolicyOp::autocontrast, 0.6, -1}}},
    {{{PolicyOp::equalize, 0.2, -1}, {PolicyOp::equalize, 0.6, -1}}},
    {{{PolicyOp::color, 0.9, 9}, {PolicyOp::equalize, 0.6, -1}}},
    {{{PolicyOp::autocontrast, 0.8, -1}, {PolicyOp::solarize, 0.2, 8}}},
    {{{PolicyOp::brightness, 0.1, 3}, {PolicyOp::color, 0.7, 0}}},
    {{{PolicyOp::solarize, 0.4, 5}, {PolicyOp::autocontrast, 0.9, -1}}},
    {{{PolicyOp::translate_y, 0.9, 9}, {PolicyOp::translate_y, 0.7, 9}}},
    {{{PolicyOp::autocontrast, 0.9, -1}, {PolicyOp::solarize, 0.8, 3}}},
    {{{PolicyOp::equalize, 0.8, -1}, {PolicyOp::invert, 0.1, -1}}},
    {{{PolicyOp::translate_y, 0.7, 9}, {PolicyOp::autocontrast, 0.9, -1}}},
}};
// _auto_augment.py:300-324
inline constexpr std::array<SubPolicy, 25> svhn_policy{{
    {{{PolicyOp::shear_x, 0.9, 4}, {PolicyOp::invert, 0.2, -1}}},
    {{{PolicyOp::shear_y, 0.9, 8}, {PolicyOp::invert, 0.7, -1}}},
    {{{PolicyOp::equalize, 0.6, -1}, {PolicyOp::solarize, 0.6, 6}}},
    {{{PolicyOp::invert, 0.9, -1}, {PolicyOp::equalize, 0.6, -1}}},
    {{{PolicyOp::equalize, 0.6, -1}, {PolicyOp::rotate, 0.9, 3}}},
    {{{PolicyOp::shear_x, 0.9, 4}, {PolicyOp::autocontrast, 0.8, -1}}},
    {{{PolicyOp::shear_y, 0.9, 8}, {PolicyOp::invert, 0.4, -1}}},
    {{{PolicyOp::shear_y, 0.9, 5}, {PolicyOp::solarize, 0.2, 6}}},
    {{{PolicyOp::invert, 0.9, -1}, {PolicyOp::autocontrast, 0.8, -1}}},
    {{{PolicyOp::equalize, 0.6, -1}, {PolicyOp::rotate, 0.9, 3}}},
    {{{PolicyOp::shear_x, 0.9, 4}, {PolicyOp::solarize, 0.3, 3}}},
    {{{PolicyOp::shear_y, 0.8, 8}, {PolicyOp::invert, 0.7, -1}}},
    {{{PolicyOp::equalize, 0.9, -1}, {PolicyOp::translate_y, 0.6, 6}}},
    {{{PolicyOp::invert, 0.9, -1}, {PolicyOp::equalize, 0.6, -1}}},
    {{{PolicyOp::contrast, 0.3, 3}, {PolicyOp::rotate, 0.8, 4}}},
    {{{PolicyOp::invert, 0.8, -1}, {PolicyOp::translate_y, 0.0, 2}}},
    {{{PolicyOp::shear_y, 0.7, 6}, {PolicyOp::solarize, 0.4, 8}}},
    {{{PolicyOp::invert, 0.6, -1}, {PolicyOp::rotate, 0.8, 4}}},
    {{{PolicyOp::shear_y, 0.3, 7}, {PolicyOp::translate_x, 0.9, 3}}},
    {{{PolicyOp::shear_x, 0.1, 6}, {PolicyOp::invert, 0.6, -1}}},
    {{{PolicyOp::solarize, 0.7, 2}, {PolicyOp::translate_y, 0.6, 7}}},
    {{{PolicyOp::shear_y, 0.8, 4}, {PolicyOp::invert, 0.8, -1}}},
    {{{PolicyOp::shear_x, 0.7, 9}, {PolicyOp::translate_y, 0.8, 3}}},
    {{{PolicyOp::shear_y, 0.8, 5}, {PolicyOp::autocontrast, 0.7, -1}}},
    {{{PolicyOp::shear_x, 0.7, 2}, {PolicyOp::invert, 0.1, -1}}},
}};

}  // namespace detail

/// The 25 sub-policies of `policy`.
[[nodiscard]] constexpr std::span<const SubPolicy, 25> auto_augment_policies(AutoAugmentPolicy policy) noexcept {
  switch (policy) {
    case AutoAugmentPolicy::cifar10: return detail::cifar10_policy;
    case AutoAugmentPolicy::svhn: return detail::svhn_policy;
    default: return detail::imagenet_policy;
  }
}

/// What AutoAugment chose for a sample: the sub-policy, and its steps that apply, in order.
struct AutoAugmentChoice {
  int sub_policy = 0;
  std::array<bool, 2> applied{};
  std::array<PolicyChoice, 2> steps{};
};

struct AutoAugment {
  static constexpr const char* name = "AutoAugment";
  static constexpr const char* summary =
      "One of the learned `policy`'s sub-policies (\"imagenet\", \"cifar10\", \"svhn\") for every sample.";
  static constexpr FieldName fields[] = {"policy", "interpolation", "fill", "v1"};
  /// AutoAugment's magnitudes always have 10 bins (_auto_augment.py:341).
  static constexpr int num_magnitude_bins = 10;
  AutoAugmentPolicy policy = AutoAugmentPolicy::imagenet;
  ops::pixel::Interpolation interpolation = ops::pixel::Interpolation::nearest;
  Fill fill = Fill::none();
  bool v1 = false;  ///< torchvision v1's class (augmentation_space.hpp says where it differs), on PIL images

  void validate() const {
    detail::expect_transform(policy == AutoAugmentPolicy::imagenet || policy == AutoAugmentPolicy::cifar10 ||
                                 policy == AutoAugmentPolicy::svhn,
                             name, "policy must be IMAGENET, CIFAR10 or SVHN");
    detail::expect_fill(name, fill);
  }
  void validate_pil() const {}  // Pillow's ops (augmentation_space.hpp's apply_policy_op)
  void validate_tensor() const { detail::expect_v1_on_pil(name, v1); }
  [[nodiscard]] int max_ops() const { return 2; }

  /// The sub-policy, steps and magnitudes drawn from `rng` for a `width` x `height` image.
  [[nodiscard]] AutoAugmentChoice choose(CounterRng& rng, int width, int height) const {
    const auto policies = auto_augment_policies(policy);
    AutoAugmentChoice c;
    c.sub_policy = static_cast<int>(rng.below(policies.size()));
    for (std::size_t k = 0; k < 2; ++k) {
      const SubPolicyStep& step = policies[static_cast<std::size_t>(c.sub_policy)][k];
      if (!detail::rand_at_most(rng, step.probability)) continue;
      c.applied[k] = true;
      const PolicyEntry* entry = &auto_augment_space[0];
      for (const PolicyEntry& e : auto_augment_space)
        if (e.op == step.op) entry = &e;
      c.steps[k] = detail::choose_magnitude(rng, *entry, num_magnitude_bins, step.magnitude_bin, width, height,
                                          v1);
    }
    return c;
  }
  void draw(ProgramDraw& d, int position) const {
    CounterRng rng = d.stream(position);
    const AutoAugmentChoice c = choose(rng, d.width(), d.height());
    for (std::size_t k = 0; k < 2; ++k)
      if (c.applied[k]) detail::apply_policy_op(d, c.steps[k], interpolation, fill, d.pil(position), v1);
  }
};

}  // namespace v0
}  // namespace conveyor

#pragma once
/// @file
/// torchvision.transforms.v2.MixUp(alpha, num_classes) on a batch (transforms/v2/_augment.py):
/// `lam = float(Beta(alpha, alpha).sample())` (float32), then
///   images:  out = x.roll(1, 0).mul_(1.0 - lam).add_(x.mul(lam))
///   labels:  one_hot(labels).float().roll(1, 0).mul_(1.0 - lam).add_(one_hot.mul(lam))
/// Both products round to the tensor's dtype before the sum (torch computes float32 ops in float32
/// with the Python scalar cast to float32, and float16/bfloat16 ones in float32 rounded after each
/// op), which `apply` spells with exact::mul and exact::add. torchvision's MixUp fails on uint8
/// images (an in-place multiply by a float); so does this one, when the pipeline is made.

#include <conveyor/config.hpp>
#include <conveyor/batch/batch_mix.hpp>
#include <conveyor/batch/beta.hpp>
#include <conveyor/core/error.hpp>
#include <conveyor/core/rng.hpp>
#include <conveyor/ops/convert.hpp>
#include <conveyor/ops/exact_float.hpp>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>

namespace conveyor {
inline namespace v0 {

struct MixUp {
  static constexpr const char* name = "MixUp";
  double alpha = 1.0;            ///< Beta(alpha, alpha)'s parameter, > 0
  std::int64_t num_classes = 0;  ///< the width of the soft targets, > 0

  void validate() const { detail::validate_mix_arguments(name, alpha, num_classes); }
  /// @throws ConfigError for images MixUp cannot blend (uint8, as torchvision).
  void validate(const MixGeometry& g) const {
    if (g.dtype != DType::f32 && g.dtype != DType::f16 && g.dtype != DType::bf16)
      throw ConfigError(std::string(name) + ": the images must be floating point (f32, f16 or bf16), got " +
                        std::string(to_string(g.dtype)) + ": torchvision's MixUp cannot blend uint8 images either");
  }

  [[nodiscard]] BatchMix draw(CounterRng& rng, const MixGeometry&) const {
    BatchMix m;
    m.kind = BatchMix::Kind::mixup;
    m.lam = static_cast<float>(detail::beta_variate(rng, alpha, alpha));  // torch samples in float32
    m.label_lam = m.lam;
    return m;
  }

  /// Blends `self` (sample i, in place) with `partner` (sample i - 1 as it was before the batch
  /// transform), one sample's elements.
  static void apply(void* self, const void* partner, const MixGeometry& g, const BatchMix& m) noexcept {
    blend(self, partner, nullptr, g, m);
  }
  /// Blends `a` and `b` with each other, both in place (timm's mirrored pairs).
  static void apply_both(void* a, void* b, const MixGeometry& g, const BatchMix& m) noexcept { blend(a, b, b, g, m); }

  /// One float32 element `a` blended with its partner's `b`: b * other + a * own (own = lam,
  /// other = 1 - lam, both as float32), each product rounded. The device step uses it too.
  [[nodiscard]] CONVEYOR_HD static float blend_value(float a, float b, float own, float other) noexcept {
    return ops::exact::add(ops::exact::mul(b, other), ops::exact::mul(a, own));
  }
  /// The same for float16 (`half`) or bfloat16 bits: torch computes in float32 and rounds to the
  /// dtype after each op.
  [[nodiscard]] CONVEYOR_HD static std::uint16_t blend_value(std::uint16_t a, std::uint16_t b, float own, float other,
                                                             bool half) noexcept {
    const auto widen = [half](std::uint16_t v) { return half ? ops::f16_to_float(v) : ops::bf16_to_float(v); };
    const auto narrow = [half](float v) { return half ? ops::to_f16_bits(v) : ops::to_bf16_bits(v); };
    const float x = widen(a), y = widen(b);
    return narrow(ops::exact::add(widen(narrow(ops::exact::mul(y, other))), widen(narrow(ops::exact::mul(x, own)))));
  }

 private:
  /// x = blend_value(x, partner) for every element of `x`; and, when `partner_out` is given (it is
  /// `partner`), the partner's own blend too.
  static void blend(void* x_, const void* partner_, void* partner_out, const MixGeometry& g, const BatchMix& m) noexcept {
    const float own = static_cast<float>(m.lam), other = static_cast<float>(1.0 - m.lam);
    const std::size_t n = static_cast<std::size_t>(g.channels * g.height * g.width);
    if (g.dtype == DType::f32) {
      auto* x = static_cast<float*>(x_);
      const auto* p = static_cast<const float*>(partner_);
      auto* q = static_cast<float*>(partner_out);
      for (std::size_t e = 0; e < n; ++e) {
        const float a = x[e], b = p[e];
        x[e] = blend_value(a, b, own, other);
        if (q) q[e] = blend_value(b, a, own, other);
      }
      return;
    }
    const bool half = g.dtype == DType::f16;
    auto* x = static_cast<std::uint16_t*>(x_);
    const auto* p = static_cast<const std::uint16_t*>(partner_);
    auto* q = static_cast<std::uint16_t*>(partner_out);
    for (std::size_t e = 0; e < n; ++e) {
      const std::uint16_t a = x[e], b = p[e];
      x[e] = blend_value(a, b, own, other, half);
      if (q) q[e] = blend_value(b, a, own, other, half);
    }
  }
};

}  // namespace v0
}  // namespace conveyor

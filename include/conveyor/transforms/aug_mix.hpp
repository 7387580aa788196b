#pragma once
/// @file
/// torchvision.transforms.v2.AugMix(severity=3, mixture_width=3, chain_depth=-1, alpha=1.0,
/// all_ops=True, interpolation=BILINEAR, fill=None), and v1's (`v1`), as their `forward` draws it
/// (_auto_augment.py:594-646): the weights `m = Dirichlet([alpha, alpha])` of the image and the
/// mixture, the chains' `Dirichlet([alpha] * mixture_width) * m[1]`; then `mixture_width` chains,
/// each of `chain_depth` ops (or `torch.randint(1, 4)`), each op uniformly from `aug_mix_space`
/// (its first 9 unless `all_ops`), at a bin `torch.randint(severity)` of 10, signed ops negated
/// half the time; the mix `m[0] * image + sum(w_i * chain_i)` in float32, truncated to uint8
/// (ops/pixel/mix.hpp). On a PIL image both convert to a tensor first, so the ops are the tensor
/// kernels there too. torchvision v1's AugMix (`v1`, the classification reference's without
/// `--use-v2`) draws alike (its signs by `torch.randint(2)`) and runs v1's tensor functionals:
/// v1's blends and greys (ops/pixel/v1_color.hpp), affine and rotate on v1's matrix with v1's
/// fill blend, solarize at
/// `linspace(255, 0)`. Host-only: it chooses records.

#include <conveyor/batch/beta.hpp>
#include <conveyor/config.hpp>
#include <conveyor/ops/exact_float.hpp>
#include <conveyor/ops/pixel/mix.hpp>
#include <conveyor/transforms/arguments.hpp>
#include <conveyor/transforms/augmentation_space.hpp>
#include <conveyor/transforms/fields.hpp>
#include <conveyor/transforms/program_draw.hpp>

#include <array>
#include <cmath>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace conveyor {
inline namespace v0 {

namespace detail {

/// The most ops of `width` chains of `depth` ops (up to 3 where depth <= 0), with the mixing's
/// steps (in 64 bits: a width or depth of any int).
[[nodiscard]] constexpr std::int64_t mixture_ops(int width, int depth) noexcept {
  return 2 + std::int64_t{width > 0 ? width : 0} * ((depth > 0 ? std::int64_t{depth} : 3) + 1);
}

/// `mixture_ops` as a transform's `max_ops` reports it: past any program's size, held to an int.
[[nodiscard]] constexpr int mixture_max_ops(int width, int depth) noexcept {
  const std::int64_t most = mixture_ops(width, depth);
  return most < (1 << 20) ? static_cast<int>(most) : 1 << 20;
}

/// The checks AugMix and timm's AugMixAugment share: chains that fit a program and a positive alpha.
inline void expect_mixture(const char* transform, int width, int depth, double alpha) {
  expect_transform(width >= 1, transform, "the mixture's width must be at least 1, got " + std::to_string(width));
  expect_transform(alpha > 0.0 && std::isfinite(alpha), transform,
                   "alpha must be positive and finite (the Dirichlet's concentration), got " + shown(alpha));
  const std::int64_t most = mixture_ops(width, depth);
  expect_transform(most <= ops::pixel::max_program_ops, transform,
                   std::to_string(width) + " chains of " + (depth > 0 ? std::to_string(depth) : "up to 3") +
                       " ops draw up to " + std::to_string(most) + " pixel ops with the mixing, more than a "
                       "sample's program holds (" + std::to_string(ops::pixel::max_program_ops) + ")");
}

}  // namespace detail

struct AugMix {
  static constexpr const char* name = "AugMix";
  static constexpr const char* summary =
      "AugMix: the image mixed with `mixture_width` chains of random ops at up to `severity`, with Dirichlet weights.";
  static constexpr FieldName fields[] = {"severity", "mixture_width", "chain_depth", "alpha",
                                         "all_ops",  "interpolation", "fill",          "v1"};
  static constexpr bool mixes = true;
  int severity = 3;
  int mixture_width = 3;
  int chain_depth = -1;
  double alpha = 1.0;
  bool all_ops = true;
  ops::pixel::Interpolation interpolation = ops::pixel::Interpolation::bilinear;
  Fill fill = Fill::none();
  bool v1 = false;  ///< torchvision v1's class, on tensors and PIL images

  void validate() const {
    detail::expect_transform(severity >= 1 && severity <= 10, name,
                             "severity must be in [1, 10], got " + std::to_string(severity));
    detail::expect_mixture(name, mixture_width, chain_depth, alpha);
    detail::expect_fill(name, fill);
  }
  void validate_pil() const {  // converted to a tensor first: torch's kernels
    detail::expect_transform(interpolation != ops::pixel::Interpolation::bicubic, name,
                             "interpolation bicubic: AugMix converts a PIL image to a tensor, where conveyor runs "
                             "nearest or bilinear");
  }
  [[nodiscard]] int max_ops() const { return detail::mixture_max_ops(mixture_width, chain_depth); }

  void draw(ProgramDraw& d, int position) const {
    namespace px = ops::pixel;
    CounterRng rng = d.stream(position);
    std::array<float, 2> m{};
    detail::dirichlet_variate(rng, alpha, m);
    std::array<float, detail::max_dirichlet_parts> weights{};
    const std::span<float> w(weights.data(), static_cast<std::size_t>(mixture_width));
    detail::dirichlet_variate(rng, alpha, w);
    if (d.describing())
      d.describe({"augmix", {DrawnArg::list("m", {m[0], m[1]}), DrawnArg::list("weights", {w.begin(), w.end()})}});
    d.add(px::mix(px::Mix::begin, m[0]));
    const std::span<const PolicyEntry> space(aug_mix_space.data(), all_ops ? aug_mix_space.size() : 9);
    for (const float chain_weight : w) {
      const int depth = chain_depth > 0 ? chain_depth : 1 + static_cast<int>(rng.below(3));
      if (d.describing()) d.describe({"augmix_chain", {DrawnArg::integer("depth", depth)}});
      for (int k = 0; k < depth; ++k) {
        const PolicyEntry& entry = space[rng.below(space.size())];
        const int bin = entry.magnitudes.kind == Magnitudes::Kind::none
                            ? -1
                            : static_cast<int>(rng.below(static_cast<std::uint64_t>(severity)));
        const PolicyChoice c = detail::choose_magnitude(rng, entry, 10, bin, d.width(), d.height(), v1);
        detail::apply_policy_op(d, c, interpolation, fill, false, v1);
      }
      d.add(px::mix(px::Mix::add, ops::exact::mul(chain_weight, m[1])));  // `combined_weights`, float32
    }
    d.add(px::mix(px::Mix::end));
  }
};

}  // namespace v0
}  // namespace conveyor

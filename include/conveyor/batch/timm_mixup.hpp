#pragma once
/// @file
/// timm's `timm.data.Mixup(...)` in its 'batch' mode (timm/data/mixup.py, timm 1.0): with
/// probability `prob` a batch is mixed, by CutMix with probability `switch_prob` when both alphas
/// are positive (else by whichever is), lambda from Beta(alpha, alpha) of the op's alpha (numpy's
/// float64, not rounded). Samples pair as `x.flip(0)`: i with N - 1 - i. MixUp: `x.mul_(lam).add_(
/// x.flip(0).mul_(1 - lam))`. CutMix: `rand_bbox` (cut = int(side * sqrt(1 - lam)), a centre
/// uniform over the image, rows [cy - cut // 2, cy + (cut + 1) // 2) clipped) or, with
/// `cutmix_minmax`, `rand_bbox_minmax` (each side a uniform integer in [side * min, side * max),
/// its start uniform); `correct_lam` (or a minmax box) makes the labels' lambda the area outside
/// the box. Targets: one-hot rows of `1 - smoothing + smoothing / num_classes` and `smoothing /
/// num_classes`, `y1 * lam + y1.flip(0) * (1 - lam)`, also when the batch is not mixed (lambda 1).
/// timm asserts an even batch; an odd one's middle sample is its own partner here.
///
/// Modes 'pair' and 'elem' (`_params_per_elem`, `_mix_pair`, `_mix_elem`) draw per pair (i, N - 1 - i)
/// or per sample, from the same distributions, with lambda a float32 (numpy's array) and a draw of
/// exactly 1 leaving its sample alone; each sample is mixed with its partner as it was before the
/// batch transform (`x_orig`), MixUp as `x[i] * lam + x_orig[j] * (1 - lam)`. Their targets' lambdas
/// become a tensor of the images' dtype (`BatchMix::label_weights`); timm would make them uint8
/// from uint8 images (0 or 1), so these modes need float images here. 'pair' leaves an odd
/// batch's middle sample unmixed.

#include <conveyor/config.hpp>
#include <conveyor/batch/batch_mix.hpp>
#include <conveyor/batch/beta.hpp>
#include <conveyor/core/error.hpp>
#include <conveyor/core/rng.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace conveyor {
inline namespace v0 {

struct TimmMixup {
  static constexpr const char* name = "timm Mixup";
  enum class Mode : std::uint8_t { batch, pair, elem };
  double mixup_alpha = 1.0;  ///< MixUp is active if > 0
  double cutmix_alpha = 0.0;  ///< CutMix is active if > 0
  std::optional<std::array<double, 2>> cutmix_minmax{};  ///< a box of these fractions of each side (timm then sets cutmix_alpha 1)
  double prob = 1.0;          ///< a batch is mixed with this probability
  double switch_prob = 0.5;   ///< CutMix rather than MixUp, when both are active
  bool correct_lam = true;    ///< the labels' lambda from the clipped box's area
  double label_smoothing = 0.1;
  std::int64_t num_classes = 1000;
  Mode mode = Mode::batch;    ///< one draw a batch, a pair, or a sample

  void validate() const {
    const auto fail = [](const std::string& what) { throw ConfigError(std::string(name) + ": " + what); };
    for (const double a : {mixup_alpha, cutmix_alpha})
      if (!(a >= 0.0 && std::isfinite(a))) fail("the alphas must be finite and non negative");
    if (!(mixup_alpha > 0.0 || cutmix_alpha > 0.0 || cutmix_minmax))
      fail("one of mixup_alpha > 0, cutmix_alpha > 0 and cutmix_minmax must be set (timm asserts it)");
    if (cutmix_minmax && !((*cutmix_minmax)[0] >= 0.0 && (*cutmix_minmax)[0] <= (*cutmix_minmax)[1] &&
                           (*cutmix_minmax)[1] <= 1.0))
      fail("cutmix_minmax must satisfy 0 <= min <= max <= 1");
    for (const double p : {prob, switch_prob, label_smoothing})
      if (!(p >= 0.0 && p <= 1.0)) fail("prob, switch_prob and label_smoothing must be in [0, 1]");
    if (num_classes <= 0) fail("num_classes must be positive, got " + std::to_string(num_classes));
  }
  /// @throws ConfigError for images its MixUp cannot blend (uint8), or too small for its minmax box.
  void validate(const MixGeometry& g) const {
    if (mode != Mode::batch && g.dtype == DType::u8)
      throw ConfigError(std::string(name) + ": modes 'pair' and 'elem' need floating-point images (f32, f16 or bf16), "
                        "got u8: timm makes their targets' lambdas a tensor of the images' dtype, 0 or 1 in uint8");
    if (mixup_alpha > 0.0 && g.dtype != DType::f32 && g.dtype != DType::f16 && g.dtype != DType::bf16)
      throw ConfigError(std::string(name) + ": with mixup_alpha > 0 the images must be floating point (f32, f16 or "
                        "bf16), got " + std::string(to_string(g.dtype)) + ": timm's MixUp cannot blend uint8 images");
    if (cutmix_minmax)
      for (const std::int64_t side : {g.height, g.width})
        if (cut_range(side)[0] >= cut_range(side)[1])
          throw ConfigError(std::string(name) + ": cutmix_minmax gives no box size for a side of " +
                            std::to_string(side) + " (numpy's randint(low, high) needs low < high)");
  }

  /// The batch's draw; in modes 'pair' and 'elem' only what they have in common (`draw_samples`
  /// draws the rest).
  [[nodiscard]] BatchMix draw(CounterRng& rng, const MixGeometry& g) const {
    BatchMix m = unmixed(g);
    if (mode != Mode::batch || !(rng.uniform() < prob)) return m;  // lambda 1: the targets smoothed one-hot
    const bool cut = picks_cutmix(rng);
    m.lam = m.label_lam = beta(rng, cut);
    mix_with(rng, g, cut, m);
    return m;
  }

  /// Modes 'pair' and 'elem': each sample's draw of a batch of `count` (its pair's, in 'pair').
  [[nodiscard]] std::vector<BatchMix> draw_samples(CounterRng& rng, const MixGeometry& g, std::size_t count) const {
    std::vector<BatchMix> out(count, unmixed(g));
    const std::size_t draws = mode == Mode::pair ? count / 2 : count;
    for (std::size_t i = 0; i < draws; ++i) {
      BatchMix& m = out[i];
      const bool mixes = rng.uniform() < prob;
      const bool cut = picks_cutmix(rng);
      const float lam = static_cast<float>(beta(rng, cut));  // numpy's float32 array
      if (!mixes || lam == 1.0f) continue;  // timm: `if lam != 1.`
      m.lam = m.label_lam = lam;
      mix_with(rng, g, cut, m);
      m.label_lam = static_cast<float>(m.label_lam);  // stored back into the float32 array
      if (mode == Mode::pair) out[count - 1 - i] = m;
    }
    return out;
  }

 private:
  /// A draw that mixes nothing: lambda 1, the pairs and one-hot values of timm's targets.
  [[nodiscard]] BatchMix unmixed(const MixGeometry& g) const {
    BatchMix m;
    m.pairing = BatchMix::Pairing::mirror;
    const double off = label_smoothing / static_cast<double>(num_classes);
    m.off_value = static_cast<float>(off);
    m.on_value = static_cast<float>(1.0 - label_smoothing + off);
    m.per_sample = mode != Mode::batch;
    m.images_dtype = g.dtype;
    return m;
  }
  /// CutMix rather than MixUp: by switch_prob when both are active, else whichever is.
  [[nodiscard]] bool picks_cutmix(CounterRng& rng) const {
    const bool both = mixup_alpha > 0.0 && cut_alpha() > 0.0;
    return both ? rng.uniform() < switch_prob : mixup_alpha <= 0.0;
  }
  [[nodiscard]] double cut_alpha() const noexcept { return cutmix_minmax ? 1.0 : cutmix_alpha; }
  [[nodiscard]] double beta(CounterRng& rng, bool cut) const {
    const double alpha = cut ? cut_alpha() : mixup_alpha;
    return detail::beta_variate(rng, alpha, alpha);
  }
  /// MixUp, or CutMix with its box for `m.lam` (rand_bbox, or rand_bbox_minmax) and the labels'
  /// lambda from the box's area when timm corrects it.
  void mix_with(CounterRng& rng, const MixGeometry& g, bool cut, BatchMix& m) const {
    if (!cut) {
      m.kind = BatchMix::Kind::mixup;
      return;
    }
    m.kind = BatchMix::Kind::cutmix;
    const std::int64_t H = g.height, W = g.width;
    if (cutmix_minmax) {
      const auto ch = cut_range(H), cw = cut_range(W);
      const std::int64_t cut_h = ch[0] + uniform_below(rng, ch[1] - ch[0]);
      const std::int64_t cut_w = cw[0] + uniform_below(rng, cw[1] - cw[0]);
      m.y1 = uniform_below(rng, H - cut_h + 1);
      m.x1 = uniform_below(rng, W - cut_w + 1);
      m.y2 = m.y1 + cut_h;
      m.x2 = m.x1 + cut_w;
    } else {
      const double ratio = std::sqrt(1.0 - m.lam);
      const auto cut_h = static_cast<std::int64_t>(static_cast<double>(H) * ratio);
      const auto cut_w = static_cast<std::int64_t>(static_cast<double>(W) * ratio);
      const std::int64_t cy = uniform_below(rng, H), cx = uniform_below(rng, W);
      m.y1 = std::clamp<std::int64_t>(cy - cut_h / 2, 0, H);
      m.y2 = std::clamp<std::int64_t>(cy + (cut_h + 1) / 2, 0, H);
      m.x1 = std::clamp<std::int64_t>(cx - cut_w / 2, 0, W);
      m.x2 = std::clamp<std::int64_t>(cx + (cut_w + 1) / 2, 0, W);
    }
    if (correct_lam || cutmix_minmax)
      m.label_lam = 1.0 - static_cast<double>((m.y2 - m.y1) * (m.x2 - m.x1)) / static_cast<double>(H * W);
  }

  /// [int(side * min), int(side * max)): rand_bbox_minmax's box sizes for one side.
  [[nodiscard]] std::array<std::int64_t, 2> cut_range(std::int64_t side) const noexcept {
    return {static_cast<std::int64_t>(static_cast<double>(side) * (*cutmix_minmax)[0]),
            static_cast<std::int64_t>(static_cast<double>(side) * (*cutmix_minmax)[1])};
  }
  [[nodiscard]] static std::int64_t uniform_below(CounterRng& rng, std::int64_t n) noexcept {
    return static_cast<std::int64_t>(rng.below(static_cast<std::uint64_t>(n)));
  }
};

}  // namespace v0
}  // namespace conveyor

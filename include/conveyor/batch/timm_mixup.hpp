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

#include <conveyor/config.hpp>
#include <conveyor/batch/batch_mix.hpp>
#include <conveyor/batch/beta.hpp>
#include <conveyor/core/error.hpp>
#include <conveyor/core/rng.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>

namespace conveyor {
inline namespace v0 {

struct TimmMixup {
  static constexpr const char* name = "timm Mixup";
  double mixup_alpha = 1.0;  ///< MixUp is active if > 0
  double cutmix_alpha = 0.0;  ///< CutMix is active if > 0
  std::optional<std::array<double, 2>> cutmix_minmax{};  ///< a box of these fractions of each side (timm then sets cutmix_alpha 1)
  double prob = 1.0;          ///< a batch is mixed with this probability
  double switch_prob = 0.5;   ///< CutMix rather than MixUp, when both are active
  bool correct_lam = true;    ///< the labels' lambda from the clipped box's area
  double label_smoothing = 0.1;
  std::int64_t num_classes = 1000;

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
    if (mixup_alpha > 0.0 && g.dtype != DType::f32 && g.dtype != DType::f16 && g.dtype != DType::bf16)
      throw ConfigError(std::string(name) + ": with mixup_alpha > 0 the images must be floating point (f32, f16 or "
                        "bf16), got " + std::string(to_string(g.dtype)) + ": timm's MixUp cannot blend uint8 images");
    if (cutmix_minmax)
      for (const std::int64_t side : {g.height, g.width})
        if (cut_range(side)[0] >= cut_range(side)[1])
          throw ConfigError(std::string(name) + ": cutmix_minmax gives no box size for a side of " +
                            std::to_string(side) + " (numpy's randint(low, high) needs low < high)");
  }

  [[nodiscard]] BatchMix draw(CounterRng& rng, const MixGeometry& g) const {
    BatchMix m;
    m.pairing = BatchMix::Pairing::mirror;
    const double off = label_smoothing / static_cast<double>(num_classes);
    m.off_value = static_cast<float>(off);
    m.on_value = static_cast<float>(1.0 - label_smoothing + off);
    if (!(rng.uniform() < prob)) return m;  // lambda 1: the images as they are, the targets smoothed one-hot
    const double cut_alpha = cutmix_minmax ? 1.0 : cutmix_alpha;
    bool cut = mixup_alpha <= 0.0;
    if (mixup_alpha > 0.0 && cut_alpha > 0.0) cut = rng.uniform() < switch_prob;
    const double alpha = cut ? cut_alpha : mixup_alpha;
    m.lam = m.label_lam = detail::beta_variate(rng, alpha, alpha);
    if (!cut) {
      m.kind = BatchMix::Kind::mixup;
      return m;
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
    return m;
  }

 private:
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

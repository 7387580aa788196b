#pragma once
/// @file
/// `BatchTransform`: what a pipeline does to each finished batch (`PipelineOptions::batch_transform`)
/// — MixUp, CutMix, or one of them picked per batch as torchvision's reference recipe does with
/// `v2.RandomChoice([MixUp(...), CutMix(...)])`. The pick and the op's draw come from the batch's
/// own stream, keyed by (seed, epoch, batch number), so a resumed run mixes as an uninterrupted one
/// does; the pick is torch.multinomial's distribution (weights p / sum p, uniform when p is empty),
/// not its generator. Labels become float32 soft targets [N, num_classes].

#include <conveyor/config.hpp>
#include <conveyor/batch/batch_mix.hpp>
#include <conveyor/batch/cutmix.hpp>
#include <conveyor/batch/mixup.hpp>
#include <conveyor/batch/timm_mixup.hpp>
#include <conveyor/core/error.hpp>
#include <conveyor/core/rng.hpp>
#include <conveyor/ops/exact_float.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <variant>
#include <vector>

namespace conveyor {
inline namespace v0 {

using BatchOp = std::variant<MixUp, CutMix, TimmMixup>;

struct BatchTransform {
  std::vector<BatchOp> choices;  ///< one is picked per batch; a single op is always applied
  std::vector<double> p{};       ///< one weight per choice (normalised by their sum), or empty: uniform

  BatchTransform() = default;
  BatchTransform(MixUp m) : choices{m} {}   // NOLINT: `.batch_transform = MixUp{...}` reads as torchvision
  BatchTransform(CutMix c) : choices{c} {}  // NOLINT
  BatchTransform(TimmMixup t) : choices{t} {}  // NOLINT
  BatchTransform(std::vector<BatchOp> ops, std::vector<double> weights = {}) : choices(std::move(ops)), p(std::move(weights)) {}

  /// The width of the soft targets.
  [[nodiscard]] std::int64_t num_classes() const noexcept {
    return choices.empty() ? 0 : std::visit([](const auto& op) { return op.num_classes; }, choices.front());
  }

  /// @throws ConfigError naming the first invalid choice or weight.
  void validate(const MixGeometry& g) const {
    if (choices.empty()) throw ConfigError("batch_transform: pass at least one of MixUp, CutMix and TimmMixup");
    for (std::size_t k = 0; k < choices.size(); ++k) {
      std::visit([&](const auto& op) {
        try {
          op.validate();
          op.validate(g);
        } catch (const ConfigError& e) {
          throw ConfigError("batch_transform: choices[" + std::to_string(k) + "]: " + e.what());
        }
        if (op.num_classes != num_classes())
          throw ConfigError("batch_transform: choices[" + std::to_string(k) + "] (" + op.name + ") has num_classes " +
                            std::to_string(op.num_classes) + ", choices[0] " + std::to_string(num_classes()) +
                            ": one batch's soft targets have one width");
      }, choices[k]);
    }
    if (g.height <= 0 || g.width <= 0) throw ConfigError("batch_transform: the images have no height or width");
    if (!p.empty() && p.size() != choices.size())
      throw ConfigError("batch_transform: p needs one weight per choice (" + std::to_string(choices.size()) + "), got " +
                        std::to_string(p.size()));
    double total = 0.0;
    for (std::size_t k = 0; k < p.size(); ++k) {
      if (!(std::isfinite(p[k]) && p[k] >= 0.0))
        throw ConfigError("batch_transform: p[" + std::to_string(k) + "] must be finite and non negative, got " +
                          std::to_string(p[k]));
      total += p[k];
    }
    if (!p.empty() && !(total > 0.0 && std::isfinite(total)))
      throw ConfigError("batch_transform: p must have a positive, finite sum");
  }

  /// Batch `batch` of epoch `epoch`'s draw.
  [[nodiscard]] BatchMix draw(std::uint64_t seed, std::uint64_t epoch, std::uint64_t batch, const MixGeometry& g) const {
    CounterRng rng(seed, epoch, batch, RngOp::batch_transform);
    return std::visit([&](const auto& op) { return op.draw(rng, g); }, choices[pick(rng)]);
  }

  /// Batch `batch`'s per-sample draws, `count` of them, when the op it picks draws per sample
  /// (timm's modes 'pair' and 'elem'); otherwise none.
  [[nodiscard]] std::vector<BatchMix> draw_samples(std::uint64_t seed, std::uint64_t epoch, std::uint64_t batch,
                                                   const MixGeometry& g, std::size_t count) const {
    CounterRng rng(seed, epoch, batch, RngOp::batch_transform);
    const BatchOp& op = choices[pick(rng)];
    const auto* timm = std::get_if<TimmMixup>(&op);
    if (!timm || timm->mode == TimmMixup::Mode::batch) return {};
    return timm->draw_samples(rng, g, count);
  }

  /// The index of the choice `rng` picks (a single choice draws nothing).
  [[nodiscard]] std::size_t pick(CounterRng& rng) const {
    return choices.size() == 1 ? 0 : pick_index(rng, choices.size(), p);
  }
};

/// Mixes sample `self` (in place) with `partner`, sample i - 1 as it was before the batch transform
/// (`Pairing::previous`).
inline void mix_sample(void* self, const void* partner, const MixGeometry& g, const BatchMix& m) noexcept {
  if (m.kind == BatchMix::Kind::mixup) MixUp::apply(self, partner, g, m);
  if (m.kind == BatchMix::Kind::cutmix) CutMix::apply(self, partner, g, m);
}

/// Mixes samples i and N - 1 - i with each other, both in place (`Pairing::mirror`).
/// An odd batch's middle sample is its own pair (a == b): MixUp blends it with itself, CutMix
/// leaves it as it is.
inline void mix_pair(void* a, void* b, const MixGeometry& g, const BatchMix& m) noexcept {
  if (m.kind == BatchMix::Kind::mixup) MixUp::apply_both(a, b, g, m);
  if (m.kind == BatchMix::Kind::cutmix && a != b) CutMix::apply_both(a, b, g, m);
}

/// Mixes samples i and N - 1 - i with each other by their own draws `ma` and `mb` (timm's 'elem'
/// mode), each with the other as it was: `scratch` holds a sample's bytes meanwhile.
inline void mix_pair_each(void* a, void* b, const MixGeometry& g, const BatchMix& ma, const BatchMix& mb,
                          std::byte* scratch) noexcept {
  if (a == b) return mix_pair(a, b, g, ma);
  std::memcpy(scratch, a, g.sample_bytes());
  mix_sample(a, b, g, ma);
  mix_sample(b, scratch, g, mb);
}

/// Row `i` of the soft targets [count, num_classes] from the batch's integer labels, as the
/// references compute them in float32: one-hot rows of `on_value` and `off_value` (torchvision's
/// 1 and 0; timm's smoothed ones), each multiplied by its weight (`BatchMix::label_weights`: the
/// sample's own, `label_lam`, and its partner's, `1 - label_lam`) and the two products added.
/// With per-sample draws, `m` is sample i's.
/// @throws Error naming the sample whose label is outside [0, num_classes).
inline void mix_target(std::span<const std::int64_t> labels, std::size_t i, float* row, std::int64_t num_classes,
                       const BatchMix& m) {
  using ops::exact::add;
  using ops::exact::mul;
  const std::size_t j = m.partner(i, labels.size());
  for (const std::size_t k : {i, j})
    if (labels[k] < 0 || labels[k] >= num_classes)
      throw Error("batch_transform: the sample at batch position " + std::to_string(k) + " has label " +
                  std::to_string(labels[k]) + ", outside [0, num_classes = " + std::to_string(num_classes) + ")");
  const std::array<float, 2> weights = m.label_weights();
  const float own = weights[0], other = weights[1];
  const float own_off = mul(m.off_value, own), other_off = mul(m.off_value, other), off = add(other_off, own_off);
  std::fill(row, row + num_classes, off);
  const auto value = [&](std::int64_t c) {
    return add(mul(c == labels[j] ? m.on_value : m.off_value, other), mul(c == labels[i] ? m.on_value : m.off_value, own));
  };
  row[labels[j]] = value(labels[j]);
  row[labels[i]] = value(labels[i]);
}

}  // namespace v0
}  // namespace conveyor

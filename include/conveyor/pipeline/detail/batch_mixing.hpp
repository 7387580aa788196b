#pragma once
/// @file
/// A batch transform on the CPU backend, split over the workers, in place. Pairing sample i with
/// sample i - 1 (torchvision's), a chunk [a, b) of positions is mixed from its end down (each
/// sample's partner is still unmixed when it is read), and its first sample's partner, the last of
/// the chunk before (the batch's last, for the first chunk), is copied aside before any chunk
/// starts. Pairing i with N - 1 - i (timm's), a chunk is a range of pairs, each mixed at once.
/// On a device the workers only draw and write the soft targets (into the pinned arena, with the
/// draw): the device's `MixSamples` step mixes the images.

#include <conveyor/config.hpp>
#include <conveyor/batch/batch_mix.hpp>
#include <conveyor/batch/batch_transform.hpp>
#include <conveyor/core/error.hpp>
#include <conveyor/core/sample.hpp>
#include <conveyor/pipeline/detail/ring.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <span>
#include <utility>

namespace conveyor {
inline namespace v0 {
namespace detail {

/// A transform's image layout: an image transform's `layout` (AnyTransform says its held one's);
/// none for samples that are not images (RawTensor's).
template <class T>
[[nodiscard]] std::optional<Layout> image_layout_of(const T& transform) {
  if constexpr (requires { transform.image_layout(); })
    return transform.image_layout();
  else if constexpr (requires { Layout{transform.layout}; })
    return transform.layout;
  else
    return std::nullopt;
}

/// The images' geometry a batch transform needs, from the transform's sample spec and its layout.
template <class T>
[[nodiscard]] MixGeometry mix_geometry(const T& transform, const SampleSpec& spec) {
  const std::optional<Layout> layout = image_layout_of(transform);
  if (!layout || spec.rank != 3)
    throw ConfigError("BatchPipeline: batch_transform mixes images [C, H, W] or [H, W, C]; this transform's samples are not");
  const bool chw = *layout == Layout::NCHW;
  return {spec.dtype, *layout, spec.shape[chw ? 0 : 2], spec.shape[chw ? 1 : 0], spec.shape[chw ? 2 : 1]};
}

class BatchMixing {
 public:
  /// @throws ConfigError for a transform that cannot mix these images.
  BatchMixing(BatchTransform transform, const MixGeometry& geometry, std::uint64_t seed, int workers, bool on_device)
      : t_(std::move(transform)), g_(geometry), seed_(seed), chunks_(static_cast<std::size_t>(std::max(workers, 1))),
        on_device_(on_device) {
    t_.validate(g_);
  }

  [[nodiscard]] std::int64_t num_classes() const noexcept { return t_.num_classes(); }
  [[nodiscard]] const MixGeometry& geometry() const noexcept { return g_; }

  /// Gives every host slot room for its soft targets and its chunks' partners (a device slot's
  /// targets are in its arena).
  void reserve(Ring& ring, std::size_t batch_size) const {
    if (on_device_) return;
    for (Slot& s : ring.slots) {
      s.targets.resize(batch_size * static_cast<std::size_t>(num_classes()));
      s.boundaries.resize(std::min(chunks_, batch_size) * g_.sample_bytes());
    }
  }

  /// Draws the slot's batch's mix (and its samples', per sample), writes its soft targets to
  /// `targets` (the slot's own; a device slot's pinned arena, where `device_mixes` gets the batch's
  /// draw and then its samples') and, pairing with the previous sample, copies each chunk's first
  /// partner aside; returns the number of chunks (0: nothing to mix here).
  /// @throws Error for a label outside [0, num_classes).
  std::size_t cut(Slot& s, float* targets, BatchMix* device_mixes = nullptr) const {
    s.mix = t_.draw(seed_, s.epoch, s.batch, g_);
    s.sample_mixes = t_.draw_samples(seed_, s.epoch, s.batch, g_, s.count);
    const bool per_sample = !s.sample_mixes.empty();
    const auto classes = static_cast<std::size_t>(num_classes());
    const std::span<const std::int64_t> labels(s.labels.data(), s.count);
    for (std::size_t i = 0; i < s.count; ++i)
      mix_target(labels, i, targets + i * classes, num_classes(), per_sample ? s.sample_mixes[i] : s.mix);
    if (device_mixes) {
      device_mixes[0] = s.mix;
      std::copy(s.sample_mixes.begin(), s.sample_mixes.end(), device_mixes + 1);
    }
    if (on_device_ || (s.mix.kind == BatchMix::Kind::none && !per_sample)) return 0;
    const std::size_t chunks = std::min(chunks_, units(s)), bytes = g_.sample_bytes();
    if (s.mix.pairing == BatchMix::Pairing::previous)
      for (std::size_t k = 0; k < chunks; ++k)
        std::memcpy(s.boundaries.data() + k * bytes, sample(s, s.mix.partner(start(k, chunks, s.count), s.count)), bytes);
    return chunks;
  }

  /// Mixes chunk `k` of the slot's batch; returns how many samples it mixed.
  std::size_t mix(Slot& s, std::size_t k) const {
    const std::size_t n = units(s), a = start(k, s.mix_chunks, n), b = start(k + 1, s.mix_chunks, n);
    if (s.mix.pairing == BatchMix::Pairing::mirror) {
      std::size_t samples = 0;
      for (std::size_t i = a; i < b; ++i) {
        const std::size_t j = s.count - 1 - i;
        if (s.sample_mixes.empty())
          mix_pair(sample(s, i), sample(s, j), g_, s.mix);
        else  // the chunk's boundary room, unused by mirrored pairs, holds a sample meanwhile
          mix_pair_each(sample(s, i), sample(s, j), g_, s.sample_mixes[i], s.sample_mixes[j],
                        s.boundaries.data() + k * g_.sample_bytes());
        samples += i == j ? 1 : 2;
      }
      return samples;
    }
    for (std::size_t i = b; i-- > a + 1;) mix_sample(sample(s, i), sample(s, i - 1), g_, s.mix);
    mix_sample(sample(s, a), s.boundaries.data() + k * g_.sample_bytes(), g_, s.mix);
    return b - a;
  }

 private:
  /// What chunks divide: samples, or pairs (the middle sample of an odd batch its own pair).
  [[nodiscard]] static std::size_t units(const Slot& s) noexcept {
    return s.mix.pairing == BatchMix::Pairing::mirror ? (s.count + 1) / 2 : s.count;
  }
  [[nodiscard]] static std::size_t start(std::size_t k, std::size_t chunks, std::size_t count) noexcept {
    return k * count / chunks;
  }
  [[nodiscard]] std::byte* sample(Slot& s, std::size_t i) const noexcept { return s.images.data() + i * g_.sample_bytes(); }

  BatchTransform t_;
  MixGeometry g_;
  std::uint64_t seed_;
  std::size_t chunks_;
  bool on_device_;
};

}  // namespace detail
}  // namespace v0
}  // namespace conveyor

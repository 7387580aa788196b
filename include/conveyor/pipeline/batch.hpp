#pragma once
/// @file
/// `Batch`: one batch handed out by a `BatchPipeline`.

#include <conveyor/config.hpp>
#include <conveyor/core/concepts.hpp>
#include <conveyor/core/tensor.hpp>
#include <conveyor/pipeline/detail/ring.hpp>
#include <conveyor/pipeline/options.hpp>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>

namespace conveyor {
inline namespace v0 {

template <Dataset D, Sampler S, Transform T>
class BatchPipeline;

/// A batch of images (or raw tensors), their labels and dataset indices.
///
/// A `Batch` is a handle: copies share one hold on the pipeline's slot, and the slot is reused
/// only after the last copy is destroyed, so data stays valid as long as any copy lives, even past
/// the loop's advance or the pipeline's destruction. Each kept batch takes one slot out of the
/// rotation; keeping all `prefetch` of them alive while asking for the next makes the pipeline
/// wait until one is released (from another thread), so keep fewer than `prefetch`.
class Batch {
 public:
  Batch() = default;

  /// Number of samples (batch_size, or fewer in an epoch's last batch).
  [[nodiscard]] std::size_t size() const noexcept { return size_; }
  [[nodiscard]] bool empty() const noexcept { return size_ == 0; }
  /// The images: [N, 3, H, W] (NCHW) or [N, H, W, 3] (NHWC) of the transform's dtype.
  [[nodiscard]] const TensorView& images() const noexcept { return images_; }
  /// The labels: [N] int64.
  [[nodiscard]] const TensorView& labels() const noexcept { return labels_; }
  /// The dataset index of each sample, in order.
  [[nodiscard]] std::span<const std::int64_t> indices() const noexcept { return {indices_, size_}; }
  /// The epoch this batch belongs to.
  [[nodiscard]] std::uint64_t epoch() const noexcept { return epoch_; }
  /// Position of this batch in its epoch, from 0.
  [[nodiscard]] std::uint64_t number() const noexcept { return number_; }
  /// Samples of this batch replaced under `OnError::skip`.
  [[nodiscard]] std::span<const SkippedSample> skipped() const noexcept { return skipped_; }

 private:
  template <Dataset D, Sampler S, Transform T>
  friend class BatchPipeline;

  struct Hold {
    std::shared_ptr<detail::Ring> ring;
    std::size_t slot;
    Hold(std::shared_ptr<detail::Ring> r, std::size_t s) noexcept : ring(std::move(r)), slot(s) {}
    Hold(const Hold&) = delete;
    Hold& operator=(const Hold&) = delete;
    ~Hold() { ring->release(slot); }
  };

  std::shared_ptr<Hold> hold_;
  TensorView images_{};
  TensorView labels_{};
  const std::int64_t* indices_ = nullptr;
  std::span<const SkippedSample> skipped_{};
  std::size_t size_ = 0;
  std::uint64_t epoch_ = 0;
  std::uint64_t number_ = 0;
};

}  // namespace v0
}  // namespace conveyor

#pragma once
/// @file
/// `Batch`: one batch handed out by a `BatchPipeline`.

#include <conveyor/config.hpp>
#include <conveyor/batch/batch_mix.hpp>
#include <conveyor/core/sample.hpp>
#include <conveyor/core/tensor.hpp>
#include <conveyor/device/backend.hpp>
#include <conveyor/pipeline/detail/ring.hpp>
#include <conveyor/pipeline/options.hpp>

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <span>
#include <utility>
#include <vector>

struct CUstream_st;  // cudaStream_t is CUstream_st*; no CUDA header needed here

namespace conveyor {
inline namespace v0 {

class Batch;
class KeptLabels;

/// A tensor of a batch (its labels, or its soft targets) in memory of its own, which holds no
/// slot: for labels kept past their batch (an evaluation loop's targets). Host memory for a host
/// batch; for a device batch, device memory made, filled and, when the copy dies, freed in order on
/// one stream, with no host wait (that stream must outlive the copy). Move-only; valid after the
/// pipeline is gone.
class TensorCopy {
 public:
  TensorCopy() = default;
  TensorCopy(TensorCopy&& o) noexcept
      : view_(std::exchange(o.view_, TensorView{})), host_(std::move(o.host_)),
        device_(std::exchange(o.device_, StreamOrderedMemory{})) {}
  TensorCopy& operator=(TensorCopy o) noexcept {
    std::swap(view_, o.view_);
    std::swap(host_, o.host_);
    std::swap(device_, o.device_);
    return *this;
  }
  ~TensorCopy() {
    if (device_.free) device_.free(device_.data, device_.stream, device_.device);
  }

  /// The copy, where the batch's tensor was (host or device).
  [[nodiscard]] const TensorView& view() const noexcept { return view_; }

 private:
  friend class Batch;
  friend class KeptLabels;
  TensorView view_{};
  std::vector<std::uint64_t> host_;  // 8-byte aligned: int64 labels, float32 targets
  StreamOrderedMemory device_{};
};

/// A batch's labels kept without its slot (`Batch::keep_labels`), until a tensor of them is wanted,
/// on whatever stream it is wanted: their values (host memory), and where the batch's were. Valid
/// after the pipeline's loop has moved on; a device batch's keeps the pipeline's device backend
/// alive (not a slot) for the copies it makes.
class KeptLabels {
 public:
  KeptLabels() = default;
  /// The labels' values, in batch order.
  [[nodiscard]] std::span<const std::int64_t> values() const noexcept { return values_; }
  /// Where the batch's labels were, and where `copy` makes them.
  [[nodiscard]] Device device() const noexcept { return device_; }
  /// The labels as a tensor of their own, [N] int64, where the batch's were: host memory, or for a
  /// device batch device memory filled in order on `stream` (a `cudaStream_t` of its device;
  /// nullptr: the pipeline's stream), with no host wait. Each call makes a new copy.
  /// @throws CudaError when the copy cannot be queued.
  [[nodiscard]] TensorCopy copy(CUstream_st* stream = nullptr) const {
    TensorCopy c;
    const std::size_t bytes = values_.size() * sizeof(std::int64_t);
    const std::array<std::int64_t, 1> shape{static_cast<std::int64_t>(values_.size())};
    if (ring_ && ring_->device && !values_.empty()) {
      c.device_ = ring_->device->upload(values_.data(), bytes, stream);
      c.view_ = TensorView::contiguous(c.device_.data, DType::i64, shape, device_);
    } else {
      c.host_.resize(values_.size());
      if (bytes) std::memcpy(c.host_.data(), values_.data(), bytes);
      c.view_ = TensorView::contiguous(c.host_.data(), DType::i64, shape, device_);
    }
    return c;
  }

 private:
  friend class Batch;
  std::vector<std::int64_t> values_;
  std::shared_ptr<detail::Ring> ring_;  // a device batch's: its backend uploads the copies
  Device device_{};
};

/// What `Batch::copy_labels` gives.
using LabelsCopy = TensorCopy;

namespace detail {
Batch make_batch(std::shared_ptr<Ring> ring, std::size_t slot, std::uint64_t number, const SampleSpec& spec,
                 void* images, std::int64_t* labels, float* targets, Device device, std::int64_t num_classes);
}  // namespace detail

/// A batch of images (or raw tensors), their labels and dataset indices.
///
/// A `Batch` is a handle: copies share one hold on the pipeline's slot, and the slot is reused
/// only after the last copy is destroyed, so data stays valid as long as any copy lives, even past
/// the loop's advance or the pipeline's destruction. Each kept batch takes one slot out of the
/// rotation; keeping all `prefetch` of them alive while asking for the next makes the pipeline
/// wait until one is released (from another thread), so keep fewer than `prefetch`. To keep only
/// the labels, keep `copy_labels()` (or their DLPack tensor), which holds no slot.
class Batch {
 public:
  Batch() = default;
  Batch(const Batch& other) noexcept : d_(other.d_), ring_(other.ring_), slot_(other.slot_) {
    if (ring_) ring_->slots[slot_].holders.fetch_add(1, std::memory_order_relaxed);
  }
  Batch(Batch&& other) noexcept : d_(other.d_), ring_(std::move(other.ring_)), slot_(other.slot_) {}
  Batch& operator=(Batch other) noexcept {
    std::swap(d_, other.d_);
    std::swap(ring_, other.ring_);
    std::swap(slot_, other.slot_);
    return *this;
  }
  ~Batch() {
    if (ring_ && ring_->slots[slot_].holders.fetch_sub(1, std::memory_order_acq_rel) == 1) ring_->release(slot_);
  }

  /// Number of samples (batch_size, or fewer in an epoch's last batch).
  [[nodiscard]] std::size_t size() const noexcept { return d_.size; }
  [[nodiscard]] bool empty() const noexcept { return d_.size == 0; }
  /// The images: [N, 3, H, W] (NCHW) or [N, H, W, 3] (NHWC) of the transform's dtype; device
  /// memory (ready in order on the pipeline's stream) for a device pipeline, host memory otherwise.
  [[nodiscard]] const TensorView& images() const noexcept { return d_.images; }
  /// The labels: [N] int64, where the images are (as the dataset gave them, also when mixed).
  [[nodiscard]] const TensorView& labels() const noexcept { return d_.labels; }
  /// With a batch transform: the soft targets [N, num_classes] float32, where the images are,
  /// what torchvision's MixUp and CutMix make of the labels; otherwise an empty view (no data).
  [[nodiscard]] const TensorView& targets() const noexcept { return d_.targets; }
  /// With a batch transform: what it drew for this batch (which op, lambda, CutMix's box; sample i
  /// is mixed with `BatchMix::partner(i, size())`); otherwise `Kind::none`.
  [[nodiscard]] const BatchMix& mix() const noexcept { return d_.mix; }
  /// With a batch transform that draws per sample (timm's modes 'pair' and 'elem'; `mix().per_sample`):
  /// each sample's draw, in batch order (host memory); otherwise empty.
  [[nodiscard]] std::span<const BatchMix> sample_mixes() const noexcept { return d_.sample_mixes; }
  /// The labels copied into memory of their own, which does not hold the batch's slot, for labels
  /// kept past the batch. A device batch's copy is made in order on `stream` (a `cudaStream_t` of
  /// its device; nullptr: the pipeline's stream), which is handed the batch first as by
  /// `wait_async`, with no host wait.
  /// @throws CudaError when the copy cannot be queued.
  [[nodiscard]] TensorCopy copy_labels(CUstream_st* stream = nullptr) const { return copy_of(d_.labels, stream); }
  /// The labels kept without the slot, for a tensor of them later on any stream
  /// (`KeptLabels::copy`): from the values the host holds, so no device work is queued now.
  [[nodiscard]] KeptLabels keep_labels() const {
    KeptLabels k;
    if (!ring_) return k;
    const std::vector<std::int64_t>& host = ring_->slots[slot_].labels;
    k.values_.assign(host.begin(), host.begin() + static_cast<std::ptrdiff_t>(d_.size));
    if (ring_->device) k.ring_ = ring_;
    k.device_ = d_.labels.device;
    return k;
  }
  /// The soft targets copied the same way (an empty copy without a batch transform).
  /// @throws CudaError when the copy cannot be queued.
  [[nodiscard]] TensorCopy copy_targets(CUstream_st* stream = nullptr) const { return copy_of(d_.targets, stream); }
  /// The dataset index of each sample, in order (host memory).
  [[nodiscard]] std::span<const std::int64_t> indices() const noexcept { return {d_.indices, d_.size}; }
  /// The epoch this batch belongs to.
  [[nodiscard]] std::uint64_t epoch() const noexcept { return d_.epoch; }
  /// Position of this batch in its epoch, from 0.
  [[nodiscard]] std::uint64_t number() const noexcept { return d_.number; }
  /// Samples of this batch replaced under `OnError::skip`.
  [[nodiscard]] std::span<const SkippedSample> skipped() const noexcept { return d_.skipped; }

  /// Makes `stream` (a `cudaStream_t` of the batch's device; nullptr: the pipeline's stream) wait
  /// for the batch on the device, with no host wait, for a consumer that reads it on another
  /// stream than the pipeline's. The slot is released after the work queued by then on every
  /// stream the batch was handed to (the pipeline's and these, up to 8 in all), when the last copy
  /// of the batch dies. Nothing to do for a host batch.
  /// @throws CudaError when the wait cannot be queued; Error for a ninth stream.
  void wait_async(CUstream_st* stream) const {
    if (ring_ && ring_->device) ring_->device->hand_out(slot_, stream);
  }

 private:
  friend Batch detail::make_batch(std::shared_ptr<detail::Ring>, std::size_t, std::uint64_t, const SampleSpec&, void*,
                                  std::int64_t*, float*, Device, std::int64_t);

  /// `t` (contiguous, of this batch's slot) in memory of its own.
  [[nodiscard]] TensorCopy copy_of(const TensorView& t, CUstream_st* stream) const {
    TensorCopy c;
    if (!t.data) return c;
    const std::size_t bytes = t.nbytes();
    if (ring_ && ring_->device) {
      c.device_ = ring_->device->copy_out(slot_, t.data, bytes, stream);
      c.view_ = TensorView::contiguous(c.device_.data, t.dtype, std::span(t.shape.data(), std::size_t(t.rank)), t.device);
    } else {
      c.host_.resize((bytes + sizeof(std::uint64_t) - 1) / sizeof(std::uint64_t));
      std::memcpy(c.host_.data(), t.data, bytes);
      c.view_ = TensorView::contiguous(c.host_.data(), t.dtype, std::span(t.shape.data(), std::size_t(t.rank)), t.device);
    }
    return c;
  }

  struct Data {
    TensorView images{};
    TensorView labels{};
    TensorView targets{};
    BatchMix mix{};
    std::span<const BatchMix> sample_mixes{};
    const std::int64_t* indices = nullptr;
    std::span<const SkippedSample> skipped{};
    std::size_t size = 0;
    std::uint64_t epoch = 0;
    std::uint64_t number = 0;
  };

  Data d_;
  // Copies count themselves in the slot's `holders` (no allocation per batch); the last one to go
  // releases the slot. The ring lives as long as any Batch.
  std::shared_ptr<detail::Ring> ring_;
  std::size_t slot_ = 0;
};

namespace detail {

/// The Batch of `slot` (batch `number` of its epoch; the slot holds its count, indices and skip
/// records): images of `spec` per sample at `images`, int64 labels at `labels`, all on `device`,
/// and with `num_classes` > 0 the soft targets at `targets` and the slot's mix. The Batch takes the
/// slot's first hold.
inline Batch make_batch(std::shared_ptr<Ring> ring, std::size_t slot, std::uint64_t number, const SampleSpec& spec,
                        void* images, std::int64_t* labels, float* targets, Device device, std::int64_t num_classes) {
  const Slot& s = ring->slots[slot];
  const auto count = static_cast<std::int64_t>(s.count);
  std::array<std::int64_t, TensorView::max_rank> shape{count};
  for (std::size_t i = 0; i < std::size_t(spec.rank); ++i) shape[i + 1] = spec.shape[i];
  Batch b;
  b.d_.images = TensorView::contiguous(images, spec.dtype, std::span(shape.data(), std::size_t(spec.rank) + 1), device);
  b.d_.labels = TensorView::contiguous(labels, DType::i64, {count}, device);
  if (num_classes > 0) {
    const std::array<std::int64_t, 2> targets_shape{count, num_classes};
    b.d_.targets = TensorView::contiguous(targets, DType::f32, targets_shape, device);
    b.d_.mix = s.mix;
    b.d_.sample_mixes = s.sample_mixes;
  }
  b.d_.indices = s.indices.data();
  b.d_.skipped = s.skipped;
  b.d_.size = s.count;
  b.d_.epoch = s.epoch;
  b.d_.number = number;
  ring->slots[slot].holders.store(1, std::memory_order_relaxed);
  b.ring_ = std::move(ring);
  b.slot_ = slot;
  return b;
}

}  // namespace detail

}  // namespace v0
}  // namespace conveyor

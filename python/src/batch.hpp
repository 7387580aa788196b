#pragma once
// A batch and its tensors as Python sees them: DLPack producers over the loader's memory.

#include "bindings.hpp"

#include <conveyor/pipeline/batch.hpp>
#include <conveyor/pipeline/dlpack.hpp>

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#if !CONVEYOR_HAS_DLPACK()
#error "the Python binding needs DLPack's header (Debian: libdlpack-dev)"
#endif

namespace conveyor_ext {

/// One tensor of a batch, exported through DLPack (`__dlpack__`, `__dlpack_device__`). Labels
/// hold no slot: their values are kept (`Batch::keep_labels`) and each export copies them on the
/// consumer's stream; images and soft targets share the batch.
class Tensor {
 public:
  Tensor(conveyor::Batch batch, conveyor::BatchTensor which) : batch_(std::move(batch)), which_(which) {}
  explicit Tensor(conveyor::KeptLabels labels)
      : kept_(std::move(labels)), which_(conveyor::BatchTensor::labels),
        kept_view_(conveyor::TensorView::contiguous(nullptr, conveyor::DType::i64,
                                                    std::array<std::int64_t, 1>{std::int64_t(kept_->values().size())},
                                                    kept_->device())) {}

  [[nodiscard]] const conveyor::TensorView& view() const {
    if (kept_) return kept_view_;
    return which_ == conveyor::BatchTensor::images   ? batch_.images()
           : which_ == conveyor::BatchTensor::labels ? batch_.labels()
                                                     : batch_.targets();
  }
  [[nodiscard]] std::tuple<int, int> dlpack_device() const;
  [[nodiscard]] std::vector<std::int64_t> shape() const {
    const conveyor::TensorView& v = view();
    return {v.shape.begin(), v.shape.begin() + v.rank};
  }
  [[nodiscard]] std::string dtype() const { return std::string(to_string(view().dtype)); }
  /// The DLPack capsule, after making `stream` wait for the batch (the Python array API's
  /// convention for CUDA: None or 1 the legacy default stream, 2 the per-thread default stream,
  /// another value a cudaStream_t, -1 no ordering). No host wait.
  nb::object dlpack(nb::object stream, nb::object max_version, nb::object dl_device, nb::object copy) const;

 private:
  conveyor::Batch batch_;
  std::optional<conveyor::KeptLabels> kept_;
  conveyor::BatchTensor which_;
  conveyor::TensorView kept_view_{};  // kept labels' shape, type and device (no data until exported)
};

class Batch {
 public:
  explicit Batch(conveyor::Batch b) : b_(std::move(b)) {}
  [[nodiscard]] Tensor images() const { return {b_, conveyor::BatchTensor::images}; }
  [[nodiscard]] Tensor labels() const { return Tensor(b_.keep_labels()); }
  /// The soft targets; the loader has a batch transform.
  [[nodiscard]] Tensor targets() const {
    if (!b_.targets().data) throw conveyor::ConfigError("Batch.targets: the Loader has no batch_transform");
    return {b_, conveyor::BatchTensor::targets};
  }
  /// (op, lam, label_lam, (x1, y1, x2, y2)); op is None without a batch transform.
  using Mix = std::tuple<std::optional<std::string>, double, double,
                         std::tuple<std::int64_t, std::int64_t, std::int64_t, std::int64_t>>;
  [[nodiscard]] Mix mix() const { return mix_of(b_.mix()); }
  [[nodiscard]] std::vector<Mix> sample_mixes() const {
    std::vector<Mix> out;
    for (const conveyor::BatchMix& m : b_.sample_mixes()) out.push_back(mix_of(m));
    return out;
  }
  [[nodiscard]] static Mix mix_of(const conveyor::BatchMix& m) {
    std::optional<std::string> op;
    if (m.kind == conveyor::BatchMix::Kind::mixup) op = "MixUp";
    if (m.kind == conveyor::BatchMix::Kind::cutmix) op = "CutMix";
    return {op, double(m.lam), m.label_lam, {m.x1, m.y1, m.x2, m.y2}};
  }
  [[nodiscard]] std::vector<std::int64_t> indices() const { return {b_.indices().begin(), b_.indices().end()}; }
  [[nodiscard]] std::size_t size() const { return b_.size(); }
  [[nodiscard]] std::uint64_t epoch() const { return b_.epoch(); }
  [[nodiscard]] std::uint64_t number() const { return b_.number(); }

 private:
  conveyor::Batch b_;
};

/// The C++ batch transform of the package's (kind, arguments) pairs: ("mixup" or "cutmix", [alpha,
/// num_classes]) or ("timm", [mixup_alpha, cutmix_alpha, minmax low, minmax high (-1: none), prob,
/// switch_prob, correct_lam, label_smoothing, num_classes, and mode: 0 batch (the default), 1 pair, 2 elem]).
/// @throws ConfigError for another kind or count.
conveyor::BatchOp batch_op(const std::string& kind, const std::vector<double>& arguments);
std::vector<conveyor::BatchOp> batch_ops(const std::vector<std::pair<std::string, std::vector<double>>>& ops);

}  // namespace conveyor_ext

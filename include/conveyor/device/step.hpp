#pragma once
/// @file
/// A step of a slot's device work: what a transform asks a device to do with a batch once its
/// arena is uploaded (lay out filter windows and run the fused kernel; copy finished samples; a
/// GPU decode). The transform names a step by a spec, a plain struct of parameters; a device
/// backend implements the spec in code its compiler builds (CUDA) and registers a maker for it, so
/// adding a step adds a spec and its implementation and changes neither the pipeline nor the
/// backend. Plain C++: no CUDA header is needed here.

#include <conveyor/config.hpp>
#include <conveyor/core/error.hpp>
#include <conveyor/core/linear_fit.hpp>
#include <conveyor/device/slot_layout.hpp>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <utility>

struct CUstream_st;  // cudaStream_t is CUstream_st*; declared here so no CUDA header is needed

namespace conveyor {
inline namespace v0 {

/// Device-side counters of a backend.
struct DeviceStats {
  std::uint64_t batches = 0;
  std::uint64_t bytes_uploaded = 0;
  double h2d_seconds = 0;     ///< copy time, from device events
  double kernel_seconds = 0;  ///< the steps' time on the augment stream, from device events
  double kernel_max_seconds = 0;  ///< the longest batch's
  std::uint64_t pinned_bytes = 0;
  std::uint64_t device_bytes = 0;
  std::uint64_t gpu_decoded = 0;        ///< JPEGs decoded on the device
  std::uint64_t gpu_decode_fallbacks = 0;  ///< of those, refused by the engines and decoded on the CPU
  double gpu_decode_seconds = 0;       ///< the device decodes' time on the load stream, from device events
  double submit_seconds = 0;           ///< host time the stager thread spent submitting batches
  double gpu_decode_call_seconds = 0;  ///< of that, host time inside the device decoder's calls
  LinearFit gpu_decode_calls;          ///< each slot's batched decode call: host seconds against images
};

/// What a step is made for, once, when its pipeline is.
struct DeviceStepConfig {
  int device = 0;
  std::size_t slots = 0;
  std::size_t batch_size = 0;
  SlotLayout layout{};
  std::size_t sample_bytes = 0;  ///< of one output sample
};

/// One batch, as a step sees it.
struct StepContext {
  std::size_t slot = 0;
  std::size_t count = 0;          ///< samples in the batch
  const std::byte* arena = nullptr;  ///< the slot's device arena, in `DeviceStepConfig::layout`
  const std::byte* host_arena = nullptr;  ///< its pinned twin, as the workers filled it
  void* output = nullptr;         ///< the slot's output tensor (count x sample_bytes)
  CUstream_st* stream = nullptr;  ///< where the phase's work goes
  std::uint64_t fill = 0;         ///< names the slot's batch: parts and the submit of one batch share it
};

/// A backend's implementation of one spec. Its phases are called by the pipeline's stager thread,
/// one batch at a time, in order:
///   after_upload  on the load stream, after the arena's copy and before the augment stream may
///                 start (tables the next phase reads);
///   produce       on the augment stream: the batch's output.
/// A step that `takes_parts` also has `on_part` called, before its batch is complete, for positions
/// whose pinned bytes are final (their samples are prepared), on the load stream; its
/// `after_upload` then does what the parts of the same `fill` left.
class DeviceStep {
 public:
  virtual ~DeviceStep() = default;
  virtual void after_upload(const StepContext&) {}
  /// `s.count` is the batch's size; `positions` the prepared ones not given to a part before.
  virtual void on_part(const StepContext& /*s*/, std::span<const std::size_t> /*positions*/) {}
  [[nodiscard]] virtual bool takes_parts() const noexcept { return false; }
  virtual void produce(const StepContext&) = 0;
  /// True for a step whose `after_upload` writes device memory when it is called rather than in
  /// stream order (the hardware JPEG decoder does): the backend then waits on the host until the
  /// slot's last kernel is done with its arena before calling it.
  [[nodiscard]] virtual bool writes_on_call() const noexcept { return false; }
  /// Adds the step's counters to a backend's.
  virtual void add_stats(DeviceStats&) {}
  /// Device memory the step holds (for `PipelineStats::device_bytes`).
  [[nodiscard]] virtual std::size_t device_bytes() const noexcept { return 0; }
};

namespace detail {

template <class Spec>
using DeviceStepMaker = std::unique_ptr<DeviceStep> (*)(const Spec&, const DeviceStepConfig&);

/// The maker a backend registered for `Spec` (null until a translation unit compiled with the
/// backend's compiler includes its implementation).
template <class Spec>
std::atomic<DeviceStepMaker<Spec>>& device_step_maker() noexcept {
  static std::atomic<DeviceStepMaker<Spec>> maker{nullptr};
  return maker;
}

}  // namespace detail

/// A step a transform asks for: a spec (a copyable struct with a `static constexpr const char*
/// name`), made into the backend's `DeviceStep` when the pipeline is built.
class DeviceStepSpec {
 public:
  template <class Spec>
  [[nodiscard]] static DeviceStepSpec of(Spec spec) {
    DeviceStepSpec s;
    s.spec_ = std::make_shared<const Spec>(std::move(spec));
    s.name_ = Spec::name;
    s.make_ = [](const void* p, const DeviceStepConfig& c) -> std::unique_ptr<DeviceStep> {
      const auto maker = detail::device_step_maker<Spec>().load();
      if (!maker) {
        if constexpr (requires { Spec::missing; }) throw ConfigError(Spec::missing);
        throw ConfigError(std::string("device step '") + Spec::name +
                          "' has no implementation in this program: include <conveyor/cuda/backend.cuh> in a "
                          "translation unit compiled by nvcc");
      }
      return maker(*static_cast<const Spec*>(p), c);
    };
    return s;
  }

  [[nodiscard]] const char* name() const noexcept { return name_; }
  /// The backend's implementation, made for `config`.
  /// @throws ConfigError when no backend implements the spec.
  [[nodiscard]] std::unique_ptr<DeviceStep> make(const DeviceStepConfig& config) const {
    return make_(spec_.get(), config);
  }

 private:
  DeviceStepSpec() = default;

  std::shared_ptr<const void> spec_;
  const char* name_ = "";
  std::unique_ptr<DeviceStep> (*make_)(const void*, const DeviceStepConfig&) = nullptr;
};

}  // namespace v0
}  // namespace conveyor

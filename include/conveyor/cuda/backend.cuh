#pragma once
/// @file
/// The CUDA backend of `BatchPipeline`. Include it in one translation unit compiled by nvcc;
/// every pipeline of the program can then take `.device = N`.
///
/// Per slot: a pinned arena and its device twin, a table of filter windows, a device output
/// buffer, and three events. The windows are laid out on the load stream, so the augment
/// stream, which gates the consumer, runs only the fused kernel.
///
///   worker threads   ──write pinned arena (labels, plans, regions)──────────────────────────────
///   LOAD stream      wait ready[s], released[s] ─ H2D arena ─ lay out windows ─ record uploaded[s]
///   AUGMENT stream   (greatest priority)        wait uploaded[s], released[s] ─ kernel ─ record ready[s]
///   consumer stream                                          wait ready[s] ─ user's work ─ record released[s]
///   host             workers wait uploaded[s] before writing that pinned arena again
///
/// The consumer's thread never waits for the GPU: it only makes its stream wait for `ready`.

#include <conveyor/config.hpp>

#if !CONVEYOR_CUDA_COMPILATION()
#error "conveyor/cuda/backend.cuh needs a CUDA compiler"
#endif

#include <conveyor/cuda/buffer.hpp>
#include <conveyor/cuda/device.hpp>
#include <conveyor/cuda/error.hpp>
#include <conveyor/cuda/kernels/augment.cuh>
#include <conveyor/cuda/stream.hpp>
#include <conveyor/pipeline/detail/device_stage.hpp>
#include <conveyor/pipeline/detail/nvtx.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

#include <cuda_runtime_api.h>

namespace conveyor {
inline namespace v0 {
namespace cuda {

/// `detail::DeviceStage` on one CUDA device.
class CudaStage final : public detail::DeviceStage {
 public:
  explicit CudaStage(const detail::DeviceStageConfig& c) : c_(c) {
    check_device(c.device);
    DeviceGuard guard(c.device);
    consumer_ = c.consumer ? c.consumer : cudaStreamLegacy;
    load_.emplace(0);
    augment_.emplace(Stream::greatest_priority());  // its kernels gate the consumer
    if (c.resample) kernels::load_augment_kernels(c.params);  // not inside the first batch's kernel time
    slots_.reserve(c.slots);
    for (std::size_t i = 0; i < c.slots; ++i) slots_.push_back(std::make_unique<Slot>(c));
  }
  CudaStage(const CudaStage&) = delete;
  CudaStage& operator=(const CudaStage&) = delete;

  /// Waits for every use of the buffers (ours and the consumer's) before they are freed.
  ~CudaStage() override {
    try {
      DeviceGuard guard(c_.device);
      for (auto& s : slots_) (void)cudaEventSynchronize(s->released.get());
      (void)cudaStreamSynchronize(load_->get());
      (void)cudaStreamSynchronize(augment_->get());
    } catch (...) {  // destructors do not throw; the memory is released regardless
    }
  }

  std::byte* host_arena(std::size_t slot) override { return slots_[slot]->pinned.data(); }

  void wait_uploaded(std::size_t slot) noexcept override {
    try {
      const EventRef e = slots_[slot]->uploaded;
      if (!e.ready()) e.synchronize();
    } catch (...) {  // the device failed: a pipeline failure, not this worker's sample's
      keep_failure();
    }
  }

  void submit(std::size_t slot, std::size_t count, std::size_t bytes) override {
    DeviceGuard guard(c_.device);
    std::lock_guard lock(submit_mutex_);
    Slot& s = *slots_[slot];
    collect_timing(s);
    const StreamRef load = *load_, augment = *augment_;
    {
      detail::NvtxRange range("h2d");
      load.wait(s.ready);     // the last kernel has read this device arena
      load.wait(s.released);  // and the consumer is done with its labels
      s.h2d_start.record(load);
      CONVEYOR_CUDA_TRY(cudaMemcpyAsync(s.arena.data(), s.pinned.data(), bytes, cudaMemcpyHostToDevice, load.get()));
      s.h2d_end.record(load);
      if (c_.resample) kernels::launch_layout(plans(s), s.taps.data(), count, c_.out_width, c_.out_height, load.get());
      s.uploaded.record(load);
    }
    {
      detail::NvtxRange range("kernel");
      augment.wait(s.uploaded);
      augment.wait(s.released);  // the consumer is done with the output this overwrites
      s.kernel_start.record(augment);
      const std::byte* data = s.arena.data() + c_.arena.data;
      if (c_.resample) {
        kernels::launch_augment(data, plans(s), s.taps.data(), s.output.data(), count, c_.sample_bytes, c_.params,
                                c_.out_width, c_.out_height, augment.get());
      } else {
        CONVEYOR_CUDA_TRY(cudaMemcpyAsync(s.output.data(), data, count * c_.sample_bytes, cudaMemcpyDeviceToDevice,
                                          augment.get()));
      }
      s.kernel_end.record(augment);
      s.ready.record(augment);
    }
    s.timing_pending = true;
    ++stats_.batches;
    stats_.bytes_uploaded += bytes;
  }

  void hand_out(std::size_t slot) override {
    DeviceGuard guard(c_.device);  // the legacy default stream is the current device's
    CONVEYOR_CUDA_TRY(cudaStreamWaitEvent(consumer_, slots_[slot]->ready.get(), 0));
  }

  void release(std::size_t slot) noexcept override {
    try {
      DeviceGuard guard(c_.device);
      CONVEYOR_CUDA_TRY(cudaEventRecord(slots_[slot]->released.get(), consumer_));
    } catch (...) {
      keep_failure();
    }
  }

  std::exception_ptr failure() const noexcept override {
    std::lock_guard lock(failure_mutex_);
    return failure_;
  }

  void* output(std::size_t slot) override { return slots_[slot]->output.data(); }
  std::int64_t* labels(std::size_t slot) override {
    return reinterpret_cast<std::int64_t*>(slots_[slot]->arena.data());
  }

  detail::DeviceStats stats() override {
    DeviceGuard guard(c_.device);
    std::lock_guard lock(submit_mutex_);
    for (auto& s : slots_) collect_timing(*s);
    detail::DeviceStats st = stats_;
    for (const auto& s : slots_) {
      st.pinned_bytes += s->pinned.size();
      st.device_bytes += s->arena.size() + s->output.size();
    }
    return st;
  }

 private:
  struct Slot {
    explicit Slot(const detail::DeviceStageConfig& c)
        : pinned(c.arena.total),
          arena(c.arena.total),
          taps(c.resample ? kernels::TapTable::bytes(c.batch_size, c.out_width, c.out_height) : 0),
          output(c.batch_size * c.sample_bytes) {}
    PinnedBuffer pinned;
    DeviceBuffer arena;
    DeviceBuffer taps;  // the kernel's filter windows, laid out from the plans in arena
    DeviceBuffer output;
    Event uploaded, ready, released;
    TimedEvent h2d_start, h2d_end, kernel_start, kernel_end;
    bool timing_pending = false;  // a copy and kernel not yet timed; guarded by submit_mutex_
  };

  const ops::SamplePlan* plans(const Slot& s) const {
    return reinterpret_cast<const ops::SamplePlan*>(s.arena.data() + c_.arena.plans);
  }

  /// Keeps the exception being handled, if it is the first, for failure().
  void keep_failure() noexcept {
    std::lock_guard lock(failure_mutex_);
    if (!failure_) failure_ = std::current_exception();
  }

  /// Adds a slot's last copy and kernel times once the device has run them (under submit_mutex_,
  /// so the events are not re-recorded meanwhile).
  void collect_timing(Slot& s) {
    if (!s.timing_pending || !s.kernel_end.ready()) return;
    s.timing_pending = false;
    stats_.h2d_seconds += 1e-3 * s.h2d_end.elapsed_ms_since(s.h2d_start);
    const double kernel = 1e-3 * s.kernel_end.elapsed_ms_since(s.kernel_start);
    stats_.kernel_seconds += kernel;
    stats_.kernel_max_seconds = std::max(stats_.kernel_max_seconds, kernel);
  }

  detail::DeviceStageConfig c_;
  cudaStream_t consumer_ = nullptr;
  std::optional<Stream> load_;     // made on the pipeline's device, in the constructor body
  std::optional<Stream> augment_;
  std::vector<std::unique_ptr<Slot>> slots_;
  std::mutex submit_mutex_;  // submit() and stats(): the stager and the consumer
  detail::DeviceStats stats_;
  mutable std::mutex failure_mutex_;
  std::exception_ptr failure_;
};

/// The factory `BatchPipeline` finds through `detail::cuda_stage_factory()`.
inline std::unique_ptr<detail::DeviceStage> make_cuda_stage(const detail::DeviceStageConfig& c) {
  return std::make_unique<CudaStage>(c);
}

namespace {
// Registers the backend when a CUDA translation unit including this header starts up.
[[maybe_unused]] const bool cuda_backend_registered =
    (conveyor::detail::cuda_stage_factory().store(&make_cuda_stage), true);
}  // namespace

}  // namespace cuda
}  // namespace v0
}  // namespace conveyor

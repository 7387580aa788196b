#pragma once
/// @file
/// The CUDA backend of `BatchPipeline`. Include it in one translation unit compiled by nvcc;
/// every pipeline of the program can then take `.device = N` (and the device steps conveyor
/// ships, `ResampleSamples`, `ProgramSamples`, `CopySamples` and `MixSamples`, have their implementations;
/// `DecodeJpegs` too, for `decode = gpu`, where the build defines CONVEYOR_WITH_NVJPEG and links
/// nvJPEG).
///
/// Per slot: a pinned arena and its device twin (`SlotLayout`), a device output buffer, and three
/// events; the transform's steps (`DeviceWork`) keep what else they need per slot. Each step's
/// `after_upload` phase runs on the load stream (ImageAugment's: laying out the filter windows), so
/// the augment stream, which gates the consumer, runs only the `produce` phases (the fused kernel,
/// and the pixel-program kernel after it where the transform has pixel transforms).
///
///   worker threads   ──write pinned arena (labels, plans, regions)──────────────────────────────
///   LOAD stream      (steps' on_part, as the batch fills) ─ wait ready[s], released[s][*] ─ H2D arena ─
///                    steps' after_upload ─ record uploaded[s]
///   AUGMENT stream   (greatest priority)        wait uploaded[s], released[s][*] ─ steps' produce ─ record ready[s]
///   consumer streams                                  wait ready[s] ─ user's work ─ record released[s][k]
///   (the pipeline's stream, and each other one `Batch::wait_async` handed the batch to: up to
///   `max_consumer_streams`, each with its own `released` event, all of which the slot's next
///   upload and kernel wait for)
///   host             workers wait uploaded[s] before writing that pinned arena again
///
/// The consumer's thread never waits for the GPU: it only makes its streams wait for `ready`.

#include <conveyor/config.hpp>

#if !CONVEYOR_CUDA_COMPILATION()
#error "conveyor/cuda/backend.cuh needs a CUDA compiler"
#endif

#include <conveyor/core/clock.hpp>
#include <conveyor/core/nvtx.hpp>
#include <conveyor/cuda/buffer.hpp>
#include <conveyor/cuda/copy_step.cuh>
#include <conveyor/cuda/device.hpp>
#include <conveyor/cuda/error.hpp>
#if defined(CONVEYOR_WITH_NVJPEG)
#include <conveyor/cuda/jpeg_decode_step.cuh>  // decode = gpu (the build found nvJPEG)
#endif
#include <conveyor/cuda/mix_step.cuh>
#include <conveyor/cuda/program_step.cuh>
#include <conveyor/cuda/resample_step.cuh>
#include <conveyor/cuda/stream.hpp>
#include <conveyor/device/backend.hpp>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include <cuda_runtime_api.h>

namespace conveyor {
inline namespace v0 {
namespace cuda {

/// `DeviceBackend` on one CUDA device.
class CudaBackend final : public DeviceBackend {
 public:
  explicit CudaBackend(const DeviceBackendConfig& c) : c_(c) {
    check_device(c.device);
    DeviceGuard guard(c.device);
    consumer_ = c.consumer ? c.consumer : cudaStreamLegacy;
    load_.emplace(0);
    augment_.emplace(Stream::greatest_priority());  // its kernels gate the consumer
    const DeviceStepConfig step_config{c.device, c.slots, c.batch_size, c.layout, c.sample_bytes};
    for (const DeviceStepSpec& spec : c.steps) {
      steps_.push_back(spec.make(step_config));
      writes_on_call_ = writes_on_call_ || steps_.back()->writes_on_call();
      parts_ = parts_ || steps_.back()->takes_parts();
    }
    slots_.reserve(c.slots);
    for (std::size_t i = 0; i < c.slots; ++i) slots_.push_back(std::make_unique<Slot>(c));
  }
  CudaBackend(const CudaBackend&) = delete;
  CudaBackend& operator=(const CudaBackend&) = delete;

  /// Waits for every use of the buffers (ours and the consumer's) before they are freed.
  ~CudaBackend() override {
    try {
      DeviceGuard guard(c_.device);
      for (auto& s : slots_)
        for (std::size_t k = 0; k < s->released_count; ++k) (void)cudaEventSynchronize(s->released[k].get());
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

  [[nodiscard]] bool takes_parts() const noexcept override { return parts_; }

  void submit_part(std::size_t slot, std::uint64_t fill, std::size_t count, std::span<const std::size_t> positions) override {
    const auto t0 = std::chrono::steady_clock::now();
    DeviceGuard guard(c_.device);
    std::lock_guard lock(submit_mutex_);
    detail::NvtxRange range("part");
    Slot& s = *slots_[slot];
    before_writes(s, fill);
    const StepContext step{slot, count, s.arena.data(), s.pinned.data(), s.output.data(), load_->get(), fill};
    for (const auto& st : steps_)
      if (st->takes_parts()) st->on_part(step, positions);
    stats_.submit_seconds += seconds_since(t0);
  }

  void submit(std::size_t slot, std::uint64_t fill, std::size_t count, std::size_t bytes) override {
    const auto t0 = std::chrono::steady_clock::now();
    DeviceGuard guard(c_.device);
    std::lock_guard lock(submit_mutex_);
    Slot& s = *slots_[slot];
    collect_timing(s);
    const StreamRef load = *load_, augment = *augment_;
    StepContext step{slot, count, s.arena.data(), s.pinned.data(), s.output.data(), load.get(), fill};
    const std::size_t released = s.consumed();
    {
      detail::NvtxRange range("h2d");
      load.wait(s.ready);  // the last kernel has read this device arena
      for (std::size_t k = 0; k < released; ++k) load.wait(s.released[k]);  // and every consumer its labels
      s.h2d_start.record(load);
      CONVEYOR_CUDA_TRY(cudaMemcpyAsync(s.arena.data(), s.pinned.data(), bytes, cudaMemcpyHostToDevice, load.get()));
      s.h2d_end.record(load);
      before_writes(s, fill);
      for (const auto& st : steps_) st->after_upload(step);
      s.uploaded.record(load);
    }
    {
      detail::NvtxRange range("kernel");
      augment.wait(s.uploaded);
      for (std::size_t k = 0; k < released; ++k) augment.wait(s.released[k]);  // and with the output it overwrites
      s.kernel_start.record(augment);
      step.stream = augment.get();
      for (const auto& st : steps_) st->produce(step);
      s.kernel_end.record(augment);
      s.ready.record(augment);
    }
    s.timing_pending = true;
    ++stats_.batches;
    stats_.bytes_uploaded += bytes;
    stats_.submit_seconds += seconds_since(t0);
  }

  /// Streams one batch may be handed to: each has its own `released` event, made with the slot.
  static constexpr std::size_t max_consumer_streams = 8;

  void hand_out(std::size_t slot, CUstream_st* stream) override {
    DeviceGuard guard(c_.device);  // the legacy default stream is the current device's
    const cudaStream_t s = stream ? stream : consumer_;
    Slot& sl = *slots_[slot];
    std::lock_guard lock(sl.consumers_mutex);
    const auto end = sl.consumers.begin() + static_cast<std::ptrdiff_t>(sl.consumer_count);
    if (std::find(sl.consumers.begin(), end, s) != end) return;  // it waits already
    if (sl.consumer_count == max_consumer_streams)
      throw Error("BatchPipeline: a batch was handed to more than " + std::to_string(max_consumer_streams) +
                  " CUDA streams (wait_async or DLPack exports); read it on fewer");
    CONVEYOR_CUDA_TRY(cudaStreamWaitEvent(s, sl.ready.get(), 0));
    sl.consumers[sl.consumer_count++] = s;
  }

  void release(std::size_t slot) noexcept override {
    try {
      DeviceGuard guard(c_.device);
      Slot& s = *slots_[slot];
      std::lock_guard lock(s.consumers_mutex);
      for (std::size_t k = 0; k < s.consumer_count; ++k)
        CONVEYOR_CUDA_TRY(cudaEventRecord(s.released[k].get(), s.consumers[k]));
      s.released_count = std::exchange(s.consumer_count, 0);
    } catch (...) {
      keep_failure();
    }
  }

  StreamOrderedMemory copy_out(std::size_t slot, const void* data, std::size_t bytes, CUstream_st* stream) override {
    DeviceGuard guard(c_.device);
    const cudaStream_t s = stream ? stream : consumer_;
    hand_out(slot, s);
    void* copy = nullptr;
    CONVEYOR_CUDA_TRY(cudaMallocAsync(&copy, bytes, s));
    try {
      CONVEYOR_CUDA_TRY(cudaMemcpyAsync(copy, data, bytes, cudaMemcpyDeviceToDevice, s));
    } catch (...) {
      if (cudaFreeAsync(copy, s) != cudaSuccess) (void)cudaGetLastError();
      throw;
    }
    return {copy, s, c_.device, &free_in_order};
  }

  StreamOrderedMemory upload(const void* data, std::size_t bytes, CUstream_st* stream) override {
    DeviceGuard guard(c_.device);
    const cudaStream_t s = stream ? stream : consumer_;
    void* copy = nullptr;
    CONVEYOR_CUDA_TRY(cudaMallocAsync(&copy, bytes, s));
    try {
      // From pageable memory: staged before the call returns, no wait for the stream's work.
      CONVEYOR_CUDA_TRY(cudaMemcpyAsync(copy, data, bytes, cudaMemcpyHostToDevice, s));
    } catch (...) {
      if (cudaFreeAsync(copy, s) != cudaSuccess) (void)cudaGetLastError();
      throw;
    }
    return {copy, s, c_.device, &free_in_order};
  }

  std::exception_ptr failure() const noexcept override {
    std::lock_guard lock(failure_mutex_);
    return failure_;
  }

  void* output(std::size_t slot) override { return slots_[slot]->output.data(); }
  std::int64_t* labels(std::size_t slot) override { return c_.layout.labels(slots_[slot]->arena.data()); }
  float* targets(std::size_t slot) override { return c_.layout.targets(slots_[slot]->arena.data()); }

  DeviceStats stats() override {
    DeviceGuard guard(c_.device);
    std::lock_guard lock(submit_mutex_);
    for (auto& s : slots_) collect_timing(*s);
    DeviceStats st = stats_;
    for (const auto& s : slots_) {
      st.pinned_bytes += s->pinned.size();
      st.device_bytes += s->arena.size() + s->output.size();
    }
    for (const auto& step : steps_) {
      st.device_bytes += step->device_bytes();
      step->add_stats(st);
    }
    return st;
  }

 private:
  struct Slot {
    explicit Slot(const DeviceBackendConfig& c)
        : pinned(c.layout.total + c.layout.host_only), arena(c.layout.total + c.layout.device_only),
          output(c.batch_size * c.sample_bytes) {}
    /// The `released` events the slot's last release recorded.
    std::size_t consumed() {
      std::lock_guard lock(consumers_mutex);
      return released_count;
    }
    PinnedBuffer pinned;
    DeviceBuffer arena;
    DeviceBuffer output;
    Event uploaded, ready;
    std::array<Event, max_consumer_streams> released;  // one per stream the batch was handed to
    std::mutex consumers_mutex;  // hand_out and release, from the consumer's threads
    std::array<cudaStream_t, max_consumer_streams> consumers{};  // the streams the batch is handed to
    std::size_t consumer_count = 0;
    std::size_t released_count = 0;  // released[0, released_count) were recorded at the last release
    TimedEvent h2d_start, h2d_end, kernel_start, kernel_end;
    bool timing_pending = false;  // a copy and kernel not yet timed; guarded by submit_mutex_
    std::uint64_t writes_fill = ~std::uint64_t{0};  // the batch whose steps may write (its last kernel waited for)
  };

  /// Frees what `copy_out` made, after the work queued on its stream so far (on its device: the
  /// legacy default stream's handle means the current device's).
  static void free_in_order(void* data, CUstream_st* stream, int device) noexcept {
    try {
      DeviceGuard guard(device);
      if (cudaFreeAsync(data, stream) != cudaSuccess) (void)cudaGetLastError();  // no later call is blamed
    } catch (...) {  // a deleter does not throw; a failed device has nothing left to free
    }
  }

  /// Before the first step call of batch `fill` in `s`: a step writing when called ignores the
  /// load stream's wait for the last kernel on this arena, so wait for it here (it ran `prefetch`
  /// batches ago, so this rarely blocks).
  void before_writes(Slot& s, std::uint64_t fill) {
    if (!writes_on_call_ || s.writes_fill == fill) return;
    const EventRef last_kernel = s.ready;
    last_kernel.synchronize();
    s.writes_fill = fill;
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

  DeviceBackendConfig c_;
  cudaStream_t consumer_ = nullptr;
  std::optional<Stream> load_;     // made on the pipeline's device, in the constructor body
  std::optional<Stream> augment_;
  std::vector<std::unique_ptr<DeviceStep>> steps_;
  bool writes_on_call_ = false;  // a step's after_upload needs the slot's last kernel done
  bool parts_ = false;           // a step takes parts of a batch
  std::vector<std::unique_ptr<Slot>> slots_;
  std::mutex submit_mutex_;  // submit() and stats(): the stager and the consumer
  DeviceStats stats_;
  mutable std::mutex failure_mutex_;
  std::exception_ptr failure_;
};

/// The factory `BatchPipeline` finds through `detail::cuda_backend_factory()`.
inline std::unique_ptr<DeviceBackend> make_cuda_backend(const DeviceBackendConfig& c) {
  return std::make_unique<CudaBackend>(c);
}

namespace {
// Registers the backend when a CUDA translation unit including this header starts up.
[[maybe_unused]] const bool cuda_backend_registered =
    (conveyor::detail::cuda_backend_factory().store(&make_cuda_backend), true);
}  // namespace

}  // namespace cuda
}  // namespace v0
}  // namespace conveyor

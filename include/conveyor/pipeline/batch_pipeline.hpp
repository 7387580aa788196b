#pragma once
/// @file
/// `BatchPipeline`: a dataset, a sampler and a transform, iterated as batches in a range-for loop.
/// This file wires the parts: the epoch's schedule (detail/schedule.hpp), sample preparation and
/// the error policy (detail/sample_prep.hpp), the device side (detail/device_feeder.hpp), batch
/// assembly (batch.hpp) and stats (stats.hpp).

#include <conveyor/config.hpp>
#include <conveyor/core/concepts.hpp>
#include <conveyor/core/error.hpp>
#include <conveyor/core/sample.hpp>
#include <conveyor/core/tensor.hpp>
#include <conveyor/device/backend.hpp>
#include <conveyor/device/jpeg_offload.hpp>
#include <conveyor/device/mix_samples.hpp>
#include <conveyor/device/work.hpp>
#include <conveyor/pipeline/auto_workers.hpp>
#include <conveyor/pipeline/batch.hpp>
#include <conveyor/pipeline/detail/batch_mixing.hpp>
#include <conveyor/pipeline/detail/device_feeder.hpp>
#include <conveyor/pipeline/detail/offload.hpp>
#include <conveyor/pipeline/detail/ring.hpp>
#include <conveyor/pipeline/detail/sample_prep.hpp>
#include <conveyor/pipeline/detail/schedule.hpp>
#include <conveyor/pipeline/detail/thread_start.hpp>
#include <conveyor/pipeline/options.hpp>
#include <conveyor/pipeline/prefetch.hpp>
#include <conveyor/pipeline/stats.hpp>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <iterator>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

namespace conveyor {
inline namespace v0 {

/// Prepares batches of `dataset` samples, in `sampler` order, through `transform`, on worker
/// threads, and hands them out in order through a range-for loop:
///
/// ```
/// conveyor::BatchPipeline pipe(dataset, sampler, conveyor::ImageAugment::train(), {.batch_size = 256});
/// for (int epoch = 0; epoch < 90; ++epoch) {
///   pipe.set_epoch(epoch);
///   for (const conveyor::Batch& b : pipe) train_step(b.images(), b.labels());
/// }
/// ```
///
/// Workers take one sample at a time from the next batches (up to `prefetch` in flight), so the
/// samples of one batch are decoded in parallel and every worker stays busy while a slot is free.
/// Batches come out in sampler order whatever the number of workers, and their content is a
/// function of (seed, epoch, dataset index) alone.
///
/// With `device` set to a CUDA ordinal, batches are device tensors: workers decode on the CPU into
/// pinned memory, a stager thread uploads each batch with one copy on a load stream and runs the
/// augmentation kernel on a high-priority stream, and the consumer's stream waits for the batch
/// on the device (cuda/backend.cuh draws the event protocol). A `DeviceTransform` (ImageAugment)
/// stages each sample for its device steps (a decoded window for the fused kernel); others run on
/// the CPU and are uploaded finished.
///
/// An lvalue dataset is referenced and must outlive the pipeline; an rvalue is moved in.
/// Thread safety: one thread iterates; `stats()` and `skipped()` may be called from any thread.
template <Dataset D, Sampler S, Transform T>
class BatchPipeline {
 public:
  using Options = PipelineOptions;
  class Iterator;

  /// @throws ConfigError naming an invalid option, an empty dataset or an invalid transform.
  BatchPipeline(const D& dataset, S sampler, T transform, Options options = {})
      : BatchPipeline(std::shared_ptr<const D>(&dataset, [](const D*) {}), std::move(sampler), std::move(transform),
                      options) {}
  BatchPipeline(D&& dataset, S sampler, T transform, Options options = {})
      : BatchPipeline(std::make_shared<const D>(std::move(dataset)), std::move(sampler), std::move(transform), options) {}

  BatchPipeline(const BatchPipeline&) = delete;
  BatchPipeline& operator=(const BatchPipeline&) = delete;

  /// Stops the workers (each finishes the sample it is on) and joins them. Batches still held
  /// stay valid. Must not run while an iterator of this pipeline is alive.
  ~BatchPipeline() {
    request_stop();
    for (std::thread& t : threads_) t.join();
  }

  /// Selects the epoch the next loop iterates (its order and its random augmentation), and the
  /// batch it starts at: resuming at batch k of epoch e gives exactly the batches k, k + 1, ... of
  /// an uninterrupted run, without preparing the first k (every decision is a function of
  /// (seed, epoch, index)). The start applies to the next loop only.
  /// @throws Error while an epoch is being iterated.
  void set_epoch(std::uint64_t epoch, std::uint64_t first_batch = 0) {
    std::lock_guard lock(ring_->mutex);
    if (schedule_->live()) throw Error("BatchPipeline::set_epoch: an epoch is being iterated; finish or leave the loop first");
    epoch_ = epoch;
    first_batch_ = first_batch;
  }
  [[nodiscard]] std::uint64_t epoch() const {
    std::lock_guard lock(ring_->mutex);
    return epoch_;
  }

  /// Sets the device's share of the JPEGs its engines take for the next loop (with `decode` gpu
  /// or auto): resuming an adaptive run with the share its `stats().gpu_share` reported gives the
  /// batches it would have given. auto goes on adapting from the epoch after.
  /// @throws ConfigError for a share outside [0, 1] or a pipeline without a device decoder; Error
  ///         while an epoch is being iterated.
  void set_gpu_share(double share) {
    if (!offload_) throw ConfigError("BatchPipeline::set_gpu_share: this pipeline decodes JPEGs on the CPU (decode = cpu)");
    if (!(share >= 0 && share <= 1))
      throw ConfigError("BatchPipeline::set_gpu_share: the share must be in [0, 1], got " + std::to_string(share));
    std::lock_guard lock(ring_->mutex);
    if (schedule_->live()) throw Error("BatchPipeline::set_gpu_share: an epoch is being iterated; finish or leave the loop first");
    gpu_share_ = share;
    skip_rebalance_ = true;
  }

  /// Starts iterating the selected epoch. Only one epoch may be live at a time.
  /// @throws Error when an iterator of this pipeline is still alive; ConfigError when the sampler
  ///         yields an index outside the dataset.
  [[nodiscard]] Iterator begin() {
    // adaptive: the share for this epoch, from what the epochs since the last change measured
    // (detail/offload.hpp); taken only once the epoch starts, so a refused begin() changes nothing.
    std::optional<PipelineStats> measured;
    std::optional<double> share;
    if (o_.decode == JpegDecode::adaptive && offload_ && !skip_rebalance_) {
      measured = stats();
      share = detail::rebalanced_gpu_share(*measured, last_measured_, std::max(o_.workers, 1), o_.batch_size);
    }
    std::vector<std::uint64_t> order = sampler_.indices(epoch());
    const std::uint64_t n = dataset_->size();
    for (std::uint64_t i : order)
      if (i >= n)
        throw ConfigError("BatchPipeline: the sampler gave index " + std::to_string(i) + " for a dataset of " +
                          std::to_string(n) + " samples");
    std::uint64_t first = 0, batches = 0;
    {
      std::lock_guard lock(ring_->mutex);
      if (schedule_->live()) throw Error("BatchPipeline::begin: an epoch is already being iterated; destroy its iterator first");
      if (feeder_)
        if (const std::exception_ptr failure = feeder_->failure()) std::rethrow_exception(failure);
      skip_rebalance_ = false;
      if (share) {
        gpu_share_ = *share;
        last_measured_ = std::move(*measured);
      }
      first = schedule_->start(std::move(order), epoch_, std::exchange(first_batch_, 0));
      batches = schedule_->batches();
      ++delivered_.epochs;
      if (!delivered_.started) {
        delivered_.started = true;
        delivered_.first_begin = std::chrono::steady_clock::now();
      }
    }
    ring_->work.notify_all();
    return Iterator(this, first, batches);
  }
  [[nodiscard]] std::default_sentinel_t end() const noexcept { return {}; }

  /// Batches per epoch (for the selected epoch's sampler size).
  [[nodiscard]] std::uint64_t batches_per_epoch() const {
    return detail::batches_in(sampler_.size(), o_.batch_size, o_.drop_last);
  }
  [[nodiscard]] const Options& options() const noexcept { return o_; }
  [[nodiscard]] const D& dataset() const noexcept { return *dataset_; }
  [[nodiscard]] const S& sampler() const noexcept { return sampler_; }
  [[nodiscard]] const T& transform() const noexcept { return transform_; }

  /// Counters and per-stage times since construction.
  [[nodiscard]] PipelineStats stats() const {
    std::vector<const StageClock*> clocks;
    for (const auto& w : workers_) clocks.push_back(&w->clock);
    const std::optional<DeviceStats> device = ring_->device ? std::optional(ring_->device->stats()) : std::nullopt;
    std::lock_guard lock(ring_->mutex);
    PipelineStats st = detail::make_stats(o_.workers, clocks, stage_names(), delivered_, skipped_.size(),
                                          ring_->host_bytes(), device ? &*device : nullptr);
    st.decode = to_string(o_.decode);
    st.gpu_share = gpu_share_;
    st.prefetch = prefetch_.slots;
    st.prefetch_reason = prefetch_.reason;
    return st;
  }

  /// Slots whose batch is handed out and still held (by Batch copies or tensors made from them).
  /// When all `prefetch` are, no batch can be made until one is released.
  [[nodiscard]] std::size_t slots_held() const {
    std::lock_guard lock(ring_->mutex);
    std::size_t n = 0;
    for (const detail::Slot& s : ring_->slots) n += s.state == detail::SlotState::handed;
    return n;
  }

  /// Every sample replaced under `OnError::skip` in the batches delivered so far.
  [[nodiscard]] std::vector<SkippedSample> skipped() const {
    std::lock_guard lock(ring_->mutex);
    return skipped_;
  }

  /// A single-pass input iterator over one epoch's batches. Move-only; destroying it ends the
  /// epoch (work in flight is finished and discarded), so `break` is always safe.
  class Iterator {
   public:
    using value_type = Batch;
    using difference_type = std::ptrdiff_t;

    Iterator(Iterator&& other) noexcept
        : p_(std::exchange(other.p_, nullptr)), k_(other.k_), end_(other.end_), current_(std::move(other.current_)),
          taken_(other.taken_) {}
    Iterator& operator=(Iterator&&) = delete;
    Iterator(const Iterator&) = delete;
    ~Iterator() {
      current_.reset();
      if (p_) p_->finish_epoch();
    }

    /// The current batch; waits for it if it is not ready.
    /// @throws SampleError when one of its samples failed under `OnError::raise`.
    const Batch& operator*() {
      if (!taken_) {
        taken_ = true;
        current_ = p_->take(k_);
      }
      return *current_;
    }
    const Batch* operator->() { return &**this; }
    /// Waits at most `timeout` for the current batch (or its failure) to be ready, so that `*it`
    /// will not block; true when it is. With zero workers it is true at once: the consumer's thread
    /// makes the batch when it asks for it. For consumers that must stay responsive (signals).
    [[nodiscard]] bool wait_ready(std::chrono::nanoseconds timeout) { return taken_ || p_->wait_ready(k_, timeout); }
    /// Releases the iterator's hold on the current batch and moves to the next.
    Iterator& operator++() {
      if (!taken_) **this;  // a skipped batch still surfaces its errors, in order
      current_.reset();
      taken_ = false;
      ++k_;
      return *this;
    }
    void operator++(int) { ++*this; }
    friend bool operator==(const Iterator& it, std::default_sentinel_t) noexcept { return it.k_ >= it.end_; }

   private:
    friend class BatchPipeline;
    Iterator(BatchPipeline* p, std::uint64_t first, std::uint64_t batches) noexcept : p_(p), k_(first), end_(batches) {}

    BatchPipeline* p_;
    std::uint64_t k_ = 0;
    std::uint64_t end_;
    std::optional<Batch> current_;
    bool taken_ = false;
  };

 private:
  using Prep = detail::SamplePrep<D, T>;

  BatchPipeline(std::shared_ptr<const D> dataset, S sampler, T transform, Options options)
      : dataset_(std::move(dataset)), sampler_(std::move(sampler)), transform_(std::move(transform)), o_(options) {
    if (o_.batch_size == 0) throw ConfigError("BatchPipeline: batch_size must be > 0, got 0");
    if (o_.prefetch != auto_prefetch && o_.prefetch < 2)
      throw ConfigError("BatchPipeline: prefetch must be >= 2 (or auto_prefetch), got " + std::to_string(o_.prefetch));
    if (o_.workers < -1) throw ConfigError("BatchPipeline: workers must be >= -1, got " + std::to_string(o_.workers));
    if (o_.device < cpu_device) throw ConfigError("BatchPipeline: device must be >= -1, got " + std::to_string(o_.device));
    detail::validate_decode_options(o_);
    if (dataset_->size() == 0) throw ConfigError("BatchPipeline: the dataset is empty");
    if constexpr (requires { transform_.validate(); }) transform_.validate();
    if (o_.workers == -1) o_.workers = detail::auto_workers(o_, std::thread::hardware_concurrency());
    spec_ = transform_.sample_spec();
    const bool on_device = o_.device != cpu_device;
    if (o_.batch_transform)
      mixing_.emplace(*o_.batch_transform, detail::mix_geometry(transform_, spec_), o_.seed, o_.workers, on_device);
    DeviceWork work;
    if (on_device) {
      device_ = Device{Device::Kind::cuda, o_.device};
      work = device_work_of(transform_);
      plan_device(work);
    }
    prefetch_ = detail::choose_prefetch(o_, slot_bytes(), offload_.has_value());
    o_.prefetch = prefetch_.slots;
    ring_ = std::make_shared<detail::Ring>(o_.prefetch, o_.batch_size, spec_, !on_device);
    if (on_device) make_backend(work);
    if (mixing_) mixing_->reserve(*ring_, o_.batch_size);
    name_stages();
    const bool staged = work.placement == DeviceWork::Placement::staged;
    // With parts, the stager hears of every half a call's worth of prepared samples.
    const std::size_t part = on_device && ring_->device->takes_parts()
                                 ? std::max<std::size_t>(1, std::min(o_.gpu_part_images, o_.batch_size) / 2)
                                 : 0;
    schedule_.emplace(*ring_, o_.batch_size, o_.drop_last, layout_.data_bytes(), staged ? work.reserve : 0,
                      mixing_.has_value(), part);
    prep_.emplace(*dataset_, transform_, o_, layout_, work.placement, offload_);
    gpu_share_ = offload_ ? detail::first_gpu_share(o_) : 0.0;
    if (on_device) feeder_.emplace(*ring_, *schedule_, layout_, staged ? 0 : spec_.bytes());
    const int states = std::max(o_.workers, 1);
    for (int w = 0; w < states; ++w)
      workers_.push_back(std::unique_ptr<typename Prep::Worker>(new typename Prep::Worker{{}, transform_.make_workspace(), {}}));
    // All or none: a thread that cannot start stops and joins those before it (then members unwind).
    const auto stop = [this] { request_stop(); };
    detail::start_threads(threads_, std::size_t(o_.workers), [this](std::size_t w) { work_loop(*workers_[w]); }, stop);
    if (feeder_) {
      try {
        detail::start_threads(threads_, 1, [this](std::size_t) { feeder_->run(stop_); }, stop);
      } catch (...) {
        for (std::thread& t : threads_) t.join();  // the workers, stopped
        throw;
      }
    }
  }

  /// Tells every thread to return: the workers and the stager wake and see `stop_`.
  void request_stop() noexcept {
    {
      std::lock_guard lock(ring_->mutex);
      stop_ = true;
    }
    ring_->work.notify_all();  // workers
    ring_->done.notify_all();  // the stager
  }

  /// Sizes the slots' arenas for the transform's device work (`layout_`, `offload_`).
  void plan_device(DeviceWork& work) {
    const auto factory = detail::cuda_backend_factory().load();
    if (!factory)
      throw ConfigError("BatchPipeline: device " + std::to_string(o_.device) +
                        " needs the CUDA backend: include <conveyor/cuda/backend.cuh> in a translation unit "
                        "compiled by nvcc (this program has only the CPU backend)");
    if (o_.batch_size > 65535) throw ConfigError("BatchPipeline: batch_size must be <= 65535 on a device");
    std::size_t data = o_.batch_size * work.budget;
    if (work.placement == DeviceWork::Placement::staged && o_.arena_bytes)
      data = std::max(o_.arena_bytes, o_.batch_size * work.reserve);
    offload_ = detail::add_jpeg_offload(work, o_);
    const std::size_t host_only = offload_ ? offload_->host_bytes() : 0, device_only = offload_ ? offload_->device_bytes() : 0;
    const auto classes = static_cast<std::size_t>(mixing_ ? mixing_->num_classes() : 0);
    if (mixing_) work.steps.push_back(DeviceStepSpec::of(MixSamples{mixing_->geometry()}));  // after the transform's
    layout_ = SlotLayout::make(o_.batch_size, data + o_.batch_size * ArenaAllocator::alignment, host_only, device_only,
                               work.programs, classes, work.copies);
  }

  /// The bytes one slot holds, pinned and device memory together: its arenas and output on a
  /// device, its images on the CPU, and its labels, indices and soft targets.
  [[nodiscard]] std::size_t slot_bytes() const noexcept {
    const auto classes = static_cast<std::size_t>(mixing_ ? mixing_->num_classes() : 0);
    const std::size_t tables = o_.batch_size * (2 * sizeof(std::int64_t) + classes * sizeof(float));
    if (device_.kind == Device::Kind::cpu) return tables + o_.batch_size * spec_.bytes();
    return tables + 2 * layout_.total + layout_.host_only + layout_.device_only + o_.batch_size * spec_.bytes();
  }

  /// Makes the backend, its slots laid out as `plan_device` planned.
  void make_backend(const DeviceWork& work) {
    const auto factory = detail::cuda_backend_factory().load();
    ring_->device = factory({o_.device, o_.stream, o_.prefetch, o_.batch_size, layout_, spec_.bytes(), work.steps});
    for (std::size_t slot = 0; slot < o_.prefetch; ++slot) layout_.write_guard(ring_->device->host_arena(slot));
  }

  /// The names of the transform's stages, after the pipeline's read, then the batch transform's.
  [[nodiscard]] std::span<const std::string_view> stage_names() const noexcept { return stage_names_; }

  /// The transform's stage names, and with a batch transform its stage ("batch_transform": each
  /// batch's draw, soft targets and mixing, counted in samples mixed).
  void name_stages() {
    if constexpr (requires { transform_.stage_names(); })
      for (const std::string_view name : transform_.stage_names()) stage_names_.push_back(name);
    if (mixing_) stage_names_.push_back("batch_transform");
    if (stage_names_.size() >= std::size_t(max_stages))
      throw ConfigError("BatchPipeline: the transform has more stages than a pipeline times");
  }

  // --- scheduling: everything below that touches shared state holds ring_->mutex ---------------

  void work_loop(typename Prep::Worker& w) {
    std::unique_lock lock(ring_->mutex);
    for (;;) {
      ring_->work.wait(lock, [&] { return stop_ || schedule_->task_available(); });
      if (stop_) return;
      run_task(lock, w);
    }
  }

  /// Takes the next task, prepares it (or mixes its chunk) without the lock, and records how it
  /// ended; the task that finishes a batch to be mixed also cuts it into chunks.
  void run_task(std::unique_lock<std::mutex>& lock, typename Prep::Worker& w) {
    const detail::Task t = schedule_->take();
    detail::Slot& slot = ring_->slots[t.slot];
    detail::TaskOutcome out;
    const auto mix_stage = static_cast<StageId>(stage_names_.size());  // the batch transform's is the last
    if (t.mix) {
      lock.unlock();
      const auto start = std::chrono::steady_clock::now();
      const std::size_t samples = mixing_->mix(slot, t.pos);
      w.clock.add(mix_stage, std::chrono::steady_clock::now() - start, static_cast<int>(samples));
    } else {
      const std::uint64_t index = schedule_->index(t), epoch = schedule_->epoch();
      const double share = gpu_share_;
      lock.unlock();
      out = prep_->run(t, index, epoch, slot, ring_->device.get(), w, share);
    }
    lock.lock();
    if (schedule_->finish(t, std::move(out))) ring_->done.notify_all();
    if (!schedule_->needs_cut(t)) return;
    lock.unlock();
    std::size_t chunks = 0;
    std::exception_ptr error;
    const auto start = std::chrono::steady_clock::now();
    try {
      if (ring_->device) {
        std::byte* arena = ring_->device->host_arena(t.slot);
        chunks = mixing_->cut(slot, layout_.targets(arena), layout_.mix(arena));
      } else {
        chunks = mixing_->cut(slot, slot.targets.data());
      }
    } catch (...) {
      error = std::current_exception();
    }
    w.clock.add(mix_stage, std::chrono::steady_clock::now() - start, 0);
    lock.lock();
    schedule_->cut(t, chunks, std::move(error));
    ring_->work.notify_all();
    ring_->done.notify_all();
  }

  // --- the consumer's side ---------------------------------------------------------------------------

  Batch take(std::uint64_t k) {
    std::unique_lock lock(ring_->mutex);
    if (feeder_)
      if (const std::exception_ptr failure = feeder_->failure()) std::rethrow_exception(failure);
    auto ready = [&] { return schedule_->find(detail::SlotState::ready, k) >= 0; };
    std::int64_t waited_ns = 0;
    if (!ready()) {
      const auto t0 = std::chrono::steady_clock::now();
      if (o_.workers == 0) {
        // No worker threads: the consumer prepares the batch itself, in position order (then, on a
        // device, waits for the stager to submit it).
        while (!ready()) {
          if (!schedule_->task_available() || (schedule_->next_batch() > k && schedule_->mix_task() < 0))
            ring_->done.wait(lock);  // the stager, or a kept Batch's release
          else
            run_task(lock, *workers_[0]);
        }
      } else {
        ring_->done.wait(lock, ready);
      }
      waited_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - t0).count();
      delivered_.wait_ns += waited_ns;
    }
    const auto slot = static_cast<std::size_t>(schedule_->find(detail::SlotState::ready, k));
    detail::Slot& s = ring_->slots[slot];
    if (s.error) {
      std::exception_ptr e = std::exchange(s.error, nullptr);
      s.state = detail::SlotState::free;
      lock.unlock();
      ring_->work.notify_all();
      std::rethrow_exception(e);
    }
    s.state = detail::SlotState::handed;
    if (ring_->device) {
      try {
        ring_->device->hand_out(slot, o_.stream);
      } catch (...) {
        feeder_->fail(std::current_exception());
        s.state = detail::SlotState::free;
        throw;
      }
    }
    skipped_.insert(skipped_.end(), s.skipped.begin(), s.skipped.end());
    ++delivered_.batches;
    delivered_.batch_wait.observe(1e-9 * double(waited_ns));
    delivered_.images += s.count;
    delivered_.last_out = std::chrono::steady_clock::now();
    const std::int64_t classes = mixing_ ? mixing_->num_classes() : 0;
    if (ring_->device)
      return detail::make_batch(ring_, slot, k, spec_, ring_->device->output(slot), ring_->device->labels(slot),
                                ring_->device->targets(slot), device_, classes);
    return detail::make_batch(ring_, slot, k, spec_, s.images.data(), s.labels.data(), s.targets.data(), device_, classes);
  }

  bool wait_ready(std::uint64_t k, std::chrono::nanoseconds timeout) {
    if (o_.workers == 0) return true;
    std::unique_lock lock(ring_->mutex);
    return ring_->done.wait_for(lock, timeout, [&] {
      return schedule_->find(detail::SlotState::ready, k) >= 0 || (feeder_ && feeder_->failure());
    });
  }

  void finish_epoch() {
    std::unique_lock lock(ring_->mutex);
    schedule_->stop();
    ring_->done.wait(lock, [&] { return schedule_->in_flight() == 0 && !(feeder_ && feeder_->busy()); });
    schedule_->end();
  }

  std::shared_ptr<const D> dataset_;
  S sampler_;
  T transform_;
  Options o_;
  SampleSpec spec_{};
  std::shared_ptr<detail::Ring> ring_;
  SlotLayout layout_{};
  Device device_{};
  PrefetchChoice prefetch_{};
  std::optional<detail::BatchMixing> mixing_;  // with a batch transform
  std::vector<std::string_view> stage_names_;
  std::optional<detail::Schedule> schedule_;
  std::optional<Prep> prep_;
  std::optional<detail::DeviceFeeder> feeder_;  // on a device
  std::optional<JpegOffloadLayout> offload_;    // with a device JPEG decoder
  std::vector<std::unique_ptr<typename Prep::Worker>> workers_;
  std::vector<std::thread> threads_;

  // Guarded by ring_->mutex.
  std::uint64_t epoch_ = 0;        // the epoch the next loop iterates (set_epoch)
  std::uint64_t first_batch_ = 0;  // where the next loop starts (set_epoch)
  bool stop_ = false;
  double gpu_share_ = 0;  // the device share of engine-decodable JPEGs in the current epoch
  PipelineStats last_measured_;  // adaptive: the counters its last share came from (consumer's thread)
  bool skip_rebalance_ = false;  // set_gpu_share's share holds for the next loop (consumer's thread)
  detail::DeliveryCounters delivered_;
  std::vector<SkippedSample> skipped_;
};

}  // namespace v0
}  // namespace conveyor

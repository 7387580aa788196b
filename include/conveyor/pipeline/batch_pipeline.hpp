#pragma once
/// @file
/// `BatchPipeline`: a dataset, a sampler and a transform, iterated as batches in a range-for loop.

#include <conveyor/config.hpp>
#include <conveyor/core/bytes.hpp>
#include <conveyor/core/concepts.hpp>
#include <conveyor/core/error.hpp>
#include <conveyor/core/rng.hpp>
#include <conveyor/core/sample.hpp>
#include <conveyor/core/tensor.hpp>
#include <conveyor/pipeline/batch.hpp>
#include <conveyor/pipeline/detail/arena.hpp>
#include <conveyor/pipeline/detail/device_stage.hpp>
#include <conveyor/pipeline/detail/nvtx.hpp>
#include <conveyor/pipeline/detail/ring.hpp>
#include <conveyor/pipeline/options.hpp>
#include <conveyor/pipeline/stats.hpp>

#include <algorithm>
#include <chrono>
#include <concepts>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <exception>
#include <iterator>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
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
/// on the device (cuda/backend.cuh draws the event protocol). Transforms with a `stage()` host
/// half (ImageAugment) are finished on the GPU; others run on the CPU and are uploaded finished.
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
    {
      std::lock_guard lock(ring_->mutex);
      stop_ = true;
    }
    ring_->work.notify_all();  // workers
    ring_->done.notify_all();  // the stager
    for (std::thread& t : threads_) t.join();
  }

  /// Selects the epoch the next loop iterates (its order and its random augmentation), and the
  /// batch it starts at: resuming at batch k of epoch e gives exactly the batches k, k + 1, ... of
  /// an uninterrupted run, without preparing the first k (every decision is a function of
  /// (seed, epoch, index)). The start applies to the next loop only.
  /// @throws Error while an epoch is being iterated.
  void set_epoch(std::uint64_t epoch, std::uint64_t first_batch = 0) {
    std::lock_guard lock(ring_->mutex);
    if (live_) throw Error("BatchPipeline::set_epoch: an epoch is being iterated; finish or leave the loop first");
    epoch_ = epoch;
    first_batch_ = first_batch;
  }
  [[nodiscard]] std::uint64_t epoch() const {
    std::lock_guard lock(ring_->mutex);
    return epoch_;
  }

  /// Starts iterating the selected epoch. Only one epoch may be live at a time.
  /// @throws Error when an iterator of this pipeline is still alive; ConfigError when the sampler
  ///         yields an index outside the dataset.
  [[nodiscard]] Iterator begin() {
    std::vector<std::uint64_t> order = sampler_.indices(epoch());
    const std::uint64_t n = dataset_->size();
    for (std::uint64_t i : order)
      if (i >= n)
        throw ConfigError("BatchPipeline: the sampler gave index " + std::to_string(i) + " for a dataset of " +
                          std::to_string(n) + " samples");
    std::uint64_t batches = 0, first = 0;
    {
      std::lock_guard lock(ring_->mutex);
      if (live_) throw Error("BatchPipeline::begin: an epoch is already being iterated; destroy its iterator first");
      if (failure_) std::rethrow_exception(failure_);
      order_ = std::move(order);
      const std::uint64_t b = o_.batch_size;
      num_batches_ = o_.drop_last ? order_.size() / b : (order_.size() + b - 1) / b;
      batches = num_batches_;
      live_ = true;
      live_epoch_ = epoch_;
      first = std::min(std::exchange(first_batch_, 0), num_batches_);
      next_batch_ = first;
      next_pos_ = 0;
      next_stage_ = first;
      ++epochs_;
      if (!started_) {
        started_ = true;
        first_begin_ = std::chrono::steady_clock::now();
      }
    }
    ring_->work.notify_all();
    return Iterator(this, first, batches);
  }
  [[nodiscard]] std::default_sentinel_t end() const noexcept { return {}; }

  /// Batches per epoch (for the selected epoch's sampler size).
  [[nodiscard]] std::uint64_t batches_per_epoch() const {
    const std::uint64_t n = sampler_.size(), b = o_.batch_size;
    return o_.drop_last ? n / b : (n + b - 1) / b;
  }
  [[nodiscard]] const Options& options() const noexcept { return o_; }
  [[nodiscard]] const D& dataset() const noexcept { return *dataset_; }
  [[nodiscard]] const S& sampler() const noexcept { return sampler_; }
  [[nodiscard]] const T& transform() const noexcept { return transform_; }

  /// Counters and per-stage times since construction.
  [[nodiscard]] PipelineStats stats() const {
    PipelineStats st;
    st.workers = o_.workers;
    for (const auto& w : states_)
      for (int i = 0; i < static_cast<int>(Stage::count); ++i) {
        st.stages[i].count += static_cast<std::uint64_t>(w->clock.count(Stage(i)));
        st.stages[i].seconds += 1e-9 * double(w->clock.nanoseconds(Stage(i)));
      }
    std::lock_guard lock(ring_->mutex);
    st.epochs = epochs_;
    st.batches = batches_out_;
    st.images = images_out_;
    st.elapsed_seconds = started_ ? std::chrono::duration<double>(last_out_ - first_begin_).count() : 0.0;
    if (st.elapsed_seconds < 0) st.elapsed_seconds = 0;
    st.images_per_second = st.elapsed_seconds > 0 ? double(st.images) / st.elapsed_seconds : 0.0;
    st.consumer_wait_seconds = 1e-9 * double(wait_ns_);
    st.starvation = st.elapsed_seconds > 0 ? st.consumer_wait_seconds / st.elapsed_seconds : 0.0;
    st.skipped = skipped_.size();
    st.host_bytes = ring_->host_bytes();
    if (ring_->device) {
      const detail::DeviceStats d = ring_->device->stats();
      st.bytes_uploaded = d.bytes_uploaded;
      st.h2d_seconds = d.h2d_seconds;
      st.kernel_seconds = d.kernel_seconds;
      st.kernel_max_seconds = d.kernel_max_seconds;
      st.host_bytes += d.pinned_bytes;
      st.device_bytes = d.device_bytes;
    }
    return st;
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
  struct WorkerState {
    ByteBuffer bytes;
    typename T::Workspace ws;
    StageClock clock;
  };
  struct Task {
    std::uint64_t batch;
    std::size_t pos;
    std::size_t slot;
  };
  struct Outcome {
    std::exception_ptr error;
    std::optional<SkippedSample> skipped;
  };

  static constexpr int max_replacements = 16;

  BatchPipeline(std::shared_ptr<const D> dataset, S sampler, T transform, Options options)
      : dataset_(std::move(dataset)), sampler_(std::move(sampler)), transform_(std::move(transform)), o_(options) {
    if (o_.batch_size == 0) throw ConfigError("BatchPipeline: batch_size must be > 0, got 0");
    if (o_.prefetch < 2) throw ConfigError("BatchPipeline: prefetch must be >= 2, got " + std::to_string(o_.prefetch));
    if (o_.workers < -1) throw ConfigError("BatchPipeline: workers must be >= -1, got " + std::to_string(o_.workers));
    if (o_.device < cpu_device) throw ConfigError("BatchPipeline: device must be >= -1, got " + std::to_string(o_.device));
    if (dataset_->size() == 0) throw ConfigError("BatchPipeline: the dataset is empty");
    if constexpr (requires { transform_.validate(); }) transform_.validate();
    if (o_.workers == -1) o_.workers = std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
    spec_ = transform_.sample_spec();
    sample_bytes_ = spec_.bytes();
    const bool on_device = o_.device != cpu_device;
    ring_ = std::make_shared<detail::Ring>(o_.prefetch, o_.batch_size, spec_, !on_device);
    if (on_device) {
      device_ = Device{Device::Kind::cuda, o_.device};
      make_device_stage();
    }
    const int states = std::max(o_.workers, 1);
    for (int w = 0; w < states; ++w)
      states_.push_back(std::unique_ptr<WorkerState>(new WorkerState{{}, transform_.make_workspace(), {}}));
    threads_.reserve(o_.workers + 1);
    for (int w = 0; w < o_.workers; ++w) threads_.emplace_back([this, w] { work(*states_[w]); });
    if (ring_->device) threads_.emplace_back([this] { stage_batches(); });
  }

  void make_device_stage() {
    const auto factory = detail::cuda_stage_factory().load();
    if (!factory)
      throw ConfigError("BatchPipeline: device " + std::to_string(o_.device) +
                        " needs the CUDA backend: include <conveyor/cuda/backend.cuh> in a translation unit "
                        "compiled by nvcc (this program has only the CPU backend)");
    if (o_.batch_size > 65535) throw ConfigError("BatchPipeline: batch_size must be <= 65535 on a device");
    detail::DeviceStageConfig c;
    c.device = o_.device;
    c.consumer = o_.stream;
    c.slots = o_.prefetch;
    c.batch_size = o_.batch_size;
    c.sample_bytes = sample_bytes_;
    c.resample = kernel_mode;
    std::size_t data = o_.batch_size * sample_bytes_;
    if constexpr (kernel_mode) {
      c.params = transform_.output_params();
      c.out_width = c.out_height = transform_.output_size();
      const std::size_t budget = std::max<std::size_t>(sample_bytes_, 4 * static_cast<std::size_t>(spec_.numel()));
      data = o_.arena_bytes ? std::max(o_.arena_bytes, o_.batch_size * sample_bytes_) : o_.batch_size * budget;
    }
    c.arena = detail::ArenaLayout::make(o_.batch_size, data + o_.batch_size * detail::ArenaAllocator::alignment);
    arena_ = c.arena;
    ring_->device = factory(c);
  }

  /// A transform with a host half for devices (`stage()`) is finished by the device's kernel.
  static constexpr bool kernel_mode = requires(const T& t, const SampleContext& ctx, std::span<const std::byte> in,
                                               detail::StagingArea& area, typename T::Workspace& ws) {
    { t.stage(ctx, in, area, ws) } -> std::same_as<ops::SamplePlan>;
  };

  /// The free slot with the lowest index, or -1.
  int free_slot() const noexcept {
    for (std::size_t i = 0; i < ring_->slots.size(); ++i)
      if (ring_->slots[i].state == detail::SlotState::free) return static_cast<int>(i);
    return -1;
  }
  /// The slot holding batch k of the live epoch, ready to hand out, or -1.
  int ready_slot(std::uint64_t k) const noexcept {
    for (std::size_t i = 0; i < ring_->slots.size(); ++i) {
      const detail::Slot& s = ring_->slots[i];
      if (s.state == detail::SlotState::ready && s.batch == k && s.epoch == live_epoch_) return static_cast<int>(i);
    }
    return -1;
  }
  std::size_t batch_count(std::uint64_t batch) const noexcept {
    return static_cast<std::size_t>(std::min<std::uint64_t>(o_.batch_size, order_.size() - batch * o_.batch_size));
  }

  // --- scheduling: everything below that touches shared state holds ring_->mutex ---------------

  bool task_available() noexcept {
    if (!live_ || next_batch_ >= num_batches_) return false;
    return next_pos_ > 0 || free_slot() >= 0;
  }

  // Batches claim slots in order, any free one: a Batch the caller keeps takes one slot out of
  // the rotation, not every prefetch-th batch with it.
  Task take_task() {
    if (next_pos_ == 0) filling_ = static_cast<std::size_t>(free_slot());
    detail::Slot& s = ring_->slots[filling_];
    if (next_pos_ == 0) {
      s.state = detail::SlotState::filling;
      s.epoch = live_epoch_;
      s.batch = next_batch_;
      s.count = s.pending = batch_count(next_batch_);
      s.error = nullptr;
      s.skipped.clear();
      s.skipped_pos.clear();
      if (ring_->device)
        s.arena.reset(arena_.total - arena_.data, s.count, kernel_mode ? sample_bytes_ : 0);
    }
    const Task t{next_batch_, next_pos_, filling_};
    if (++next_pos_ == s.count) {
      ++next_batch_;
      next_pos_ = 0;
    }
    ++in_flight_;
    return t;
  }

  void finish_task(const Task& t, Outcome&& out) {
    detail::Slot& s = ring_->slots[t.slot];
    if (out.error && (!s.error || t.pos < s.error_pos)) {
      s.error = out.error;
      s.error_pos = t.pos;
    }
    if (out.skipped) {  // kept in batch position order
      const auto at = std::upper_bound(s.skipped_pos.begin(), s.skipped_pos.end(), t.pos);
      s.skipped.insert(s.skipped.begin() + (at - s.skipped_pos.begin()), std::move(*out.skipped));
      s.skipped_pos.insert(at, t.pos);
    }
    --in_flight_;
    if (--s.pending == 0) s.state = ring_->device ? detail::SlotState::filled : detail::SlotState::ready;
    if (s.pending == 0 || in_flight_ == 0) ring_->done.notify_all();
  }

  void work(WorkerState& state) {
    std::unique_lock lock(ring_->mutex);
    for (;;) {
      ring_->work.wait(lock, [&] { return stop_ || task_available(); });
      if (stop_) return;
      const Task t = take_task();
      lock.unlock();
      Outcome out = run(t, state);
      lock.lock();
      finish_task(t, std::move(out));
    }
  }

  // --- preparing one sample: no lock held ---------------------------------------------------------

  /// Prepares sample `index` at batch position `pos` of `slot`, and records its label and index.
  void prepare(std::uint64_t index, detail::Slot& slot, std::size_t slot_index, std::size_t pos, WorkerState& st) {
    const SampleContext ctx{o_.seed, live_epoch_, index, &st.clock};
    {
      StageTimer timer(ctx, Stage::read);
      detail::NvtxRange range("read");
      dataset_->read(index, st.bytes);
    }
    const std::int64_t label = dataset_->label(index);
    if (!ring_->device) {
      detail::NvtxRange range("transform");
      transform_.apply(ctx, st.bytes.span(), std::span<std::byte>(slot.images.data() + pos * sample_bytes_, sample_bytes_),
                       st.ws);
    } else {
      std::byte* arena = ring_->device->host_arena(slot_index);
      ring_->device->wait_uploaded(slot_index);  // the previous batch's upload may still read it
      if constexpr (kernel_mode) {
        detail::StagingArea area{arena + arena_.data, &slot.arena};
        const ops::SamplePlan plan = transform_.stage(ctx, st.bytes.span(), area, st.ws);
        std::memcpy(arena + arena_.plans + pos * sizeof(ops::SamplePlan), &plan, sizeof plan);
      } else {
        detail::NvtxRange range("transform");
        transform_.apply(ctx, st.bytes.span(),
                         std::span<std::byte>(arena + arena_.data + pos * sample_bytes_, sample_bytes_), st.ws);
      }
      std::memcpy(arena + pos * sizeof(std::int64_t), &label, sizeof label);
    }
    slot.labels[pos] = label;
    slot.indices[pos] = static_cast<std::int64_t>(index);
  }

  static std::string reason_of(const std::exception_ptr& e) {
    try {
      std::rethrow_exception(e);
    } catch (const DecodeError& d) {
      return d.reason();
    } catch (const IoError& io) {
      return io.reason();
    } catch (const std::exception& x) {
      return x.what();
    } catch (...) {
      return "unknown exception";
    }
  }

  /// A SampleError for `index`, with the original exception `cause` nested inside.
  std::exception_ptr sample_error(std::uint64_t index, const std::exception_ptr& cause, const std::string& reason) {
    try {
      std::rethrow_exception(cause);
    } catch (...) {
      try {
        std::throw_with_nested(SampleError(index, dataset_->name(index), reason));
      } catch (...) {
        return std::current_exception();
      }
    }
  }

  Outcome run(const Task& t, WorkerState& st) {
    detail::Slot& s = ring_->slots[t.slot];
    const std::uint64_t index = order_[t.batch * o_.batch_size + t.pos];
    Outcome result;
    try {
      prepare(index, s, t.slot, t.pos, st);
      return result;
    } catch (...) {
      const std::exception_ptr cause = std::current_exception();
      const std::string reason = reason_of(cause);
      if (o_.on_error == OnError::raise) {
        result.error = sample_error(index, cause, reason);
        return result;
      }
      // Replacement candidates are drawn from the failed sample's own stream, so the batch is the
      // same whatever thread prepares it.
      CounterRng rng(o_.seed, live_epoch_, index, RngOp::replace);
      for (int attempt = 0; attempt < max_replacements; ++attempt) {
        const std::uint64_t candidate = rng.below(dataset_->size());
        try {
          prepare(candidate, s, t.slot, t.pos, st);
          result.skipped = SkippedSample{live_epoch_, index, candidate, dataset_->name(index), reason};
          return result;
        } catch (...) {
        }
      }
      result.error = sample_error(index, cause,
                                  reason + " (and " + std::to_string(max_replacements) + " replacements failed too)");
      return result;
    }
  }

  // --- the device's side: the stager submits filled batches in order ---------------------------------

  int filled_slot(std::uint64_t k) const noexcept {
    for (std::size_t i = 0; i < ring_->slots.size(); ++i) {
      const detail::Slot& s = ring_->slots[i];
      if (s.state == detail::SlotState::filled && s.batch == k && s.epoch == live_epoch_) return static_cast<int>(i);
    }
    return -1;
  }

  void stage_batches() {
    std::unique_lock lock(ring_->mutex);
    for (;;) {
      ring_->done.wait(lock, [&] { return stop_ || (live_ && filled_slot(next_stage_) >= 0); });
      if (stop_) return;
      const auto index = static_cast<std::size_t>(filled_slot(next_stage_));
      detail::Slot& s = ring_->slots[index];
      std::exception_ptr error = s.error ? nullptr : failure_;
      if (!s.error && !failure_) {
        staging_ = true;
        const std::size_t bytes = arena_.data + (kernel_mode ? s.arena.used() : s.count * sample_bytes_);
        lock.unlock();
        try {
          ring_->device->submit(index, s.count, bytes);
        } catch (...) {
          error = std::current_exception();
        }
        lock.lock();
        staging_ = false;
        if (error) failure_ = error;  // a CUDA failure poisons the context: stay failed
      }
      if (error && !s.error) s.error = error;
      s.state = detail::SlotState::ready;
      ++next_stage_;
      ring_->done.notify_all();
    }
  }

  // --- the consumer's side ---------------------------------------------------------------------------

  Batch take(std::uint64_t k) {
    std::unique_lock lock(ring_->mutex);
    if (ring_->device && !failure_) failure_ = ring_->device->failure();  // a release that failed
    if (failure_) std::rethrow_exception(failure_);
    auto ready = [&] { return ready_slot(k) >= 0; };
    if (!ready()) {
      const auto t0 = std::chrono::steady_clock::now();
      if (o_.workers == 0) {
        // No worker threads: the consumer prepares the batch itself, in position order (then, on a
        // device, waits for the stager to submit it).
        WorkerState& st = *states_[0];
        while (!ready()) {
          if (!task_available() || next_batch_ > k) {
            ring_->done.wait(lock);  // the stager, or a kept Batch's release
            continue;
          }
          const Task t = take_task();
          lock.unlock();
          Outcome out = run(t, st);
          lock.lock();
          finish_task(t, std::move(out));
        }
      } else {
        ring_->done.wait(lock, ready);
      }
      wait_ns_ += std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - t0).count();
    }
    const auto slot_index = static_cast<std::size_t>(ready_slot(k));
    detail::Slot& s = ring_->slots[slot_index];
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
        ring_->device->hand_out(slot_index);
      } catch (...) {
        failure_ = std::current_exception();
        s.state = detail::SlotState::free;
        throw;
      }
    }
    skipped_.insert(skipped_.end(), s.skipped.begin(), s.skipped.end());
    ++batches_out_;
    images_out_ += s.count;
    last_out_ = std::chrono::steady_clock::now();
    Batch b;
    b.d_.images = images_view(s, slot_index);
    b.d_.labels = ring_->device ? TensorView::contiguous(ring_->device->labels(slot_index), DType::i64,
                                                         {static_cast<std::int64_t>(s.count)}, device_)
                                : TensorView::contiguous(s.labels.data(), DType::i64, {static_cast<std::int64_t>(s.count)});
    b.d_.indices = s.indices.data();
    b.d_.skipped = s.skipped;
    b.d_.size = s.count;
    b.d_.epoch = s.epoch;
    b.d_.number = k;
    s.holders.store(1, std::memory_order_relaxed);
    b.ring_ = ring_;
    b.slot_ = slot_index;
    return b;
  }

  TensorView images_view(const detail::Slot& s, std::size_t slot_index) const {
    TensorView v;
    v.data = ring_->device ? ring_->device->output(slot_index) : s.images.data();
    v.device = device_;
    v.dtype = spec_.dtype;
    v.rank = spec_.rank + 1;
    v.shape[0] = static_cast<std::int64_t>(s.count);
    for (int i = 0; i < spec_.rank; ++i) v.shape[i + 1] = spec_.shape[i];
    std::int64_t stride = 1;
    for (int d = v.rank - 1; d >= 0; --d) {
      v.strides[d] = stride;
      stride *= v.shape[d];
    }
    return v;
  }

  void finish_epoch() {
    std::unique_lock lock(ring_->mutex);
    next_batch_ = num_batches_;  // hand out no more tasks
    next_pos_ = 0;
    next_stage_ = num_batches_;  // and stage no more
    ring_->done.wait(lock, [&] { return in_flight_ == 0 && !staging_; });
    for (detail::Slot& s : ring_->slots)
      if (s.state == detail::SlotState::filling || s.state == detail::SlotState::filled ||
          s.state == detail::SlotState::ready)
        s.state = detail::SlotState::free;
    live_ = false;
  }

  std::shared_ptr<const D> dataset_;
  S sampler_;
  T transform_;
  Options o_;
  SampleSpec spec_{};
  std::size_t sample_bytes_ = 0;
  std::shared_ptr<detail::Ring> ring_;
  detail::ArenaLayout arena_{};
  Device device_{};
  std::vector<std::unique_ptr<WorkerState>> states_;
  std::vector<std::thread> threads_;

  // Guarded by ring_->mutex. order_ is written only while no task is in flight, so workers read
  // it unlocked.
  std::uint64_t epoch_ = 0;
  std::uint64_t first_batch_ = 0;  // where the next loop starts (set_epoch)
  bool live_ = false;
  std::uint64_t live_epoch_ = 0;
  std::vector<std::uint64_t> order_;
  std::uint64_t num_batches_ = 0;
  std::uint64_t next_batch_ = 0;
  std::size_t next_pos_ = 0;
  std::size_t filling_ = 0;  // the slot of batch next_batch_ once claimed
  std::size_t in_flight_ = 0;
  std::uint64_t next_stage_ = 0;  // the next batch the stager submits to the device
  bool staging_ = false;
  std::exception_ptr failure_;  // a device failure: the pipeline stays failed
  bool stop_ = false;
  bool started_ = false;
  std::uint64_t epochs_ = 0, batches_out_ = 0, images_out_ = 0;
  std::int64_t wait_ns_ = 0;
  std::chrono::steady_clock::time_point first_begin_{}, last_out_{};
  std::vector<SkippedSample> skipped_;
};

}  // namespace v0
}  // namespace conveyor

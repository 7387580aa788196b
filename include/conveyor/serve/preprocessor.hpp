#pragma once
/// @file
/// `Preprocessor`: the request path for inference services. Each request (one caller's encoded
/// images) becomes one batch through the same workers, slots, streams and kernels as a training
/// pipeline, ready on the caller's stream:
///
/// ```
/// conveyor::Preprocessor pre(conveyor::ImageAugment::eval(), {.max_images = 32, .lanes = 4,
///                            .pipeline = {.workers = 16, .device = 0, .stream = stream}});
/// conveyor::Batch b = pre(images);         // from any thread; b.images() is [n, 3, 224, 224]
/// ```
///
/// A request runs on one of `lanes` lanes, each a `BatchPipeline` over the request's images with
/// its own worker threads, `prefetch` slots and (on a device) streams, so up to `lanes` requests
/// are prepared at once and a request's images are decoded in parallel by its lane's workers.
/// Requests wait for a lane in a bounded queue: past `max_waiting` waiting callers, or past a
/// request's deadline, `submit` refuses (`Overloaded`, `DeadlineExceeded`), so memory stays bounded
/// whatever the load. A bad image fails its own request with a `SampleError` naming its position
/// (`index()`) and the reason, and no other; a request cancelled or past its deadline gives its
/// lane back once the work in flight for it has finished (a sample's decode at most).
///
/// Lifetimes: the images' bytes are read until `Pending::get` returns or the `Pending` is
/// destroyed (`operator()` returns), so the caller keeps them until then. A delivered `Batch`
/// holds its lane's slot until it (and every tensor made from it) is released, as pipeline batches
/// do; a lane whose slots are all held takes no request, so hold at most `prefetch - 1` batches
/// per lane for long.

#include <conveyor/config.hpp>
#include <conveyor/core/bytes.hpp>
#include <conveyor/core/clock.hpp>
#include <conveyor/core/concepts.hpp>
#include <conveyor/core/error.hpp>
#include <conveyor/core/histogram.hpp>
#include <conveyor/pipeline/batch.hpp>
#include <conveyor/pipeline/batch_pipeline.hpp>
#include <conveyor/pipeline/options.hpp>
#include <conveyor/pipeline/stats.hpp>
#include <conveyor/transforms/fields.hpp>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <numeric>
#include <optional>
#include <span>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

namespace conveyor {
inline namespace v0 {

/// A request refused because `max_waiting` callers already wait for a lane.
class Overloaded : public Error {
 public:
  using Error::Error;
};

/// A request not done by its deadline: refused before it had a lane, or cancelled on it.
class DeadlineExceeded : public Error {
 public:
  using Error::Error;
};

struct PreprocessorOptions {
  /// Images a request may hold (> 0): each lane's slots are batches of this many.
  std::size_t max_images = 32;
  /// Requests prepared at once (> 0), each on its own lane.
  std::size_t lanes = 2;
  /// Callers that may wait for a lane; the next is refused with `Overloaded`.
  std::size_t max_waiting = 64;
  /// Each lane's pipeline options: `workers` (per lane), `prefetch` (slots per lane), `device`,
  /// `stream`, `decode`, `seed`. `batch_size` is `max_images`; `on_error` is `raise`.
  PipelineOptions pipeline{};

  /// Each option by the name a binding takes it by; `pipeline`'s are its own options'.
  static constexpr auto options() {
    using O = PreprocessorOptions;
    return std::tuple{option("max_images", &O::max_images), option("lanes", &O::lanes),
                      option("max_waiting", &O::max_waiting), option("pipeline", &O::pipeline)};
  }
};

static_assert(DeclaredOptions<PreprocessorOptions>);

/// The request path's counters; `pipelines` sums the lanes' pipeline counters that add.
struct PreprocessorStats {
  std::uint64_t requests = 0;           ///< answered with a batch
  std::uint64_t images = 0;             ///< in those
  std::uint64_t failed = 0;             ///< refused for a bad image
  std::uint64_t errors = 0;             ///< failed otherwise (a device failure, say)
  std::uint64_t overloaded = 0;         ///< refused: the queue was full
  std::uint64_t deadline_exceeded = 0;  ///< refused or cancelled at their deadline
  std::uint64_t cancelled = 0;          ///< dropped by their caller before their batch was taken
  std::size_t in_flight = 0;            ///< requests on a lane now
  std::size_t waiting = 0;              ///< callers waiting for a lane now
  std::size_t lanes = 0;
  std::size_t slots_held = 0;           ///< delivered batches still held, over all lanes
  LatencyHistogram latency;     ///< submit to the batch handed out, answered requests
  LatencyHistogram queue_wait;  ///< submit to a lane, requests that got one
  PipelineStats pipelines;      ///< workers, images, stages, bytes and device times of all lanes
};

namespace detail {

/// The images of the request a lane prepares: spans into the caller's bytes, label = position.
class RequestImages {
 public:
  explicit RequestImages(std::size_t capacity) : capacity_(capacity) {}
  void set(std::span<const std::span<const std::byte>> images) { images_.assign(images.begin(), images.end()); }
  void clear() noexcept { images_.clear(); }
  [[nodiscard]] std::size_t count() const noexcept { return images_.size(); }

  /// The capacity, so the pipeline accepts every position a request may have.
  [[nodiscard]] std::uint64_t size() const noexcept { return capacity_; }
  [[nodiscard]] std::int64_t label(std::uint64_t i) const noexcept { return static_cast<std::int64_t>(i); }
  [[nodiscard]] std::string name(std::uint64_t i) const { return "request image " + std::to_string(i); }
  void read(std::uint64_t i, ByteBuffer& out) const { out.assign(images_[i]); }

 private:
  std::size_t capacity_;
  std::vector<std::span<const std::byte>> images_;
};

/// Positions 0 .. count - 1 of the lane's current request: one batch.
class RequestOrder {
 public:
  explicit RequestOrder(const RequestImages& images) : images_(&images) {}
  [[nodiscard]] std::uint64_t size() const noexcept { return images_->count(); }
  [[nodiscard]] std::vector<std::uint64_t> indices(std::uint64_t) const {
    std::vector<std::uint64_t> v(images_->count());
    std::iota(v.begin(), v.end(), std::uint64_t{0});
    return v;
  }

 private:
  const RequestImages* images_;
};

}  // namespace detail

template <Transform T>
class Preprocessor {
  using Pipe = BatchPipeline<detail::RequestImages, detail::RequestOrder, T>;
  struct Lane;

 public:
  using Clock = std::chrono::steady_clock;
  using Images = std::span<const std::span<const std::byte>>;

  /// @throws ConfigError naming an invalid option, or what the lanes' pipelines refuse.
  Preprocessor(T transform, PreprocessorOptions options) : o_(std::move(options)) {
    if (o_.max_images == 0) throw ConfigError("Preprocessor: max_images must be > 0, got 0");
    if (o_.lanes == 0) throw ConfigError("Preprocessor: lanes must be > 0, got 0");
    o_.pipeline.batch_size = o_.max_images;
    o_.pipeline.on_error = OnError::raise;
    o_.pipeline.drop_last = false;
    for (std::size_t i = 0; i < o_.lanes; ++i) lanes_.push_back(std::make_unique<Lane>(transform, o_));
  }
  Preprocessor(const Preprocessor&) = delete;
  Preprocessor& operator=(const Preprocessor&) = delete;
  /// Every `Pending` must be gone; delivered batches stay valid.
  ~Preprocessor() = default;

  /// A request on its lane, being prepared. Move-only; destroying it before `get` cancels it.
  class Pending {
   public:
    Pending(Pending&& o) noexcept : p_(std::exchange(o.p_, nullptr)), lane_(o.lane_), submitted_(o.submitted_) {}
    Pending& operator=(Pending&&) = delete;
    ~Pending() {
      if (p_) p_->release(*lane_, Outcome::cancelled, submitted_, 0);
    }

    /// Waits at most `timeout` for the batch; true when `get` will not wait.
    [[nodiscard]] bool wait_for(std::chrono::nanoseconds timeout) {
      check();
      return lane_->it->wait_ready(timeout);
    }
    /// The batch, ready on the preprocessor's stream, once prepared or by `deadline`.
    /// @throws SampleError for a bad image (`index()`: its position), DeadlineExceeded past the
    ///         deadline (the request is cancelled), or a device failure.
    Batch get(Clock::time_point deadline = Clock::time_point::max()) {
      check();
      Preprocessor* p = std::exchange(p_, nullptr);
      Lane& lane = *lane_;
      Outcome how = Outcome::error;
      try {
        if (deadline != Clock::time_point::max() && !lane.it->wait_ready(deadline - std::min(deadline, Clock::now()))) {
          how = Outcome::deadline;
          throw DeadlineExceeded("Preprocessor: the request's deadline passed while its " +
                                 std::to_string(lane.images.count()) + " images were being prepared");
        }
        Batch b = **lane.it;
        p->release(lane, Outcome::answered, submitted_, b.size());
        return b;
      } catch (const SampleError&) {
        p->release(lane, Outcome::failed, submitted_, 0);
        throw;
      } catch (...) {
        p->release(lane, how, submitted_, 0);
        throw;
      }
    }

   private:
    friend class Preprocessor;
    Pending(Preprocessor* p, Lane* lane, Clock::time_point submitted) : p_(p), lane_(lane), submitted_(submitted) {}
    void check() const {
      if (!p_) throw Error("Preprocessor::Pending: the request was already taken");
    }
    Preprocessor* p_;
    Lane* lane_;
    Clock::time_point submitted_;
  };

  /// Starts preparing one request's images (1 to `max_images`) on a free lane, waiting for one
  /// until `deadline`. The bytes are read until the `Pending` is done with.
  /// @throws ConfigError for an empty or too large request; Overloaded when `max_waiting` callers
  ///         already wait; DeadlineExceeded when no lane came free by `deadline`.
  [[nodiscard]] Pending submit(Images images, Clock::time_point deadline = Clock::time_point::max()) {
    const auto submitted = Clock::now();
    if (images.empty()) throw ConfigError("Preprocessor::submit: a request needs at least one image");
    if (images.size() > o_.max_images)
      throw ConfigError("Preprocessor::submit: the request has " + std::to_string(images.size()) +
                        " images, more than max_images = " + std::to_string(o_.max_images));
    Lane* lane = acquire(deadline);
    try {
      lane->images.set(images);
      lane->pipe.set_epoch(lane->epoch++);
      lane->it.emplace(lane->pipe.begin());
    } catch (...) {
      lane->images.clear();
      give_back(*lane);
      throw;
    }
    {
      std::lock_guard lock(mutex_);
      queue_wait_.observe(seconds_since(submitted));
    }
    return Pending(this, lane, submitted);
  }

  /// `submit(images, deadline).get(deadline)`.
  Batch operator()(Images images, Clock::time_point deadline = Clock::time_point::max()) {
    return submit(images, deadline).get(deadline);
  }

  [[nodiscard]] const PreprocessorOptions& options() const noexcept { return o_; }

  [[nodiscard]] PreprocessorStats stats() const {
    PreprocessorStats st;
    {
      std::lock_guard lock(mutex_);
      st = counters_;
      st.latency = latency_;
      st.queue_wait = queue_wait_;
      st.waiting = queue_.size();
      st.in_flight = 0;
      for (const auto& l : lanes_) st.in_flight += l->busy;
    }
    st.lanes = lanes_.size();
    for (const auto& l : lanes_) {
      detail::add_counters(st.pipelines, l->pipe.stats());
      st.slots_held += l->pipe.slots_held();
    }
    return st;
  }

 private:
  enum class Outcome { answered, failed, error, deadline, cancelled };

  struct Lane {
    Lane(const T& transform, const PreprocessorOptions& o)
        : images(o.max_images), pipe(images, detail::RequestOrder(images), transform, o.pipeline) {}
    detail::RequestImages images;
    Pipe pipe;
    std::optional<typename Pipe::Iterator> it;
    std::uint64_t epoch = 0;
    bool busy = false;  // under the preprocessor's mutex
  };

  /// A free lane, first come first served among the waiting callers.
  Lane* acquire(Clock::time_point deadline) {
    std::unique_lock lock(mutex_);
    const auto free_lane = [&]() -> Lane* {
      for (const auto& l : lanes_)
        if (!l->busy && l->pipe.slots_held() < l->pipe.options().prefetch) return l.get();
      return nullptr;
    };
    Lane* lane = queue_.empty() ? free_lane() : nullptr;
    if (!lane) {
      if (queue_.size() >= o_.max_waiting) {
        ++counters_.overloaded;
        throw Overloaded("Preprocessor::submit: " + std::to_string(queue_.size()) +
                         " requests already wait for one of " + std::to_string(lanes_.size()) + " lanes (max_waiting)");
      }
      const std::uint64_t ticket = next_ticket_++;
      queue_.push_back(ticket);
      // A lane comes free when a request is done with it (signalled); a held batch's release is
      // not signalled, so wake now and then to see it.
      for (;;) {
        if (queue_.front() == ticket && (lane = free_lane())) break;
        if (Clock::now() >= deadline) break;
        free_.wait_until(lock, std::min(deadline, Clock::now() + std::chrono::milliseconds(5)));
      }
      queue_.erase(std::find(queue_.begin(), queue_.end(), ticket));
      free_.notify_all();  // the next in line
      if (!lane) {
        ++counters_.deadline_exceeded;
        throw DeadlineExceeded("Preprocessor::submit: no lane came free by the request's deadline (" +
                               std::to_string(lanes_.size()) + " lanes busy)");
      }
    }
    lane->busy = true;
    return lane;
  }

  void give_back(Lane& lane) {
    {
      std::lock_guard lock(mutex_);
      lane.busy = false;
    }
    free_.notify_all();
  }

  /// Ends the lane's request (its iterator ends the epoch: work in flight finishes and is
  /// dropped) and counts how it went.
  void release(Lane& lane, Outcome how, Clock::time_point submitted, std::size_t images) noexcept {
    lane.it.reset();
    lane.images.clear();
    {
      std::lock_guard lock(mutex_);
      switch (how) {
        case Outcome::answered:
          ++counters_.requests;
          counters_.images += images;
          latency_.observe(seconds_since(submitted));
          break;
        case Outcome::failed: ++counters_.failed; break;
        case Outcome::error: ++counters_.errors; break;
        case Outcome::deadline: ++counters_.deadline_exceeded; break;
        case Outcome::cancelled: ++counters_.cancelled; break;
      }
      lane.busy = false;
    }
    free_.notify_all();
  }

  PreprocessorOptions o_;
  std::vector<std::unique_ptr<Lane>> lanes_;
  mutable std::mutex mutex_;
  std::condition_variable free_;
  // Guarded by mutex_.
  std::deque<std::uint64_t> queue_;  // tickets of the callers waiting for a lane, in arrival order
  std::uint64_t next_ticket_ = 0;
  PreprocessorStats counters_;
  LatencyHistogram latency_, queue_wait_;
};

}  // namespace v0
}  // namespace conveyor

#pragma once
/// @file
/// The schedule of a pipeline's loops: each loop's order, the (batch, position) task that comes
/// next, the slot each batch claims, and the batch the stager submits next. Batches claim free
/// slots in order, any free one, so a `Batch` the caller keeps takes one slot out of the rotation,
/// not every prefetch-th batch with it.
///
/// Besides the loop being iterated there may be a next one, prepared before its loop starts: once
/// the current loop has handed out its last task, the workers go on to the next loop's first
/// batches as the consumer frees slots, so an epoch's last batches and the next one's first are
/// prepared together instead of the pipeline draining and refilling at every epoch boundary. The
/// pipeline keeps that work when the next loop turns out to be the one prepared, and drops it
/// otherwise. Every call holds the ring's mutex.

#include <conveyor/config.hpp>
#include <conveyor/pipeline/detail/ring.hpp>
#include <conveyor/pipeline/options.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <optional>
#include <utility>
#include <vector>

namespace conveyor {
inline namespace v0 {
namespace detail {

/// Batches of an epoch of `samples` indices.
[[nodiscard]] constexpr std::uint64_t batches_in(std::uint64_t samples, std::uint64_t batch_size, bool drop_last) noexcept {
  return drop_last ? samples / batch_size : (samples + batch_size - 1) / batch_size;
}

/// One loop over an epoch: its order, its device share, and how far its tasks and its staging got.
struct Run {
  std::vector<std::uint64_t> order;
  std::uint64_t epoch = 0;
  std::uint64_t loop = 0;  // tells two loops over the same epoch apart in the slots
  double share = 0;        // of engine-decodable JPEGs decoded on the device
  std::uint64_t batches = 0;
  std::uint64_t next_batch = 0;  // the next task's
  std::size_t next_pos = 0;
  std::size_t filling = 0;  // the slot of batch next_batch once claimed
  std::uint64_t next_stage = 0;  // the batch the stager submits next

  [[nodiscard]] bool has_tasks() const noexcept { return next_batch < batches; }
  void stop() noexcept {
    next_batch = next_stage = batches;
    next_pos = 0;
  }
};

/// One sample to prepare: position `pos` of batch `batch` of loop `loop`, which fills slot `slot`.
struct Task {
  std::uint64_t loop = 0;
  std::uint64_t batch = 0;
  std::size_t pos = 0;
  std::size_t slot = 0;
};

/// How a task ended: a failure to raise at its batch, or the replacement that took its place.
struct TaskOutcome {
  std::exception_ptr error;
  std::optional<SkippedSample> skipped;
};

class Schedule {
 public:
  /// `arena_reserve`: bytes each sample is guaranteed in a device slot's data section, which
  /// `data_bytes` long (both 0 on the CPU backend).
  Schedule(Ring& ring, std::size_t batch_size, bool drop_last, std::size_t data_bytes, std::size_t arena_reserve)
      : ring_(ring), batch_size_(batch_size), drop_last_(drop_last), data_bytes_(data_bytes), reserve_(arena_reserve) {}

  /// Starts a loop over `order` (epoch `epoch`) at batch `first` (at most the epoch's end);
  /// returns that batch. Only while no loop is live and none is prepared.
  std::uint64_t start(std::vector<std::uint64_t> order, std::uint64_t epoch, std::uint64_t first, double share) {
    current_ = make_run(std::move(order), epoch, share);
    current_->next_batch = current_->next_stage = std::min(first, current_->batches);
    live_ = true;
    return current_->next_batch;
  }
  /// Prepares the loop after the live one, from its first batch.
  void prepare(std::vector<std::uint64_t> order, std::uint64_t epoch, double share) {
    next_ = make_run(std::move(order), epoch, share);
  }
  /// The prepared loop, if any.
  [[nodiscard]] const Run* prepared() const noexcept { return next_ ? &*next_ : nullptr; }
  /// Makes the prepared loop the live one, with the work done for it so far. Only while no loop is
  /// live.
  void promote() noexcept {
    current_ = std::move(next_);
    next_.reset();
    live_ = true;
  }

  /// Hands out no more tasks and stages no more batches of the live loop, and of the prepared one
  /// unless `keep_prepared`.
  void stop(bool keep_prepared) noexcept {
    if (current_) current_->stop();
    if (next_ && !keep_prepared) next_->stop();
  }
  /// Once nothing `stop` stopped is in flight: drops the batches of those loops that were not
  /// handed out, and ends the live loop.
  void end(bool keep_prepared) noexcept {
    for (Slot& s : ring_.slots) {
      const bool stopped = (current_ && s.loop == current_->loop) || (next_ && !keep_prepared && s.loop == next_->loop);
      if (stopped && (s.state == SlotState::filling || s.state == SlotState::filled || s.state == SlotState::ready))
        s.state = SlotState::free;
    }
    current_.reset();
    if (!keep_prepared) next_.reset();
    live_ = false;
  }

  /// Whether a loop is being iterated.
  [[nodiscard]] bool live() const noexcept { return live_; }
  /// The live loop's epoch, batches and next task's batch.
  [[nodiscard]] std::uint64_t epoch() const noexcept { return current_ ? current_->epoch : 0; }
  [[nodiscard]] std::uint64_t batches() const noexcept { return current_ ? current_->batches : 0; }
  [[nodiscard]] std::uint64_t next_batch() const noexcept { return current_ ? current_->next_batch : 0; }
  /// Whether the live loop has handed out its last task.
  [[nodiscard]] bool handed_out() const noexcept { return live_ && !current_->has_tasks(); }
  [[nodiscard]] std::size_t in_flight() const noexcept { return in_flight_; }

  /// The loop a task belongs to (live or prepared while it is in flight).
  [[nodiscard]] const Run& run_of(const Task& t) const noexcept { return *find_run(t.loop); }
  /// The dataset index a task prepares.
  [[nodiscard]] std::uint64_t index(const Task& t) const noexcept {
    return run_of(t).order[t.batch * batch_size_ + t.pos];
  }

  /// The slot in `state` (holding batch `batch` of the live loop, unless free) with the lowest
  /// index, or -1.
  [[nodiscard]] int find(SlotState state, std::uint64_t batch = 0) const noexcept {
    if (state != SlotState::free && !current_) return -1;
    return find_in(state, batch, current_ ? current_->loop : 0);
  }

  [[nodiscard]] bool task_available() const noexcept {
    const Run* r = taking();
    return r && (r->next_pos > 0 || find(SlotState::free) >= 0);
  }

  /// The next task: the live loop's, then the prepared one's; its batch's first claims a free
  /// slot. Only when `task_available()`.
  Task take() {
    Run& r = *taking();
    if (r.next_pos == 0) r.filling = static_cast<std::size_t>(find(SlotState::free));
    Slot& s = ring_.slots[r.filling];
    if (r.next_pos == 0) {
      s.state = SlotState::filling;
      s.epoch = r.epoch;
      s.loop = r.loop;
      s.batch = r.next_batch;
      s.count = s.pending = samples_in(r, r.next_batch);
      s.error = nullptr;
      s.skipped.clear();
      s.skipped_pos.clear();
      if (ring_.device) s.arena.reset(data_bytes_, s.count, reserve_);
    }
    const Task t{r.loop, r.next_batch, r.next_pos, r.filling};
    if (++r.next_pos == s.count) {
      ++r.next_batch;
      r.next_pos = 0;
    }
    ++in_flight_;
    return t;
  }

  /// Records how `t` ended; its batch's last task leaves the slot filled (a device's, for the
  /// stager) or ready. Returns whether waiters should hear of it.
  bool finish(const Task& t, TaskOutcome&& out) {
    Slot& s = ring_.slots[t.slot];
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
    if (--s.pending == 0) s.state = ring_.device ? SlotState::filled : SlotState::ready;
    return s.pending == 0 || in_flight_ == 0;
  }

  /// The slot of the batch the stager submits next, when it is filled, or -1: the live loop's
  /// batches in order, then the prepared loop's.
  [[nodiscard]] int next_filled() const noexcept {
    const Run* r = current_ && current_->next_stage < current_->batches ? &*current_ : nullptr;
    if (!r && next_ && next_->next_stage < next_->batches) r = &*next_;
    return r ? find_in(SlotState::filled, r->next_stage, r->loop) : -1;
  }
  /// The stager is done with the batch in `slot`.
  void staged(std::size_t slot) noexcept { ++find_run(ring_.slots[slot].loop)->next_stage; }

 private:
  [[nodiscard]] Run make_run(std::vector<std::uint64_t> order, std::uint64_t epoch, double share) {
    Run r;
    r.batches = batches_in(order.size(), batch_size_, drop_last_);
    r.order = std::move(order);
    r.epoch = epoch;
    r.loop = ++loops_;
    r.share = share;
    return r;
  }
  /// The loop whose tasks come next, or null.
  [[nodiscard]] const Run* taking() const noexcept {
    if (current_ && current_->has_tasks()) return &*current_;
    if (next_ && next_->has_tasks()) return &*next_;
    return nullptr;
  }
  [[nodiscard]] Run* taking() noexcept { return const_cast<Run*>(std::as_const(*this).taking()); }
  [[nodiscard]] const Run* find_run(std::uint64_t loop) const noexcept {
    return current_ && current_->loop == loop ? &*current_ : &*next_;
  }
  [[nodiscard]] Run* find_run(std::uint64_t loop) noexcept { return const_cast<Run*>(std::as_const(*this).find_run(loop)); }
  [[nodiscard]] int find_in(SlotState state, std::uint64_t batch, std::uint64_t loop) const noexcept {
    for (std::size_t i = 0; i < ring_.slots.size(); ++i) {
      const Slot& s = ring_.slots[i];
      if (s.state == state && (state == SlotState::free || (s.batch == batch && s.loop == loop)))
        return static_cast<int>(i);
    }
    return -1;
  }
  [[nodiscard]] std::size_t samples_in(const Run& r, std::uint64_t batch) const noexcept {
    return static_cast<std::size_t>(std::min<std::uint64_t>(batch_size_, r.order.size() - batch * batch_size_));
  }

  Ring& ring_;
  const std::size_t batch_size_;
  const bool drop_last_;
  const std::size_t data_bytes_, reserve_;
  bool live_ = false;
  std::optional<Run> current_;  // the live loop's (reset when it ends)
  std::optional<Run> next_;     // the prepared loop's
  std::uint64_t loops_ = 0;
  std::size_t in_flight_ = 0;
};

}  // namespace detail
}  // namespace v0
}  // namespace conveyor

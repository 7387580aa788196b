#pragma once
/// @file
/// The live epoch's schedule: its order, the (batch, position) task that comes next, the slot
/// each batch claims, and the batch the stager submits next. Batches claim free slots in order,
/// any free one, so a `Batch` the caller keeps takes one slot out of the rotation, not every
/// prefetch-th batch with it. Every call holds the ring's mutex; workers read `index` without it,
/// since the order changes only while no task is in flight.

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

/// One sample to prepare: position `pos` of batch `batch`, which fills slot `slot`; or, with `mix`,
/// chunk `pos` of that batch to mix.
struct Task {
  std::uint64_t batch = 0;
  std::size_t pos = 0;
  std::size_t slot = 0;
  bool mix = false;
};

/// How a task ended: a failure to raise at its batch, or the replacement that took its place.
struct TaskOutcome {
  std::exception_ptr error;
  std::optional<SkippedSample> skipped;
};

class Schedule {
 public:
  /// `arena_reserve`: bytes each sample is guaranteed in a device slot's data section, which
  /// `data_bytes` long (both 0 on the CPU backend). `mixes`: a batch transform mixes each batch once
  /// its samples are prepared (the CPU backend's). `part`: a device takes a batch in parts, the
  /// stager hearing of every `part` prepared samples (0: no parts).
  Schedule(Ring& ring, std::size_t batch_size, bool drop_last, std::size_t data_bytes, std::size_t arena_reserve,
           bool mixes = false, std::size_t part = 0)
      : ring_(ring), batch_size_(batch_size), drop_last_(drop_last), data_bytes_(data_bytes), reserve_(arena_reserve),
        mixes_(mixes), part_(part) {}

  /// Starts epoch `epoch` over `order` at batch `first` (at most the epoch's end); returns it.
  std::uint64_t start(std::vector<std::uint64_t> order, std::uint64_t epoch, std::uint64_t first) {
    order_ = std::move(order);
    batches_ = batches_in(order_.size(), batch_size_, drop_last_);
    live_ = true;
    stopped_ = false;
    epoch_ = epoch;
    next_batch_ = next_stage_ = std::min(first, batches_);
    next_pos_ = 0;
    return next_batch_;
  }
  /// Hands out no more tasks and stages no more batches (the loop ended early).
  void stop() noexcept {
    next_batch_ = next_stage_ = batches_;
    next_pos_ = 0;
    stopped_ = true;
  }
  /// Once nothing is in flight: drops the batches not handed out, and ends the epoch.
  void end() noexcept {
    for (Slot& s : ring_.slots)
      if (s.state == SlotState::filling || s.state == SlotState::filled || s.state == SlotState::mixing ||
          s.state == SlotState::ready)
        s.state = SlotState::free;
    live_ = false;
  }

  [[nodiscard]] bool live() const noexcept { return live_; }
  [[nodiscard]] std::uint64_t epoch() const noexcept { return epoch_; }
  [[nodiscard]] std::uint64_t batches() const noexcept { return batches_; }
  [[nodiscard]] std::uint64_t next_batch() const noexcept { return next_batch_; }
  [[nodiscard]] std::size_t in_flight() const noexcept { return in_flight_; }
  /// The dataset index a task prepares.
  [[nodiscard]] std::uint64_t index(const Task& t) const noexcept { return order_[t.batch * batch_size_ + t.pos]; }

  /// The slot in `state` (holding batch `batch` of the live epoch, unless free) with the lowest
  /// index, or -1.
  [[nodiscard]] int find(SlotState state, std::uint64_t batch = 0) const noexcept {
    for (std::size_t i = 0; i < ring_.slots.size(); ++i) {
      const Slot& s = ring_.slots[i];
      if (s.state == state && (state == SlotState::free || (s.batch == batch && s.epoch == epoch_)))
        return static_cast<int>(i);
    }
    return -1;
  }

  [[nodiscard]] bool task_available() const noexcept {
    if (mix_task() >= 0) return true;
    if (!live_ || next_batch_ >= batches_) return false;
    return next_pos_ > 0 || find(SlotState::free) >= 0;
  }
  /// The slot of the earliest batch with a chunk to mix, or -1.
  [[nodiscard]] int mix_task() const noexcept {
    if (!live_ || stopped_) return -1;
    int best = -1;
    for (std::size_t i = 0; i < ring_.slots.size(); ++i) {
      const Slot& s = ring_.slots[i];
      if (s.state == SlotState::mixing && s.mix_next < s.mix_chunks &&
          (best < 0 || s.batch < ring_.slots[std::size_t(best)].batch))
        best = static_cast<int>(i);
    }
    return best;
  }

  /// The next task: a chunk to mix first (its batch is otherwise done), else the next sample, whose
  /// batch's first claims a free slot. Only when `task_available()`.
  Task take() {
    if (const int m = mix_task(); m >= 0) {
      Slot& s = ring_.slots[std::size_t(m)];
      ++in_flight_;
      return Task{s.batch, s.mix_next++, std::size_t(m), true};
    }
    if (next_pos_ == 0) filling_ = static_cast<std::size_t>(find(SlotState::free));
    Slot& s = ring_.slots[filling_];
    if (next_pos_ == 0) {
      s.state = SlotState::filling;
      s.epoch = epoch_;
      s.batch = next_batch_;
      s.count = s.pending = samples_in(next_batch_);
      s.fill = ++fills_;
      s.prepared.clear();
      s.parts_sent = 0;
      s.error = nullptr;
      s.skipped.clear();
      s.skipped_pos.clear();
      if (ring_.device) s.arena.reset(data_bytes_, s.count, reserve_);
    }
    const Task t{next_batch_, next_pos_, filling_};
    if (++next_pos_ == s.count) {
      ++next_batch_;
      next_pos_ = 0;
    }
    ++in_flight_;
    return t;
  }

  /// Records how `t` ended; its batch's last task leaves the slot filled (a device's, for the
  /// stager), mixing (`needs_cut`: the task stays in flight until `cut`) or ready. Returns whether
  /// waiters should hear of it.
  bool finish(const Task& t, TaskOutcome&& out) {
    Slot& s = ring_.slots[t.slot];
    if (t.mix) {
      --in_flight_;
      if (--s.mix_pending == 0) s.state = SlotState::ready;
      return s.mix_pending == 0 || in_flight_ == 0;
    }
    if (out.error && (!s.error || t.pos < s.error_pos)) {
      s.error = out.error;
      s.error_pos = t.pos;
    }
    if (out.skipped) {  // kept in batch position order
      const auto at = std::upper_bound(s.skipped_pos.begin(), s.skipped_pos.end(), t.pos);
      s.skipped.insert(s.skipped.begin() + (at - s.skipped_pos.begin()), std::move(*out.skipped));
      s.skipped_pos.insert(at, t.pos);
    }
    bool part = false;
    if (part_ && !out.error) {
      s.prepared.push_back(t.pos);
      part = s.prepared.size() - s.parts_sent == part_;
    }
    if (--s.pending == 0 && mixes_ && !s.error) {
      s.state = SlotState::mixing;
      s.mix_chunks = s.mix_next = s.mix_pending = 0;
      return false;
    }
    --in_flight_;
    if (s.pending == 0) s.state = ring_.device ? SlotState::filled : SlotState::ready;
    return s.pending == 0 || in_flight_ == 0 || part;
  }

  /// Whether `t`, just finished, left its batch to be cut into chunks by the caller.
  [[nodiscard]] bool needs_cut(const Task& t) const noexcept {
    const Slot& s = ring_.slots[t.slot];
    return !t.mix && s.state == SlotState::mixing && s.mix_chunks == 0;
  }
  /// The caller of a `needs_cut` task has cut its batch into `chunks` (0, or `error`: the batch
  /// fails at its turn), which ends the task.
  void cut(const Task& t, std::size_t chunks, std::exception_ptr error) {
    Slot& s = ring_.slots[t.slot];
    --in_flight_;
    if (error && !s.error) {
      s.error = std::move(error);
      s.error_pos = 0;
    }
    if (s.error || chunks == 0) {  // a device's batch goes to the stager, which mixes it there
      s.state = ring_.device ? SlotState::filled : SlotState::ready;
      return;
    }
    s.mix_chunks = s.mix_pending = chunks;
  }

  /// The slot of the batch the stager submits next, when it is filled, or -1.
  [[nodiscard]] int next_filled() const noexcept { return live_ ? find(SlotState::filled, next_stage_) : -1; }
  /// The stager is done with that batch.
  void staged() noexcept { ++next_stage_; }
  /// The slot of the earliest batch still filling, not yet staged, with a part's worth of prepared
  /// samples the stager has not handed the device, or -1.
  [[nodiscard]] int next_part() const noexcept {
    if (!part_ || !live_) return -1;
    int best = -1;
    for (std::size_t i = 0; i < ring_.slots.size(); ++i) {
      const Slot& s = ring_.slots[i];
      if (s.state == SlotState::filling && s.epoch == epoch_ && s.batch >= next_stage_ && !s.error &&
          s.prepared.size() - s.parts_sent >= part_ && (best < 0 || s.batch < ring_.slots[std::size_t(best)].batch))
        best = static_cast<int>(i);
    }
    return best;
  }

 private:
  [[nodiscard]] std::size_t samples_in(std::uint64_t batch) const noexcept {
    return static_cast<std::size_t>(std::min<std::uint64_t>(batch_size_, order_.size() - batch * batch_size_));
  }

  Ring& ring_;
  const std::size_t batch_size_;
  const bool drop_last_;
  const std::size_t data_bytes_, reserve_;
  const bool mixes_;
  const std::size_t part_;
  std::uint64_t fills_ = 0;  // slots claimed so far: each claim's `Slot::fill`
  bool live_ = false;
  bool stopped_ = false;  // the loop ended early: no chunk is mixed any more
  std::uint64_t epoch_ = 0;  // the live epoch's
  std::vector<std::uint64_t> order_;
  std::uint64_t batches_ = 0;
  std::uint64_t next_batch_ = 0;
  std::size_t next_pos_ = 0;
  std::size_t filling_ = 0;  // the slot of batch next_batch_ once claimed
  std::size_t in_flight_ = 0;
  std::uint64_t next_stage_ = 0;
};

}  // namespace detail
}  // namespace v0
}  // namespace conveyor

#pragma once
/// @file
/// The device side of a pipeline: the stager thread submits each filled slot to the backend in
/// batch order (upload, then the transform's device steps) and, where the backend takes parts,
/// hands it the prepared samples of slots still filling, a part at a time, between submissions
/// (the engines decode them while the rest of the batch is prepared); the first device failure is kept:
/// a CUDA failure poisons the context, so the pipeline stays failed and says why. A `SampleError`
/// from a device step (a file its decoder and the CPU's both refuse) fails only its batch. Before
/// each upload the slot's arena guard is checked (`SlotLayout::write_guard`): a sample written past
/// the data section fails the pipeline.

#include <conveyor/config.hpp>
#include <conveyor/core/error.hpp>
#include <conveyor/device/backend.hpp>
#include <conveyor/pipeline/detail/ring.hpp>
#include <conveyor/pipeline/detail/schedule.hpp>

#include <cstddef>
#include <exception>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace conveyor {
inline namespace v0 {
namespace detail {

class DeviceFeeder {
 public:
  /// `fixed_sample_bytes`: the bytes of each by-position sample, or 0 when samples are staged.
  DeviceFeeder(Ring& ring, Schedule& schedule, SlotLayout layout, std::size_t fixed_sample_bytes)
      : ring_(ring), schedule_(schedule), layout_(layout), fixed_(fixed_sample_bytes) {}

  /// The stager thread's loop, until `stop` (read under the ring's mutex) is set.
  void run(const bool& stop) {
    std::unique_lock lock(ring_.mutex);
    for (;;) {
      ring_.done.wait(lock, [&] { return stop || schedule_.next_filled() >= 0 || schedule_.next_part() >= 0; });
      if (stop) return;
      if (schedule_.next_filled() < 0) {
        submit_part(lock, static_cast<std::size_t>(schedule_.next_part()));
        continue;
      }
      const auto index = static_cast<std::size_t>(schedule_.next_filled());
      Slot& s = ring_.slots[index];
      if (!failure_ && !layout_.guard_intact(ring_.device->host_arena(index)))
        failure_ = std::make_exception_ptr(Error(
            "BatchPipeline: a sample was written past the data section of slot " + std::to_string(index) +
            "'s pinned arena (" + std::to_string(layout_.data_bytes()) + " bytes): its guard changed"));
      std::exception_ptr error = s.error ? nullptr : failure_;
      if (!s.error && !failure_) {
        const std::size_t bytes = layout_.upload_bytes(fixed_ ? s.count * fixed_ : s.arena.used());
        const std::uint64_t fill = s.fill;
        const std::size_t count = s.count;
        error = call_device(lock, [&] { ring_.device->submit(index, fill, count, bytes); });
      }
      if (error && !s.error) s.error = error;
      s.state = SlotState::ready;
      schedule_.staged();
      ring_.done.notify_all();
    }
  }

  /// Whether a submission is under way (under the ring's mutex).
  [[nodiscard]] bool busy() const noexcept { return busy_; }
  /// The pipeline's device failure, if any: a submission's, or one the backend kept from a wait
  /// or a release (under the ring's mutex).
  [[nodiscard]] std::exception_ptr failure() {
    if (!failure_) failure_ = ring_.device->failure();
    return failure_;
  }
  /// Keeps `e` as the pipeline's failure (under the ring's mutex).
  void fail(std::exception_ptr e) noexcept { failure_ = std::move(e); }

 private:
  /// Hands the device the prepared samples of the filling slot `index` it has not had yet. A
  /// failure there is its batch's (a file the device and the CPU refuse) or the pipeline's, as
  /// in a submission.
  void submit_part(std::unique_lock<std::mutex>& lock, std::size_t index) {
    Slot& s = ring_.slots[index];
    part_.assign(s.prepared.begin() + static_cast<std::ptrdiff_t>(s.parts_sent), s.prepared.end());
    s.parts_sent = s.prepared.size();
    if (failure_) return;
    const std::uint64_t fill = s.fill;
    const std::size_t count = s.count;
    const std::exception_ptr error = call_device(lock, [&] { ring_.device->submit_part(index, fill, count, part_); });
    if (error && !s.error) s.error = error;  // the batch fails at its turn, with no submission
  }

  /// Runs `call` (a submission) without the lock, busy meanwhile; returns its failure. A
  /// `SampleError` (a file a device step could not decode) is its batch's failure; any other is
  /// the pipeline's too.
  template <class Call>
  std::exception_ptr call_device(std::unique_lock<std::mutex>& lock, Call&& call) {
    busy_ = true;
    lock.unlock();
    std::exception_ptr error;
    bool sample_only = false;
    try {
      call();
    } catch (const SampleError&) {
      error = std::current_exception();
      sample_only = true;
    } catch (...) {
      error = std::current_exception();
    }
    lock.lock();
    busy_ = false;
    if (error && !sample_only) failure_ = error;
    return error;
  }

  Ring& ring_;
  Schedule& schedule_;
  const SlotLayout layout_;
  const std::size_t fixed_;
  bool busy_ = false;
  std::vector<std::size_t> part_;  // the positions of the part being handed over
  std::exception_ptr failure_;
};

}  // namespace detail
}  // namespace v0
}  // namespace conveyor

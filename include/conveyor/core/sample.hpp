#pragma once
/// @file
/// What a transform is told about the sample it prepares, what it produces, and the per-stage
/// clock that feeds `BatchPipeline::stats()`.

#include <conveyor/config.hpp>
#include <conveyor/core/tensor.hpp>

#include <array>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>

namespace conveyor {
inline namespace v0 {

/// Shape and element type of one sample as a transform writes it (the batch adds a leading N).
struct SampleSpec {
  DType dtype = DType::u8;
  int rank = 0;
  std::array<std::int64_t, 3> shape{};

  [[nodiscard]] std::int64_t numel() const noexcept {
    std::int64_t n = 1;
    for (int i = 0; i < rank; ++i) n *= shape[std::size_t(i)];
    return n;
  }
  [[nodiscard]] std::size_t bytes() const noexcept { return static_cast<std::size_t>(numel()) * dtype_size(dtype); }
  friend constexpr bool operator==(const SampleSpec&, const SampleSpec&) = default;
};

/// A stage of a sample's preparation on a worker thread, for timing: the pipeline's own `read_stage`
/// (reading the bytes) is 0, and a transform numbers its stages from 1 and names them in
/// `stage_names()` (ImageAugment: decode, augment). At most `max_stages` in all.
using StageId = std::uint8_t;
inline constexpr StageId read_stage = 0;
inline constexpr int max_stages = 8;

/// Time and count per stage, written by one worker and read by anyone (relaxed atomics: the
/// numbers are statistics, not synchronisation).
class StageClock {
 public:
  /// Adds time `t` and `samples` samples to stage `s`.
  void add(StageId s, std::chrono::nanoseconds t, int samples = 1) noexcept {
    ns_[s].fetch_add(t.count(), std::memory_order_relaxed);
    n_[s].fetch_add(samples, std::memory_order_relaxed);
  }
  [[nodiscard]] std::int64_t nanoseconds(StageId s) const noexcept { return ns_[s].load(std::memory_order_relaxed); }
  [[nodiscard]] std::int64_t count(StageId s) const noexcept { return n_[s].load(std::memory_order_relaxed); }

 private:
  std::array<std::atomic<std::int64_t>, max_stages> ns_{};
  std::array<std::atomic<std::int64_t>, max_stages> n_{};
};

/// The sample a transform is preparing: its random stream's key and where to report time.
struct SampleContext {
  std::uint64_t seed = 0;
  std::uint64_t epoch = 0;
  std::uint64_t index = 0;
  StageClock* clock = nullptr;  ///< may be null
};

/// Adds the time from construction to destruction to one stage of a context's clock, and what it
/// counts as a sample there.
class StageTimer {
 public:
  /// `sample`: the time and one sample; `time`: the time alone (another part of the same stage
  /// counts the sample); `when_counted`: both, but only once `count_sample()` is called (a stage
  /// timed from its start whose work may turn out not to be its own).
  enum class Counts : std::uint8_t { sample, time, when_counted };

  StageTimer(const SampleContext& ctx, StageId stage, Counts counts = Counts::sample) noexcept
      : clock_(ctx.clock), stage_(stage), counts_(counts), start_(std::chrono::steady_clock::now()) {}
  StageTimer(const StageTimer&) = delete;
  StageTimer& operator=(const StageTimer&) = delete;
  ~StageTimer() {
    if (clock_ && (counts_ != Counts::when_counted || counted_))
      clock_->add(stage_, std::chrono::steady_clock::now() - start_, counts_ == Counts::time ? 0 : 1);
  }
  /// With `Counts::when_counted`: the work was this stage's after all.
  void count_sample() noexcept { counted_ = true; }

 private:
  StageClock* clock_;
  StageId stage_;
  Counts counts_;
  bool counted_ = false;
  std::chrono::steady_clock::time_point start_;
};

}  // namespace v0
}  // namespace conveyor

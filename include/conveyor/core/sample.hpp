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
#include <string_view>

namespace conveyor {
inline namespace v0 {

/// Shape and element type of one sample as a transform writes it (the batch adds a leading N).
struct SampleSpec {
  DType dtype = DType::u8;
  int rank = 0;
  std::array<std::int64_t, 3> shape{};

  [[nodiscard]] std::int64_t numel() const noexcept {
    std::int64_t n = 1;
    for (int i = 0; i < rank; ++i) n *= shape[i];
    return n;
  }
  [[nodiscard]] std::size_t bytes() const noexcept { return static_cast<std::size_t>(numel()) * dtype_size(dtype); }
  friend constexpr bool operator==(const SampleSpec&, const SampleSpec&) = default;
};

/// Pipeline stages on worker threads, for timing: reading bytes, decoding (header, plan and the
/// pixels, into the batch's host buffer or straight into pinned memory for a device), and
/// augmenting on the CPU (the CPU backend, or a sample a device cannot take).
enum class Stage : std::uint8_t { read, decode, augment, count };

/// The stage's name, as tables print it.
[[nodiscard]] constexpr std::string_view to_string(Stage s) noexcept {
  switch (s) {
    case Stage::read: return "read";
    case Stage::decode: return "decode";
    case Stage::augment: return "augment";
    case Stage::count: break;
  }
  return "?";
}

/// Time and count per stage, written by one worker and read by anyone (relaxed atomics: the
/// numbers are statistics, not synchronisation).
class StageClock {
 public:
  /// Adds time `t` and `samples` samples to stage `s`.
  void add(Stage s, std::chrono::nanoseconds t, int samples = 1) noexcept {
    ns_[static_cast<int>(s)].fetch_add(t.count(), std::memory_order_relaxed);
    n_[static_cast<int>(s)].fetch_add(samples, std::memory_order_relaxed);
  }
  [[nodiscard]] std::int64_t nanoseconds(Stage s) const noexcept {
    return ns_[static_cast<int>(s)].load(std::memory_order_relaxed);
  }
  [[nodiscard]] std::int64_t count(Stage s) const noexcept { return n_[static_cast<int>(s)].load(std::memory_order_relaxed); }

 private:
  static constexpr int n_stages = static_cast<int>(Stage::count);
  std::array<std::atomic<std::int64_t>, n_stages> ns_{};
  std::array<std::atomic<std::int64_t>, n_stages> n_{};
};

/// The sample a transform is preparing: its random stream's key and where to report time.
struct SampleContext {
  std::uint64_t seed = 0;
  std::uint64_t epoch = 0;
  std::uint64_t index = 0;
  StageClock* clock = nullptr;  ///< may be null
};

/// Adds the time from construction to destruction to one stage of a context's clock, and counts
/// one sample unless told that another part of the same stage counts it.
class StageTimer {
 public:
  StageTimer(const SampleContext& ctx, Stage stage, bool counts_sample = true) noexcept
      : clock_(ctx.clock), stage_(stage), samples_(counts_sample ? 1 : 0), start_(std::chrono::steady_clock::now()) {}
  StageTimer(const StageTimer&) = delete;
  StageTimer& operator=(const StageTimer&) = delete;
  ~StageTimer() {
    if (clock_) clock_->add(stage_, std::chrono::steady_clock::now() - start_, samples_);
  }

 private:
  StageClock* clock_;
  Stage stage_;
  int samples_;
  std::chrono::steady_clock::time_point start_;
};

}  // namespace v0
}  // namespace conveyor

#pragma once
/// @file
/// RAII over streams and events, with trivially copyable non-owning references.

#include <conveyor/config.hpp>
#include <conveyor/cuda/error.hpp>

#include <utility>

#include <cuda_runtime_api.h>

namespace conveyor {
inline namespace v0 {
namespace cuda {

/// A non-owning event handle.
class EventRef {
 public:
  EventRef() = default;
  explicit EventRef(cudaEvent_t e) noexcept : e_(e) {}
  [[nodiscard]] cudaEvent_t get() const noexcept { return e_; }
  /// Blocks the calling thread until the work the event captured is done.
  void synchronize() const { CONVEYOR_CUDA_TRY(cudaEventSynchronize(e_)); }
  /// Whether that work is done, without blocking.
  [[nodiscard]] bool ready() const {
    const cudaError_t s = cudaEventQuery(e_);
    if (s == cudaErrorNotReady) {
      (void)cudaGetLastError();
      return false;
    }
    CONVEYOR_CUDA_TRY(s);
    return true;
  }

 protected:
  cudaEvent_t e_ = nullptr;
};

/// A non-owning stream handle. Never blocks unless a function says so.
class StreamRef {
 public:
  StreamRef() = default;
  explicit StreamRef(cudaStream_t s) noexcept : s_(s) {}
  [[nodiscard]] cudaStream_t get() const noexcept { return s_; }
  /// Makes later work on this stream wait for `e` (on the device; the host does not block).
  void wait(EventRef e) const { CONVEYOR_CUDA_TRY(cudaStreamWaitEvent(s_, e.get(), 0)); }
  /// Blocks the calling thread until the stream's work is done.
  void synchronize() const { CONVEYOR_CUDA_TRY(cudaStreamSynchronize(s_)); }

 private:
  cudaStream_t s_ = nullptr;
};

/// An owning event; timing disabled (the cheapest kind), unless made by `TimedEvent`.
class Event : public EventRef {
 public:
  explicit Event(unsigned flags = cudaEventDisableTiming) { CONVEYOR_CUDA_TRY(cudaEventCreateWithFlags(&e_, flags)); }
  Event(Event&& o) noexcept : EventRef(std::exchange(o.e_, nullptr)) {}
  Event& operator=(Event&& o) noexcept {
    std::swap(e_, o.e_);
    return *this;
  }
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  ~Event() {
    if (e_) (void)cudaEventDestroy(e_);  // errors ignored: destructors do not throw
  }
  /// Captures the work submitted to `s` so far.
  void record(StreamRef s) { CONVEYOR_CUDA_TRY(cudaEventRecord(e_, s.get())); }
};

/// An event that can time: for benchmarks and stage statistics.
class TimedEvent : public Event {
 public:
  TimedEvent() : Event(cudaEventDefault) {}
  /// Milliseconds from `start` to this event; both must have completed.
  [[nodiscard]] float elapsed_ms_since(const TimedEvent& start) const {
    float ms = 0;
    CONVEYOR_CUDA_TRY(cudaEventElapsedTime(&ms, start.get(), get()));
    return ms;
  }
};

/// An owning, non-blocking stream (it does not synchronise with the legacy default stream).
class Stream : public StreamRef {
 public:
  /// A stream with `priority` (lower numbers run first; see greatest_priority()).
  explicit Stream(int priority = 0) {
    cudaStream_t s = nullptr;
    CONVEYOR_CUDA_TRY(cudaStreamCreateWithPriority(&s, cudaStreamNonBlocking, priority));
    static_cast<StreamRef&>(*this) = StreamRef(s);
  }
  Stream(Stream&& o) noexcept : StreamRef(o.release()) {}
  Stream& operator=(Stream&& o) noexcept {
    Stream tmp(std::move(o));
    std::swap(static_cast<StreamRef&>(*this), static_cast<StreamRef&>(tmp));
    return *this;
  }
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  ~Stream() {
    if (get()) (void)cudaStreamDestroy(get());
  }
  /// Gives up ownership.
  [[nodiscard]] cudaStream_t release() noexcept {
    const cudaStream_t s = get();
    static_cast<StreamRef&>(*this) = StreamRef();
    return s;
  }
  /// Takes ownership of `s`.
  [[nodiscard]] static Stream adopt(cudaStream_t s) noexcept { return Stream(s, 0); }
  /// The greatest (most urgent) priority the current device allows.
  [[nodiscard]] static int greatest_priority() {
    int least = 0, greatest = 0;
    CONVEYOR_CUDA_TRY(cudaDeviceGetStreamPriorityRange(&least, &greatest));
    return greatest;
  }

 private:
  Stream(cudaStream_t s, int) noexcept : StreamRef(s) {}
};

}  // namespace cuda
}  // namespace v0
}  // namespace conveyor

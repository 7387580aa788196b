#pragma once
/// @file
/// Starting a pipeline's threads all or none: a thread that fails to start (std::system_error:
/// out of threads or memory) must not leave the ones before it running, nor a vector of joinable
/// threads to destroy (std::terminate).

#include <conveyor/config.hpp>
#include <conveyor/core/error.hpp>

#include <cstddef>
#include <exception>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace conveyor {
inline namespace v0 {
namespace detail {

/// How `start_threads` starts one thread: std::thread's constructor.
struct StartThread {
  template <class F>
  std::thread operator()(F&& f) const {
    return std::thread(std::forward<F>(f));
  }
};

/// Appends `count` threads to `threads`, the k-th running `body(k)`, each made by `start`. When one
/// fails to start, `stop()` (which must make every running body return) is called, the threads
/// started are joined and removed, and an Error says which failed and why.
/// @throws Error when a thread cannot be started; none of the `count` is left running.
template <class Body, class Stop, class Start = StartThread>
void start_threads(std::vector<std::thread>& threads, std::size_t count, Body body, Stop stop, Start start = {}) {
  const std::size_t first = threads.size();
  try {
    threads.reserve(first + count);
    for (std::size_t k = 0; k < count; ++k) threads.push_back(start([body, k] { body(k); }));
  } catch (const std::exception& e) {
    const std::size_t started = threads.size() - first;
    stop();
    for (std::size_t k = first; k < threads.size(); ++k) threads[k].join();
    threads.resize(first);
    throw Error("starting " + std::to_string(count) + " threads: thread " + std::to_string(started + 1) +
                " failed to start (" + e.what() + "); the " + std::to_string(started) +
                " already started were stopped");
  }
}

}  // namespace detail
}  // namespace v0
}  // namespace conveyor

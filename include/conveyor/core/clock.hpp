#pragma once
/// @file
/// Wall-clock seconds for the counters in stats (host time of a call, an open, a submission).

#include <conveyor/config.hpp>

#include <chrono>

namespace conveyor {
inline namespace v0 {

/// Seconds of the steady clock since `start`.
[[nodiscard]] inline double seconds_since(std::chrono::steady_clock::time_point start) noexcept {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace v0
}  // namespace conveyor

#pragma once
/// @file
/// How many slots a pipeline keeps when `PipelineOptions::prefetch` is `auto_prefetch`: as many as
/// its decode mode gains from, as far as the memory budget holds them.

#include <conveyor/config.hpp>
#include <conveyor/core/error.hpp>
#include <conveyor/pipeline/options.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdio>
#include <string>

namespace conveyor {
inline namespace v0 {

/// The slots a pipeline keeps, and why (`PipelineStats::prefetch`, `prefetch_reason`).
struct PrefetchChoice {
  std::size_t slots = 0;
  std::string reason;
};

namespace detail {

/// The budget when `memory_budget` is 0.
inline constexpr std::size_t default_memory_budget = std::size_t{8} << 30;

/// Slots that help, by what decodes: with a device's JPEG decoder 6 (on an H200 at 4 workers
/// 24.6k img/s against 16.3-18.4k with 3, the engines' calls and the workers' decoding
/// overlapping across more slots; benchmarks/RESULTS.md, "Replicated chroma ... and more slots"),
/// else 3 (CPU decoding gained nothing from 6: 6.2k against 7.1k at 4 workers, 23.9k against
/// 22.1k at 16).
inline constexpr std::size_t slots_with_device_decoding = 6, slots_otherwise = 3;

[[nodiscard]] inline std::string gib(std::size_t bytes) {
  char text[32];
  std::snprintf(text, sizeof text, "%.2f GiB", double(bytes) / double(std::size_t{1} << 30));
  return text;
}

/// The slots for options `o`, one slot holding `slot_bytes` (pinned and device memory together),
/// `device_decoding` when a device decodes JPEGs.
/// @throws ConfigError when `prefetch` is auto and the budget holds fewer than 2 slots.
[[nodiscard]] inline PrefetchChoice choose_prefetch(const PipelineOptions& o, std::size_t slot_bytes,
                                                    bool device_decoding) {
  if (o.prefetch != auto_prefetch) return {o.prefetch, "prefetch = " + std::to_string(o.prefetch) + ", as asked"};
  const std::size_t budget = o.memory_budget ? o.memory_budget : default_memory_budget;
  const std::size_t fit = budget / std::max<std::size_t>(slot_bytes, 1);
  if (fit < 2)
    throw ConfigError("BatchPipeline: a slot holds " + gib(slot_bytes) + " (" + std::to_string(slot_bytes) +
                      " bytes, pinned and device memory) and memory_budget " + gib(budget) +
                      " holds fewer than the 2 slots a pipeline needs: raise memory_budget, or lower batch_size");
  const std::size_t wanted = device_decoding ? slots_with_device_decoding : slots_otherwise;
  const std::size_t slots = std::min(wanted, fit);
  std::string reason = std::to_string(slots) + " slots of " + gib(slot_bytes) + ": " +
                       (device_decoding ? "a device decodes JPEGs, which gains from " : "decoding on the CPU gains from no more than ") +
                       std::to_string(wanted);
  if (slots < wanted) reason += ", and memory_budget " + gib(budget) + " holds " + std::to_string(fit);
  return {slots, reason};
}

}  // namespace detail
}  // namespace v0
}  // namespace conveyor

#pragma once
/// @file
/// How many worker threads a pipeline starts when `PipelineOptions::workers` is -1.

#include <conveyor/config.hpp>
#include <conveyor/pipeline/options.hpp>

#include <algorithm>

namespace conveyor {
inline namespace v0 {
namespace detail {

/// One worker per hardware thread, less one where a device's JPEG engines decode (`decode` gpu or
/// auto): the stager thread then spends most of each batch in the engines' call, which is host
/// work, and with a worker on every core it is one busy thread too many. On an H100 with 16 cores
/// (benchmarks/RESULTS.md, "The dense and native sets against DALI's mixed decoder"), 15 workers
/// gave more img/s than 16 in each of 8 interleaved pairs: 1-14 % with interpolated chroma, 0-9 %
/// with replicated. `o` is validated: a decode other than cpu has a device.
[[nodiscard]] inline int auto_workers(const PipelineOptions& o, unsigned hardware_threads) noexcept {
  const int threads = std::max(1, static_cast<int>(hardware_threads));
  return o.decode == JpegDecode::cpu ? threads : std::max(1, threads - 1);
}

}  // namespace detail
}  // namespace v0
}  // namespace conveyor

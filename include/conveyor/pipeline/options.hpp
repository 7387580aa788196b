#pragma once
/// @file
/// `BatchPipeline`'s options, and what it records about skipped samples.

#include <conveyor/config.hpp>

#include <cstddef>
#include <cstdint>
#include <string>

namespace conveyor {
inline namespace v0 {

/// What a pipeline does with a sample that cannot be read or decoded.
enum class OnError : std::uint8_t {
  raise,  ///< throw `SampleError` from the iterator at that sample's batch (the default)
  skip,   ///< replace it deterministically, keep the batch full, and record it
};

/// `BatchPipeline::Options::device` for the CPU backend (host tensors).
inline constexpr int cpu_device = -1;

/// Options of a `BatchPipeline`, built with designated initializers:
/// `{.batch_size = 256, .workers = 12, .prefetch = 3}`.
struct PipelineOptions {
  /// Samples per batch (> 0).
  std::size_t batch_size = 256;
  /// Worker threads; -1: one per hardware thread; 0: the consumer's thread prepares each batch
  /// when it asks for it.
  int workers = -1;
  /// Batches in flight, each in its own slot (>= 2).
  std::size_t prefetch = 3;
  /// Drop the last batch of an epoch when it is smaller than batch_size.
  bool drop_last = false;
  OnError on_error = OnError::raise;
  /// Key of every random decision the transform makes (with epoch and dataset index).
  std::uint64_t seed = 0;
  /// `cpu_device` for host batches.
  int device = cpu_device;
};

/// A sample the pipeline replaced under `OnError::skip`.
struct SkippedSample {
  std::uint64_t epoch = 0;
  std::uint64_t index = 0;        ///< the dataset index that failed
  std::uint64_t replacement = 0;  ///< the dataset index delivered in its place
  std::string name;               ///< the dataset's name for it (its path)
  std::string reason;
};

}  // namespace v0
}  // namespace conveyor

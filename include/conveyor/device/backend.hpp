#pragma once
/// @file
/// The interface between `BatchPipeline` (plain C++, the same in every translation unit) and a
/// device backend (CUDA code, compiled only where nvcc compiles). The backend owns each slot's
/// pinned and device arenas, output and events; it uploads a filled arena and runs the transform's
/// device steps on it. The CUDA backend registers its factory when a CUDA translation unit
/// includes <conveyor/cuda/backend.cuh>; a pipeline asked for a device looks the factory up at run
/// time, so class layouts never depend on the compiler.

#include <conveyor/config.hpp>
#include <conveyor/device/slot_layout.hpp>
#include <conveyor/device/step.hpp>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <memory>
#include <span>
#include <vector>

struct CUstream_st;  // cudaStream_t is CUstream_st*; declared here so no CUDA header is needed

namespace conveyor {
inline namespace v0 {

struct DeviceBackendConfig {
  int device = 0;
  CUstream_st* consumer = nullptr;  ///< nullptr: the legacy default stream
  std::size_t slots = 0;
  std::size_t batch_size = 0;
  SlotLayout layout{};
  std::size_t sample_bytes = 0;  ///< of one output sample
  std::vector<DeviceStepSpec> steps;  ///< the transform's device work, in order
};


/// Device memory a backend made for a copy of a batch's tensor apart from its slot (labels kept
/// past their batch): made and filled in order on `stream`, and freed in order on it by `free`,
/// which needs no backend, so the copy may outlive the pipeline. `stream` must outlive it.
struct StreamOrderedMemory {
  void* data = nullptr;
  CUstream_st* stream = nullptr;
  int device = 0;
  void (*free)(void* data, CUstream_st* stream, int device) noexcept = nullptr;
};

class DeviceBackend {
 public:
  virtual ~DeviceBackend() = default;
  /// The pinned arena of `slot` (`DeviceBackendConfig::layout`).
  virtual std::byte* host_arena(std::size_t slot) = 0;
  /// Blocks until the last upload from `slot`'s pinned arena has finished (before refilling it).
  /// A device failure is kept for `failure()`: it is the pipeline's, not the waiting sample's.
  virtual void wait_uploaded(std::size_t slot) noexcept = 0;
  /// Uploads `bytes` of `slot`'s arena and runs the steps over its `count` samples (stager thread).
  /// `fill` names the batch (the same in its parts).
  virtual void submit(std::size_t slot, std::uint64_t fill, std::size_t count, std::size_t bytes) = 0;
  /// Whether a step starts work on a batch before it is complete (`submit_part`).
  [[nodiscard]] virtual bool takes_parts() const noexcept { return false; }
  /// Hands the steps that take parts `positions` of `slot`'s batch `fill` (of `count` samples),
  /// whose pinned bytes are final, before the batch is complete (stager thread).
  virtual void submit_part(std::size_t /*slot*/, std::uint64_t /*fill*/, std::size_t /*count*/,
                           std::span<const std::size_t> /*positions*/) {}
  /// Orders `stream` (nullptr: the pipeline's consumer stream) after `slot`'s output, with no host
  /// wait, and adds it to the streams `release` is ordered after. Thread-safe per slot.
  /// @throws Error past the backend's bound on streams per batch.
  virtual void hand_out(std::size_t slot, CUstream_st* stream) = 0;
  /// Marks the consumer's work on `slot` done, after what was queued by now on every stream it was
  /// handed to: later uploads and kernels into it wait for all of it.
  virtual void release(std::size_t slot) noexcept = 0;
  /// `bytes` of `slot`'s device arena at `data` (its labels, or its soft targets) copied into
  /// device memory of their own, in order on `stream` (nullptr: the pipeline's consumer stream),
  /// which is handed the batch first (`hand_out`, so the slot's release waits for the copy), with
  /// no host wait.
  virtual StreamOrderedMemory copy_out(std::size_t slot, const void* data, std::size_t bytes, CUstream_st* stream) = 0;
  /// `bytes` of host memory at `data` (labels kept past their batch) copied into device memory of
  /// their own, in order on `stream` (nullptr: the pipeline's consumer stream), with no host wait;
  /// `data` may be reused once it returns.
  virtual StreamOrderedMemory upload(const void* data, std::size_t bytes, CUstream_st* stream) = 0;
  /// A failure `wait_uploaded` or `release` could not throw, if any.
  virtual std::exception_ptr failure() const noexcept = 0;
  virtual void* output(std::size_t slot) = 0;
  virtual std::int64_t* labels(std::size_t slot) = 0;
  /// The soft targets of `slot` in its device arena (nullptr without a batch transform).
  virtual float* targets(std::size_t slot) = 0;
  virtual DeviceStats stats() = 0;
};

namespace detail {

using DeviceBackendFactory = std::unique_ptr<DeviceBackend> (*)(const DeviceBackendConfig&);

/// The CUDA backend's factory, set when a CUDA translation unit includes the backend.
inline std::atomic<DeviceBackendFactory>& cuda_backend_factory() noexcept {
  static std::atomic<DeviceBackendFactory> factory{nullptr};
  return factory;
}

}  // namespace detail
}  // namespace v0
}  // namespace conveyor

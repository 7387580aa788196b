#pragma once
/// @file
/// The slot ring: `prefetch` slots, each holding one batch's tensors, cycling
///
///   free --worker claims--> filling --last sample--> filled --(device: stager uploads, launches)-->
///   ready --iterator--> handed --last Batch dies--> free
///
/// With a batch transform on the CPU backend, the last sample leaves the slot `mixing` instead of
/// ready: the worker that finished it draws the batch's mix and cuts the batch into chunks, which
/// workers mix (pipeline/detail/batch_mixing.hpp); the last chunk leaves it ready.
///
/// Batches claim free slots in order and are handed out in order, whatever order the workers
/// finish in. The ring outlives its pipeline while any `Batch` still holds a slot.

#include <conveyor/config.hpp>
#include <conveyor/batch/batch_mix.hpp>
#include <conveyor/core/sample.hpp>
#include <conveyor/device/backend.hpp>
#include <conveyor/device/staging.hpp>
#include <conveyor/pipeline/detail/host_buffer.hpp>
#include <conveyor/pipeline/options.hpp>

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <memory>
#include <mutex>
#include <vector>

namespace conveyor {
inline namespace v0 {
namespace detail {

enum class SlotState : std::uint8_t { free, filling, filled, mixing, ready, handed };

struct Slot {
  HostBuffer images;  // the CPU backend's output; the device backend uses its arenas instead
  ArenaAllocator arena;  // the device arena's data section, for staged samples
  std::vector<std::int64_t> labels;
  std::vector<std::int64_t> indices;
  std::vector<float> targets;  // with a batch transform: [batch_size, num_classes] soft targets
  std::vector<std::byte> boundaries;  // with a batch transform: each chunk's first partner, unmixed
  BatchMix mix{};                      // the batch's draw
  std::vector<BatchMix> sample_mixes;  // its samples' own (timm's per-sample modes), else empty
  std::size_t mix_chunks = 0;          // chunks of the batch to mix (0: not cut yet)
  std::size_t mix_next = 0;            // the next chunk a worker takes
  std::size_t mix_pending = 0;         // chunks not mixed yet
  std::vector<SkippedSample> skipped;
  std::vector<std::size_t> skipped_pos;  // batch position of each skipped sample, ascending
  SlotState state = SlotState::free;
  std::uint64_t epoch = 0;
  std::uint64_t batch = 0;
  std::size_t count = 0;    // samples in the batch
  std::size_t pending = 0;  // samples not prepared yet
  std::uint64_t fill = 0;   // names this batch in this slot, unique in the pipeline (a device's parts)
  std::vector<std::size_t> prepared;  // positions prepared, in the order they were (with parts)
  std::size_t parts_sent = 0;          // of `prepared`, those the stager handed the device
  std::exception_ptr error;  // the failure of the earliest failed position
  std::size_t error_pos = 0;
  std::atomic<int> holders{0};  // Batch copies alive for the handed batch
};

struct Ring {
  Ring(std::size_t count, std::size_t batch_size, const SampleSpec& spec, bool host_output) : slots(count) {
    for (Slot& s : this->slots) {
      if (host_output) s.images = HostBuffer(batch_size * spec.bytes());
      s.labels.resize(batch_size);
      s.indices.resize(batch_size);
      s.prepared.reserve(batch_size);
    }
  }

  /// Called when the last `Batch` of a handed slot dies: the slot may be refilled (on a device,
  /// once the consumer's stream has passed this point).
  void release(std::size_t slot) {
    if (device) device->release(slot);
    {
      std::lock_guard lock(mutex);
      slots[slot].state = SlotState::free;
    }
    work.notify_all();
    done.notify_all();
  }

  [[nodiscard]] std::size_t host_bytes() const noexcept {
    std::size_t n = 0;
    for (const Slot& s : slots)
      n += s.images.size() + (s.labels.size() + s.indices.size()) * sizeof(std::int64_t) +
           s.targets.size() * sizeof(float) + s.boundaries.size();
    return n;
  }

  std::unique_ptr<DeviceBackend> device;  // null for the CPU backend; outlives the pipeline with the ring
  std::mutex mutex;
  std::condition_variable work;  // workers: a task may be available
  std::condition_variable done;  // consumer: a batch may be ready, or the workers drained
  std::vector<Slot> slots;
};

}  // namespace detail
}  // namespace v0
}  // namespace conveyor

#pragma once
// A device backend in host memory, for running the device pipeline's host side (staging into
// pinned arenas, the arena allocator, the guard, uploads by byte count) where there is no GPU,
// under the CPU sanitizers. Its "device" runs the steps ImageAugment and plain transforms ask for
// with the CPU backend's own functions, so its batches must equal the CPU backend's bit for bit.
// Every arena is a vector of exactly the size a CUDA slot allocates: a write past one is a heap
// overflow AddressSanitizer reports.

#include <conveyor/device/backend.hpp>
#include <conveyor/device/step.hpp>
#include <conveyor/device/work.hpp>
#include <conveyor/ops/cpu/resample.hpp>

#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>
#include <vector>

namespace conveyor_test {

class HostBackend final : public conveyor::DeviceBackend {
 public:
  explicit HostBackend(const conveyor::DeviceBackendConfig& c) : c_(c) {
    const conveyor::DeviceStepConfig step{c.device, c.slots, c.batch_size, c.layout, c.sample_bytes};
    for (const conveyor::DeviceStepSpec& spec : c.steps) steps_.push_back(spec.make(step));
    for (std::size_t i = 0; i < c.slots; ++i)
      slots_.push_back({std::vector<std::byte>(c.layout.total + c.layout.host_only),
                        std::vector<std::byte>(c.layout.total + c.layout.device_only),
                        std::vector<std::byte>(c.batch_size * c.sample_bytes)});
  }

  std::byte* host_arena(std::size_t slot) override { return slots_[slot].pinned.data(); }
  void wait_uploaded(std::size_t) noexcept override {}
  void submit(std::size_t slot, std::size_t count, std::size_t bytes) override {
    Slot& s = slots_[slot];
    std::memcpy(s.arena.data(), s.pinned.data(), bytes);
    const conveyor::StepContext ctx{slot, count, s.arena.data(), s.pinned.data(), s.output.data(), nullptr};
    for (const auto& step : steps_) step->after_upload(ctx);
    for (const auto& step : steps_) step->produce(ctx);
  }
  void hand_out(std::size_t, CUstream_st*) override {}
  void release(std::size_t) noexcept override {}
  conveyor::StreamOrderedMemory copy_labels(std::size_t slot, std::size_t count, CUstream_st* stream) override {
    void* copy = std::malloc(count * sizeof(std::int64_t));
    if (!copy) throw std::bad_alloc();
    std::memcpy(copy, labels(slot), count * sizeof(std::int64_t));
    return {copy, stream, 0, [](void* data, CUstream_st*, int) noexcept { std::free(data); }};
  }
  std::exception_ptr failure() const noexcept override { return nullptr; }
  void* output(std::size_t slot) override { return slots_[slot].output.data(); }
  std::int64_t* labels(std::size_t slot) override { return c_.layout.labels(slots_[slot].arena.data()); }
  conveyor::DeviceStats stats() override { return {}; }

 private:
  struct Slot {
    std::vector<std::byte> pinned, arena, output;
  };
  conveyor::DeviceBackendConfig c_;
  std::vector<std::unique_ptr<conveyor::DeviceStep>> steps_;
  std::vector<Slot> slots_;
};

/// ResampleSamples with the CPU backend's resampler: each sample's window where its plan says, or
/// its finished bytes when the plan is `precomputed`.
class HostResample final : public conveyor::DeviceStep {
 public:
  HostResample(const conveyor::ResampleSamples& spec, const conveyor::DeviceStepConfig& c) : spec_(spec), c_(c) {}
  void produce(const conveyor::StepContext& s) override {
    const std::byte* data = c_.layout.data(s.arena);
    const conveyor::ops::SamplePlan* plans = c_.layout.plans(s.arena);
    auto* out = static_cast<std::byte*>(s.output);
    for (std::size_t i = 0; i < s.count; ++i) {
      if (plans[i].precomputed)
        std::memcpy(out + i * c_.sample_bytes, data + plans[i].src.offset, c_.sample_bytes);
      else
        conveyor::ops::cpu::resample(reinterpret_cast<const std::uint8_t*>(data), plans[i], spec_.params,
                                     out + i * c_.sample_bytes, scratch_);
    }
  }

 private:
  conveyor::ResampleSamples spec_;
  conveyor::DeviceStepConfig c_;
  conveyor::ops::cpu::ResampleScratch scratch_;
};

/// CopySamples: the finished samples, in position order.
class HostCopy final : public conveyor::DeviceStep {
 public:
  explicit HostCopy(const conveyor::DeviceStepConfig& c) : c_(c) {}
  void produce(const conveyor::StepContext& s) override {
    std::memcpy(s.output, c_.layout.data(s.arena), s.count * c_.sample_bytes);
  }

 private:
  conveyor::DeviceStepConfig c_;
};

/// While alive, a pipeline asked for device 0 (any ordinal) gets a HostBackend. One at a time.
class HostDevice {
 public:
  HostDevice() {
    using namespace conveyor;
    factory_ = detail::cuda_backend_factory().exchange(
        [](const DeviceBackendConfig& c) -> std::unique_ptr<DeviceBackend> { return std::make_unique<HostBackend>(c); });
    resample_ = detail::device_step_maker<ResampleSamples>().exchange(
        [](const ResampleSamples& spec, const DeviceStepConfig& c) -> std::unique_ptr<DeviceStep> {
          return std::make_unique<HostResample>(spec, c);
        });
    copy_ = detail::device_step_maker<CopySamples>().exchange(
        [](const CopySamples&, const DeviceStepConfig& c) -> std::unique_ptr<DeviceStep> {
          return std::make_unique<HostCopy>(c);
        });
  }
  HostDevice(const HostDevice&) = delete;
  HostDevice& operator=(const HostDevice&) = delete;
  ~HostDevice() {
    using namespace conveyor;
    detail::cuda_backend_factory().store(factory_);
    detail::device_step_maker<ResampleSamples>().store(resample_);
    detail::device_step_maker<CopySamples>().store(copy_);
  }

 private:
  conveyor::detail::DeviceBackendFactory factory_;
  conveyor::detail::DeviceStepMaker<conveyor::ResampleSamples> resample_;
  conveyor::detail::DeviceStepMaker<conveyor::CopySamples> copy_;
};

}  // namespace conveyor_test

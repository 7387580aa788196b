#pragma once
/// @file
/// The CUDA implementation of `ResampleSamples`: per slot a table of filter windows, laid out from
/// the uploaded plans on the load stream (`kernels::launch_layout`), then the fused kernel on the
/// augment stream. Including this header registers it.

#include <conveyor/config.hpp>

#if !CONVEYOR_CUDA_COMPILATION()
#error "conveyor/cuda/resample_step.cuh needs a CUDA compiler"
#endif

#include <conveyor/cuda/buffer.hpp>
#include <conveyor/cuda/kernels/augment.cuh>
#include <conveyor/device/step.hpp>
#include <conveyor/device/work.hpp>

#include <cstddef>
#include <memory>
#include <vector>

namespace conveyor {
inline namespace v0 {
namespace cuda {

class ResampleStep final : public DeviceStep {
 public:
  /// Allocates the slots' tables on the current device.
  ResampleStep(const ResampleSamples& spec, const DeviceStepConfig& c) : spec_(spec), c_(c) {
    kernels::load_augment_kernels(spec.params);  // not inside the first batch's kernel time
    taps_.reserve(c.slots);
    for (std::size_t i = 0; i < c.slots; ++i)
      taps_.emplace_back(kernels::TapTable::bytes(c.batch_size * std::size_t(spec.copies.count), spec.out_width,
                                                  spec.out_height));
  }

  void after_upload(const StepContext& s) override {
    kernels::launch_layout(c_.layout.plans(s.arena), taps_[s.slot].data(), s.count, spec_.out_width, spec_.out_height,
                           s.stream, spec_.copies);
  }
  void produce(const StepContext& s) override {
    kernels::launch_augment(c_.layout.data(s.arena), c_.layout.plans(s.arena), taps_[s.slot].data(),
                            static_cast<std::byte*>(s.output), s.count, c_.sample_bytes, spec_.params, spec_.out_width,
                            spec_.out_height, s.stream, spec_.copies);
  }
  [[nodiscard]] std::size_t device_bytes() const noexcept override {
    std::size_t n = 0;
    for (const DeviceBuffer& t : taps_) n += t.size();
    return n;
  }

 private:
  ResampleSamples spec_;
  DeviceStepConfig c_;
  std::vector<DeviceBuffer> taps_;  // per slot: the kernel's filter windows, laid out from the plans
};

namespace {
[[maybe_unused]] const bool resample_step_registered =
    (detail::device_step_maker<ResampleSamples>().store(
         [](const ResampleSamples& spec, const DeviceStepConfig& c) -> std::unique_ptr<DeviceStep> {
           return std::make_unique<ResampleStep>(spec, c);
         }),
     true);
}  // namespace

}  // namespace cuda
}  // namespace v0
}  // namespace conveyor

#pragma once
/// @file
/// The CUDA implementation of `CopySamples`: the finished samples of the uploaded data section
/// copied into the output on the augment stream. Including this header registers it.

#include <conveyor/config.hpp>

#if !CONVEYOR_CUDA_COMPILATION()
#error "conveyor/cuda/copy_step.cuh needs a CUDA compiler"
#endif

#include <conveyor/cuda/error.hpp>
#include <conveyor/device/step.hpp>
#include <conveyor/device/work.hpp>

#include <memory>

#include <cuda_runtime_api.h>

namespace conveyor {
inline namespace v0 {
namespace cuda {

class CopyStep final : public DeviceStep {
 public:
  explicit CopyStep(const DeviceStepConfig& c) : c_(c) {}
  void produce(const StepContext& s) override {
    CONVEYOR_CUDA_TRY(cudaMemcpyAsync(s.output, c_.layout.data(s.arena), s.count * c_.sample_bytes,
                                      cudaMemcpyDeviceToDevice, s.stream));
  }

 private:
  DeviceStepConfig c_;
};

namespace {
[[maybe_unused]] const bool copy_step_registered =
    (detail::device_step_maker<CopySamples>().store(
         [](const CopySamples&, const DeviceStepConfig& c) -> std::unique_ptr<DeviceStep> {
           return std::make_unique<CopyStep>(c);
         }),
     true);
}  // namespace

}  // namespace cuda
}  // namespace v0
}  // namespace conveyor

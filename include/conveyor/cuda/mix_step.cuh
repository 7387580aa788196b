#pragma once
/// @file
/// The CUDA implementation of `MixSamples`: the batch's draw read from the pinned arena when the
/// step is queued (its samples' own, per sample, read by the kernel from the uploaded arena), and
/// the mixing kernel over the output on the augment stream, after the transform's steps. Including this header registers it.

#include <conveyor/config.hpp>

#if !CONVEYOR_CUDA_COMPILATION()
#error "conveyor/cuda/mix_step.cuh needs a CUDA compiler"
#endif

#include <conveyor/cuda/kernels/mix.cuh>
#include <conveyor/device/mix_samples.hpp>
#include <conveyor/device/step.hpp>

#include <memory>

namespace conveyor {
inline namespace v0 {
namespace cuda {

class MixStep final : public DeviceStep {
 public:
  MixStep(const MixSamples& spec, const DeviceStepConfig& c) : spec_(spec), c_(c) {}
  void produce(const StepContext& s) override {
    kernels::launch_mix(s.output, static_cast<int>(s.count), spec_.geometry, *c_.layout.mix(s.host_arena),
                        c_.layout.sample_mixes(s.arena), s.stream);
  }

 private:
  MixSamples spec_;
  DeviceStepConfig c_;
};

namespace {
[[maybe_unused]] const bool mix_step_registered =
    (detail::device_step_maker<MixSamples>().store(
         [](const MixSamples& spec, const DeviceStepConfig& c) -> std::unique_ptr<DeviceStep> {
           return std::make_unique<MixStep>(spec, c);
         }),
     true);
}  // namespace

}  // namespace cuda
}  // namespace v0
}  // namespace conveyor

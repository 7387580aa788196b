#pragma once
/// @file
/// The CUDA implementation of `ProgramSamples`: the fused kernel resamples every sample into a u8
/// interleaved image in device scratch (its filter windows laid out on the load stream, as
/// `ResampleSamples` does), then the pixel-program kernel runs each sample's program from the
/// slot's program table on its image and stores it normalised and converted into the output, with
/// its erasing. Both run on the augment stream, one batch after another, so one scratch serves
/// every slot. Including this header registers it.

#include <conveyor/config.hpp>

#if !CONVEYOR_CUDA_COMPILATION()
#error "conveyor/cuda/program_step.cuh needs a CUDA compiler"
#endif

#include <conveyor/cuda/buffer.hpp>
#include <conveyor/cuda/kernels/augment.cuh>
#include <conveyor/cuda/kernels/pixel_program.cuh>
#include <conveyor/device/step.hpp>
#include <conveyor/device/work.hpp>
#include <conveyor/pipeline/augment/program_image.hpp>

#include <cstddef>
#include <memory>
#include <vector>

namespace conveyor {
inline namespace v0 {
namespace cuda {

class ProgramStep final : public DeviceStep {
 public:
  /// Allocates the slots' tables and the batch's images and scratch on the current device.
  ProgramStep(const ProgramSamples& spec, const DeviceStepConfig& c)
      : spec_(spec), c_(c), images_per_slot_(c.batch_size * std::size_t(spec.copies.count)),
        image_bytes_(std::size_t(spec.out_width) * std::size_t(spec.out_height) * 3),
        images_(images_per_slot_ * image_bytes_),
        scratch_(kernels::pixel_scratch_bytes(images_per_slot_, spec.out_width, spec.out_height)),
        mix_saved_(spec.mixes ? scratch_.size() : 0),
        mix_sums_(spec.mixes ? scratch_.size() * sizeof(float) : 0) {
    kernels::load_augment_kernels(detail::program_image_params());  // not inside the first batch's kernel time
    kernels::load_pixel_program_kernel();
    taps_.reserve(c.slots);
    for (std::size_t i = 0; i < c.slots; ++i)
      taps_.emplace_back(kernels::TapTable::bytes(images_per_slot_, spec.out_width, spec.out_height));
  }

  void after_upload(const StepContext& s) override {
    kernels::launch_layout(c_.layout.plans(s.arena), taps_[s.slot].data(), s.count, spec_.out_width, spec_.out_height,
                           s.stream, spec_.copies);
  }
  void produce(const StepContext& s) override {
    // The images one after another: each sample's copies a run of `copies.count` images.
    ops::CopyRange images = spec_.copies;
    images.out_offset = 0;
    images.copy_bytes = image_bytes_;
    kernels::launch_augment(c_.layout.data(s.arena), c_.layout.plans(s.arena), taps_[s.slot].data(), images_.data(),
                            s.count, images.copy_bytes * std::size_t(images.count), detail::program_image_params(),
                            spec_.out_width, spec_.out_height, s.stream, images);
    kernels::PixelBatch b;
    b.programs = c_.layout.programs(s.arena);
    b.images = reinterpret_cast<std::uint8_t*>(images_.data());
    b.scratch = reinterpret_cast<std::uint8_t*>(scratch_.data());
    if (spec_.mixes) {
      b.mix_saved = reinterpret_cast<std::uint8_t*>(mix_saved_.data());
      b.mix_sums = reinterpret_cast<float*>(mix_sums_.data());
    }
    b.out = static_cast<std::byte*>(s.output);
    b.sample_bytes = c_.sample_bytes;
    b.copies = spec_.copies;
    b.params = spec_.params;
    b.width = spec_.out_width;
    b.height = spec_.out_height;
    b.count = static_cast<std::int32_t>(s.count * std::size_t(spec_.copies.count));
    kernels::launch_pixel_program(b, s.stream);
  }
  [[nodiscard]] std::size_t device_bytes() const noexcept override {
    std::size_t n = images_.size() + scratch_.size() + mix_saved_.size() + mix_sums_.size();
    for (const DeviceBuffer& t : taps_) n += t.size();
    return n;
  }

 private:
  ProgramSamples spec_;
  DeviceStepConfig c_;
  std::size_t images_per_slot_;  // a batch's samples times the copies of each this step makes
  std::size_t image_bytes_;
  DeviceBuffer images_;   // the batch resampled, u8 NHWC: the programs' input
  DeviceBuffer scratch_;  // the neighbourhood ops' second image
  DeviceBuffer mix_saved_, mix_sums_;  // the mixing steps' saved images and float sums, where programs mix
  std::vector<DeviceBuffer> taps_;  // per slot: the fused kernel's filter windows, laid out from the plans
};

namespace {
[[maybe_unused]] const bool program_step_registered =
    (detail::device_step_maker<ProgramSamples>().store(
         [](const ProgramSamples& spec, const DeviceStepConfig& c) -> std::unique_ptr<DeviceStep> {
           return std::make_unique<ProgramStep>(spec, c);
         }),
     true);
}  // namespace

}  // namespace cuda
}  // namespace v0
}  // namespace conveyor

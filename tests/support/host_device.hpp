#pragma once
// A device backend in host memory, for running the device pipeline's host side (staging into
// pinned arenas, the arena allocator, the guard, uploads by byte count, program tables, JPEGs staged
// for the device decoder and JpegDecode::adaptive's shares) where there is no GPU, under the CPU
// sanitizers. Its "device" runs the steps ImageAugment and plain transforms ask for with the CPU
// backend's own functions (libjpeg-turbo for the JPEG engines, the CPU pixel-program executor for
// the kernel, the mixing functions for the batch transform's step), so its batches equal the CPU
// backend's bit for bit wherever both decode at full scale. Every arena is a vector of exactly the
// size a CUDA slot allocates: a write past one is a heap overflow AddressSanitizer reports.

#include <conveyor/batch/batch_transform.hpp>
#include <conveyor/core/clock.hpp>
#include <conveyor/core/linear_fit.hpp>
#include <conveyor/device/backend.hpp>
#include <conveyor/device/batch_parts.hpp>
#include <conveyor/device/jpeg_offload.hpp>
#include <conveyor/device/mix_samples.hpp>
#include <conveyor/device/step.hpp>
#include <conveyor/device/work.hpp>
#include <conveyor/io/image_decoder.hpp>
#include <conveyor/ops/cpu/pixel_program.hpp>
#include <conveyor/ops/cpu/resample.hpp>
#include <conveyor/pipeline/augment/program_image.hpp>

#include <chrono>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <new>
#include <span>
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
  [[nodiscard]] bool takes_parts() const noexcept override {
    for (const auto& step : steps_)
      if (step->takes_parts()) return true;
    return false;
  }
  void submit_part(std::size_t slot, std::uint64_t fill, std::size_t count, std::span<const std::size_t> positions) override {
    const auto t0 = std::chrono::steady_clock::now();
    std::lock_guard lock(mutex_);
    Slot& s = slots_[slot];
    const conveyor::StepContext ctx{slot, count, s.arena.data(), s.pinned.data(), s.output.data(), nullptr, fill};
    for (const auto& step : steps_)
      if (step->takes_parts()) step->on_part(ctx, positions);
    stats_.submit_seconds += conveyor::seconds_since(t0);
  }
  void submit(std::size_t slot, std::uint64_t fill, std::size_t count, std::size_t bytes) override {
    const auto t0 = std::chrono::steady_clock::now();
    std::lock_guard lock(mutex_);
    Slot& s = slots_[slot];
    std::memcpy(s.arena.data(), s.pinned.data(), bytes);
    const conveyor::StepContext ctx{slot, count, s.arena.data(), s.pinned.data(), s.output.data(), nullptr, fill};
    for (const auto& step : steps_) step->after_upload(ctx);
    for (const auto& step : steps_) step->produce(ctx);
    ++stats_.batches;
    stats_.bytes_uploaded += bytes;
    stats_.submit_seconds += conveyor::seconds_since(t0);
  }
  void hand_out(std::size_t, CUstream_st*) override {}
  void release(std::size_t) noexcept override {}
  conveyor::StreamOrderedMemory copy_out(std::size_t, const void* data, std::size_t bytes, CUstream_st* stream) override {
    void* copy = std::malloc(bytes);
    if (!copy) throw std::bad_alloc();
    std::memcpy(copy, data, bytes);
    return {copy, stream, 0, [](void* d, CUstream_st*, int) noexcept { std::free(d); }};
  }
  conveyor::StreamOrderedMemory upload(const void* data, std::size_t bytes, CUstream_st* stream) override {
    return copy_out(0, data, bytes, stream);  // host memory either way
  }
  std::exception_ptr failure() const noexcept override { return nullptr; }
  void* output(std::size_t slot) override { return slots_[slot].output.data(); }
  std::int64_t* labels(std::size_t slot) override { return c_.layout.labels(slots_[slot].arena.data()); }
  float* targets(std::size_t slot) override { return c_.layout.targets(slots_[slot].arena.data()); }
  conveyor::DeviceStats stats() override {
    std::lock_guard lock(mutex_);
    conveyor::DeviceStats st = stats_;
    for (const auto& step : steps_) step->add_stats(st);
    return st;
  }

 private:
  struct Slot {
    std::vector<std::byte> pinned, arena, output;
  };
  conveyor::DeviceBackendConfig c_;
  std::vector<std::unique_ptr<conveyor::DeviceStep>> steps_;
  std::vector<Slot> slots_;
  std::mutex mutex_;  // submit (the stager) and stats (any thread)
  conveyor::DeviceStats stats_;
};

/// ResampleSamples with the CPU backend's resampler: each sample's (or copy's) window where its
/// plan says, or its finished bytes when the plan is `precomputed`.
class HostResample final : public conveyor::DeviceStep {
 public:
  HostResample(const conveyor::ResampleSamples& spec, const conveyor::DeviceStepConfig& c)
      : spec_(spec), c_(c),
        copy_bytes_(std::size_t(spec.out_width) * std::size_t(spec.out_height) * 3 * conveyor::dtype_size(spec.params.dtype)) {}
  void produce(const conveyor::StepContext& s) override {
    const std::byte* data = c_.layout.data(s.arena);
    const conveyor::ops::SamplePlan* plans = c_.layout.plans(s.arena);
    auto* out = static_cast<std::byte*>(s.output);
    const conveyor::ops::CopyRange& copies = spec_.copies;
    for (std::int64_t j = 0; j < static_cast<std::int64_t>(s.count) * copies.count; ++j) {
      const conveyor::ops::SamplePlan& p = plans[copies.entry(j)];
      std::byte* at = out + copies.output(j, c_.sample_bytes);
      if (p.precomputed)
        std::memcpy(at, data + p.src.offset, copy_bytes_);
      else
        conveyor::ops::cpu::resample(reinterpret_cast<const std::uint8_t*>(data), p, spec_.params, at, scratch_);
    }
  }

 private:
  conveyor::ResampleSamples spec_;
  conveyor::DeviceStepConfig c_;
  std::size_t copy_bytes_;
  conveyor::ops::cpu::ResampleScratch scratch_;
};

/// ProgramSamples as the CUDA step runs it, with the CPU's functions in the kernels' places: every
/// sample resampled into a u8 image (a `precomputed` one's image copied), then each sample's
/// program from the uploaded program table run on its image and stored (the CPU executor); as the
/// kernel, a program that mixes where the step keeps no mixing buffers (`spec.mixes`) runs no ops.
class HostProgram final : public conveyor::DeviceStep {
 public:
  HostProgram(const conveyor::ProgramSamples& spec, const conveyor::DeviceStepConfig& c)
      : spec_(spec), c_(c), image_bytes_(std::size_t(spec.out_width) * std::size_t(spec.out_height) * 3),
        images_(c.batch_size * std::size_t(spec.copies.count) * image_bytes_) {}
  void produce(const conveyor::StepContext& s) override {
    const std::byte* data = c_.layout.data(s.arena);
    const conveyor::ops::SamplePlan* plans = c_.layout.plans(s.arena);
    const conveyor::ops::pixel::PixelProgram* programs = c_.layout.programs(s.arena);
    const conveyor::ops::CopyRange& copies = spec_.copies;
    const auto n = static_cast<std::int64_t>(s.count) * copies.count;
    for (std::int64_t j = 0; j < n; ++j) {
      const conveyor::ops::SamplePlan& p = plans[copies.entry(j)];
      std::uint8_t* image = images_.data() + std::size_t(j) * image_bytes_;
      if (p.precomputed)
        std::memcpy(image, data + p.src.offset, image_bytes_);
      else
        conveyor::ops::cpu::resample(reinterpret_cast<const std::uint8_t*>(data), p,
                                     conveyor::detail::program_image_params(), image, scratch_);
    }
    auto* out = static_cast<std::byte*>(s.output);
    for (std::int64_t j = 0; j < n; ++j) {
      const conveyor::ops::pixel::PixelProgram& program = programs[copies.entry(j)];
      std::uint8_t* image = images_.data() + std::size_t(j) * image_bytes_;
      std::byte* sample = out + copies.output(j, c_.sample_bytes);
      if (spec_.mixes || !conveyor::ops::pixel::mixes(program))
        conveyor::ops::cpu::run_pixel_program(program, image, spec_.out_width, spec_.out_height, spec_.params, sample,
                                              pixel_scratch_);
      else
        conveyor::ops::cpu::store_pixels(program, image, spec_.out_width, spec_.out_height, spec_.params, sample);
    }
  }

 private:
  conveyor::ProgramSamples spec_;
  conveyor::DeviceStepConfig c_;
  std::size_t image_bytes_;
  std::vector<std::uint8_t> images_;
  conveyor::ops::cpu::ResampleScratch scratch_;
  conveyor::ops::cpu::PixelScratch pixel_scratch_;
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

/// MixSamples with the CPU backend's functions: the draw from the pinned arena, sample i mixed with
/// its partner as it was before the step (from a copy of the output), or each mirrored pair at once.
class HostMix final : public conveyor::DeviceStep {
 public:
  HostMix(const conveyor::MixSamples& spec, const conveyor::DeviceStepConfig& c) : g_(spec.geometry), c_(c) {}
  void produce(const conveyor::StepContext& s) override {
    const conveyor::BatchMix m = *c_.layout.mix(s.host_arena);
    auto* out = static_cast<std::byte*>(s.output);
    const std::size_t bytes = c_.sample_bytes;
    if (m.per_sample) {  // from the uploaded table, as the kernel reads it
      const conveyor::BatchMix* each = c_.layout.sample_mixes(s.arena);
      std::vector<std::byte> scratch(bytes);
      for (std::size_t i = 0; i < (s.count + 1) / 2; ++i)
        conveyor::mix_pair_each(out + i * bytes, out + (s.count - 1 - i) * bytes, g_, each[i], each[s.count - 1 - i],
                                scratch.data());
      return;
    }
    if (m.pairing == conveyor::BatchMix::Pairing::mirror) {
      for (std::size_t i = 0; i < (s.count + 1) / 2; ++i)
        conveyor::mix_pair(out + i * bytes, out + (s.count - 1 - i) * bytes, g_, m);
      return;
    }
    const std::vector<std::byte> before(out, out + s.count * bytes);
    for (std::size_t i = 0; i < s.count; ++i)
      conveyor::mix_sample(out + i * bytes, before.data() + m.partner(i, s.count) * bytes, g_, m);
  }

 private:
  conveyor::MixGeometry g_;
  conveyor::DeviceStepConfig c_;
};

/// DecodeJpegs with libjpeg-turbo on the stager thread: each staged file's window decoded into its
/// place in the device-only section, in the calls the engines' step makes (parts of `part_images`
/// jobs while the batch fills, the rest at its submit), counted as the engines' decodes and calls are.
class HostDecodeJpegs final : public conveyor::DeviceStep {
 public:
  HostDecodeJpegs(const conveyor::DecodeJpegs& spec, const conveyor::DeviceStepConfig& c)
      : spec_(spec), c_(c), decoder_(spec.decode), parts_(c.slots, c.batch_size) {}
  [[nodiscard]] bool takes_parts() const noexcept override { return spec_.part_images > 0; }
  void on_part(const conveyor::StepContext& s, std::span<const std::size_t> positions) override {
    std::vector<std::size_t> staged;
    for (const std::size_t pos : positions)
      if (job(s, pos).file_bytes != 0) staged.push_back(pos);
    decode(s, parts_.part(s.slot, s.fill, staged, spec_.part_images));
  }
  void after_upload(const conveyor::StepContext& s) override { decode(s, parts_.rest(s.slot, s.fill, s.count)); }
  void produce(const conveyor::StepContext&) override {}
  void add_stats(conveyor::DeviceStats& st) override {
    st.gpu_decoded += decoded_;
    st.gpu_decode_call_seconds += call_seconds_;
    st.gpu_decode_calls += calls_;
  }

 private:
  [[nodiscard]] conveyor::JpegJob job(const conveyor::StepContext& s, std::size_t pos) const {
    conveyor::JpegJob j;
    std::memcpy(&j, c_.layout.one_sided(s.host_arena) + spec_.layout.job_offset(pos), sizeof j);
    return j;
  }
  void decode(const conveyor::StepContext& s, std::span<const std::size_t> positions) {
    const auto t0 = std::chrono::steady_clock::now();
    const std::byte* host = c_.layout.one_sided(s.host_arena);
    auto* windows = const_cast<std::byte*>(c_.layout.one_sided(s.arena));  // the device section is this step's
    const conveyor::JpegOffloadLayout& L = spec_.layout;
    std::size_t n = 0;
    for (const std::size_t pos : positions) {
      const conveyor::JpegJob j = job(s, pos);
      if (j.file_bytes == 0) continue;
      try {
        decoder_.read_header(std::span(host + L.file_offset(pos), j.file_bytes));
        decoder_.decode_columns({j.x, j.y, j.width, j.height, 8},
                                reinterpret_cast<std::uint8_t*>(windows + L.window_offset(pos)), std::size_t(j.width) * 3);
      } catch (const conveyor::DecodeError& e) {  // as the engines' step reports a file both refuse
        throw conveyor::SampleError(j.index, "", e.reason());
      }
      ++n;
    }
    if (n == 0) return;
    const double seconds = conveyor::seconds_since(t0);
    decoded_ += n;
    call_seconds_ += seconds;
    calls_.add(double(n), seconds);
  }

  conveyor::DecodeJpegs spec_;
  conveyor::DeviceStepConfig c_;
  conveyor::ImageDecoder decoder_;
  conveyor::BatchParts parts_;
  std::uint64_t decoded_ = 0;
  double call_seconds_ = 0;
  conveyor::LinearFit calls_;
};

/// While alive, a pipeline asked for device 0 (any ordinal) gets a HostBackend. One at a time.
class HostDevice {
 public:
  HostDevice() {
    using namespace conveyor;
    factory_ = conveyor::detail::cuda_backend_factory().exchange(
        [](const DeviceBackendConfig& c) -> std::unique_ptr<DeviceBackend> { return std::make_unique<HostBackend>(c); });
    resample_ = conveyor::detail::device_step_maker<ResampleSamples>().exchange(
        [](const ResampleSamples& spec, const DeviceStepConfig& c) -> std::unique_ptr<DeviceStep> {
          return std::make_unique<HostResample>(spec, c);
        });
    program_ = conveyor::detail::device_step_maker<ProgramSamples>().exchange(
        [](const ProgramSamples& spec, const DeviceStepConfig& c) -> std::unique_ptr<DeviceStep> {
          return std::make_unique<HostProgram>(spec, c);
        });
    copy_ = conveyor::detail::device_step_maker<CopySamples>().exchange(
        [](const CopySamples&, const DeviceStepConfig& c) -> std::unique_ptr<DeviceStep> {
          return std::make_unique<HostCopy>(c);
        });
    decode_ = conveyor::detail::device_step_maker<DecodeJpegs>().exchange(
        [](const DecodeJpegs& spec, const DeviceStepConfig& c) -> std::unique_ptr<DeviceStep> {
          return std::make_unique<HostDecodeJpegs>(spec, c);
        });
    mix_ = conveyor::detail::device_step_maker<MixSamples>().exchange(
        [](const MixSamples& spec, const DeviceStepConfig& c) -> std::unique_ptr<DeviceStep> {
          return std::make_unique<HostMix>(spec, c);
        });
  }
  HostDevice(const HostDevice&) = delete;
  HostDevice& operator=(const HostDevice&) = delete;
  ~HostDevice() {
    using namespace conveyor;
    conveyor::detail::cuda_backend_factory().store(factory_);
    conveyor::detail::device_step_maker<ResampleSamples>().store(resample_);
    conveyor::detail::device_step_maker<ProgramSamples>().store(program_);
    conveyor::detail::device_step_maker<CopySamples>().store(copy_);
    conveyor::detail::device_step_maker<DecodeJpegs>().store(decode_);
    conveyor::detail::device_step_maker<MixSamples>().store(mix_);
  }

 private:
  conveyor::detail::DeviceBackendFactory factory_;
  conveyor::detail::DeviceStepMaker<conveyor::ResampleSamples> resample_;
  conveyor::detail::DeviceStepMaker<conveyor::ProgramSamples> program_;
  conveyor::detail::DeviceStepMaker<conveyor::CopySamples> copy_;
  conveyor::detail::DeviceStepMaker<conveyor::DecodeJpegs> decode_;
  conveyor::detail::DeviceStepMaker<conveyor::MixSamples> mix_;
};

}  // namespace conveyor_test

#pragma once
// One transform-program fuzz case (random_programs.hpp): an augmentation, maybe a second view of
// it, and an image, all from bytes. An augmentation that validation refuses is a refusal, which is
// allowed; one it accepts must run: on the CPU (ImageAugment::apply, its drawn calls, Views), and
// through the device path, in host memory (HostDevice: staging, reserves, programs in the slot's
// table, windows for the JPEG engines) or on a CUDA device (the kernels; the GPU tests replay the
// fuzzer's seeds so under compute-sanitizer), whose batches must equal the CPU backend's. Any other
// exception, a difference, or (under the sanitizers) a read or write outside a buffer is a finding.

#include <conveyor/conveyor.hpp>

#include "support/digest.hpp"
#include "support/host_device.hpp"
#include "support/random_programs.hpp"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <set>
#include <span>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <variant>
#include <vector>

namespace conveyor_test {

/// Where a case's device path runs.
enum class DevicePath {
  host,  ///< HostDevice: the device pipeline's host side, its kernels the CPU's functions
  cuda,  ///< device 0's CUDA backend and kernels (a program built with it)
};

/// A batch's digest from wherever its memory is: `digest` reads host memory; a CUDA test passes one
/// that copies device memory back first.
using BatchDigest = std::uint64_t (*)(const conveyor::Batch&);

/// What a case did.
struct FuzzOutcome {
  bool refused = false;   ///< validation refused the augmentation
  bool views = false;     ///< it ran as two views
  bool device = false;    ///< it ran through the device path too
  int programs = 0;       ///< samples whose drawn program held at least one op
  int refused_samples = 0;  ///< samples that failed alone, as torchvision fails on them
  std::set<std::int32_t> ops{};         ///< the op codes of the programs that ran on the CPU
  std::set<std::int32_t> device_ops{};  ///< those that also ran through the device path
  std::set<std::string> transforms{};   ///< the transforms of an augmentation that ran (nested ones too)
};

namespace detail {

/// The names of `transforms` and of those they hold.
inline void add_names(const std::vector<conveyor::PixelTransform>& transforms, std::set<std::string>& names) {
  for (const conveyor::PixelTransform& t : transforms)
    std::visit(
        [&](const auto& x) {
          names.insert(std::remove_cvref_t<decltype(x)>::name);
          if constexpr (requires { x.transforms; }) add_names(x.transforms, names);
        },
        t);
}

/// The epoch every case runs: its samples alone and its pipelines.
inline constexpr std::uint64_t case_epoch = 1;

/// What a pipeline gave for one epoch: its batches' digests, or the sample it failed at.
struct Epoch {
  bool refused = false;  ///< at construction (a device's own limits, such as Views' sizes where it
                         ///< stores several views), which is allowed
  std::vector<std::uint64_t> digests{};
  std::optional<std::uint64_t> failed{};  ///< the sample of the SampleError it raised
};

template <class T>
Epoch run_epoch(const conveyor::InMemory& data, const T& transform, const conveyor::PipelineOptions& o,
                BatchDigest digest_of = &digest) {
  Epoch e;
  try {
    conveyor::BatchPipeline pipe(data, conveyor::SequentialSampler(data.size()), transform, o);
    pipe.set_epoch(case_epoch);  // the epoch the samples ran alone in: a crop's draws depend on it
    try {
      for (const conveyor::Batch& b : pipe) e.digests.push_back(digest_of(b));
    } catch (const conveyor::SampleError& s) {
      e.failed = s.index();
    }
  } catch (const conveyor::ConfigError&) {
    e.refused = true;
  }
  return e;
}

/// A pipeline's epoch must be what the samples alone gave: a sample refused alone fails its
/// batch, naming a refused sample; otherwise the batches are `expected`'s (when set).
inline void check_epoch(const Epoch& e, const std::set<std::uint64_t>& refused, const char* which,
                        const std::vector<std::uint64_t>* expected) {
  const std::string who = which;
  if (e.refused) return;
  if (refused.empty() && e.failed)
    throw std::logic_error(who + ": sample " + std::to_string(*e.failed) + " failed in the pipeline but not alone");
  if (!refused.empty() && (!e.failed || refused.count(*e.failed) == 0))
    throw std::logic_error(who + ": a sample refused alone did not fail the pipeline's batch");
  if (refused.empty() && expected && e.digests != *expected)
    throw std::logic_error(who + ": the batches differ from the CPU backend's");
}

/// `transform` through the device path, as `how` picks (staged windows, no room to stage, or the
/// JPEG engines' windows), against the CPU backend's epoch `cpu_epoch`.
template <class T>
void check_device(const conveyor::InMemory& data, const T& transform, const conveyor::PipelineOptions& cpu,
                  std::uint32_t how, bool full_scale, const std::set<std::uint64_t>& refused, const Epoch& cpu_epoch,
                  DevicePath path, BatchDigest digest_of) {
  std::optional<HostDevice> device;
  if (path == DevicePath::host) device.emplace();
  conveyor::PipelineOptions o = cpu;
  o.device = 0;
  if (how == 1) o.arena_bytes = 1;  // every sample resampled on the CPU into its reserve
  if (how == 2) o.decode = conveyor::JpegDecode::gpu;
  // The engines decode at full scale: their windows are the CPU's only where it decodes so too
  // (HostDevice's engines are libjpeg-turbo; the hardware's chroma upsampling is another).
  const bool same = how != 2 || (full_scale && path == DevicePath::host);
  check_epoch(run_epoch(data, transform, o, digest_of), refused, "the device path", same ? &cpu_epoch.digests : nullptr);
}

}  // namespace detail

/// Runs the case `bytes` describe, its device path as `path` says (a CUDA device's batches read by
/// `device_digest`); throws std::logic_error describing a finding.
inline FuzzOutcome run_program_case(std::span<const std::uint8_t> bytes, DevicePath path = DevicePath::host,
                                    BatchDigest device_digest = &digest) {
  using namespace conveyor;
  FuzzOutcome outcome;
  Choices c(bytes);
  const ImageAugment a = random_augment(c);
  std::optional<ImageAugment> second;
  if (c.eighths(2)) {  // a second view: the same output type and decoder, its own crop and transforms
    ImageAugment b = random_augment(c);
    b.dtype = a.dtype;
    b.layout = a.layout;
    b.decode = a.decode;
    if (b.dtype == DType::u8) b.normalize.reset();
    second = b;
  }
  const bool device = c.eighths(4) || path == DevicePath::cuda;  // a GPU replays every case on it
  const std::uint32_t how = c.below(3);
  const std::vector<std::byte> image = random_encoded_image(c);
  const std::vector<std::byte> other = random_encoded_image(c);

  try {
    a.validate();
    if (second) second->validate();
  } catch (const ConfigError&) {
    outcome.refused = true;
    return outcome;
  }
  InMemory data;
  data.add(image, 0);
  data.add(other, 1);
  data.add(image, 2);
  // Each sample alone: it runs, or fails with conveyor's error (a transform that cannot apply to
  // this image, as torchvision cannot); anything else escapes as a finding.
  std::set<std::uint64_t> refused;
  std::vector<std::byte> out(a.sample_spec().bytes());
  auto ws = a.make_workspace();
  for (std::uint64_t index = 0; index < data.size(); ++index) {
    const SampleContext ctx{7, detail::case_epoch, index, nullptr};
    try {
      const SampleProgram drawn = a.program(ctx);
      outcome.programs += drawn.pixels.count > 0;
      a.apply(ctx, data.bytes(index), out, ws);
      for (int k = 0; k < drawn.pixels.count; ++k) outcome.ops.insert(drawn.pixels.ops[k].code);
      const ImageInfo info = ws.decoder.read_header(data.bytes(index));
      (void)a.drawn_calls(7, detail::case_epoch, index, info.width, info.height);
    } catch (const conveyor::Error&) {
      refused.insert(index);
    }
  }
  outcome.refused_samples = static_cast<int>(refused.size());
  detail::add_names(a.transforms, outcome.transforms);
  const PipelineOptions cpu{.batch_size = 2, .workers = 0, .seed = 7};
  const bool full_scale = !a.scaled_decoding() && (!second || !second->scaled_decoding());
  if (second) {  // views' samples may fail where the first view alone does not: not compared
    outcome.views = true;
    const Views views{{View{a, 1}, View{*second, 2}}};
    views.validate();
    const detail::Epoch e = detail::run_epoch(data, views, cpu);
    if (e.refused) throw std::logic_error("the CPU backend refused views that validated");
    if (device && !e.failed) detail::check_device(data, views, cpu, how, full_scale, {}, e, path, device_digest);
  } else {
    const detail::Epoch e = detail::run_epoch(data, a, cpu);
    if (e.refused) throw std::logic_error("the CPU backend refused an augmentation that validated");
    detail::check_epoch(e, refused, "the CPU backend", nullptr);
    if (device) detail::check_device(data, a, cpu, how, full_scale, refused, e, path, device_digest);
  }
  outcome.device = device;
  if (device) outcome.device_ops = outcome.ops;
  return outcome;
}

}  // namespace conveyor_test

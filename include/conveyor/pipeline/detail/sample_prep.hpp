#pragma once
/// @file
/// Preparing one sample into its slot, and the error policy: under `OnError::raise` a failure
/// becomes a `SampleError` for its batch; under `skip` the sample is replaced by another index
/// drawn from the failed sample's own random stream, so the batch is the same whatever thread
/// prepares it. No lock is held here.

#include <conveyor/config.hpp>
#include <conveyor/core/bytes.hpp>
#include <conveyor/core/concepts.hpp>
#include <conveyor/core/error.hpp>
#include <conveyor/core/nvtx.hpp>
#include <conveyor/core/rng.hpp>
#include <conveyor/core/sample.hpp>
#include <conveyor/device/jpeg_offload.hpp>
#include <conveyor/device/work.hpp>
#include <conveyor/pipeline/detail/ring.hpp>
#include <conveyor/pipeline/detail/schedule.hpp>
#include <conveyor/pipeline/options.hpp>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <exception>
#include <optional>
#include <span>
#include <string>

namespace conveyor {
inline namespace v0 {
namespace detail {

template <Dataset D, Transform T>
class SamplePrep {
 public:
  /// What one worker keeps between samples.
  struct Worker {
    ByteBuffer bytes;
    typename T::Workspace ws;
    StageClock clock;
  };

  static constexpr int max_replacements = 16;

  /// `placement`: where a device-bound sample goes (unused on the CPU backend); `offload`: the
  /// places of a device JPEG decoder, if the pipeline has one.
  SamplePrep(const D& dataset, const T& transform, const PipelineOptions& options, SlotLayout layout,
             DeviceWork::Placement placement, std::optional<JpegOffloadLayout> offload = std::nullopt)
      : dataset_(dataset), transform_(transform), o_(options), layout_(layout), placement_(placement),
        offload_(offload), sample_bytes_(transform.sample_spec().bytes()) {}

  /// Prepares task `t` (dataset index `index` of epoch `epoch`) into `slot`, under the error policy;
  /// `gpu_share`: the epoch's device share of the JPEGs a device decoder takes.
  TaskOutcome run(const Task& t, std::uint64_t index, std::uint64_t epoch, Slot& slot, DeviceBackend* device,
                  Worker& w, double gpu_share = 0) const {
    TaskOutcome result;
    try {
      prepare(index, epoch, slot, t, device, w, gpu_share);
      return result;
    } catch (...) {
      const std::exception_ptr cause = std::current_exception();
      const std::string reason = reason_of(cause);
      if (o_.on_error == OnError::raise) {
        result.error = sample_error(index, cause, reason);
        return result;
      }
      CounterRng rng(o_.seed, epoch, index, RngOp::replace);
      for (int attempt = 0; attempt < max_replacements; ++attempt) {
        const std::uint64_t candidate = rng.below(dataset_.size());
        try {
          prepare(candidate, epoch, slot, t, device, w, gpu_share);
          result.skipped = SkippedSample{epoch, index, candidate, dataset_.name(index), reason};
          return result;
        } catch (...) {
        }
      }
      result.error = sample_error(index, cause,
                                  reason + " (and " + std::to_string(max_replacements) + " replacements failed too)");
      return result;
    }
  }

 private:
  /// Prepares sample `index` at the task's position of `slot`, and records its label and index.
  void prepare(std::uint64_t index, std::uint64_t epoch, Slot& slot, const Task& t, DeviceBackend* device,
               Worker& w, double gpu_share) const {
    const SampleContext ctx{o_.seed, epoch, index, &w.clock};
    std::int64_t label = 0;
    {
      StageTimer timer(ctx, read_stage);
      detail::NvtxRange range("read");
      label = read_labeled(dataset_, index, w.bytes);
    }
    if (!device) {
      detail::NvtxRange range("transform");
      transform_.apply(ctx, w.bytes.span(),
                       std::span<std::byte>(slot.images.data() + t.pos * sample_bytes_, sample_bytes_), w.ws);
    } else {
      std::byte* arena = device->host_arena(t.slot);
      device->wait_uploaded(t.slot);  // the previous batch's upload may still read it
      if (placement_ == DeviceWork::Placement::by_position) {
        detail::NvtxRange range("transform");
        transform_.apply(ctx, w.bytes.span(),
                         std::span<std::byte>(layout_.data(arena) + t.pos * sample_bytes_, sample_bytes_), w.ws);
      } else if constexpr (DeviceTransform<T>) {
        ArenaClaim claim(slot.arena, t.pos);  // given back if this attempt fails
        StagingArea area{layout_.data(arena), &claim};
        const std::size_t entry = t.pos * layout_.copies;
        area.plans = std::span<ops::SamplePlan>(layout_.plans(arena) + entry, layout_.copies);
        if (ops::pixel::PixelProgram* table = layout_.programs(arena)) area.program = table + entry;
        DeviceJpegPlace place;
        if (offload_) {
          std::byte* section = layout_.one_sided(arena);
          place = {draws_device(o_.seed, epoch, index, gpu_share),
                   reinterpret_cast<JpegJob*>(section + offload_->job_offset(t.pos)), section + offload_->file_offset(t.pos),
                   offload_->max_file_bytes,
                   static_cast<std::int64_t>(layout_.data_to_one_sided() + offload_->window_offset(t.pos)),
                   offload_->max_window_bytes};
          *place.job = JpegJob{};  // the CPU's, unless the transform stages it for the device
          area.device_jpeg = &place;
        }
        area.plans[0] = transform_.stage(ctx, w.bytes.span(), area, w.ws);
        if (offload_) place.job->index = index;
        claim.commit();
      }
      layout_.labels(arena)[t.pos] = label;
    }
    slot.labels[t.pos] = label;
    slot.indices[t.pos] = static_cast<std::int64_t>(index);
  }

  static std::string reason_of(const std::exception_ptr& e) {
    try {
      std::rethrow_exception(e);
    } catch (const DecodeError& d) {
      return d.reason();
    } catch (const IoError& io) {
      return io.reason();
    } catch (const std::exception& x) {
      return x.what();
    } catch (...) {
      return "unknown exception";
    }
  }

  /// A SampleError for `index`, with the original exception `cause` nested inside.
  std::exception_ptr sample_error(std::uint64_t index, const std::exception_ptr& cause, const std::string& reason) const {
    try {
      std::rethrow_exception(cause);
    } catch (...) {
      try {
        std::throw_with_nested(SampleError(index, dataset_.name(index), reason));
      } catch (...) {
        return std::current_exception();
      }
    }
  }

  const D& dataset_;
  const T& transform_;
  const PipelineOptions& o_;
  const SlotLayout layout_;
  const DeviceWork::Placement placement_;
  const std::optional<JpegOffloadLayout> offload_;
  const std::size_t sample_bytes_;
};

}  // namespace detail
}  // namespace v0
}  // namespace conveyor

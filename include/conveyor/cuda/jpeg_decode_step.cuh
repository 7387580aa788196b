#pragma once
/// @file
/// The CUDA implementation of `DecodeJpegs`: the slot's JPEG jobs (device/jpeg_offload.hpp) go to
/// the hardware JPEG engines in a batched nvJPEG call on the load stream once the batch is complete
/// (with `part_images`, also one of that many jobs whenever they are staged while the batch fills:
/// `on_part`), each decoding its window (nvJPEG's region of interest) into its place in the slot's
/// device section, with interpolated chroma upsampling (libjpeg-turbo's "fancy" upsampling, which
/// the CPU path uses) or, where the spec asks, replicated chroma (nvJPEG's default: a third to a
/// half of the host time a call).
/// Included by cuda/backend.cuh in builds with nvJPEG (CONVEYOR_WITH_NVJPEG), which registers it.
///
/// The engines write their output when the call is made, not when the stream reaches it (a
/// `cudaStreamWaitEvent` before the call does not hold them back), so the step says
/// `writes_on_call` and the backend waits on the host for the slot's last kernel before a batch's
/// first call. The files are read from the slot's pinned section, which the workers refill only
/// after the slot's `uploaded` event, recorded after these calls on the same stream.
///
/// A batch the engines refuse is decoded one file at a time, and a file they refuse alone is
/// decoded by libjpeg-turbo on this thread and copied into place (counted as a fallback); a file
/// libjpeg-turbo refuses too fails its batch with a `SampleError`.

#include <conveyor/config.hpp>

#if !CONVEYOR_CUDA_COMPILATION()
#error "conveyor/cuda/jpeg_decode_step.cuh needs a CUDA compiler"
#endif

#include <conveyor/core/clock.hpp>
#include <conveyor/core/error.hpp>
#include <conveyor/cuda/buffer.hpp>
#include <conveyor/cuda/error.hpp>
#include <conveyor/cuda/stream.hpp>
#include <conveyor/device/batch_parts.hpp>
#include <conveyor/device/jpeg_offload.hpp>
#include <conveyor/device/step.hpp>
#include <conveyor/io/image_decoder.hpp>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include <cuda_runtime_api.h>
#include <nvjpeg.h>

namespace conveyor {
inline namespace v0 {
namespace cuda {

/// @throws Error naming the nvJPEG call and its status.
inline void check_nvjpeg(nvjpegStatus_t status, const char* call) {
  if (status != NVJPEG_STATUS_SUCCESS) throw Error(std::string("nvJPEG: ") + call + " returned status " + std::to_string(int(status)));
}

class JpegDecodeStep final : public DeviceStep {
 public:
  JpegDecodeStep(const DecodeJpegs& spec, const DeviceStepConfig& c)
      : spec_(spec), c_(c), outputs_(new nvjpegImage_t[c.batch_size]), timing_(c.slots), parts_(c.slots, c.batch_size),
        cpu_(spec.decode) {
    const unsigned flags = spec.interpolated_upsampling ? NVJPEG_FLAGS_UPSAMPLING_WITH_INTERPOLATION : NVJPEG_FLAGS_DEFAULT;
    const nvjpegStatus_t made = nvjpegCreateEx(NVJPEG_BACKEND_HARDWARE, nullptr, nullptr, flags, &handle_);
    if (made != NVJPEG_STATUS_SUCCESS)
      throw ConfigError("decode = gpu: nvJPEG finds no hardware JPEG decoder on device " + std::to_string(c.device) +
                        " (nvjpegCreateEx returned status " + std::to_string(int(made)) +
                        "; the engines are on A100, H100, H200 and later); decode = cpu works on any device");
    try {
      check_nvjpeg(nvjpegJpegStateCreate(handle_, &state_), "nvjpegJpegStateCreate");
      params_.resize(c.batch_size, nullptr);
      for (nvjpegDecodeParams_t& p : params_) {
        check_nvjpeg(nvjpegDecodeParamsCreate(handle_, &p), "nvjpegDecodeParamsCreate");
        check_nvjpeg(nvjpegDecodeParamsSetOutputFormat(p, NVJPEG_OUTPUT_RGBI), "nvjpegDecodeParamsSetOutputFormat");
      }
      // The engines' buffers for a full batch of ImageNet-sized 4:2:0 files, so the first batches
      // do not allocate.
      check_nvjpeg(nvjpegDecodeBatchedPreAllocate(handle_, state_, static_cast<int>(c.batch_size), 640, 480,
                                                  NVJPEG_CSS_420, NVJPEG_OUTPUT_RGBI),
                   "nvjpegDecodeBatchedPreAllocate");
    } catch (...) {
      release();
      throw;
    }
  }
  JpegDecodeStep(const JpegDecodeStep&) = delete;
  JpegDecodeStep& operator=(const JpegDecodeStep&) = delete;
  /// The backend has synchronised its streams before its steps are destroyed.
  ~JpegDecodeStep() override { release(); }

  [[nodiscard]] bool writes_on_call() const noexcept override { return true; }
  [[nodiscard]] bool takes_parts() const noexcept override { return spec_.part_images > 0; }

  void on_part(const StepContext& s, std::span<const std::size_t> positions) override {
    staged_.clear();
    const std::byte* host = c_.layout.one_sided(s.host_arena);
    for (const std::size_t pos : positions)
      if (job_at(host, pos).file_bytes != 0) staged_.push_back(pos);
    run(s, parts_.part(s.slot, s.fill, staged_, spec_.part_images));
  }

  void after_upload(const StepContext& s) override {
    run(s, parts_.rest(s.slot, s.fill, s.count));
    Timing& t = timing_[s.slot];
    if (t.fill == s.fill) {  // a call was made for this batch
      t.end.record(StreamRef(s.stream));
      t.pending = true;
    }
  }
  void produce(const StepContext&) override {}

  void add_stats(DeviceStats& st) override {
    for (std::size_t slot = 0; slot < timing_.size(); ++slot) collect(slot);
    st.gpu_decoded += decoded_;
    st.gpu_decode_fallbacks += fallbacks_;
    st.gpu_decode_seconds += seconds_;
    st.gpu_decode_call_seconds += call_seconds_;
    st.gpu_decode_calls += calls_;
  }

 private:
  struct Timing {
    TimedEvent start, end;
    std::uint64_t fill = 0;  // the last batch whose first call recorded `start` (fills count from 1)
    bool pending = false;    // its end is recorded, not yet counted
  };
  /// One job's inputs and output, gathered from the slot's sections.
  struct Job {
    const unsigned char* file = nullptr;
    std::size_t bytes = 0;
    nvjpegImage_t out{};
    JpegJob job{};
  };

  [[nodiscard]] JpegJob job_at(const std::byte* host, std::size_t pos) const noexcept {
    JpegJob j;
    std::memcpy(&j, host + spec_.layout.job_offset(pos), sizeof j);
    return j;
  }

  /// Decodes the jobs at `positions` of the batch (those with none are skipped), the batch's
  /// decode time starting at its first call.
  void run(const StepContext& s, std::span<const std::size_t> positions) {
    gather(s, positions);
    if (jobs_.empty()) return;
    Timing& t = timing_[s.slot];
    if (t.fill != s.fill) {
      collect(s.slot);  // the slot's last batch: its kernel, after its decode, is done
      t.fill = s.fill;
      t.start.record(StreamRef(s.stream));
    }
    const int n = static_cast<int>(jobs_.size());
    const double before = call_seconds_;
    if (decode(0, n, s.stream) == NVJPEG_STATUS_SUCCESS)
      calls_.add(n, call_seconds_ - before);
    else
      decode_one_by_one(s);
    decoded_ += jobs_.size();
  }

  /// The jobs at `positions`, in that order.
  void gather(const StepContext& s, std::span<const std::size_t> positions) {
    const std::byte* host = c_.layout.one_sided(s.host_arena);
    auto* dev = const_cast<std::byte*>(c_.layout.one_sided(s.arena));  // the device section is this step's to write
    const JpegOffloadLayout& L = spec_.layout;
    jobs_.clear();
    for (const std::size_t pos : positions) {
      const JpegJob j = job_at(host, pos);
      if (j.file_bytes == 0) continue;
      Job job;
      job.file = reinterpret_cast<const unsigned char*>(host + L.file_offset(pos));
      job.bytes = j.file_bytes;
      job.out.channel[0] = reinterpret_cast<unsigned char*>(dev + L.window_offset(pos));
      job.out.pitch[0] = std::size_t(j.width) * 3;
      job.job = j;
      jobs_.push_back(job);
    }
  }

  /// Decodes jobs [first, first + n) in one batched call.
  nvjpegStatus_t decode(int first, int n, cudaStream_t stream) {
    files_.clear();
    lengths_.clear();
    for (int k = 0; k < n; ++k) {
      const auto at = static_cast<std::size_t>(k);
      const Job& j = jobs_[static_cast<std::size_t>(first + k)];
      check_nvjpeg(nvjpegDecodeParamsSetROI(params_[at], j.job.x, j.job.y, j.job.width, j.job.height),
                   "nvjpegDecodeParamsSetROI");
      files_.push_back(j.file);
      lengths_.push_back(j.bytes);
      outputs_[at] = j.out;
    }
    // The state's buffers are the last call's until the device has run what that call queued on
    // the stream: re-initialising or reusing them sooner made a later call spin in nvJPEG forever
    // (on an H200, about one call in 700 of varying size, with replicated chroma, whose calls
    // return sooner). Long done by now, as a rule.
    last_call_.synchronize();
    if (n != batch_) {
      check_nvjpeg(nvjpegDecodeBatchedInitialize(handle_, state_, n, 1, NVJPEG_OUTPUT_RGBI), "nvjpegDecodeBatchedInitialize");
      batch_ = n;
    }
    const auto t0 = std::chrono::steady_clock::now();
    const nvjpegStatus_t status =
        nvjpegDecodeBatchedEx(handle_, state_, files_.data(), lengths_.data(), outputs_.get(), params_.data(), stream);
    call_seconds_ += seconds_since(t0);
    last_call_.record(StreamRef(stream));
    if (status != NVJPEG_STATUS_SUCCESS) batch_ = 0;  // re-initialise the state before its next use
    return status;
  }

  /// After a refused batch: each file alone, and libjpeg-turbo for a file the engines refuse.
  void decode_one_by_one(const StepContext& s) {
    bool copied = false;
    for (int k = 0; k < static_cast<int>(jobs_.size()); ++k) {
      if (decode(k, 1, s.stream) == NVJPEG_STATUS_SUCCESS) continue;
      const Job& j = jobs_[static_cast<std::size_t>(k)];
      const std::size_t bytes = std::size_t(j.job.width) * std::size_t(j.job.height) * 3;
      if (scratch_.size() < bytes) scratch_ = PinnedBuffer(bytes);
      if (copied) CONVEYOR_CUDA_TRY(cudaStreamSynchronize(s.stream));  // the last copy has read the scratch
      try {
        cpu_.read_header(std::span(reinterpret_cast<const std::byte*>(j.file), j.bytes));
        cpu_.decode_columns({j.job.x, j.job.y, j.job.width, j.job.height, 8},
                            reinterpret_cast<std::uint8_t*>(scratch_.data()), j.out.pitch[0]);
      } catch (const DecodeError& e) {
        throw SampleError(j.job.index, "", std::string("the device JPEG decoder and libjpeg-turbo both refused it: ") + e.reason());
      }
      CONVEYOR_CUDA_TRY(cudaMemcpyAsync(j.out.channel[0], scratch_.data(), bytes, cudaMemcpyHostToDevice, s.stream));
      copied = true;
      ++fallbacks_;
    }
    if (copied) CONVEYOR_CUDA_TRY(cudaStreamSynchronize(s.stream));
  }

  /// Adds a slot's last decode time once the device has run it.
  void collect(std::size_t slot) {
    Timing& t = timing_[slot];
    if (!t.pending || !t.end.ready()) return;
    t.pending = false;
    seconds_ += 1e-3 * t.end.elapsed_ms_since(t.start);
  }

  void release() noexcept {
    for (nvjpegDecodeParams_t p : params_)
      if (p) (void)nvjpegDecodeParamsDestroy(p);
    params_.clear();
    if (state_) (void)nvjpegJpegStateDestroy(state_);
    if (handle_) (void)nvjpegDestroy(handle_);
    state_ = nullptr;
    handle_ = nullptr;
  }

  DecodeJpegs spec_;
  DeviceStepConfig c_;
  nvjpegHandle_t handle_ = nullptr;
  nvjpegJpegState_t state_ = nullptr;  // one: only the stager thread decodes
  std::vector<nvjpegDecodeParams_t> params_;
  int batch_ = 0;  // the size the state is initialised for (0: none)
  BatchParts parts_;
  std::vector<std::size_t> staged_;  // a part's positions with jobs
  std::vector<Job> jobs_;
  std::vector<const unsigned char*> files_;
  std::vector<std::size_t> lengths_;
  // Not a std::vector: nvcc 13.0 crashes destroying a vector of nvJPEG's anonymous-struct typedef.
  std::unique_ptr<nvjpegImage_t[]> outputs_;
  std::vector<Timing> timing_;  // per slot
  Event last_call_;             // after the last batched call's work on the stream
  ImageDecoder cpu_;            // the fallback
  PinnedBuffer scratch_;
  std::uint64_t decoded_ = 0, fallbacks_ = 0;
  double seconds_ = 0, call_seconds_ = 0;
  LinearFit calls_;  // each slot's batched call: host seconds against images
};

namespace {
[[maybe_unused]] const bool jpeg_decode_step_registered =
    (detail::device_step_maker<DecodeJpegs>().store(
         [](const DecodeJpegs& spec, const DeviceStepConfig& c) -> std::unique_ptr<DeviceStep> {
           return std::make_unique<JpegDecodeStep>(spec, c);
         }),
     true);
}  // namespace

}  // namespace cuda
}  // namespace v0
}  // namespace conveyor

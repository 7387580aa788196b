#pragma once
/// @file
/// Decoding JPEGs on the device (the hardware JPEG engines, through nvJPEG) instead of on the
/// worker threads: which samples go, where their bytes and decoded windows live in a slot, and
/// the step that decodes them. Plain C++: the step's implementation is CUDA code
/// (cuda/jpeg_decode_step.cuh), registered only in programs built with nvJPEG.
///
/// Which decoder takes a sample is a pure function of the sample, its header and the settings:
/// a JPEG the engines decode exactly (`engine_decodable`), with a window and a file that fit their
/// per-sample room, goes to the device when its own draw from (seed, epoch, index) falls below
/// the device's share. So batches are the same bits whatever the worker count or timing.
///
/// A slot's sections for them (`SlotLayout::host_only`, `device_only`), per batch position p:
///   host (pinned, not uploaded)   [jobs: batch x JpegJob][files: batch x max_file_bytes]
///   device (never uploaded)       [windows: batch x max_window_bytes]
/// A worker that sends sample p writes its job and copies its file to place p, and plans the fused
/// kernel to read the window at place p; the step decodes the slot's jobs in one batched call
/// once the slot is uploaded, or (`DecodeJpegs::part_images`) in calls of that many jobs as soon
/// as they are staged, the rest once the slot is uploaded.

#include <conveyor/config.hpp>
#include <conveyor/core/rng.hpp>
#include <conveyor/io/decode_options.hpp>
#include <conveyor/io/jpeg_info.hpp>

#include <cmath>
#include <cstddef>
#include <cstdint>

namespace conveyor {
inline namespace v0 {

/// What the engines decode exactly like libjpeg-turbo (measured on an H200 against the conformance
/// and photo sets, with nvJPEG's interpolated upsampling): baseline or extended Huffman YCbCr
/// with 4:4:4, 4:2:2, 4:2:0 or 4:4:0 chroma, at least 32 pixels a side. Progressive and
/// arithmetic-coded files, grayscale (whose odd sampling factors the engine decodes differently),
/// RGB- and CMYK-coded files, 4:1:1 and tiny images stay on the CPU. Replicated chroma
/// (`ChromaUpsampling::replicated`) takes the same files, within its wider tolerance (README).
[[nodiscard]] inline bool engine_decodable(const JpegInfo& j) noexcept {
  if (j.progressive || j.arithmetic || j.components != 3 || j.color != JpegColor::ycbcr) return false;
  if (j.width < 32 || j.height < 32) return false;
  // Chroma 1x1, luma 1x1, 2x1, 2x2 or 1x2 (what JpegInfo::subsampling() names 4:4:4 ... 4:4:0),
  // compared without building the name: this runs for every sample of such a pipeline.
  for (std::size_t c = 1; c < 3; ++c)
    if (j.h_sampling[c] != 1 || j.v_sampling[c] != 1) return false;
  return j.h_sampling[0] >= 1 && j.h_sampling[0] <= 2 && j.v_sampling[0] >= 1 && j.v_sampling[0] <= 2;
}

/// Whether sample `index` of `epoch` draws the device, for a device share `share` in [0, 1].
[[nodiscard]] inline bool draws_device(std::uint64_t seed, std::uint64_t epoch, std::uint64_t index, double share) noexcept {
  if (share <= 0) return false;
  if (share >= 1) return true;
  CounterRng rng(seed, epoch, index, RngOp::decoder);
  return rng.uniform() < share;
}

/// What `JpegDecode::adaptive` measures, per sample, per batch and per call.
struct OffloadRates {
  int workers = 1;
  double batch = 1;            ///< samples a batch
  double read_seconds = 0;     ///< worker time per sample to read it
  double cpu_seconds = 0;      ///< worker time to decode on the CPU a sample the engines could take
  double other_seconds = 0;    ///< worker time to decode a sample they cannot (progressive, gray, ...)
  double offload_seconds = 0;  ///< worker time to stage a sample for the device instead
  double eligible = 1;         ///< fraction e of the samples the engines take
  double call_fixed_seconds = 0;  ///< the stager's time in a batched decode call: a + b n for n images
  double call_image_seconds = 0;  ///< b
  double stager_seconds = 0;      ///< the stager's other host time per batch (uploads, launches)
};

/// How far the workers' and the stager's batch times add where they are close. With the slots a
/// pipeline has (prefetch 3), each side waits on the other now and then, and the period of a batch
/// is near (W^p + T^p)^(1/p) rather than max(W, T). p = 3.5 is fitted to the share sweeps at 4, 8
/// and 16 workers on an H200 (benchmarks/RESULTS.md): within 4 % r.m.s. of the 14 measured periods.
inline constexpr double offload_overlap_exponent = 3.5;

/// The period of a batch at device share s. The device gets n = e s batch of its samples.
///   workers' time W = batch (read + (1 - e) other + e (1 - s) cpu + e s offload) / workers
///   stager's time T = stager + (a + b n, where n > 0)
[[nodiscard]] inline double offload_batch_seconds(const OffloadRates& r, double s) noexcept {
  const double e = r.eligible, n = e * s * r.batch;
  const double w = r.batch *
                   (r.read_seconds + (1 - e) * r.other_seconds + e * (1 - s) * r.cpu_seconds + e * s * r.offload_seconds) /
                   r.workers;
  const double t = r.stager_seconds + (n > 0 ? r.call_fixed_seconds + r.call_image_seconds * n : 0.0);
  const double p = offload_overlap_exponent;
  return std::pow(std::pow(w, p) + std::pow(t, p), 1 / p);
}

/// The share in [0, 1] (to 0.001) with the shortest period: where the workers' time, falling with
/// s, meets the stager's, rising with it; 1 when nothing was measured.
[[nodiscard]] inline double best_gpu_share(const OffloadRates& r) noexcept {
  if (!(r.call_image_seconds > 0) || !(r.eligible > 0) || !(r.cpu_seconds > r.offload_seconds)) return 1.0;
  double best = 0, best_period = offload_batch_seconds(r, 0);
  for (int i = 1; i <= 1000; ++i) {
    const double period = offload_batch_seconds(r, i / 1000.0);
    if (period < best_period) best = i / 1000.0, best_period = period;
  }
  return best;
}

/// What the pipeline measured on an H200 with 16 cores (benchmarks/RESULTS.md, "GPU JPEG
/// decoding", 2026-12-02) for `workers` workers and `batch` samples a batch: worker time per
/// sample 546 us for an engine-able file and 1,862 us for the others with more than 8 workers
/// (506 and 1,649 with fewer), 91.8 % of the files engine-able, the batched call 2 ms + 95 us an
/// image with `interpolated` chroma upsampling, 0.5 ms + 42 us without (2026-12-04). The model
/// with these rates reproduces the share sweeps measured there.
[[nodiscard]] inline OffloadRates h200_offload_rates(int workers, double batch, bool interpolated = true) noexcept {
  const bool many = workers > 8;
  return {.workers = workers, .batch = batch, .read_seconds = 10e-6, .cpu_seconds = many ? 546e-6 : 506e-6,
          .other_seconds = many ? 1.862e-3 : 1.649e-3, .offload_seconds = 15e-6, .eligible = 0.918,
          .call_fixed_seconds = interpolated ? 2e-3 : 0.5e-3, .call_image_seconds = interpolated ? 95e-6 : 42e-6,
          .stager_seconds = 0.1e-3};
}

/// A share `JpegDecode::adaptive` uses: `s` within [2 %, 98 %], so both decoders stay measured.
[[nodiscard]] inline double measurable_share(double s) noexcept { return s < 0.02 ? 0.02 : s > 0.98 ? 0.98 : s; }

/// `JpegDecode::adaptive`'s first-epoch share when none is given: the best share for
/// `h200_offload_rates`, kept measurable as every later epoch's. A function of the settings
/// alone, so the first epoch's batches are the same in every run; the epochs after use the rates
/// this machine measures.
[[nodiscard]] inline double starting_gpu_share(int workers, std::size_t batch, bool interpolated = true) noexcept {
  return measurable_share(best_gpu_share(h200_offload_rates(workers < 1 ? 1 : workers, double(batch), interpolated)));
}

/// One sample's device decode: its file at its place in the host section, and the window to
/// decode into its place in the device section (full scale: the engines ignore DCT scale factors).
struct JpegJob {
  std::uint64_t file_bytes = 0;  ///< 0: the sample is not decoded on the device
  std::int32_t x = 0, y = 0, width = 0, height = 0;  ///< the window, in stored pixels
  std::uint64_t index = 0;  ///< the sample's dataset index, for errors
};

/// Per-sample room for device decodes, and the slot sections it makes.
struct JpegOffloadLayout {
  std::size_t batch = 0;
  std::size_t max_file_bytes = 0;
  std::size_t max_window_bytes = 0;

  [[nodiscard]] static constexpr std::size_t align(std::size_t n) noexcept { return (n + 255) / 256 * 256; }
  [[nodiscard]] constexpr std::size_t jobs_bytes() const noexcept { return align(batch * sizeof(JpegJob)); }
  [[nodiscard]] constexpr std::size_t host_bytes() const noexcept { return jobs_bytes() + batch * align(max_file_bytes); }
  [[nodiscard]] constexpr std::size_t device_bytes() const noexcept { return batch * align(max_window_bytes); }
  /// Offsets within the host section and the device section.
  [[nodiscard]] constexpr std::size_t job_offset(std::size_t pos) const noexcept { return pos * sizeof(JpegJob); }
  [[nodiscard]] constexpr std::size_t file_offset(std::size_t pos) const noexcept {
    return jobs_bytes() + pos * align(max_file_bytes);
  }
  [[nodiscard]] constexpr std::size_t window_offset(std::size_t pos) const noexcept { return pos * align(max_window_bytes); }
};

/// A sample's place for a device decode, handed to `DeviceTransform::stage` through
/// `StagingArea::device_jpeg` in a pipeline with a device decoder; used when the sample `drawn`
/// the device (otherwise the transform only reports its CPU decode of a file the engines could
/// take apart, for `JpegDecode::adaptive`).
struct DeviceJpegPlace {
  bool drawn = false;
  JpegJob* job = nullptr;
  std::byte* file = nullptr;   ///< max_file_bytes of pinned memory
  std::size_t max_file_bytes = 0;
  std::int64_t window_offset = 0;  ///< of the window, from the start of the slot's data section
  std::size_t max_window_bytes = 0;
};

/// The device step decoding a slot's jobs (cuda/jpeg_decode_step.cuh); first of a slot's steps.
struct DecodeJpegs {
  static constexpr const char* name = "decode jpegs";
  static constexpr const char* missing =
      "GPU JPEG decoding (decode = gpu or auto) needs nvJPEG, and this program was built without it: "
      "build with the CUDA toolkit's nvJPEG (or CONVEYOR_NVJPEG_ROOT pointing at one)";
  JpegOffloadLayout layout{};
  DecodeOptions decode{};  ///< for the CPU fallback of a file the engines refuse
  bool interpolated_upsampling = true;  ///< nvJPEG's interpolated chroma upsampling, else replicated
  /// Jobs of a batch not yet complete that make one call as soon as they are staged (0: one call
  /// per batch, once it is uploaded).
  std::size_t part_images = 0;
};

}  // namespace v0
}  // namespace conveyor

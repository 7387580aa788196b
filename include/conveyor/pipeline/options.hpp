#pragma once
/// @file
/// `BatchPipeline`'s options, and what it records about skipped samples.

#include <conveyor/config.hpp>
#include <conveyor/batch/batch_transform.hpp>
#include <conveyor/core/error.hpp>
#include <conveyor/core/named_enum.hpp>
#include <conveyor/transforms/fields.hpp>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <tuple>

struct CUstream_st;  // cudaStream_t is CUstream_st*; no CUDA header needed here

namespace conveyor {
inline namespace v0 {

/// What a pipeline does with a sample that cannot be read or decoded.
enum class OnError : std::uint8_t {
  raise,  ///< throw `SampleError` from the iterator at that sample's batch (the default)
  skip,   ///< replace it deterministically, keep the batch full, and record it
};

/// Where a device pipeline decodes JPEGs (`PipelineOptions::decode`; device/jpeg_offload.hpp).
enum class JpegDecode : std::uint8_t {
  cpu,       ///< on the worker threads (libjpeg-turbo), bit-exact: the default
  gpu,       ///< `gpu_share` of the JPEGs the engines take, on the device; the rest on the CPU
  adaptive,  ///< as `gpu`, with the share set between epochs from measured rates (stats() says it)
};

namespace detail {
inline constexpr const char* on_error_names[] = {"raise", "skip"};
inline constexpr const char* jpeg_decode_names[] = {"cpu", "gpu", "auto"};
inline constexpr const char* chroma_upsampling_names[] = {"interpolated", "replicated"};
}  // namespace detail

/// The names, in each enum's order, as the tools and Python spell them.
[[nodiscard]] constexpr std::span<const char* const> enum_names(OnError) noexcept { return detail::on_error_names; }
[[nodiscard]] constexpr std::span<const char* const> enum_names(JpegDecode) noexcept {
  return detail::jpeg_decode_names;
}

[[nodiscard]] constexpr const char* to_string(JpegDecode d) noexcept { return enum_name(d); }


/// How the device's JPEG decoder fills in subsampled chroma (`PipelineOptions::gpu_upsampling`).
enum class ChromaUpsampling : std::uint8_t {
  interpolated,  ///< interpolated, as libjpeg-turbo's "fancy" upsampling: the closest to the CPU's pixels
  replicated,    ///< each chroma sample repeated: a third to a half of the engines' host time per call
};

[[nodiscard]] constexpr std::span<const char* const> enum_names(ChromaUpsampling) noexcept {
  return detail::chroma_upsampling_names;
}
[[nodiscard]] constexpr const char* to_string(ChromaUpsampling u) noexcept { return enum_name(u); }

/// "interpolated" or "replicated". @throws ConfigError for anything else.
[[nodiscard]] inline ChromaUpsampling parse_chroma_upsampling(std::string_view s) {
  return parse_enum<ChromaUpsampling>("gpu_upsampling", s);
}

/// `BatchPipeline::Options::device` for the CPU backend (host tensors).
inline constexpr int cpu_device = -1;

/// `PipelineOptions::prefetch` chosen by the pipeline (pipeline/prefetch.hpp).
inline constexpr std::size_t auto_prefetch = 0;

/// Options of a `BatchPipeline`, built with designated initializers:
/// `{.batch_size = 256, .workers = 12, .prefetch = 3}`.
struct PipelineOptions {
  /// Samples per batch (> 0).
  std::size_t batch_size = 256;
  /// Worker threads; -1: one per hardware thread, less one where a device decodes JPEGs (its
  /// stager is busy in the engines' calls; pipeline/auto_workers.hpp); 0: the consumer's thread
  /// prepares each batch when it asks for it.
  int workers = -1;
  /// Batches in flight, each in its own slot (>= 2), or `auto_prefetch`: as many as the decode
  /// mode gains from (6 where a device decodes JPEGs, else 3), fewer where `memory_budget` holds
  /// fewer; `PipelineStats::prefetch` and `prefetch_reason` say what was chosen and why.
  std::size_t prefetch = auto_prefetch;
  /// Bytes the slots may hold, pinned and device memory together, when `prefetch` is chosen (0:
  /// 8 GiB). Six slots of 256 ImageNet samples with a device decoder hold about 6.7 GB.
  std::size_t memory_budget = 0;
  /// Drop the last batch of an epoch when it is smaller than batch_size.
  bool drop_last = false;
  OnError on_error = OnError::raise;
  /// Key of every random decision the transform makes (with epoch and dataset index).
  std::uint64_t seed = 0;
  /// `cpu_device` for host batches, or a CUDA device ordinal for device batches (the CUDA
  /// backend: include <conveyor/cuda/backend.cuh> in a translation unit compiled by nvcc). All of
  /// the pipeline's CUDA work runs on this device, whatever the calling thread's current device.
  int device = cpu_device;
  /// The consumer's CUDA stream: each batch is ready in order on it, with no host wait. It must
  /// belong to `device`. nullptr: the legacy default stream.
  CUstream_st* stream = nullptr;
  /// Bytes of pinned (and device) arena per slot for the decoded windows a `DeviceTransform`
  /// (ImageAugment) stages, at least batch_size x one output sample's bytes (each sample's
  /// reserve). 0: batch_size x 4 bytes per output element, room for windows of 4x the output's
  /// pixels at 3 bytes each: as many bytes as the output for f32, 2x for f16 and bf16, 4x for u8.
  /// A sample that does not fit is finished on the CPU, with the same result. Other transforms'
  /// samples are uploaded finished, each in its own size.
  std::size_t arena_bytes = 0;
  /// Where JPEGs are decoded on a device: the worker threads (`cpu`), or a share of them on the
  /// device's hardware JPEG decoder (`gpu`, `adaptive`), within a stated tolerance of the CPU's
  /// pixels (README: exactness). Needs a program built with nvJPEG.
  JpegDecode decode = JpegDecode::cpu;
  /// The share (0..1) of the JPEGs the engines take that go to them: fixed with `gpu` (unset: 1),
  /// the first epoch's with `adaptive` (unset: `starting_gpu_share`, the model's best share for
  /// the worker count and batch size at rates measured on an H200).
  std::optional<double> gpu_share{};
  /// The largest file a device decode takes: each slot pins this much per sample for the files.
  std::size_t gpu_max_file_bytes = std::size_t{512} << 10;
  /// The largest window a device decode takes, in pixels (0: the transform's; ImageAugment's is
  /// 786,432): each slot holds 3 bytes a pixel of it per sample in device memory.
  std::size_t gpu_max_window_pixels = 0;
  /// The device decoder's chroma upsampling, within the tolerance README's exactness table states
  /// for each.
  ChromaUpsampling gpu_upsampling = ChromaUpsampling::interpolated;
  /// The device decoder's calls in parts: each takes this many JPEGs of a batch as soon as the
  /// workers have staged them, so the engines work while the batch fills; what is left goes in one
  /// call when the batch is complete. 0 (the default): one call per batch, when it is complete.
  /// Measured on an H100 (benchmarks/RESULTS.md), parts of 64 gained nothing at 16 workers and
  /// cost about 5 % at 4 with interpolated chroma (a call's fixed cost, paid four times a batch):
  /// with several slots the stager always has a complete batch to decode.
  std::size_t gpu_part_images = 0;
  /// What is done to each finished batch: MixUp, CutMix or a choice of them (torchvision's
  /// `v2.RandomChoice([MixUp(...), CutMix(...)])` after the DataLoader), drawn from (seed, epoch,
  /// batch number); the batch's `targets()` are then float32 soft targets [N, num_classes]. On the
  /// CPU backend, split over the workers.
  std::optional<BatchTransform> batch_transform{};

  /// Each option by the name a binding takes it by (the Python package's Loader's keywords).
  static constexpr auto options() {
    using O = PipelineOptions;
    return std::tuple{option("batch_size", &O::batch_size),
                      option("workers", &O::workers),
                      option("prefetch", &O::prefetch),
                      option("memory_budget", &O::memory_budget),
                      option("drop_last", &O::drop_last),
                      option("on_error", &O::on_error),
                      option("seed", &O::seed),
                      option("device", &O::device),
                      option("stream", &O::stream),
                      option("arena_bytes", &O::arena_bytes),
                      option("decode", &O::decode),
                      option("gpu_share", &O::gpu_share),
                      option("gpu_max_file_bytes", &O::gpu_max_file_bytes),
                      option("gpu_max_window_pixels", &O::gpu_max_window_pixels),
                      option("gpu_upsampling", &O::gpu_upsampling),
                      option("gpu_part_images", &O::gpu_part_images),
                      option("batch_transform", &O::batch_transform)};
  }
};

static_assert(DeclaredOptions<PipelineOptions>);

/// A sample the pipeline replaced under `OnError::skip`.
struct SkippedSample {
  std::uint64_t epoch = 0;
  std::uint64_t index = 0;        ///< the dataset index that failed
  std::uint64_t replacement = 0;  ///< the dataset index delivered in its place
  std::string name;               ///< the dataset's name for it (its path)
  std::string reason;
};

}  // namespace v0
}  // namespace conveyor

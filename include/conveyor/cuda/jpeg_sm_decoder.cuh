#pragma once
/// @file
/// nvJPEG's batched decoder on the SMs (the GPU_HYBRID backend, whose batched call decodes
/// Huffman on the device for batches of more than 50 baseline files): the `JpegRoute::sm` jobs of
/// a slot, whole images, each into its place. Used by the `DecodeJpegs` step
/// (cuda/jpeg_decode_step.cuh) beside the hardware engines.
///
/// Measured on an H200 (bench_nvjpeg, benchmarks/RESULTS.md): the call costs the host about 10 us
/// an image, against the engines' 100, but a batch finishes 30-55 ms after it is queued, and
/// batches on separate streams overlap. So each slot has its own lane (state, stream, events):
/// a slot's decode runs beside the engines' and the other slots', and the load stream waits for it
/// before the slot's `uploaded` event. A lane is reused only with its slot, after the slot's last
/// kernel, which ran after that lane's last decode: neither its state nor its outputs are in use.
/// Smaller batches would go to nvJPEG's CPU Huffman decoder on the stager thread (500 us an
/// image), so a slot's batch is padded to 51 with repeats of its smallest file, decoded into the
/// lane's scratch memory.

#include <conveyor/config.hpp>

#if !CONVEYOR_CUDA_COMPILATION()
#error "conveyor/cuda/jpeg_sm_decoder.cuh needs a CUDA compiler"
#endif

#include <conveyor/cuda/buffer.hpp>
#include <conveyor/cuda/error.hpp>
#include <conveyor/cuda/nvjpeg.cuh>
#include <conveyor/cuda/stream.hpp>

#include <algorithm>
#include <cstddef>
#include <memory>
#include <span>
#include <vector>

#include <cuda_runtime_api.h>
#include <nvjpeg.h>

namespace conveyor {
inline namespace v0 {
namespace cuda {

class SmJpegDecoder {
 public:
  /// The smallest batch nvJPEG's GPU_HYBRID call decodes on the device.
  static constexpr int min_batch = 51;

  SmJpegDecoder(std::size_t slots, std::size_t batch_size) : outputs_(new nvjpegImage_t[std::max<std::size_t>(batch_size, min_batch)]) {
    try {
      lanes_.reserve(slots);
      for (std::size_t i = 0; i < slots; ++i) {
        lanes_.push_back(std::make_unique<Lane>());
        check_nvjpeg(nvjpegCreateEx(NVJPEG_BACKEND_GPU_HYBRID, nullptr, nullptr, NVJPEG_FLAGS_UPSAMPLING_WITH_INTERPOLATION,
                                    &lanes_.back()->handle),
                     "nvjpegCreateEx(GPU_HYBRID)");
        check_nvjpeg(nvjpegJpegStateCreate(lanes_.back()->handle, &lanes_.back()->state), "nvjpegJpegStateCreate");
      }
    } catch (...) {
      release();
      throw;
    }
  }
  SmJpegDecoder(const SmJpegDecoder&) = delete;
  SmJpegDecoder& operator=(const SmJpegDecoder&) = delete;
  /// The backend has synchronised its streams; the lanes' streams are waited for here.
  ~SmJpegDecoder() { release(); }

  /// Queues `jobs` (whole images) for `slot` after the work queued on `load` so far, and makes
  /// `load` wait for them. False when nvJPEG refuses the batch: nothing of it is pending then.
  [[nodiscard]] bool decode(std::size_t slot, std::span<const DeviceJpeg> jobs, cudaStream_t load) {
    Lane& lane = *lanes_[slot];
    files_.clear();
    lengths_.clear();
    for (std::size_t k = 0; k < jobs.size(); ++k) {
      files_.push_back(jobs[k].file);
      lengths_.push_back(jobs[k].bytes);
      outputs_[k] = jobs[k].out;
    }
    pad(lane, jobs);
    const int n = static_cast<int>(files_.size());
    if (n != lane.batch) {
      check_nvjpeg(nvjpegDecodeBatchedInitialize(lane.handle, lane.state, n, 1, NVJPEG_OUTPUT_RGBI), "nvjpegDecodeBatchedInitialize");
      lane.batch = n;
    }
    lane.go.record(StreamRef(load));  // after the slot's upload, and its last kernel (the load stream waited)
    lane.stream.wait(lane.go);
    if (nvjpegDecodeBatched(lane.handle, lane.state, files_.data(), lengths_.data(), outputs_.get(), lane.stream.get()) !=
        NVJPEG_STATUS_SUCCESS) {
      lane.batch = 0;             // re-initialise the state before its next use
      lane.stream.synchronize();  // whatever it queued is done before the caller writes the places
      return false;
    }
    lane.done.record(lane.stream);
    StreamRef(load).wait(lane.done);
    return true;
  }

 private:
  struct Lane {
    nvjpegHandle_t handle = nullptr;
    nvjpegJpegState_t state = nullptr;
    Stream stream;
    Event go, done;
    DeviceBuffer scratch;  // the padding's outputs
    int batch = 0;         // the size the state is initialised for (0: none)
  };

  /// Fills the call up to `min_batch` with the smallest job's file, each copy into its own part of
  /// the lane's scratch.
  void pad(Lane& lane, std::span<const DeviceJpeg> jobs) {
    const int missing = min_batch - static_cast<int>(jobs.size());
    if (missing <= 0) return;
    const DeviceJpeg& small = *std::min_element(jobs.begin(), jobs.end(), [](const DeviceJpeg& a, const DeviceJpeg& b) {
      return std::size_t(a.job.width) * a.job.height < std::size_t(b.job.width) * b.job.height;
    });
    const std::size_t bytes = std::size_t(small.job.width) * small.job.height * 3;
    if (lane.scratch.size() < bytes * missing) {
      lane.stream.synchronize();  // the last padding written there is done
      lane.scratch = DeviceBuffer(bytes * missing);
    }
    for (int k = 0; k < missing; ++k) {
      nvjpegImage_t out{};
      out.channel[0] = reinterpret_cast<unsigned char*>(lane.scratch.data()) + std::size_t(k) * bytes;
      out.pitch[0] = std::size_t(small.job.width) * 3;
      outputs_[files_.size()] = out;
      files_.push_back(small.file);
      lengths_.push_back(small.bytes);
    }
  }

  void release() noexcept {
    for (auto& lane : lanes_) {
      (void)cudaStreamSynchronize(lane->stream.get());
      if (lane->state) (void)nvjpegJpegStateDestroy(lane->state);
      if (lane->handle) (void)nvjpegDestroy(lane->handle);
    }
    lanes_.clear();
  }

  std::vector<std::unique_ptr<Lane>> lanes_;  // one per slot
  std::vector<const unsigned char*> files_;
  std::vector<std::size_t> lengths_;
  std::unique_ptr<nvjpegImage_t[]> outputs_;  // not a std::vector: see jpeg_decode_step.cuh
};

}  // namespace cuda
}  // namespace v0
}  // namespace conveyor

#pragma once
/// @file
/// What the device JPEG decoders share: nvJPEG's status check, and one job as they see it (its
/// file in the slot's pinned section, its output place in the slot's device section).

#include <conveyor/config.hpp>

#if !CONVEYOR_CUDA_COMPILATION()
#error "conveyor/cuda/nvjpeg.cuh needs a CUDA compiler"
#endif

#include <conveyor/core/error.hpp>
#include <conveyor/device/jpeg_offload.hpp>

#include <cstddef>
#include <string>

#include <nvjpeg.h>

namespace conveyor {
inline namespace v0 {
namespace cuda {

/// @throws Error naming the nvJPEG call and its status.
inline void check_nvjpeg(nvjpegStatus_t status, const char* call) {
  if (status != NVJPEG_STATUS_SUCCESS) throw Error(std::string("nvJPEG: ") + call + " returned status " + std::to_string(int(status)));
}

/// One job's inputs and output, gathered from a slot's sections.
struct DeviceJpeg {
  const unsigned char* file = nullptr;
  std::size_t bytes = 0;
  nvjpegImage_t out{};  ///< interleaved RGB, `job.width * 3` bytes a row
  JpegJob job{};
};

}  // namespace cuda
}  // namespace v0
}  // namespace conveyor

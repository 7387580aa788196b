#pragma once
/// @file
/// Devices: counting them, checking an ordinal, running code on a given one whatever the
/// calling thread's current device is, and how host threads wait for them.

#include <conveyor/config.hpp>
#include <conveyor/core/error.hpp>
#include <conveyor/cuda/error.hpp>

#include <string>
#include <string_view>

#include <cuda_runtime_api.h>

namespace conveyor {
inline namespace v0 {
namespace cuda {

/// Number of CUDA devices (0 when there is no driver or no device).
[[nodiscard]] inline int device_count() noexcept {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    (void)cudaGetLastError();
    return 0;
  }
  return n;
}

/// @throws ConfigError naming `device` when it does not exist.
inline void check_device(int device) {
  const int n = device_count();
  if (device < 0 || device >= n)
    throw ConfigError("device " + std::to_string(device) + " does not exist (this machine has " + std::to_string(n) +
                      " CUDA device" + (n == 1 ? "" : "s") + ")");
}

/// Sets how host threads wait for the current device (`cudaSetDeviceFlags`): "spin", "yield" or
/// "blocking" (sync). Call it before anything makes the device's context.
/// @throws ConfigError for another name; CudaError when the flags cannot be set.
inline void set_device_sync(std::string_view how) {
  const unsigned flags = how == "spin"       ? cudaDeviceScheduleSpin
                         : how == "yield"    ? cudaDeviceScheduleYield
                         : how == "blocking" ? cudaDeviceScheduleBlockingSync
                                             : 0u;
  if (flags == 0) throw ConfigError("device sync must be spin, yield or blocking, got '" + std::string(how) + "'");
  CONVEYOR_CUDA_TRY(cudaSetDeviceFlags(flags));
}

/// Makes `device` current for its lifetime and restores the previous one after.
class DeviceGuard {
 public:
  explicit DeviceGuard(int device) {
    CONVEYOR_CUDA_TRY(cudaGetDevice(&previous_));
    if (previous_ != device) CONVEYOR_CUDA_TRY(cudaSetDevice(device));
  }
  DeviceGuard(const DeviceGuard&) = delete;
  DeviceGuard& operator=(const DeviceGuard&) = delete;
  ~DeviceGuard() {
    int now = previous_;
    if (cudaGetDevice(&now) == cudaSuccess && now != previous_) (void)cudaSetDevice(previous_);
  }

 private:
  int previous_ = 0;
};

}  // namespace cuda
}  // namespace v0
}  // namespace conveyor

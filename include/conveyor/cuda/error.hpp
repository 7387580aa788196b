#pragma once
/// @file
/// `CudaError` and `CONVEYOR_CUDA_TRY`: every CUDA runtime call is checked, and a failure names
/// the call, the status and where it was made. Compiles with any host compiler and cudart.

#include <conveyor/config.hpp>
#include <conveyor/core/error.hpp>

#include <string>
#include <string_view>

#include <cuda_runtime_api.h>

namespace conveyor {
inline namespace v0 {

/// A CUDA runtime call failed: "stream.hpp:42: cudaEventRecord(...) failed (cudaErrorInvalidResourceHandle: ...)".
class CudaError : public Error {
 public:
  [[nodiscard]] CudaError(cudaError_t status, std::string_view call,
                          SourceLocation where = SourceLocation::current())
      : Error(detail::location_prefix(where) + std::string(call) + " failed (" + cudaGetErrorName(status) + ": " +
              cudaGetErrorString(status) + ")"),
        status_(status), call_(call) {}
  /// The status the call returned.
  [[nodiscard]] cudaError_t status() const noexcept { return status_; }
  /// The call, as written.
  [[nodiscard]] const std::string& call() const noexcept { return call_; }

 private:
  cudaError_t status_;
  std::string call_;
};

}  // namespace v0
}  // namespace conveyor

/// Evaluates the CUDA runtime call `expr` once; on failure clears the (non-sticky) error and
/// throws `conveyor::CudaError` naming the call and this file and line.
#define CONVEYOR_CUDA_TRY(expr)                                        \
  do {                                                                 \
    const ::cudaError_t conveyor_cuda_status_ = (expr);                \
    if (conveyor_cuda_status_ != ::cudaSuccess) {                      \
      (void)::cudaGetLastError();                                      \
      throw ::conveyor::CudaError(conveyor_cuda_status_, #expr);       \
    }                                                                  \
  } while (0)

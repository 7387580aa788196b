#pragma once
// A batch tensor's bytes on the host, for the tools' checksums, dumps and checks: a device tensor
// is copied on `stream` after the work queued there (the legacy default stream by default) and
// waited for. Each tool is one translation unit, compiled by nvcc when the CUDA backend is on.

#include <conveyor/conveyor.hpp>
#if CONVEYOR_CUDA_COMPILATION()
#include <conveyor/cuda/error.hpp>
#endif

#include <cstddef>
#include <cstring>
#include <vector>

namespace conveyor_tools {

inline std::vector<std::byte> to_host(const conveyor::TensorView& t, [[maybe_unused]] CUstream_st* stream = nullptr) {
  std::vector<std::byte> out(t.nbytes());
  if (t.device.kind == conveyor::Device::Kind::cpu) {
    std::memcpy(out.data(), t.data, out.size());
  } else {
#if CONVEYOR_CUDA_COMPILATION()
    CONVEYOR_CUDA_TRY(cudaMemcpyAsync(out.data(), t.data, out.size(), cudaMemcpyDeviceToHost, stream));
    CONVEYOR_CUDA_TRY(cudaStreamSynchronize(stream));
#endif
  }
  return out;
}

}  // namespace conveyor_tools

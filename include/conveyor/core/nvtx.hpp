#pragma once
/// @file
/// NVTX ranges around pipeline stages, so Nsight Systems shows the overlap. Header-only nvtx3
/// from the CUDA toolkit; compiled to nothing unless the build enables NVTX (CONVEYOR_ENABLE_NVTX).

#include <conveyor/config.hpp>

#if CONVEYOR_HAS_NVTX()
#include <nvtx3/nvToolsExt.h>
#endif

namespace conveyor {
inline namespace v0 {
namespace detail {

/// A push/pop range on the calling thread for its lifetime.
class NvtxRange {
 public:
#if CONVEYOR_HAS_NVTX()
  explicit NvtxRange(const char* name) noexcept { nvtxRangePushA(name); }
  ~NvtxRange() { nvtxRangePop(); }
#else
  explicit NvtxRange(const char*) noexcept {}
#endif
  NvtxRange(const NvtxRange&) = delete;
  NvtxRange& operator=(const NvtxRange&) = delete;
};

}  // namespace detail
}  // namespace v0
}  // namespace conveyor

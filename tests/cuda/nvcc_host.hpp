#pragma once
// Functions compiled by nvcc (nvcc_host.cu), called from the C++ test next to it.

#include <conveyor/ops/normalize.hpp>
#include <conveyor/ops/plan.hpp>

#include <cstdint>

// The library's only visible symbols (tests/cuda/CMakeLists.txt hides the rest).
#define CONVEYOR_NVCC_HOST_API __attribute__((visibility("default")))

namespace conveyor_test {

CONVEYOR_NVCC_HOST_API void resample_nvcc(const std::uint8_t* src, const conveyor::ops::SamplePlan& plan,
                                          const conveyor::ops::OutputParams& params, void* out);
CONVEYOR_NVCC_HOST_API std::uint16_t f16_nvcc(float f);
CONVEYOR_NVCC_HOST_API std::uint16_t bf16_nvcc(float f);
CONVEYOR_NVCC_HOST_API const void* kernel_address();
/// Where nvcc's `ops::cpu::resample` is: not the C++ build's, or the test compares one with itself.
CONVEYOR_NVCC_HOST_API const void* resample_address();

}  // namespace conveyor_test

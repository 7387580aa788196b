#pragma once
// Functions compiled by nvcc (nvcc_host.cu), called from the C++ test next to it.

#include <conveyor/ops/normalize.hpp>
#include <conveyor/ops/plan.hpp>

#include <cstdint>

namespace conveyor_test {

void resample_nvcc(const std::uint8_t* src, const conveyor::ops::SamplePlan& plan,
                   const conveyor::ops::OutputParams& params, void* out);
std::uint16_t f16_nvcc(float f);
std::uint16_t bf16_nvcc(float f);
const void* kernel_address();

}  // namespace conveyor_test

// Compiled by nvcc: the shared per-pixel headers as CUDA C++. The kernel below is never launched
// on a machine without a GPU; it makes nvcc compile every CONVEYOR_HD function for the device.
// The host functions let a test compare nvcc's host build of the same code with the C++ build.

#include <conveyor/ops/convert.hpp>
#include <conveyor/ops/cpu/resample.hpp>
#include <conveyor/ops/normalize.hpp>
#include <conveyor/ops/resample.hpp>

#include "cuda/nvcc_host.hpp"

namespace {

__global__ void touch_every_hd_function(const conveyor::ops::SamplePlan* plan, const std::uint8_t* src, float* out,
                                        conveyor::ops::OutputParams params) {
  using namespace conveyor::ops;
  const AxisTaps tx = axis_taps(plan->x, static_cast<std::int32_t>(threadIdx.x));
  const AxisTaps ty = axis_taps(plan->y, static_cast<std::int32_t>(threadIdx.y));
  const int px = axis_precision(plan->x), py = weight_precision(max_weight(ty));
  const std::int32_t sum = fixed_half(px) + fixed_weight(tap_weight(tx, 0), px) * src[0] +
                           fixed_weight(tap_weight(ty, 0), py) * src[1];
  const float r = static_cast<float>(fixed_to_u8(sum, px));
  store(out, threadIdx.x, to_u8(r), 0, params);
  out[1] = f16_to_float(to_f16_bits(r)) + bf16_to_float(to_bf16_bits(r));
  out[2] = static_cast<float>(element_index(params.layout, 1, 2, 3, 4, 5));
}

}  // namespace

namespace conveyor_test {

void resample_nvcc(const std::uint8_t* src, const conveyor::ops::SamplePlan& plan,
                   const conveyor::ops::OutputParams& params, void* out) {
  conveyor::ops::cpu::ResampleScratch scratch;
  conveyor::ops::cpu::resample(src, plan, params, out, scratch);
}

std::uint16_t f16_nvcc(float f) { return conveyor::ops::to_f16_bits(f); }
std::uint16_t bf16_nvcc(float f) { return conveyor::ops::to_bf16_bits(f); }

const void* kernel_address() { return reinterpret_cast<const void*>(&touch_every_hd_function); }
const void* resample_address() { return reinterpret_cast<const void*>(&conveyor::ops::cpu::resample); }

}  // namespace conveyor_test

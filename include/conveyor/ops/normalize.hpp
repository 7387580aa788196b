#pragma once
/// @file
/// Normalisation and storage of one output element, shared by both backends.

#include <conveyor/config.hpp>
#include <conveyor/core/tensor.hpp>
#include <conveyor/ops/convert.hpp>
#include <conveyor/ops/exact_float.hpp>

#include <cstdint>
#include <math.h>

namespace conveyor {
inline namespace v0 {
namespace ops {

/// Per-channel `scale = 1 / (255 std)` and `bias = -mean / std`, computed once on the host, so
/// every element costs one `fmaf` and both backends round identically; or, with `divisor` set,
/// torchvision's roundings: `scale = 1/255` (v2's ToDtype multiplies by it; with `divide`, v1's
/// ToTensor divides by 255 instead, which differs in the last bit for 126 of the 256 values),
/// `bias = mean`, `divisor = std`.
struct OutputParams {
  float scale[3] = {1.0f / 255.0f, 1.0f / 255.0f, 1.0f / 255.0f};
  float bias[3] = {0.0f, 0.0f, 0.0f};
  float divisor[3] = {0.0f, 0.0f, 0.0f};  ///< 0: the fused form
  DType dtype = DType::f32;
  Layout layout = Layout::NCHW;
  std::uint8_t divide = 0;  ///< with a divisor: `x / 255` (ToTensor), not `x * scale` (ToDtype)
};

/// torchvision's `(x / 255 or x * (1/255) - mean) / std` of value `x` of `channel`, each step
/// rounded (exact::, so no compiler fuses them). `p` carries a divisor.
[[nodiscard]] CONVEYOR_HD inline float torchvision_normalized(float x, int channel, const OutputParams& p) noexcept {
  const float scaled = p.divide ? exact::div(x, 255.0f) : exact::mul(x, p.scale[channel]);
  return exact::div(exact::sub(scaled, p.bias[channel]), p.divisor[channel]);
}

/// Resampled value `v` of `channel`, normalised: one `fmaf`, or torchvision's roundings where the
/// params carry a divisor.
[[nodiscard]] CONVEYOR_HD inline float normalized(std::uint8_t v, int channel, const OutputParams& p) noexcept {
  if (p.divisor[channel] != 0.0f) return torchvision_normalized(static_cast<float>(v), channel, p);
  return fmaf(static_cast<float>(v), p.scale[channel], p.bias[channel]);
}

/// Stores resampled value `v` (already rounded to u8, as torchvision's uint8 pipeline holds it)
/// as element `i` of `out`: raw for u8, normalised and converted otherwise.
CONVEYOR_HD inline void store(void* out, std::int64_t i, std::uint8_t v, int channel, const OutputParams& p) noexcept {
  if (p.dtype == DType::u8) {
    static_cast<std::uint8_t*>(out)[i] = v;
    return;
  }
  const float x = normalized(v, channel, p);
  switch (p.dtype) {
    case DType::f32: static_cast<float*>(out)[i] = x; break;
    case DType::f16: static_cast<std::uint16_t*>(out)[i] = to_f16_bits(x); break;
    case DType::bf16: static_cast<std::uint16_t*>(out)[i] = to_bf16_bits(x); break;
    default: break;
  }
}

/// Element index of (channel, y, x) in a `height` x `width` sample of the given layout.
[[nodiscard]] CONVEYOR_HD inline std::int64_t element_index(Layout layout, int channel, std::int64_t y, std::int64_t x,
                                                            std::int64_t height, std::int64_t width) noexcept {
  return layout == Layout::NCHW ? (channel * height + y) * width + x : (y * width + x) * 3 + channel;
}

}  // namespace ops
}  // namespace v0
}  // namespace conveyor

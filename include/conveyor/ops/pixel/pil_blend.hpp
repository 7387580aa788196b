#pragma once
/// @file
/// What Pillow's ImageEnhance classes share, which torchvision's PIL functionals call
/// (transforms/_functional_pil.py): `Image.blend(degenerate, image, factor)` (libImaging/Blend.c)
/// and the grey of `convert("L")` (libImaging/Convert.c) their degenerate images are made of.

#include <conveyor/config.hpp>
#include <conveyor/core/error.hpp>
#include <conveyor/ops/exact_float.hpp>
#include <conveyor/ops/pixel/op.hpp>

#include <cmath>
#include <cstdint>

namespace conveyor {
inline namespace v0 {
namespace ops::pixel {

/// ImagingBlend of one value: `in1 + alpha * (in2 - in1)` in float32 (alpha is the factor rounded
/// to float32), clipped to [0, 255] and truncated. Pillow clips only outside alpha's [0, 1], where
/// the value can leave the range; inside it the clip changes nothing.
[[nodiscard]] CONVEYOR_HD inline std::uint8_t pil_blend(std::uint8_t degenerate, std::uint8_t value,
                                                       float alpha) noexcept {
  const float v = exact::add(static_cast<float>(degenerate),
                             exact::mul(alpha, static_cast<float>(int{value} - int{degenerate})));
  return v <= 0.0f ? std::uint8_t{0} : v >= 255.0f ? std::uint8_t{255} : static_cast<std::uint8_t>(v);
}

/// Pillow's `convert("L")` of one RGB pixel: ITU-R 601-2 luma in 16-bit fixed point, rounded
/// (`(r * 19595 + g * 38470 + b * 7471 + 0x8000) >> 16`).
[[nodiscard]] CONVEYOR_HD inline std::uint8_t pil_luma(const std::uint8_t* rgb) noexcept {
  return static_cast<std::uint8_t>((std::uint32_t{rgb[0]} * 19595u + std::uint32_t{rgb[1]} * 38470u +
                                    std::uint32_t{rgb[2]} * 7471u + 0x8000u) >> 16);
}

/// An ImageEnhance op's record: f[0] = float32(factor), as ImagingBlend takes it. Pillow takes
/// any factor (below 0 it extrapolates away from the degenerate image); it must be finite.
[[nodiscard]] inline PixelOp pil_enhance_record(std::int32_t code, const char* name, double factor,
                                                SourceLocation where = SourceLocation::current()) {
  detail::expect(std::isfinite(factor), name, "the factor must be finite", factor, where);
  PixelOp op{.code = code};
  op.f[0] = static_cast<float>(factor);
  return op;
}

}  // namespace ops::pixel
}  // namespace v0
}  // namespace conveyor

#pragma once
/// @file
/// The image a sample's pixel program runs on: its window resampled (cropped, resized, flipped)
/// as u8 interleaved RGB, unnormalised, by the CPU resampler or the fused kernel alike.

#include <conveyor/config.hpp>
#include <conveyor/core/tensor.hpp>
#include <conveyor/ops/normalize.hpp>
#include <conveyor/ops/plan.hpp>

#include <cstddef>

namespace conveyor {
inline namespace v0 {
namespace detail {

/// How the resampler writes a program's image: u8, NHWC (what the pixel ops take).
[[nodiscard]] inline ops::OutputParams program_image_params() noexcept {
  ops::OutputParams p;
  p.dtype = DType::u8;
  p.layout = Layout::NHWC;
  return p;
}

/// The bytes of a `p.out_width` x `p.out_height` program image.
[[nodiscard]] inline std::size_t program_image_bytes(const ops::SamplePlan& p) noexcept {
  return std::size_t(p.out_width) * std::size_t(p.out_height) * 3;
}

}  // namespace detail
}  // namespace v0
}  // namespace conveyor

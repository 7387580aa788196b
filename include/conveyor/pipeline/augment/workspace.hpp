#pragma once
/// @file
/// What one worker keeps between `ImageAugment`'s samples: a decoder and the buffers the CPU path
/// reuses.

#include <conveyor/config.hpp>
#include <conveyor/io/image_decoder.hpp>
#include <conveyor/ops/cpu/pixel_program.hpp>
#include <conveyor/ops/cpu/resample.hpp>

#include <cstdint>
#include <vector>

namespace conveyor {
inline namespace v0 {
namespace detail {

/// Per-worker state, reused for every sample.
struct AugmentWorkspace {
  ImageDecoder decoder;
  std::vector<std::uint8_t> pixels{};  ///< a decoded window the CPU resamples
  ops::cpu::ResampleScratch scratch{};
  std::vector<std::uint8_t> image{};   ///< a resampled image a pixel program runs on
  ops::cpu::PixelScratch pixel_scratch{};
};

}  // namespace detail
}  // namespace v0
}  // namespace conveyor

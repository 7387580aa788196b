#pragma once
/// @file
/// What every codec is asked for a decode: how strictly (`DecodeOptions`) and which window
/// (`DecodeRegion`). No codec's header is included.

#include <conveyor/config.hpp>

#include <cstdint>

namespace conveyor {
inline namespace v0 {

/// How strictly to decode.
struct DecodeOptions {
  /// Accept corrupt but decodable data (libjpeg warnings) instead of raising `DecodeError`.
  bool lenient = false;
  /// Refuse, from the header alone and before any pixel buffer exists, images with more pixels.
  std::uint64_t max_image_pixels = std::uint64_t{1} << 27;
  /// Decode progressive files at 1/8 scale from their DC scans alone: the same pixels, without
  /// entropy-decoding the AC scans (jpeg_scans.hpp). Corruption confined to AC scans then goes
  /// unnoticed, as it does below a cropped window.
  bool dc_scans_at_eighth = true;
  friend constexpr bool operator==(const DecodeOptions&, const DecodeOptions&) = default;
};

/// A window of the image to decode, in the pixels of the image scaled by `scale_num`/8
/// (libjpeg-turbo's DCT scaling: 1..8 eighths). Rows outside it are skipped and columns outside
/// it are not decoded beyond the iMCU that holds them.
struct DecodeRegion {
  int x = 0, y = 0, width = 0, height = 0;
  int scale_num = 8;
};

}  // namespace v0
}  // namespace conveyor

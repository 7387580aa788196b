#pragma once
/// @file
/// What every codec is asked for a decode: how strictly (`DecodeOptions`) and which window
/// (`DecodeRegion`). No codec's header is included.

#include <conveyor/config.hpp>
#include <conveyor/core/error.hpp>
#include <conveyor/core/named_enum.hpp>

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace conveyor {
inline namespace v0 {

/// What a 16-bit PNG becomes (`DecodeOptions::sixteen_bit`).
enum class SixteenBit : std::uint8_t {
  /// Refused, naming its depth: torchvision.io.decode_image gives uint16 (ToDtype then scales by
  /// 65535), which conveyor's 8-bit samples cannot keep exact.
  refuse,
  /// Each sample's high byte: what Pillow's `Image.open(f).convert("RGB")` gives a 16-bit RGB PNG,
  /// so what torchvision's ImageFolder (Pillow's loader) hands its transforms.
  high_byte,
};

namespace detail {
inline constexpr const char* sixteen_bit_names[] = {"refuse", "high_byte"};
}  // namespace detail

/// The names, in the enum's order: "refuse", "high_byte".
[[nodiscard]] constexpr std::span<const char* const> enum_names(SixteenBit) noexcept {
  return detail::sixteen_bit_names;
}

/// `SixteenBit` from its name. @throws ConfigError naming another.
[[nodiscard]] inline SixteenBit parse_sixteen_bit(std::string_view name) {
  return parse_enum<SixteenBit>("sixteen_bit", name);
}

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
  /// 16-bit PNGs: refused unless their high bytes are what the user's reference library sees.
  SixteenBit sixteen_bit = SixteenBit::refuse;
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

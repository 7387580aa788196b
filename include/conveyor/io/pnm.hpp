#pragma once
/// @file
/// Binary PGM and PPM (netpbm's P5 and P6) decoding, to RGB u8 as Pillow's
/// `Image.open(f).convert("RGB")` gives it: gray replicated, samples of a maxval other than 255
/// scaled to round(v / maxval * 255) (ties to even, in doubles, as Pillow's PPM decoder computes
/// it). One difference, as for 16-bit PNG: Pillow opens a P5 with maxval above 255 as 32-bit
/// integers and clamps them to 255 on that conversion; conveyor scales them too.
/// The format is a header and raw samples, so no library is needed; every length is checked
/// against the bytes before it is trusted.

#include <conveyor/config.hpp>
#include <conveyor/core/error.hpp>
#include <conveyor/io/decode_options.hpp>

#include <cctype>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>

namespace conveyor {
inline namespace v0 {

/// What a PGM's or PPM's header says.
struct PnmInfo {
  int width = 0;
  int height = 0;
  int channels = 0;  ///< 1 (P5) or 3 (P6)
  int maxval = 0;    ///< 1..65535; above 255, two bytes a sample, big-endian
  std::size_t data_offset = 0;
};

/// "P5" or "P6" followed by whitespace: a binary PGM or PPM.
[[nodiscard]] inline bool is_binary_pnm(std::span<const std::byte> bytes) noexcept {
  if (bytes.size() < 3 || bytes[0] != std::byte{'P'}) return false;
  const auto kind = std::to_integer<char>(bytes[1]);
  const auto next = std::to_integer<char>(bytes[2]);
  return (kind == '5' || kind == '6') && (next == ' ' || next == '\t' || next == '\n' || next == '\r');
}

class PnmDecoder {
 public:
  explicit PnmDecoder(DecodeOptions options = {}) : options_(options) {}
  void set_options(const DecodeOptions& options) noexcept { options_ = options; }

  /// Parses the header; refuses images above `max_image_pixels` and files shorter than their
  /// samples. The bytes must stay alive and unchanged until the decode that follows.
  /// @throws DecodeError naming what is wrong and where.
  PnmInfo read_header(std::span<const std::byte> pnm) {
    header_read_ = false;
    if (!is_binary_pnm(pnm)) throw DecodeError("not a binary PGM or PPM file (P5 or P6)");
    data_ = pnm;
    PnmInfo info;
    info.channels = std::to_integer<char>(pnm[1]) == '5' ? 1 : 3;
    std::size_t at = 2;
    const std::uint64_t width = number(at, "width"), height = number(at, "height"), maxval = number(at, "maxval");
    if (at >= pnm.size()) throw DecodeError("PNM header ends at byte " + std::to_string(at) + " before its samples");
    ++at;  // the single whitespace byte before the samples
    if (width == 0 || height == 0) throw DecodeError("PNM of " + std::to_string(width) + "x" + std::to_string(height) + " pixels");
    if (maxval == 0 || maxval > 65535) throw DecodeError("PNM maxval " + std::to_string(maxval) + " is outside 1..65535");
    if (width * height > options_.max_image_pixels)
      throw DecodeError("image of " + std::to_string(width) + "x" + std::to_string(height) +
                        " pixels exceeds max_image_pixels (" + std::to_string(options_.max_image_pixels) + ")");
    info.width = static_cast<int>(width);
    info.height = static_cast<int>(height);
    info.maxval = static_cast<int>(maxval);
    info.data_offset = at;
    const std::uint64_t need = width * height * std::uint64_t(info.channels) * (maxval > 255 ? 2 : 1);
    if (pnm.size() - at < need)
      throw DecodeError("PNM has " + std::to_string(pnm.size() - at) + " bytes of samples after byte " +
                        std::to_string(at) + ", " + std::to_string(need) + " expected");
    info_ = info;
    header_read_ = true;
    return info;
  }

  /// Decodes the window of `width` x `height` pixels at (`x`, `y`) into `out` as RGB u8
  /// (`width * 3` bytes per row, `row_stride` apart). Only the window's samples are read.
  /// @throws DecodeError for a window outside the image, or without a header.
  void decode_region(int x, int y, int width, int height, std::uint8_t* out, std::size_t row_stride) {
    if (!header_read_) throw DecodeError("decoding a PNM window without a successful read_header()");
    header_read_ = false;
    const PnmInfo& h = info_;
    if (x < 0 || y < 0 || width <= 0 || height <= 0 || x + width > h.width || y + height > h.height)
      throw DecodeError("decode window " + std::to_string(width) + "x" + std::to_string(height) + "+" + std::to_string(x) +
                        "+" + std::to_string(y) + " is outside the " + std::to_string(h.width) + "x" +
                        std::to_string(h.height) + " PNM");
    const std::size_t bytes_per_sample = h.maxval > 255 ? 2 : 1;
    const std::size_t src_row = std::size_t(h.width) * std::size_t(h.channels) * bytes_per_sample;
    std::uint8_t lut[256] = {};  // zeroed: read only where filled (maxval < 255), which a compiler cannot always prove
    if (h.maxval < 255)
      for (int v = 0; v <= h.maxval; ++v) lut[v] = scaled(v, h.maxval);
    const auto* base = reinterpret_cast<const std::uint8_t*>(data_.data() + h.data_offset);
    for (int r = 0; r < height; ++r) {
      const std::uint8_t* src = base + std::size_t(y + r) * src_row + std::size_t(x) * std::size_t(h.channels) * bytes_per_sample;
      std::uint8_t* dst = out + std::size_t(r) * row_stride;
      for (int c = 0; c < width; ++c) {
        for (int k = 0; k < 3; ++k) {
          const std::size_t i = std::size_t(c) * std::size_t(h.channels) + (h.channels == 3 ? std::size_t(k) : 0);
          unsigned v = bytes_per_sample == 2 ? (unsigned(src[2 * i]) << 8 | src[2 * i + 1]) : src[i];
          if (v > unsigned(h.maxval)) v = unsigned(h.maxval);  // as Pillow clamps samples above maxval
          dst[std::size_t(c) * 3 + std::size_t(k)] =
              h.maxval == 255 ? static_cast<std::uint8_t>(v) : h.maxval < 255 ? lut[v] : scaled(int(v), h.maxval);
        }
      }
    }
  }

 private:
  static std::uint8_t scaled(int v, int maxval) noexcept {
    return static_cast<std::uint8_t>(std::nearbyint(double(v) / double(maxval) * 255.0));
  }

  /// The next header number after whitespace and comments.
  std::uint64_t number(std::size_t& at, const char* what) const {
    const std::size_t n = data_.size();
    for (;;) {
      while (at < n && std::isspace(std::to_integer<unsigned char>(data_[at]))) ++at;
      if (at < n && std::to_integer<char>(data_[at]) == '#') {
        while (at < n && std::to_integer<char>(data_[at]) != '\n') ++at;
        continue;
      }
      break;
    }
    std::uint64_t v = 0;
    const std::size_t start = at;
    while (at < n && std::isdigit(std::to_integer<unsigned char>(data_[at])) && at - start < 9)
      v = v * 10 + std::uint64_t(std::to_integer<char>(data_[at++]) - '0');
    if (at == start || (at < n && std::isdigit(std::to_integer<unsigned char>(data_[at]))))
      throw DecodeError(std::string("PNM header: no valid ") + what + " at byte " + std::to_string(start));
    return v;
  }

  DecodeOptions options_;
  std::span<const std::byte> data_;
  PnmInfo info_;
  bool header_read_ = false;
};

}  // namespace v0
}  // namespace conveyor

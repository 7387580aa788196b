#pragma once
/// @file
/// What a JPEG's header says and the window arithmetic of libjpeg-turbo's scaled and cropped
/// decoding, without libjpeg's header: code that plans from a header or routes samples includes
/// this, and only the decoder (jpeg.hpp) brings in jpeglib.h and its macros.

#include <conveyor/config.hpp>

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>

namespace conveyor {
inline namespace v0 {

/// Colour space of the coded components.
enum class JpegColor : std::uint8_t { gray, ycbcr, rgb, cmyk, ycck, unknown };

/// What the header says about an image; read without decoding any pixel.
struct JpegInfo {
  int width = 0;
  int height = 0;
  int components = 0;
  JpegColor color = JpegColor::unknown;
  std::array<std::uint8_t, 4> h_sampling{};  ///< per component, as coded
  std::array<std::uint8_t, 4> v_sampling{};
  bool progressive = false;
  bool arithmetic = false;
  int orientation = 1;  ///< Exif orientation 1..8 (1 when absent)

  /// The largest horizontal sampling factor (1 for grayscale, whatever it declares).
  [[nodiscard]] int max_h_sampling() const noexcept {
    int m = 1;
    if (components > 1)
      for (std::size_t c = 0; c < std::size_t(components); ++c) m = h_sampling[c] > m ? h_sampling[c] : m;
    return m;
  }
  /// Columns between the places a cropped decode can start, at `scale_num`/8: one iMCU.
  [[nodiscard]] int column_alignment(int scale_num) const noexcept { return max_h_sampling() * scale_num; }
  /// The narrowest cropped decode that keeps libjpeg-turbo's fancy upsampling (it drops it for
  /// components cropped to 2 samples or fewer).
  [[nodiscard]] int min_crop_width() const noexcept { return 2 * max_h_sampling() + 1; }

  /// "gray", "4:4:4", "4:2:2", "4:2:0", "4:4:0", "4:1:1", "4:1:0", or the factors ("3x2,1x1,1x1").
  [[nodiscard]] std::string subsampling() const {
    if (components == 1) return "gray";
    bool chroma_same = true;
    for (std::size_t c = 2; c < std::size_t(components); ++c)
      chroma_same = chroma_same && h_sampling[c] == h_sampling[1] && v_sampling[c] == v_sampling[1];
    if (chroma_same && h_sampling[1] == 1 && v_sampling[1] == 1) {
      const int h = h_sampling[0], v = v_sampling[0];
      if (h == 1 && v == 1) return "4:4:4";
      if (h == 2 && v == 1) return "4:2:2";
      if (h == 2 && v == 2) return "4:2:0";
      if (h == 1 && v == 2) return "4:4:0";
      if (h == 4 && v == 1) return "4:1:1";
      if (h == 4 && v == 2) return "4:1:0";
    }
    std::string s;
    for (std::size_t c = 0; c < std::size_t(components); ++c) {
      if (c) s += ',';
      s += std::to_string(h_sampling[c]) + 'x' + std::to_string(v_sampling[c]);
    }
    return s;
  }
};

/// Size of an image of `width` x `height` decoded at `scale_num`/8: ceil(side * num / 8), as
/// libjpeg computes it.
[[nodiscard]] constexpr int scaled_size(int side, int scale_num) noexcept { return (side * scale_num + 7) / 8; }

/// The columns [first, last) to decode so that columns [x, x + width) of an `extent`-wide image
/// come out as a full decode gives them: widened by one column each side (libjpeg-turbo upsamples
/// a crop's edge columns as image edges), started on a multiple of `align` (an iMCU), and at
/// least `min_width` wide (narrower crops lose fancy upsampling).
[[nodiscard]] constexpr std::array<int, 2> crop_columns(int x, int width, int extent, int align, int min_width) noexcept {
  if (width >= extent) return {0, extent};
  int first = (x > 0 ? x - 1 : 0) / align * align;
  int last = x + width < extent ? x + width + 1 : extent;
  while (last - first < min_width && (first > 0 || last < extent)) {
    if (last < extent)
      ++last;
    else
      first -= first < align ? first : align;
  }
  return {first, last};
}

}  // namespace v0
}  // namespace conveyor

#pragma once
/// @file
/// PNG decoding with libpng, to RGB u8 as Pillow's `Image.open(f).convert("RGB")` gives it (what
/// torchvision's ImageFolder yields): palettes expanded, gray replicated (1, 2 and 4-bit gray
/// scaled to 0..255), alpha and tRNS dropped (not composited), no gamma applied. A 16-bit PNG is
/// refused by default (`DecodeOptions::sixteen_bit`: torchvision.io.decode_image gives uint16), or
/// reduced to its samples' high bytes. One difference, on purpose: Pillow clamps 16-bit grayscale
/// to 255 on that conversion (nearly every pixel white); conveyor takes the high byte, as Pillow
/// itself does for 16-bit RGB and gray+alpha.
///
/// libpng over libspng: both are Debian's, and row by row, the way a window is decoded here,
/// libpng 1.6.39 decoded photographs 25 % faster than libspng 0.7.3 (16-20 against 13-16 MP/s on
/// the development machine; whole images within 10 % of each other).
///
/// Errors `longjmp` out of libpng into the one function that called it, which holds only
/// trivially destructible locals (as jpeg.hpp does for libjpeg); libpng's warnings are conditions
/// it recovered from (an ancillary chunk dropped) and pass.

#include <conveyor/config.hpp>
#include <conveyor/core/error.hpp>
#include <conveyor/io/decode_options.hpp>

#include <csetjmp>
#include <cstdio>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include <png.h>

namespace conveyor {
inline namespace v0 {

/// What a PNG's header says.
struct PngInfo {
  int width = 0;
  int height = 0;
  int bit_depth = 0;
  int color_type = 0;  ///< PNG_COLOR_TYPE_*
  bool interlaced = false;
};

namespace detail {

struct PngState {
  png_structp png = nullptr;
  png_infop info = nullptr;
  std::span<const std::byte> data;
  std::size_t at = 0;        // read position in data
  char message[256] = {};    // the error libpng reported
  std::vector<png_byte> row;     // one decoded row, for windows narrower than the image
  std::vector<png_byte> image;   // a whole interlaced image
  std::vector<png_bytep> rows;
  PngInfo header;
  bool header_read = false;

  void reset() noexcept {
    if (png) png_destroy_read_struct(&png, info ? &info : nullptr, nullptr);
    png = nullptr;
    info = nullptr;
  }
  ~PngState() { reset(); }
};

[[noreturn]] inline void png_error_exit(png_structp png, png_const_charp message) {
  auto* s = static_cast<PngState*>(png_get_error_ptr(png));
  std::snprintf(s->message, sizeof s->message, "%s", message ? message : "unknown libpng error");
  png_longjmp(png, 1);
}

inline void png_warning_ignored(png_structp, png_const_charp) {}

inline void png_read_from_memory(png_structp png, png_bytep out, png_size_t length) {
  auto* s = static_cast<PngState*>(png_get_io_ptr(png));
  if (length > s->data.size() - s->at) png_error(png, "Premature end of PNG file");
  std::memcpy(out, s->data.data() + s->at, length);
  s->at += length;
}

}  // namespace detail

/// The 8 bytes every PNG starts with.
[[nodiscard]] inline bool is_png(std::span<const std::byte> bytes) noexcept {
  static constexpr unsigned char signature[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1A, '\n'};
  if (bytes.size() < 8) return false;
  for (std::size_t i = 0; i < 8; ++i)
    if (std::to_integer<unsigned char>(bytes[i]) != signature[i]) return false;
  return true;
}

/// A reusable PNG decoder: one per thread. Not thread-safe; movable.
class PngDecoder {
 public:
  explicit PngDecoder(DecodeOptions options = {}) : options_(options), s_(std::make_unique<detail::PngState>()) {}

  [[nodiscard]] const DecodeOptions& options() const noexcept { return options_; }
  void set_options(const DecodeOptions& options) noexcept { options_ = options; }

  /// Reads the signature and IHDR; refuses images above `max_image_pixels` before any pixel
  /// buffer exists, and 16-bit images unless `sixteen_bit` takes their high bytes. The bytes must
  /// stay alive and unchanged until the decode that follows.
  /// @throws DecodeError for bytes that are not a readable PNG, too large an image, or a refused depth.
  PngInfo read_header(std::span<const std::byte> png) {
    auto& s = *s_;
    s.header_read = false;
    if (!is_png(png)) throw DecodeError("not a PNG file (no PNG signature)");
    s.data = png;
    s.at = 0;
    if (!header(s)) throw DecodeError(s.message);
    const auto pixels = static_cast<std::uint64_t>(s.header.width) * static_cast<std::uint64_t>(s.header.height);
    if (pixels > options_.max_image_pixels) {
      s.reset();
      throw DecodeError("image of " + std::to_string(s.header.width) + "x" + std::to_string(s.header.height) +
                        " pixels exceeds max_image_pixels (" + std::to_string(options_.max_image_pixels) + ")");
    }
    if (s.header.bit_depth == 16 && options_.sixteen_bit == SixteenBit::refuse) {
      s.reset();
      throw DecodeError("16-bit PNG: torchvision.io.decode_image decodes it to uint16, which conveyor's 8-bit samples "
                        "cannot keep exact (decode option sixteen_bit = high_byte takes each sample's high byte, as "
                        "Pillow's convert(\"RGB\") and torchvision's ImageFolder do)");
    }
    s.header_read = true;
    return s.header;
  }

  /// Decodes the window of `width` x `height` pixels at (`x`, `y`) of the image whose header was
  /// read last into `out` as RGB u8 (`width * 3` bytes per row, `row_stride` apart). Rows above
  /// the window are decoded and dropped (each depends on the one before); rows below it are never
  /// read, unless the image is interlaced (Adam7 spreads every row over the whole file).
  /// @throws DecodeError on corrupt data in the rows read, a window outside the image, or
  ///         without a header.
  void decode_region(int x, int y, int width, int height, std::uint8_t* out, std::size_t row_stride) {
    auto& s = *s_;
    if (!s.header_read) throw DecodeError("decoding a PNG window without a successful read_header()");
    s.header_read = false;
    const PngInfo& h = s.header;
    if (x < 0 || y < 0 || width <= 0 || height <= 0 || x + width > h.width || y + height > h.height) {
      s.reset();
      throw DecodeError("decode window " + std::to_string(width) + "x" + std::to_string(height) + "+" + std::to_string(x) +
                        "+" + std::to_string(y) + " is outside the " + std::to_string(h.width) + "x" +
                        std::to_string(h.height) + " PNG");
    }
    const std::size_t image_row = std::size_t(h.width) * 3;
    if (h.interlaced) {
      s.image.resize(image_row * std::size_t(h.height));
      s.rows.resize(std::size_t(h.height));
      for (int r = 0; r < h.height; ++r) s.rows[std::size_t(r)] = s.image.data() + std::size_t(r) * image_row;
    } else {
      s.row.resize(image_row);
    }
    if (!pixels(s, x, y, width, height, out, row_stride)) throw DecodeError(s.message);
  }

  /// Decodes the whole image (see `decode_region`).
  void decode(std::uint8_t* out, std::size_t row_stride) {
    decode_region(0, 0, s_->header.width, s_->header.height, out, row_stride);
  }

 private:
  // The two functions below are the only callers of libpng. Each sets the jump target and holds
  // nothing that needs a destructor, so a longjmp out of libpng is safe.
  static bool header(detail::PngState& s) noexcept {
    s.reset();
    s.png = png_create_read_struct(PNG_LIBPNG_VER_STRING, &s, detail::png_error_exit, detail::png_warning_ignored);
    if (!s.png) {
      std::snprintf(s.message, sizeof s.message, "libpng could not allocate its state");
      return false;
    }
    s.info = png_create_info_struct(s.png);
    if (!s.info) {
      std::snprintf(s.message, sizeof s.message, "libpng could not allocate its state");
      s.reset();
      return false;
    }
    if (setjmp(png_jmpbuf(s.png))) {
      s.reset();
      return false;
    }
    png_set_read_fn(s.png, &s, detail::png_read_from_memory);
    // Ancillary chunks the pixels do not need are skipped unread: libpng would otherwise allocate
    // a text or ICC chunk by its declared length before finding the data is not there (a 433-byte
    // file declaring a 1.9 GB iTXt took 1.8 GB and 2.8 s). Unknown chunks are skipped the same way.
    static constexpr png_byte skipped[] = "bKGD\0cHRM\0eXIf\0gAMA\0hIST\0iCCP\0iTXt\0oFFs\0pCAL\0pHYs\0sBIT\0"
                                          "sCAL\0sPLT\0sRGB\0tEXt\0tIME\0zTXt";
    png_set_keep_unknown_chunks(s.png, PNG_HANDLE_CHUNK_NEVER, nullptr, 0);
    png_set_keep_unknown_chunks(s.png, PNG_HANDLE_CHUNK_NEVER, skipped, static_cast<int>(sizeof skipped / 5));
    png_read_info(s.png, s.info);
    s.header.width = static_cast<int>(png_get_image_width(s.png, s.info));
    s.header.height = static_cast<int>(png_get_image_height(s.png, s.info));
    s.header.bit_depth = png_get_bit_depth(s.png, s.info);
    s.header.color_type = png_get_color_type(s.png, s.info);
    s.header.interlaced = png_get_interlace_type(s.png, s.info) != PNG_INTERLACE_NONE;
    return true;
  }

  static bool pixels(detail::PngState& s, int x, int y, int width, int height, std::uint8_t* out,
                     std::size_t row_stride) noexcept {
    if (setjmp(png_jmpbuf(s.png))) {
      s.reset();
      return false;
    }
    png_structp png = s.png;
    png_set_palette_to_rgb(png);
    png_set_expand_gray_1_2_4_to_8(png);
    png_set_strip_16(png);  // the high byte
    png_set_strip_alpha(png);
    png_set_gray_to_rgb(png);
    const std::size_t first = std::size_t(x) * 3, bytes = std::size_t(width) * 3;
    if (s.header.interlaced) {
      (void)png_set_interlace_handling(png);
      png_read_update_info(png, s.info);
      png_read_image(png, s.rows.data());
      for (int r = 0; r < height; ++r)
        std::memcpy(out + std::size_t(r) * row_stride, s.rows[std::size_t(y + r)] + first, bytes);
    } else {
      png_read_update_info(png, s.info);
      const bool whole_rows = x == 0 && width == s.header.width;
      for (int r = 0; r < y + height; ++r) {
        std::uint8_t* dst = r >= y && whole_rows ? out + std::size_t(r - y) * row_stride : s.row.data();
        png_read_row(png, dst, nullptr);
        if (r >= y && !whole_rows) std::memcpy(out + std::size_t(r - y) * row_stride, s.row.data() + first, bytes);
      }
    }
    s.reset();  // the rows below the window are never read
    return true;
  }

  DecodeOptions options_;
  std::unique_ptr<detail::PngState> s_;
};

}  // namespace v0
}  // namespace conveyor

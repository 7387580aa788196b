#pragma once
/// @file
/// The codecs behind one decoder: the format is detected from the bytes (never the name), the
/// header says what the codec can decode cheaply (DCT scales, column alignment of a window), and
/// a window is decoded into a caller's buffer as RGB u8. JPEG (libjpeg-turbo), PNG (libpng) and
/// binary PGM/PPM; other formats torchvision's ImageFolder lists are recognised and refused by
/// name. A codec is a file of io/ and a case here.

#include <conveyor/config.hpp>
#include <conveyor/core/error.hpp>
#include <conveyor/io/jpeg.hpp>
#include <conveyor/io/png.hpp>
#include <conveyor/io/pnm.hpp>

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace conveyor {
inline namespace v0 {

enum class ImageFormat : std::uint8_t { jpeg, png, pnm, bmp, gif, tiff, webp, unknown };

[[nodiscard]] constexpr std::string_view to_string(ImageFormat f) noexcept {
  switch (f) {
    case ImageFormat::jpeg: return "JPEG";
    case ImageFormat::png: return "PNG";
    case ImageFormat::pnm: return "PGM/PPM";
    case ImageFormat::bmp: return "BMP";
    case ImageFormat::gif: return "GIF";
    case ImageFormat::tiff: return "TIFF";
    case ImageFormat::webp: return "WebP";
    case ImageFormat::unknown: break;
  }
  return "unknown";
}

/// The format the first bytes say.
[[nodiscard]] inline ImageFormat detect_format(std::span<const std::byte> b) noexcept {
  const auto at = [&](std::size_t i) { return i < b.size() ? std::to_integer<unsigned char>(b[i]) : 0u; };
  const auto starts = [&](std::string_view magic, std::size_t offset = 0) {
    if (b.size() < offset + magic.size()) return false;
    for (std::size_t i = 0; i < magic.size(); ++i)
      if (at(offset + i) != static_cast<unsigned char>(magic[i])) return false;
    return true;
  };
  if (at(0) == 0xFF && at(1) == 0xD8) return ImageFormat::jpeg;
  if (is_png(b)) return ImageFormat::png;
  if (is_binary_pnm(b)) return ImageFormat::pnm;
  if (starts("BM")) return ImageFormat::bmp;
  if (starts("GIF87a") || starts("GIF89a")) return ImageFormat::gif;
  if (starts(std::string_view("II*\0", 4)) || starts(std::string_view("MM\0*", 4))) return ImageFormat::tiff;
  if (starts("RIFF") && starts("WEBP", 8)) return ImageFormat::webp;
  return ImageFormat::unknown;
}

/// What a codec's header says, in the terms a window plan needs.
struct ImageInfo {
  ImageFormat format = ImageFormat::unknown;
  int width = 0;
  int height = 0;
  int orientation = 1;  ///< Exif orientation (JPEG; 1 otherwise)
  bool scalable = false;  ///< decodes at 1/8, 1/4 and 1/2 of its size cheaply (JPEG's DCT scaling)
  int align = 1;          ///< a window's first column is a multiple of align * n / 8 at scale n/8
  int min_width = 1;      ///< the narrowest window decoded as a whole image's columns
  [[nodiscard]] int column_alignment(int scale_num) const noexcept {
    const int a = align * scale_num / 8;
    return a > 0 ? a : 1;
  }
};

/// One decoder for every codec: reusable, one per thread, not thread-safe, movable.
class ImageDecoder {
 public:
  explicit ImageDecoder(DecodeOptions options = {}) : jpeg_(options), png_(options), pnm_(options) {}

  void set_options(const DecodeOptions& options) noexcept {
    jpeg_.set_options(options);
    png_.set_options(options);
    pnm_.set_options(options);
  }

  /// Detects the format and reads the header (no pixel decoded; images above `max_image_pixels`
  /// refused). The bytes must stay alive and unchanged until the decode that follows.
  /// @throws DecodeError for bytes no codec here decodes, naming the format when it is known.
  ImageInfo read_header(std::span<const std::byte> bytes) {
    ImageInfo info;
    info.format = detect_format(bytes);
    format_ = info.format;
    switch (info.format) {
      case ImageFormat::jpeg: {
        const JpegInfo& j = jpeg_info_ = jpeg_.read_header(bytes);
        info.width = j.width;
        info.height = j.height;
        info.orientation = j.orientation;
        info.scalable = true;
        info.align = j.column_alignment(8);
        info.min_width = j.min_crop_width();
        return info;
      }
      case ImageFormat::png: {
        const PngInfo p = png_.read_header(bytes);
        info.width = p.width;
        info.height = p.height;
        return info;
      }
      case ImageFormat::pnm: {
        pnm_info_ = pnm_.read_header(bytes);
        info.width = pnm_info_.width;
        info.height = pnm_info_.height;
        return info;
      }
      case ImageFormat::unknown:
        // libjpeg says what the bytes start with ("Not a JPEG file: starts with 0x54 0x68", "Empty
        // input file"), and refuses them: what most mislabelled files are meant to be is JPEG.
        (void)jpeg_.read_header(bytes);
        throw DecodeError("not an image in a format conveyor decodes");
      default:
        throw DecodeError(std::string(to_string(info.format)) + " images are not decoded (JPEG, PNG, PGM and PPM are)");
    }
  }

  /// Decodes window `r` (at `r.scale_num`/8; a scale other than 8/8 only where `scalable`) of the
  /// image whose header was read last into `out`, RGB u8, `row_stride` bytes apart. For JPEG the
  /// window's first column must be aligned and its edge columns are upsampled as image edges
  /// (`JpegDecoder::decode_columns`); the other codecs decode any window exactly.
  /// @throws DecodeError on corrupt data, a window outside the image, or without a header.
  void decode_columns(const DecodeRegion& r, std::uint8_t* out, std::size_t row_stride) {
    switch (format_) {
      case ImageFormat::jpeg: jpeg_.decode_columns(r, out, row_stride); return;
      case ImageFormat::png: png_.decode_region(full(r).x, r.y, r.width, r.height, out, row_stride); return;
      case ImageFormat::pnm: pnm_.decode_region(full(r).x, r.y, r.width, r.height, out, row_stride); return;
      default: throw DecodeError("decoding a window without a successful read_header()");
    }
  }

  /// Decodes the whole image at full size (see `decode_columns`).
  void decode(std::uint8_t* out, std::size_t row_stride) {
    switch (format_) {
      case ImageFormat::jpeg: jpeg_.decode(out, row_stride); return;
      case ImageFormat::png: png_.decode(out, row_stride); return;
      case ImageFormat::pnm: pnm_.decode_region(0, 0, pnm_info_.width, pnm_info_.height, out, row_stride); return;
      default: throw DecodeError("decode() called without a successful read_header()");
    }
  }

  [[nodiscard]] JpegDecoder& jpeg() noexcept { return jpeg_; }
  /// The last JPEG header read (valid while `format()` is jpeg).
  [[nodiscard]] const JpegInfo& jpeg_info() const noexcept { return jpeg_info_; }
  [[nodiscard]] ImageFormat format() const noexcept { return format_; }

 private:
  /// Only JPEG decodes scaled: any other codec is asked for full size.
  static const DecodeRegion& full(const DecodeRegion& r) {
    if (r.scale_num != 8) throw DecodeError("only JPEG decodes at a DCT scale");
    return r;
  }

  JpegDecoder jpeg_;
  PngDecoder png_;
  PnmDecoder pnm_;
  PnmInfo pnm_info_;
  JpegInfo jpeg_info_;
  ImageFormat format_ = ImageFormat::unknown;
};

}  // namespace v0
}  // namespace conveyor

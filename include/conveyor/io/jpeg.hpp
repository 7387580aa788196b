#pragma once
/// @file
/// JPEG header parsing and decoding with libjpeg-turbo's libjpeg API.
///
/// libjpeg reports errors through a callback that must not return. conveyor's callback records
/// the message and `longjmp`s back into the one function that called libjpeg; those functions hold
/// only trivially destructible locals, so the jump never skips a C++ destructor, and the caller
/// throws `DecodeError` after libjpeg has been reset. Warnings (corrupt but decodable data) take
/// the same path unless decoding is lenient. Nothing is ever printed and `exit()` is never called.

#include <conveyor/config.hpp>
#include <conveyor/core/error.hpp>
#include <conveyor/io/decode_options.hpp>
#include <conveyor/io/exif.hpp>
#include <conveyor/io/jpeg_info.hpp>
#include <conveyor/io/jpeg_scans.hpp>

#include <array>
#include <csetjmp>
#include <cstddef>
#include <cstdint>
#include <cstdio>  // jpeglib.h needs FILE and size_t first
#include <cstring>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include <jpeglib.h>
#include <jerror.h>  // message codes

#if !defined(LIBJPEG_TURBO_VERSION_NUMBER) && !defined(LIBJPEG_TURBO_VERSION)
#error "conveyor needs libjpeg-turbo's jpeglib.h (Debian: libjpeg62-turbo-dev)"
#endif

namespace conveyor {
inline namespace v0 {

namespace detail {

struct JpegErrorManager {
  jpeg_error_mgr pub;  // first: libjpeg sees only this part
  std::jmp_buf jump;
  bool lenient;
  int warnings;
  int expected_warning;  // a warning code the decoder caused itself and ignores (-1: none)
  char message[JMSG_LENGTH_MAX];
};

[[noreturn]] inline void jpeg_error_exit(j_common_ptr cinfo) {
  auto* err = reinterpret_cast<JpegErrorManager*>(cinfo->err);
  (*cinfo->err->format_message)(cinfo, err->message);
  std::longjmp(err->jump, 1);
}

inline void jpeg_emit_message(j_common_ptr cinfo, int level) {
  if (level >= 0) return;  // trace messages
  auto* err = reinterpret_cast<JpegErrorManager*>(cinfo->err);
  if (cinfo->err->msg_code == err->expected_warning) return;
  ++err->warnings;
  if (err->lenient) return;
  (*cinfo->err->format_message)(cinfo, err->message);
  std::longjmp(err->jump, 1);
}

inline void jpeg_output_message(j_common_ptr) {}  // never print

/// libjpeg state that must not move (it points into itself), held behind a pointer.
struct JpegState {
  jpeg_decompress_struct cinfo{};
  JpegErrorManager err{};
  bool created = false;
  bool header_read = false;
  std::vector<JSAMPLE> cmyk_rows;  // scratch for CMYK/YCCK, converted to RGB row by row
  std::vector<JSAMPLE> window;     // decode_region's iMCU-aligned window, before the copy out
  std::span<const std::byte> data;  // the image whose header was read
  JpegInfo info;                    // and what its header said
  std::vector<unsigned char> stream;  // that image rewritten (jpeg_scans.hpp) for a progressive window
};

/// djpeg's CMYK -> RGB (Adobe CMYK is stored inverted): round(c * k / 255), in integers.
inline void cmyk_to_rgb(const JSAMPLE* in, std::uint8_t* out, std::size_t pixels) noexcept {
  for (std::size_t i = 0; i < pixels; ++i, in += 4, out += 3) {
    const unsigned k = in[3];
    out[0] = static_cast<std::uint8_t>((2u * in[0] * k + 255u) / 510u);
    out[1] = static_cast<std::uint8_t>((2u * in[1] * k + 255u) / 510u);
    out[2] = static_cast<std::uint8_t>((2u * in[2] * k + 255u) / 510u);
  }
}

}  // namespace detail

/// A reusable JPEG decoder. Create one per thread and decode many images with it: the libjpeg
/// object and scratch buffers are kept, so steady-state decoding allocates nothing of its own.
/// Not thread-safe; movable.
class JpegDecoder {
 public:
  explicit JpegDecoder(DecodeOptions options = {}) : options_(options), s_(std::make_unique<detail::JpegState>()) {
    auto& s = *s_;
    s.cinfo.err = jpeg_std_error(&s.err.pub);
    s.err.pub.error_exit = detail::jpeg_error_exit;
    s.err.pub.emit_message = detail::jpeg_emit_message;
    s.err.pub.output_message = detail::jpeg_output_message;
  }
  JpegDecoder(JpegDecoder&&) noexcept = default;
  JpegDecoder& operator=(JpegDecoder&&) noexcept = default;
  ~JpegDecoder() {
    if (s_ && s_->created) jpeg_destroy_decompress(&s_->cinfo);
  }

  [[nodiscard]] const DecodeOptions& options() const noexcept { return options_; }
  void set_options(const DecodeOptions& options) noexcept { options_ = options; }

  /// Parses the header of `jpeg` and prepares to decode it. `jpeg` must stay alive and unchanged
  /// until `decode()` returns or the next `read_header()`.
  /// @throws DecodeError when the bytes are not a decodable 8-bit JPEG, or the image has more
  ///         than `max_image_pixels` pixels.
  JpegInfo read_header(std::span<const std::byte> jpeg) {
    auto& s = *s_;
    s.err.lenient = options_.lenient;
    s.err.warnings = 0;
    s.err.expected_warning = -1;
    s.header_read = false;
    if (!header(s, jpeg.data(), jpeg.size())) throw DecodeError(s.err.message);
    s.data = jpeg;
    const auto& c = s.cinfo;
    JpegInfo info;
    info.width = static_cast<int>(c.image_width);
    info.height = static_cast<int>(c.image_height);
    info.components = c.num_components;
    info.progressive = c.progressive_mode != 0;
    info.arithmetic = c.arith_code != 0;
    switch (c.jpeg_color_space) {
      case JCS_GRAYSCALE: info.color = JpegColor::gray; break;
      case JCS_YCbCr: info.color = JpegColor::ycbcr; break;
      case JCS_RGB: info.color = JpegColor::rgb; break;
      case JCS_CMYK: info.color = JpegColor::cmyk; break;
      case JCS_YCCK: info.color = JpegColor::ycck; break;
      default: info.color = JpegColor::unknown; break;
    }
    for (std::size_t i = 0; i < std::size_t(c.num_components) && i < 4; ++i) {
      info.h_sampling[i] = static_cast<std::uint8_t>(c.comp_info[i].h_samp_factor);
      info.v_sampling[i] = static_cast<std::uint8_t>(c.comp_info[i].v_samp_factor);
    }
    info.orientation = exif_orientation(jpeg);
    const auto pixels = static_cast<std::uint64_t>(info.width) * static_cast<std::uint64_t>(info.height);
    std::string refusal;
    if (c.data_precision != 8)
      refusal = "unsupported sample precision " + std::to_string(c.data_precision) + " (only 8-bit JPEG is decoded)";
    else if (info.color == JpegColor::unknown)
      refusal = "unsupported colour space with " + std::to_string(info.components) + " components";
    else if (pixels > options_.max_image_pixels)
      refusal = "image of " + std::to_string(info.width) + "x" + std::to_string(info.height) +
                " pixels exceeds max_image_pixels (" + std::to_string(options_.max_image_pixels) + ")";
    if (!refusal.empty()) {
      jpeg_abort_decompress(&s.cinfo);
      throw DecodeError(refusal);
    }
    s.header_read = true;
    s.info = info;
    return info;
  }

  /// Decodes the image whose header was read last into `out` as RGB u8, `width * 3` bytes per row
  /// and `row_stride` bytes between rows. Grayscale becomes 3 equal channels; CMYK/YCCK are
  /// converted as libjpeg-turbo's djpeg does.
  /// @throws DecodeError on corrupt data (warnings too, unless lenient), or without a header.
  void decode(std::uint8_t* out, std::size_t row_stride) {
    auto& s = *s_;
    if (!s.header_read) throw DecodeError("decode() called without a successful read_header()");
    s.header_read = false;
    const bool cmyk = s.cinfo.jpeg_color_space == JCS_CMYK || s.cinfo.jpeg_color_space == JCS_YCCK;
    if (cmyk) s.cmyk_rows.resize(std::size_t{s.cinfo.image_width} * 4 * max_rows);
    if (!pixels(s, out, row_stride, cmyk)) throw DecodeError(s.err.message);
  }

  /// Decodes only `r` of the image whose header was read last, at `r.scale_num`/8, into `out` as
  /// RGB u8 (`r.width * 3` bytes per row, `row_stride` apart): the columns `crop_columns` names
  /// are decoded, then the window is copied out, so at full scale the result is bit-identical to
  /// the same window of a full decode. `decode_columns` avoids the copy.
  /// @throws DecodeError on corrupt data in the rows read, a window outside the scaled image, or
  ///         without a header.
  void decode_region(const DecodeRegion& r, std::uint8_t* out, std::size_t row_stride) {
    auto& s = *s_;
    if (!s.header_read) throw DecodeError("decoding a window without a successful read_header()");
    const int sw = scaled_size(static_cast<int>(s.cinfo.image_width), r.scale_num);
    const auto cols = crop_columns(r.x, r.width, sw, s.info.column_alignment(r.scale_num), s.info.min_crop_width());
    const int width = cols[1] - cols[0];
    if (r.x < 0 || r.width <= 0 || r.x + r.width > sw) cols_checked(r, sw);  // throws, naming the window
    s.window.resize(std::size_t(width) * 3 * std::size_t(r.height > 0 ? r.height : 0));
    decode_columns({cols[0], r.y, width, r.height, r.scale_num}, s.window.data(), std::size_t(width) * 3);
    for (int row = 0; row < r.height; ++row)
      std::memcpy(out + std::size_t(row) * row_stride, s.window.data() + (std::size_t(row) * std::size_t(width) + std::size_t(r.x - cols[0])) * 3,
                  std::size_t(r.width) * 3);
  }

  /// Decodes window `r` straight into `out`, without a copy: `r.x` must be a multiple of
  /// `JpegInfo::column_alignment(r.scale_num)` and the window at least `min_crop_width()` wide
  /// (or the whole width). Unlike `decode_region`, the window's first column (when `r.x > 0`) and
  /// last column (when it ends inside the image) are upsampled as image edges: callers keep them
  /// outside what they use.
  /// @throws DecodeError on corrupt data in the rows read, a misaligned or outside window, or
  ///         without a header.
  void decode_columns(const DecodeRegion& r, std::uint8_t* out, std::size_t row_stride) {
    auto& s = *s_;
    if (!s.header_read) throw DecodeError("decoding a window without a successful read_header()");
    const int sw = scaled_size(static_cast<int>(s.cinfo.image_width), r.scale_num);
    const int sh = scaled_size(static_cast<int>(s.cinfo.image_height), r.scale_num);
    if (r.scale_num < 1 || r.scale_num > 8 || r.width <= 0 || r.height <= 0 || r.x < 0 || r.y < 0 ||
        r.x + r.width > sw || r.y + r.height > sh || r.x % s.info.column_alignment(r.scale_num) != 0)
      cols_checked(r, sw);
    s.header_read = false;
    const bool cmyk = s.cinfo.jpeg_color_space == JCS_CMYK || s.cinfo.jpeg_color_space == JCS_YCCK;
    if (cmyk) s.cmyk_rows.resize(std::size_t(r.width) * 4 * max_rows);
    if (s.cinfo.progressive_mode) progressive_stream(r, sh);
    if (!columns(s, r, out, row_stride, cmyk)) throw DecodeError(s.err.message);
  }

  /// Warnings libjpeg raised during the last image (only non-zero when lenient).
  [[nodiscard]] int warnings() const noexcept { return s_->err.warnings; }

 private:
  static constexpr int max_rows = 16;

  /// A progressive file is entropy-decoded whole before its first row comes out: re-reads the
  /// header from a rewritten stream (jpeg_scans.hpp) that needs less of that for window `r` of an
  /// image `scaled_height` rows high at its scale. At 1/8 the stream keeps only the DC scans of
  /// the components that read nothing else. Above the bottom of a Huffman-coded file (arithmetic
  /// coding is rare and not tried), the frame ends one iMCU row below the window's last (so
  /// upsampling sees the rows below it that it sees in the whole image), and libjpeg-turbo skips
  /// each scan's data below that as extraneous bytes, a warning expected here (so stray bytes the
  /// file itself has between scans pass unremarked too, as corruption below a window does).
  /// Either way the window's pixels are those of the whole file; where the stream cannot be
  /// rewritten, the original is decoded.
  void progressive_stream(const DecodeRegion& r, int scaled_height) {
    auto& s = *s_;
    const bool dc_only = options_.dc_scans_at_eighth && r.scale_num == 1 && drop_ac_scans(s.data, s.stream);
    const int imcu = 8 * s.cinfo.max_v_samp_factor;  // full-size rows per iMCU row
    const int last_imcu = (r.y + r.height - 1) / (s.cinfo.max_v_samp_factor * r.scale_num);
    const long long rows = (static_cast<long long>(last_imcu) + 2) * imcu;
    const bool cut = !s.cinfo.arith_code && r.y + r.height < scaled_height &&
                     rows < static_cast<long long>(s.cinfo.image_height);
    if (cut && !dc_only) {
      const auto* p = reinterpret_cast<const unsigned char*>(s.data.data());
      s.stream.assign(p, p + s.data.size());
    }
    const bool shortened = cut && set_frame_height(s.stream, static_cast<int>(rows));
    if (!dc_only && !shortened) return;
    if (!header(s, reinterpret_cast<const std::byte*>(s.stream.data()), s.stream.size())) throw DecodeError(s.err.message);
    if (dc_only) s.cinfo.do_block_smoothing = FALSE;  // it would estimate the missing AC terms, which 1/8 never reads
    if (shortened) s.err.expected_warning = JWRN_EXTRANEOUS_DATA;
  }

  // The two functions below are the only callers of libjpeg. Each sets the jump target and holds
  // nothing that needs a destructor, so a longjmp out of libjpeg is safe.
  // A fresh libjpeg object per image: an aborted one keeps the previous image's quantization and
  // Huffman tables, and a corrupt file that lacks its own would then decode with those, making the
  // result depend on what the thread decoded before. Recreating costs a few small allocations.
  static bool header(detail::JpegState& s, const std::byte* data, std::size_t size) noexcept {
    if (setjmp(s.err.jump)) {
      if (s.created) jpeg_abort_decompress(&s.cinfo);
      return false;
    }
    if (s.created) jpeg_destroy_decompress(&s.cinfo);
    s.created = false;
    jpeg_create_decompress(&s.cinfo);
    s.created = true;
    jpeg_mem_src(&s.cinfo, reinterpret_cast<const unsigned char*>(data), static_cast<unsigned long>(size));
    jpeg_read_header(&s.cinfo, TRUE);
    return true;
  }

  static bool pixels(detail::JpegState& s, std::uint8_t* out, std::size_t row_stride, bool cmyk) noexcept {
    if (setjmp(s.err.jump)) {
      jpeg_abort_decompress(&s.cinfo);
      return false;
    }
    auto& c = s.cinfo;
    c.out_color_space = cmyk ? JCS_CMYK : JCS_RGB;
    jpeg_start_decompress(&c);
    JSAMPROW rows[max_rows];
    while (c.output_scanline < c.output_height) {
      const JDIMENSION first = c.output_scanline;
      const JDIMENSION want = c.output_height - first < JDIMENSION{max_rows} ? c.output_height - first : max_rows;
      for (JDIMENSION r = 0; r < want; ++r)
        rows[r] = cmyk ? s.cmyk_rows.data() + std::size_t{r} * c.output_width * 4 : out + (first + r) * row_stride;
      const JDIMENSION got = jpeg_read_scanlines(&c, rows, want);
      if (cmyk)
        for (JDIMENSION r = 0; r < got; ++r) detail::cmyk_to_rgb(rows[r], out + (first + r) * row_stride, c.output_width);
    }
    jpeg_finish_decompress(&c);
    return true;
  }

  /// Refuses window `r`: resets libjpeg and throws, naming the window and the image.
  [[noreturn]] void cols_checked(const DecodeRegion& r, int scaled_width) {
    auto& s = *s_;
    s.header_read = false;
    jpeg_abort_decompress(&s.cinfo);
    const int sh = scaled_size(static_cast<int>(s.cinfo.image_height), r.scale_num);
    throw DecodeError("decode window " + std::to_string(r.width) + "x" + std::to_string(r.height) + "+" +
                      std::to_string(r.x) + "+" + std::to_string(r.y) + " at " + std::to_string(r.scale_num) +
                      "/8 is not an aligned window inside the " + std::to_string(scaled_width) + "x" +
                      std::to_string(sh) + " image (columns start at multiples of " +
                      std::to_string(s.info.column_alignment(r.scale_num)) + ")");
  }

  static bool columns(detail::JpegState& s, const DecodeRegion& r, std::uint8_t* out, std::size_t row_stride,
                      bool cmyk) noexcept {
    if (setjmp(s.err.jump)) {
      jpeg_abort_decompress(&s.cinfo);
      return false;
    }
    auto& c = s.cinfo;
    c.out_color_space = cmyk ? JCS_CMYK : JCS_RGB;
    c.scale_num = static_cast<unsigned>(r.scale_num);
    c.scale_denom = 8;
    jpeg_start_decompress(&c);
    JDIMENSION xoffset = static_cast<JDIMENSION>(r.x), width = static_cast<JDIMENSION>(r.width);
    if (width < c.output_width) jpeg_crop_scanline(&c, &xoffset, &width);  // aligned: nothing moves
    if (r.y > 0) jpeg_skip_scanlines(&c, static_cast<JDIMENSION>(r.y));
    JSAMPROW rows[max_rows];
    for (int done = 0; done < r.height;) {
      const int want = r.height - done < max_rows ? r.height - done : max_rows;
      for (int k = 0; k < want; ++k)
        rows[k] = cmyk ? s.cmyk_rows.data() + std::size_t(k) * std::size_t(r.width) * 4 : out + std::size_t(done + k) * row_stride;
      const auto got = static_cast<int>(jpeg_read_scanlines(&c, rows, static_cast<JDIMENSION>(want)));
      if (cmyk)
        for (int k = 0; k < got; ++k)
          detail::cmyk_to_rgb(rows[k], out + std::size_t(done + k) * row_stride, static_cast<std::size_t>(r.width));
      done += got;
    }
    jpeg_abort_decompress(&c);  // the rows below the window are never read
    return true;
  }

  DecodeOptions options_;
  std::unique_ptr<detail::JpegState> s_;
};

/// An RGB u8 image in HWC order with rows packed (`width * 3` bytes each).
struct RgbImage {
  int width = 0;
  int height = 0;
  std::vector<std::uint8_t> pixels;
};

/// Decodes a whole JPEG into a new RGB image: a convenience for tools and tests; pipelines reuse
/// a `JpegDecoder` and their own buffers instead.
/// @throws DecodeError as `JpegDecoder` does.
[[nodiscard]] inline RgbImage decode_jpeg(std::span<const std::byte> jpeg, DecodeOptions options = {}) {
  JpegDecoder decoder(options);
  const JpegInfo info = decoder.read_header(jpeg);
  RgbImage img{info.width, info.height, {}};
  img.pixels.resize(std::size_t(info.width) * std::size_t(info.height) * 3);
  decoder.decode(img.pixels.data(), std::size_t(info.width) * 3);
  return img;
}

}  // namespace v0
}  // namespace conveyor

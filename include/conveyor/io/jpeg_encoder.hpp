#pragma once
/// @file
/// JPEG encoding with libjpeg-turbo, for tools (datasets, contact sheets) and test fixtures.
/// Same error discipline as the decoder: libjpeg errors longjmp back to a function with only
/// trivially destructible locals, which then throws.

#include <conveyor/config.hpp>
#include <conveyor/core/error.hpp>

#include <csetjmp>
#include <cstddef>
#include <cstdint>
#include <cstdio>  // jpeglib.h needs FILE and size_t first
#include <cstdlib>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include <jpeglib.h>

namespace conveyor {
inline namespace v0 {

/// Chroma subsampling of an encoded JPEG.
enum class ChromaSubsampling : std::uint8_t { s444, s422, s420 };

/// How to encode.
struct EncodeOptions {
  int quality = 90;  ///< 1..100
  ChromaSubsampling subsampling = ChromaSubsampling::s420;
  bool progressive = false;
  bool arithmetic = false;
  int restart_rows = 0;  ///< restart marker every this many MCU rows (0: none)
};

namespace detail {

struct JpegEncodeState {
  jpeg_compress_struct cinfo{};
  jpeg_error_mgr err{};
  std::jmp_buf jump;
  char message[JMSG_LENGTH_MAX];
  unsigned char* out = nullptr;  // malloc'ed by jpeg_mem_dest; here, not a local, so it survives a longjmp
  unsigned long out_size = 0;
  bool created = false;
};

[[noreturn]] inline void jpeg_encode_error_exit(j_common_ptr cinfo) {
  // cinfo is the first member of JpegEncodeState.
  auto* s = reinterpret_cast<JpegEncodeState*>(cinfo);
  (*cinfo->err->format_message)(cinfo, s->message);
  std::longjmp(s->jump, 1);
}

inline bool jpeg_encode_rows(JpegEncodeState& s, const std::uint8_t* pixels, int width, int height, int channels,
                             std::size_t row_stride, const EncodeOptions& o) noexcept {
  if (setjmp(s.jump)) return false;
  auto& c = s.cinfo;
  jpeg_create_compress(&c);
  s.created = true;
  jpeg_mem_dest(&c, &s.out, &s.out_size);
  c.image_width = static_cast<JDIMENSION>(width);
  c.image_height = static_cast<JDIMENSION>(height);
  c.input_components = channels;
  c.in_color_space = channels == 1 ? JCS_GRAYSCALE : JCS_RGB;
  jpeg_set_defaults(&c);
  jpeg_set_quality(&c, o.quality, TRUE);
  if (channels == 3) {
    const int h = o.subsampling == ChromaSubsampling::s444 ? 1 : 2;
    const int v = o.subsampling == ChromaSubsampling::s420 ? 2 : 1;
    c.comp_info[0].h_samp_factor = h;
    c.comp_info[0].v_samp_factor = v;
  }
  c.arith_code = o.arithmetic ? TRUE : FALSE;
  c.restart_in_rows = o.restart_rows;
  if (o.progressive) jpeg_simple_progression(&c);
  jpeg_start_compress(&c, TRUE);
  while (c.next_scanline < c.image_height) {
    JSAMPROW row = const_cast<JSAMPROW>(pixels + std::size_t{c.next_scanline} * row_stride);
    jpeg_write_scanlines(&c, &row, 1);
  }
  jpeg_finish_compress(&c);
  return true;
}

}  // namespace detail

/// Encodes `height` rows of `width` pixels with `channels` (1: gray, 3: RGB) interleaved u8
/// samples, `row_stride` bytes apart.
/// @throws ConfigError for impossible arguments, Error when libjpeg fails.
[[nodiscard]] inline std::vector<std::byte> encode_jpeg(const std::uint8_t* pixels, int width, int height, int channels,
                                                       std::size_t row_stride, const EncodeOptions& options = {}) {
  CONVEYOR_EXPECTS(width > 0 && height > 0, "encode_jpeg: empty image");
  CONVEYOR_EXPECTS(channels == 1 || channels == 3, "encode_jpeg: channels must be 1 or 3");
  CONVEYOR_EXPECTS(options.quality >= 1 && options.quality <= 100, "encode_jpeg: quality out of range");
  detail::JpegEncodeState s;
  s.cinfo.err = jpeg_std_error(&s.err);
  s.err.error_exit = detail::jpeg_encode_error_exit;
  const bool ok = detail::jpeg_encode_rows(s, pixels, width, height, channels, row_stride, options);
  const std::unique_ptr<unsigned char, void (*)(void*)> owned(s.out, &std::free);
  if (s.created) jpeg_destroy_compress(&s.cinfo);
  if (!ok) throw Error(std::string("JPEG encoding failed: ") + s.message);
  const auto* b = reinterpret_cast<const std::byte*>(owned.get());
  std::vector<std::byte> out(b, b + s.out_size);
  return out;
}

}  // namespace v0
}  // namespace conveyor

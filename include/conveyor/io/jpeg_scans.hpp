#pragma once
/// @file
/// Rewriting a progressive JPEG so that libjpeg-turbo decodes less of it. Every scan of a
/// progressive file covers the whole image, and libjpeg-turbo entropy-decodes them all before the
/// first row comes out, whatever window is asked for.
///
/// Dropping AC scans: at 1/8 scale libjpeg-turbo decodes a full-resolution component with a 1x1
/// inverse DCT, which reads only the DC coefficient of each block, so a stream without that
/// component's AC scans decodes at 1/8 to the same pixels, while their Huffman decoding, most of a
/// progressive file's decode time, is skipped. A subsampled component whose scaled IDCT is larger
/// (4:2:0 chroma gets 2x2, which stands in for upsampling) keeps its AC scans.
///
/// Cutting the frame height: with a smaller height in the frame header, every scan is decoded
/// down to that row only (the rows below a window are never needed).
///
/// Finding the scans only looks for markers (0xFF not followed by a stuffed 0x00 or a restart
/// marker); every read is bounds-checked.

#include <conveyor/config.hpp>

#include <cstddef>
#include <cstdint>
#include <algorithm>
#include <cstring>
#include <span>
#include <vector>

namespace conveyor {
inline namespace v0 {

namespace detail {

/// A marker segment of a JPEG: its marker, the offset of its 0xFF, and the end of its header (for
/// a standalone marker, of its two bytes; a scan's entropy-coded data follows its header).
struct Segment {
  unsigned char marker = 0;
  std::size_t begin = 0, end = 0;
};

/// Reads the marker segment at `at` of the `n` bytes at `p`, after any fill bytes. Returns false
/// when no well-formed segment starts there (not a marker, or a length past the end).
inline bool read_segment(const unsigned char* p, std::size_t n, std::size_t at, Segment& s) {
  while (at + 1 < n && p[at] == 0xFF && p[at + 1] == 0xFF) ++at;  // fill bytes
  if (at + 2 > n || p[at] != 0xFF) return false;
  s.marker = p[at + 1];
  s.begin = at;
  if (s.marker == 0x01 || (s.marker >= 0xD0 && s.marker <= 0xD7) || s.marker == 0xD9) {  // standalone, EOI
    s.end = at + 2;
    return true;
  }
  if (at + 4 > n) return false;
  const std::size_t length = std::size_t{p[at + 2]} << 8 | p[at + 3];
  if (length < 2 || at + 2 + length > n) return false;
  s.end = at + 2 + length;
  return true;
}

/// SOF0-SOF15 but DHT, JPG and DAC, which share the range.
[[nodiscard]] constexpr bool frame_header(unsigned char marker) noexcept {
  return marker >= 0xC0 && marker <= 0xCF && marker != 0xC4 && marker != 0xC8 && marker != 0xCC;
}

}  // namespace detail

/// Writes to `out` the JPEG `in` without the AC scans (spectral start Ss > 0) of the components
/// that libjpeg-turbo decodes with a 1x1 IDCT at 1/8 scale.
/// Returns false, leaving `out` unspecified, when `in` is not a well-formed marker sequence up to
/// its EOI (the caller then decodes `in` as it is, and meets the same error there).
inline bool drop_ac_scans(std::span<const std::byte> in, std::vector<unsigned char>& out) {
  const auto* p = reinterpret_cast<const unsigned char*>(in.data());
  const std::size_t n = in.size();
  const auto append = [&out](const unsigned char* from, std::size_t count) {
    const std::size_t at = out.size();
    out.resize(at + count);
    std::memcpy(out.data() + at, from, count);
  };
  out.clear();
  if (n < 4 || p[0] != 0xFF || p[1] != 0xD8) return false;
  append(p, 2);
  // From the frame header: which component ids decode with a 1x1 IDCT at 1/8. libjpeg-turbo
  // doubles a component's IDCT size while max_samp % (samp * size * 2) == 0 on both axes.
  int ids[4] = {-1, -1, -1, -1};
  bool one_by_one[4] = {false, false, false, false};
  bool frame = false;
  detail::Segment segment;
  for (std::size_t at = 2; detail::read_segment(p, n, at, segment); at = segment.end) {
    const unsigned char marker = segment.marker;
    const std::size_t length = segment.end - segment.begin - 2;  // of the header, as its field says
    const unsigned char* body = p + segment.begin + 4;
    if (marker == 0xD9) {  // EOI
      append(p + segment.begin, 2);
      return true;
    }
    bool keep = true;
    if (detail::frame_header(marker)) {
      const std::size_t components = length >= 8 ? body[5] : 0;
      if (components < 1 || components > 4 || length < 8 + 3 * components) return false;
      int max_h = 1, max_v = 1;
      for (std::size_t c = 0; c < components; ++c) {
        max_h = std::max(max_h, body[7 + 3 * c] >> 4);
        max_v = std::max(max_v, body[7 + 3 * c] & 15);
      }
      for (std::size_t c = 0; c < components; ++c) {
        const int h = body[7 + 3 * c] >> 4, v = body[7 + 3 * c] & 15;
        ids[c] = body[6 + 3 * c];
        one_by_one[c] = h == 0 || v == 0 || max_h % (h * 2) != 0 || max_v % (v * 2) != 0;
      }
      frame = true;
    }
    if (marker == 0xDA) {  // SOS: its entropy-coded data runs to the next real marker
      const std::size_t components = length >= 3 ? body[0] : 0;
      if (!frame || length < 6 + 2 * components) return false;
      if (body[1 + 2 * components] != 0 && components == 1)  // an AC scan (they hold one component)
        for (int c = 0; c < 4; ++c)
          if (ids[c] == body[1] && one_by_one[c]) keep = false;
      std::size_t& end = segment.end;
      for (;;) {
        const void* ff = std::memchr(p + end, 0xFF, n - end);
        if (!ff) return false;
        end = static_cast<std::size_t>(static_cast<const unsigned char*>(ff) - p);
        if (end + 1 >= n) return false;
        const unsigned char next = p[end + 1];
        if (next != 0x00 && !(next >= 0xD0 && next <= 0xD7)) break;
        end += 2;
      }
    }
    if (keep) append(p + segment.begin, segment.end - segment.begin);
  }
  return false;
}

/// Sets the frame height of the JPEG in `jpeg` (its frame header, SOFn) to `height`, in place.
/// libjpeg-turbo then decodes every scan of a progressive file only down to that row, and skips
/// the rest of each scan's data to the next marker (warning JWRN_EXTRANEOUS_DATA, once a scan).
/// Returns false, leaving `jpeg` unchanged, when no frame header comes before the first scan,
/// the header is malformed, or it holds no height (0: the height is in a DNL marker after the
/// first scan).
inline bool set_frame_height(std::vector<unsigned char>& jpeg, int height) {
  unsigned char* p = jpeg.data();
  const std::size_t n = jpeg.size();
  if (height < 1 || height > 0xFFFF || n < 4 || p[0] != 0xFF || p[1] != 0xD8) return false;
  detail::Segment segment;
  for (std::size_t at = 2; detail::read_segment(p, n, at, segment); at = segment.end) {
    if (segment.marker == 0xDA || segment.marker == 0xD9) return false;  // a scan or the end before any frame
    if (!detail::frame_header(segment.marker)) continue;
    unsigned char* rows = p + segment.begin + 5;
    if (segment.end - segment.begin < 10 || (rows[0] == 0 && rows[1] == 0)) return false;
    rows[0] = static_cast<unsigned char>(height >> 8);
    rows[1] = static_cast<unsigned char>(height & 0xFF);
    return true;
  }
  return false;
}

}  // namespace v0
}  // namespace conveyor

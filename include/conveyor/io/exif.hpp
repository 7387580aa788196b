#pragma once
/// @file
/// Reads the Exif orientation tag straight from a JPEG's marker segments, without libjpeg and
/// without copying: every offset is bounds-checked, so any byte string is safe input.

#include <conveyor/config.hpp>

#include <cstddef>
#include <cstdint>
#include <span>

namespace conveyor {
inline namespace v0 {

namespace detail {

struct ExifReader {
  const std::byte* p;
  std::size_t n;
  bool little;

  [[nodiscard]] bool u16(std::size_t at, std::uint32_t& v) const noexcept {
    if (at > n || n - at < 2) return false;
    const auto a = std::to_integer<std::uint32_t>(p[at]), b = std::to_integer<std::uint32_t>(p[at + 1]);
    v = little ? (b << 8 | a) : (a << 8 | b);
    return true;
  }
  [[nodiscard]] bool u32(std::size_t at, std::uint32_t& v) const noexcept {
    std::uint32_t hi = 0, lo = 0;
    if (!u16(at, little ? lo : hi) || !u16(at + 2, little ? hi : lo)) return false;
    v = hi << 16 | lo;
    return true;
  }
};

/// Orientation (1..8) from a TIFF structure (the Exif payload after "Exif\0\0"), or 1.
[[nodiscard]] inline int tiff_orientation(const std::byte* tiff, std::size_t size) noexcept {
  if (size < 8) return 1;
  const auto b0 = std::to_integer<unsigned>(tiff[0]), b1 = std::to_integer<unsigned>(tiff[1]);
  if (b0 != b1 || (b0 != 'I' && b0 != 'M')) return 1;
  const ExifReader r{tiff, size, b0 == 'I'};
  std::uint32_t magic = 0, ifd = 0, count = 0;
  if (!r.u16(2, magic) || magic != 42 || !r.u32(4, ifd) || !r.u16(ifd, count)) return 1;
  for (std::uint32_t i = 0; i < count; ++i) {
    const std::size_t entry = std::size_t{ifd} + 2 + std::size_t{i} * 12;
    std::uint32_t tag = 0, type = 0, value = 0;
    if (!r.u16(entry, tag) || !r.u16(entry + 2, type)) return 1;
    if (tag != 0x0112) continue;
    if (type != 3 || !r.u16(entry + 8, value)) return 1;  // SHORT, stored in the entry itself
    return (value >= 1 && value <= 8) ? static_cast<int>(value) : 1;
  }
  return 1;
}

}  // namespace detail

/// The Exif orientation of a JPEG (1..8; 1, "upright", when there is no valid tag). Reads the
/// marker segments up to the first frame header; never throws.
[[nodiscard]] inline int exif_orientation(std::span<const std::byte> jpeg) noexcept {
  const std::byte* p = jpeg.data();
  const std::size_t n = jpeg.size();
  if (n < 4 || p[0] != std::byte{0xFF} || p[1] != std::byte{0xD8}) return 1;
  std::size_t at = 2;
  while (at + 4 <= n) {
    if (p[at] != std::byte{0xFF}) return 1;
    const auto marker = std::to_integer<unsigned>(p[at + 1]);
    if (marker == 0xFF) {  // fill byte
      ++at;
      continue;
    }
    if (marker == 0xDA || (marker >= 0xC0 && marker <= 0xCF && marker != 0xC4 && marker != 0xC8 && marker != 0xCC))
      return 1;  // SOS or a frame header: Exif comes before them
    const std::size_t len = std::to_integer<std::size_t>(p[at + 2]) << 8 | std::to_integer<std::size_t>(p[at + 3]);
    if (len < 2 || at + 2 + len > n) return 1;
    const std::byte* seg = p + at + 4;
    const std::size_t seg_len = len - 2;
    static constexpr unsigned char exif_id[6] = {'E', 'x', 'i', 'f', 0, 0};
    if (marker == 0xE1 && seg_len > 6) {
      bool is_exif = true;
      for (int i = 0; i < 6; ++i) is_exif = is_exif && std::to_integer<unsigned char>(seg[i]) == exif_id[i];
      if (is_exif) return detail::tiff_orientation(seg + 6, seg_len - 6);
    }
    at += 2 + len;
  }
  return 1;
}

}  // namespace v0
}  // namespace conveyor

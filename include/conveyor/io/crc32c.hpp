#pragma once
/// @file
/// CRC-32C (Castagnoli), as TFRecord frames its records: SSE4.2's crc32 instruction where the CPU
/// has it (about 10 GB/s a core, so checking every record costs nothing next to decoding it),
/// eight table lookups a byte otherwise.

#include <conveyor/config.hpp>

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <nmmintrin.h>
#define CONVEYOR_CRC32C_SSE42 1
#endif

namespace conveyor {
inline namespace v0 {
namespace detail {

inline constexpr std::uint32_t crc32c_polynomial = 0x82F63B78u;  // reflected

constexpr std::array<std::uint32_t, 256> crc32c_table() noexcept {
  std::array<std::uint32_t, 256> t{};
  for (std::uint32_t i = 0; i < 256; ++i) {
    std::uint32_t c = i;
    for (int k = 0; k < 8; ++k) c = c & 1 ? (c >> 1) ^ crc32c_polynomial : c >> 1;
    t[i] = c;
  }
  return t;
}

inline std::uint32_t crc32c_portable(std::uint32_t crc, const unsigned char* p, std::size_t n) noexcept {
  static constexpr std::array<std::uint32_t, 256> table = crc32c_table();
  for (std::size_t i = 0; i < n; ++i) crc = table[(crc ^ p[i]) & 0xFF] ^ (crc >> 8);
  return crc;
}

#ifdef CONVEYOR_CRC32C_SSE42
__attribute__((target("sse4.2"))) inline std::uint32_t crc32c_sse42(std::uint32_t crc, const unsigned char* p,
                                                                     std::size_t n) noexcept {
  std::uint64_t c = crc;
  for (; n >= 8; n -= 8, p += 8) {
    std::uint64_t word;
    std::memcpy(&word, p, 8);
    c = _mm_crc32_u64(c, word);
  }
  auto c32 = static_cast<std::uint32_t>(c);
  for (; n > 0; --n, ++p) c32 = _mm_crc32_u8(c32, *p);
  return c32;
}
#endif

}  // namespace detail

/// CRC-32C of `n` bytes at `data`.
[[nodiscard]] inline std::uint32_t crc32c(const void* data, std::size_t n) noexcept {
  const auto* p = static_cast<const unsigned char*>(data);
#ifdef CONVEYOR_CRC32C_SSE42
  static const bool sse42 = __builtin_cpu_supports("sse4.2");
  if (sse42) return ~detail::crc32c_sse42(~0u, p, n);
#endif
  return ~detail::crc32c_portable(~0u, p, n);
}

/// TFRecord's masked CRC: ((crc >> 15) | (crc << 17)) + 0xa282ead8.
[[nodiscard]] inline std::uint32_t masked_crc32c(const void* data, std::size_t n) noexcept {
  const std::uint32_t crc = crc32c(data, n);
  return ((crc >> 15) | (crc << 17)) + 0xa282ead8u;
}

}  // namespace v0
}  // namespace conveyor

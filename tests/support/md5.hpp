#pragma once
// MD5 (RFC 1321), only to compare decodes with the checksums recorded next to the test images.

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace conveyor_test {

class Md5 {
 public:
  void update(const void* data, std::size_t n) {
    const auto* p = static_cast<const std::uint8_t*>(data);
    total_ += n;
    while (n > 0) {
      const std::size_t take = std::min(n, 64 - fill_);
      std::memcpy(buf_ + fill_, p, take);
      fill_ += take;
      p += take;
      n -= take;
      if (fill_ == 64) {
        block(buf_);
        fill_ = 0;
      }
    }
  }
  std::string hex() {
    const std::uint64_t bits = total_ * 8;
    const std::uint8_t pad = 0x80;
    update(&pad, 1);
    const std::uint8_t zero = 0;
    while (fill_ != 56) update(&zero, 1);
    std::uint8_t len[8];
    for (int i = 0; i < 8; ++i) len[i] = static_cast<std::uint8_t>(bits >> (8 * i));
    update(len, 8);
    std::string out;
    const char* digits = "0123456789abcdef";
    for (std::uint32_t v : h_)
      for (int i = 0; i < 4; ++i) {
        const auto b = static_cast<std::uint8_t>(v >> (8 * i));
        out += digits[b >> 4];
        out += digits[b & 15];
      }
    return out;
  }

 private:
  static std::uint32_t rotl(std::uint32_t x, int c) { return (x << c) | (x >> (32 - c)); }
  void block(const std::uint8_t* b) {
    static constexpr int r[64] = {7, 12, 17, 22, 7, 12, 17, 22, 7, 12, 17, 22, 7, 12, 17, 22, 5, 9,  14, 20, 5, 9,
                                  14, 20, 5, 9,  14, 20, 5, 9,  14, 20, 4, 11, 16, 23, 4, 11, 16, 23, 4, 11, 16, 23,
                                  4, 11, 16, 23, 6, 10, 15, 21, 6, 10, 15, 21, 6, 10, 15, 21, 6, 10, 15, 21};
    static const std::array<std::uint32_t, 64> k = [] {
      std::array<std::uint32_t, 64> t{};
      for (int i = 0; i < 64; ++i)
        t[i] = static_cast<std::uint32_t>(static_cast<std::uint64_t>(std::fabs(std::sin(i + 1.0)) * 4294967296.0));
      return t;
    }();
    std::uint32_t w[16];
    for (int i = 0; i < 16; ++i)
      w[i] = std::uint32_t{b[4 * i]} | std::uint32_t{b[4 * i + 1]} << 8 | std::uint32_t{b[4 * i + 2]} << 16 |
             std::uint32_t{b[4 * i + 3]} << 24;
    std::uint32_t a = h_[0], bb = h_[1], c = h_[2], d = h_[3];
    for (int i = 0; i < 64; ++i) {
      std::uint32_t f;
      int g;
      if (i < 16) { f = (bb & c) | (~bb & d); g = i; }
      else if (i < 32) { f = (d & bb) | (~d & c); g = (5 * i + 1) % 16; }
      else if (i < 48) { f = bb ^ c ^ d; g = (3 * i + 5) % 16; }
      else { f = c ^ (bb | ~d); g = (7 * i) % 16; }
      const std::uint32_t tmp = d;
      d = c;
      c = bb;
      bb = bb + rotl(a + f + k[i] + w[g], r[i]);
      a = tmp;
    }
    h_[0] += a; h_[1] += bb; h_[2] += c; h_[3] += d;
  }

  std::array<std::uint32_t, 4> h_{0x67452301u, 0xefcdab89u, 0x98badcfeu, 0x10325476u};
  std::uint8_t buf_[64]{};
  std::size_t fill_ = 0;
  std::uint64_t total_ = 0;
};

}  // namespace conveyor_test

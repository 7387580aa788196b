#include <conveyor/io/jpeg.hpp>
#include <conveyor/io/jpeg_encoder.hpp>

#include <catch2/catch.hpp>

#include "support/images.hpp"

#include <cmath>
#include <cstdint>
#include <vector>

using namespace conveyor;
using conveyor_test::random_image;
using conveyor_test::random_jpeg;

namespace {

double psnr(const std::vector<std::uint8_t>& a, const std::vector<std::uint8_t>& b) {
  double se = 0;
  for (std::size_t i = 0; i < a.size(); ++i) se += (double(a[i]) - b[i]) * (double(a[i]) - b[i]);
  return 10 * std::log10(255.0 * 255.0 / (se / double(a.size())));
}

std::span<const std::byte> bytes(const std::vector<std::byte>& v) { return {v.data(), v.size()}; }

}  // namespace

TEST_CASE("header parse reports size and colour and sampling and coding", "[io][jpeg]") {
  JpegDecoder d;
  struct Case { ChromaSubsampling s; const char* name; };
  for (auto [s, name] : {Case{ChromaSubsampling::s444, "4:4:4"}, Case{ChromaSubsampling::s422, "4:2:2"},
                         Case{ChromaSubsampling::s420, "4:2:0"}}) {
    const auto jpeg = random_jpeg(37, 21, 1, {.subsampling = s});
    const JpegInfo info = d.read_header(bytes(jpeg));
    CHECK(info.width == 37);
    CHECK(info.height == 21);
    CHECK(info.components == 3);
    CHECK(info.color == JpegColor::ycbcr);
    CHECK(info.subsampling() == name);
    CHECK_FALSE(info.progressive);
    CHECK_FALSE(info.arithmetic);
    CHECK(info.orientation == 1);
  }
  const auto prog = random_jpeg(16, 16, 2, {.progressive = true, .arithmetic = true});
  const JpegInfo p = d.read_header(bytes(prog));
  CHECK(p.progressive);
  CHECK(p.arithmetic);
  const auto gray = random_jpeg(16, 16, 3, {}, 1);
  const JpegInfo g = d.read_header(bytes(gray));
  CHECK(g.components == 1);
  CHECK(g.color == JpegColor::gray);
  CHECK(g.subsampling() == "gray");
}

TEST_CASE("decoding round-trips a seeded image in every coding mode", "[io][jpeg]") {
  const int w = 123, h = 77;
  const auto original = random_image(w, h, 3, 5);
  JpegDecoder d;
  for (EncodeOptions o : {EncodeOptions{.quality = 95, .subsampling = ChromaSubsampling::s444},
                          EncodeOptions{.quality = 95, .progressive = true},
                          EncodeOptions{.quality = 95, .arithmetic = true},
                          EncodeOptions{.quality = 95, .restart_rows = 1}}) {
    const auto jpeg = encode_jpeg(original.data(), w, h, 3, w * 3, o);
    const JpegInfo info = d.read_header(bytes(jpeg));
    std::vector<std::uint8_t> out(std::size_t(w) * h * 3);
    d.decode(out.data(), w * 3);
    CHECK(info.width == w);
    CHECK(psnr(original, out) > 28);
  }
}

TEST_CASE("grayscale decodes to three equal channels", "[io][jpeg]") {
  const auto jpeg = random_jpeg(31, 9, 4, {}, 1);
  const RgbImage img = decode_jpeg(bytes(jpeg));
  REQUIRE(img.pixels.size() == 31u * 9 * 3);
  for (std::size_t i = 0; i < img.pixels.size(); i += 3) {
    REQUIRE(img.pixels[i] == img.pixels[i + 1]);
    REQUIRE(img.pixels[i] == img.pixels[i + 2]);
  }
}

TEST_CASE("decode honours a row stride wider than the image", "[io][jpeg]") {
  const auto jpeg = random_jpeg(20, 10, 6);
  const RgbImage packed = decode_jpeg(bytes(jpeg));
  JpegDecoder d;
  d.read_header(bytes(jpeg));
  std::vector<std::uint8_t> wide(100 * 10, 0xAB);
  d.decode(wide.data(), 100);
  for (int y = 0; y < 10; ++y) {
    for (int x = 0; x < 60; ++x) REQUIRE(wide[y * 100 + x] == packed.pixels[y * 60 + x]);
    for (int x = 60; x < 100; ++x) REQUIRE(wide[y * 100 + x] == 0xAB);  // padding untouched
  }
}

TEST_CASE("bad input raises DecodeError with libjpeg's reason", "[io][jpeg][errors]") {
  JpegDecoder d;
  const std::vector<std::byte> empty;
  CHECK_THROWS_WITH(d.read_header(bytes(empty)), Catch::Contains("Empty input file"));
  std::vector<std::byte> text(40, std::byte{'x'});
  CHECK_THROWS_WITH(d.read_header(bytes(text)), Catch::Contains("Not a JPEG file"));
  auto jpeg = random_jpeg(64, 64, 7);
  const std::vector<std::byte> header_only(jpeg.begin(), jpeg.begin() + 40);
  CHECK_THROWS_AS(d.read_header(bytes(header_only)), DecodeError);
  CHECK_THROWS_WITH(d.decode(nullptr, 0), Catch::Contains("without a successful read_header"));
}

TEST_CASE("truncated data fails strictly and decodes leniently", "[io][jpeg][errors]") {
  const auto full = random_jpeg(64, 64, 8);
  const std::vector<std::byte> cut(full.begin(), full.begin() + static_cast<std::ptrdiff_t>(full.size() * 2 / 3));
  std::vector<std::uint8_t> out(64 * 64 * 3);
  JpegDecoder strict;
  strict.read_header(bytes(cut));
  CHECK_THROWS_WITH(strict.decode(out.data(), 64 * 3), Catch::Contains("Premature end of JPEG file"));
  JpegDecoder lenient({.lenient = true});
  lenient.read_header(bytes(cut));
  CHECK_NOTHROW(lenient.decode(out.data(), 64 * 3));
  CHECK(lenient.warnings() > 0);
}

TEST_CASE("a decoder is reusable after an error", "[io][jpeg][errors]") {
  JpegDecoder d;
  const auto good = random_jpeg(40, 30, 9);
  const RgbImage expected = decode_jpeg(bytes(good));
  for (int round = 0; round < 3; ++round) {
    std::vector<std::byte> junk(good.begin(), good.begin() + 300);
    junk.back() = std::byte{0xFF};
    try {
      d.read_header(bytes(junk));
      std::vector<std::uint8_t> sink(40 * 30 * 3);
      d.decode(sink.data(), 40 * 3);
    } catch (const DecodeError&) {
    }
    d.read_header(bytes(good));
    std::vector<std::uint8_t> out(40 * 30 * 3);
    d.decode(out.data(), 40 * 3);
    REQUIRE(out == expected.pixels);
  }
}

TEST_CASE("max_image_pixels refuses large images from the header", "[io][jpeg][errors]") {
  const auto jpeg = random_jpeg(100, 50, 10);
  JpegDecoder d({.max_image_pixels = 4999});
  CHECK_THROWS_WITH(d.read_header(bytes(jpeg)), Catch::Contains("100x50") && Catch::Contains("max_image_pixels"));
  d.set_options({.max_image_pixels = 5000});
  CHECK(d.read_header(bytes(jpeg)).width == 100);
}

namespace {

/// `jpeg` with an APP1 "Exif\0\0" segment after SOI: a TIFF header (`little`- or big-endian) and
/// IFD0 with one entry, Orientation (0x0112), SHORT, 1, `orient`. `value_at` is set to the offset
/// of the orientation's value in the result.
std::vector<std::byte> with_exif(const std::vector<std::byte>& jpeg, unsigned orient, bool little,
                                 std::size_t* value_at = nullptr) {
  auto u16 = [&](std::vector<std::uint8_t>& v, unsigned x) {
    if (little) v.insert(v.end(), {std::uint8_t(x), std::uint8_t(x >> 8)});
    else v.insert(v.end(), {std::uint8_t(x >> 8), std::uint8_t(x)});
  };
  std::vector<std::uint8_t> tiff;
  tiff.insert(tiff.end(), little ? std::initializer_list<std::uint8_t>{'I', 'I'} : std::initializer_list<std::uint8_t>{'M', 'M'});
  u16(tiff, 42);
  if (little) tiff.insert(tiff.end(), {8, 0, 0, 0}); else tiff.insert(tiff.end(), {0, 0, 0, 8});
  u16(tiff, 1);
  u16(tiff, 0x0112);
  u16(tiff, 3);
  if (little) tiff.insert(tiff.end(), {1, 0, 0, 0}); else tiff.insert(tiff.end(), {0, 0, 0, 1});
  const std::size_t value = tiff.size();
  u16(tiff, orient);
  u16(tiff, 0);
  tiff.insert(tiff.end(), {0, 0, 0, 0});
  std::vector<std::uint8_t> seg = {0xFF, 0xE1, 0, 0, 'E', 'x', 'i', 'f', 0, 0};
  if (value_at) *value_at = 2 + seg.size() + value;
  seg.insert(seg.end(), tiff.begin(), tiff.end());
  const std::size_t len = seg.size() - 2;
  seg[2] = std::uint8_t(len >> 8);
  seg[3] = std::uint8_t(len);
  std::vector<std::byte> with = {jpeg[0], jpeg[1]};
  for (auto b : seg) with.push_back(std::byte{b});
  with.insert(with.end(), jpeg.begin() + 2, jpeg.end());
  return with;
}

}  // namespace

TEST_CASE("Exif orientation is read from APP1", "[io][jpeg][exif]") {
  const auto jpeg = random_jpeg(8, 8, 11);
  for (bool little : {true, false})
    for (unsigned orient = 1; orient <= 8; ++orient) {
      const auto with = with_exif(jpeg, orient, little);
      CHECK(exif_orientation(bytes(with)) == int(orient));
      JpegDecoder d;
      CHECK(d.read_header(bytes(with)).orientation == int(orient));
    }
  CHECK(exif_orientation(bytes(jpeg)) == 1);
}

TEST_CASE("the Exif reader survives every truncation", "[io][jpeg][exif]") {
  // Every prefix of a file whose APP1 says orientation 6, each in an allocation of its own size:
  // the reader never reads past the end (AddressSanitizer watches in CI), reads a segment only
  // once it is whole, and then finds 6.
  for (bool little : {true, false}) {
    std::size_t value_at = 0;
    const auto jpeg = with_exif(random_jpeg(8, 8, 12), 6, little, &value_at);
    const std::size_t segment_end = 4 + (std::size_t(std::to_integer<unsigned>(jpeg[4])) << 8 |
                                         std::to_integer<unsigned>(jpeg[5]));
    REQUIRE(exif_orientation(bytes(jpeg)) == 6);
    for (std::size_t n = 0; n <= segment_end + 16; ++n) {
      INFO(n << " bytes, the value at " << value_at << ", the segment ending at " << segment_end);
      const std::vector<std::byte> cut(jpeg.begin(), jpeg.begin() + std::ptrdiff_t(std::min(n, jpeg.size())));
      CHECK(exif_orientation(bytes(cut)) == (n >= segment_end ? 6 : 1));
    }
  }
}

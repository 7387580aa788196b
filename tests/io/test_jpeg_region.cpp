// Decoding a window (libjpeg-turbo's crop and skip) gives exactly the pixels of that window of a
// full decode, for every sampling and coding, at any position and size.

#include <conveyor/io/file.hpp>
#include <conveyor/io/jpeg.hpp>
#include <conveyor/io/image_folder.hpp>
#include <conveyor/io/jpeg_encoder.hpp>
#include <conveyor/io/jpeg_scans.hpp>

#include <catch2/catch.hpp>

#include "support/data.hpp"
#include "support/images.hpp"

#include <vector>

using namespace conveyor;

namespace {

/// Decodes `count` random windows of `jpeg` and compares them with a full decode; returns how
/// many differed.
int differing_windows(std::span<const std::byte> jpeg, std::uint64_t seed, int count) {
  const RgbImage full = decode_jpeg(jpeg, {.lenient = true});
  JpegDecoder d({.lenient = true});
  CounterRng rng(seed, 0, 0, RngOp::user);
  int bad = 0;
  for (int t = 0; t < count; ++t) {
    const int w = 1 + int(rng.below(std::uint64_t(full.width))), h = 1 + int(rng.below(std::uint64_t(full.height)));
    const int x = int(rng.below(std::uint64_t(full.width - w + 1))), y = int(rng.below(std::uint64_t(full.height - h + 1)));
    d.read_header(jpeg);
    std::vector<std::uint8_t> out(std::size_t(w) * h * 3);
    d.decode_region({x, y, w, h, 8}, out.data(), std::size_t(w) * 3);
    bool same = true;
    for (int r = 0; r < h && same; ++r)
      same = std::equal(out.begin() + std::ptrdiff_t(r) * w * 3, out.begin() + std::ptrdiff_t(r + 1) * w * 3,
                        full.pixels.begin() + (std::ptrdiff_t(y + r) * full.width + x) * 3);
    bad += !same;
  }
  return bad;
}

}  // namespace

TEST_CASE("a decoded window equals that window of a full decode", "[io][jpeg][roi]") {
  int i = 0;
  for (ChromaSubsampling s : {ChromaSubsampling::s444, ChromaSubsampling::s422, ChromaSubsampling::s420})
    for (bool progressive : {false, true})
      for (int restart : {0, 2}) {
        const auto jpeg = conveyor_test::random_jpeg(97 + i, 61 + 3 * i, 40 + i,
                                                     {.quality = 85, .subsampling = s, .progressive = progressive,
                                                      .restart_rows = restart});
        INFO("case " << i);
        CHECK(differing_windows(jpeg, 7 + i, 60) == 0);
        ++i;
      }
  const auto gray = conveyor_test::random_jpeg(50, 33, 99, {}, 1);
  CHECK(differing_windows(gray, 3, 60) == 0);
}

TEST_CASE("decoded windows match full decodes on the conformance set and photos", "[io][jpeg][roi][data]") {
  CONVEYOR_REQUIRE_SHARED_DATA(data);
  ByteBuffer bytes;
  int files = 0;
  for (const auto& dir : {data / "conformance" / "libjpeg-turbo", data / "conformance" / "generated",
                          data / "conformance" / "go", data / "conformance" / "jpeg-decoder", data / "photos"})
    for (const auto& e : std::filesystem::directory_iterator(dir)) {
      const std::string name = e.path().filename().string();
      if (!ImageFolder::is_jpeg_name(name)) continue;
      read_file(e.path().string(), bytes);
      try {
        JpegDecoder probe;
        probe.read_header(bytes.span());
      } catch (const DecodeError&) {
        continue;  // the 12-bit and lossless files
      }
      INFO(e.path().string());
      CHECK(differing_windows(bytes.span(), ++files, 12) == 0);
    }
  CHECK(files > 100);
}

TEST_CASE("a window outside the scaled image is refused", "[io][jpeg][roi]") {
  const auto jpeg = conveyor_test::random_jpeg(40, 24, 5);
  JpegDecoder d;
  std::vector<std::uint8_t> out(40 * 24 * 3);
  d.read_header(jpeg);
  CHECK_THROWS_WITH(d.decode_region({0, 0, 41, 24, 8}, out.data(), 41 * 3), Catch::Contains("inside the 40x24 image"));
  d.read_header(jpeg);
  CHECK_THROWS_WITH(d.decode_region({0, 0, 20, 13, 4}, out.data(), 20 * 3), Catch::Contains("inside the 20x12 image"));
  d.read_header(jpeg);
  CHECK_NOTHROW(d.decode_region({3, 2, 17, 10, 4}, out.data(), 17 * 3));
  d.read_header(jpeg);
  CHECK_THROWS_WITH(d.decode_columns({3, 0, 17, 10, 8}, out.data(), 17 * 3), Catch::Contains("multiples of 16"));
  CHECK_THROWS_WITH(d.decode_region({0, 0, 4, 4, 8}, out.data(), 12), Catch::Contains("without a successful read_header"));
  CHECK(scaled_size(227, 3) == 86);  // ceil(227 * 3 / 8), as libjpeg sizes it
}

namespace {

/// The whole image at 1/8, decoded with or without the DC-scan shortcut.
std::vector<std::uint8_t> eighth(std::span<const std::byte> jpeg, bool dc_scans) {
  JpegDecoder d({.lenient = true, .dc_scans_at_eighth = dc_scans});
  const JpegInfo info = d.read_header(jpeg);
  const int w = scaled_size(info.width, 1), h = scaled_size(info.height, 1);
  std::vector<std::uint8_t> out(std::size_t(w) * h * 3);
  d.decode_region({0, 0, w, h, 1}, out.data(), std::size_t(w) * 3);
  return out;
}

/// Calls `f(path, jpeg, info)` for every progressive file of the conformance set and the photos
/// whose header conveyor reads.
template <class F>
void for_each_progressive_file(const std::filesystem::path& data, F&& f) {
  ByteBuffer bytes;
  for (const auto& dir : {data / "conformance" / "ijg", data / "conformance" / "generated", data / "conformance" / "go",
                          data / "conformance" / "jpeg-decoder", data / "photos"})
    for (const auto& e : std::filesystem::directory_iterator(dir)) {
      if (!ImageFolder::is_jpeg_name(e.path().filename().string())) continue;
      read_file(e.path().string(), bytes);
      JpegInfo info;
      try {
        info = JpegDecoder().read_header(bytes.span());
      } catch (const DecodeError&) {
        continue;
      }
      if (info.progressive) f(e.path(), bytes.span(), info);
    }
}

}  // namespace

TEST_CASE("progressive files decode at 1/8 from their DC scans to the same pixels", "[io][jpeg][roi]") {
  int i = 0;
  for (ChromaSubsampling s : {ChromaSubsampling::s444, ChromaSubsampling::s422, ChromaSubsampling::s420})
    for (int restart : {0, 1}) {
      const auto jpeg = conveyor_test::random_jpeg(203 + 7 * i, 151 + 5 * i, 70 + i,
                                                   {.subsampling = s, .progressive = true, .restart_rows = restart});
      std::vector<unsigned char> dc;
      REQUIRE(drop_ac_scans(jpeg, dc));
      CHECK(dc.size() < jpeg.size() / 2);
      CHECK(eighth(jpeg, true) == eighth(jpeg, false));
      ++i;
    }
  const auto gray = conveyor_test::random_jpeg(120, 90, 3, {.progressive = true}, 1);
  CHECK(eighth(gray, true) == eighth(gray, false));
}

TEST_CASE("the DC-scan filter refuses malformed streams and survives every truncation", "[io][jpeg][roi]") {
  const auto jpeg = conveyor_test::random_jpeg(64, 48, 9, {.progressive = true});
  std::vector<unsigned char> dc;
  for (std::size_t n = 0; n < jpeg.size(); n += 7) CHECK_FALSE(drop_ac_scans({jpeg.data(), n}, dc));
  CHECK(drop_ac_scans(jpeg, dc));
  std::vector<std::byte> text(100, std::byte{'x'});
  CHECK_FALSE(drop_ac_scans(text, dc));
  // A truncated progressive file still decodes, through the unfiltered path, as before.
  const std::vector<std::byte> cut(jpeg.begin(), jpeg.begin() + static_cast<std::ptrdiff_t>(jpeg.size() * 3 / 4));
  CHECK(eighth(cut, true) == eighth(cut, false));
}

TEST_CASE("progressive photos and conformance files decode at 1/8 from DC scans alone", "[io][jpeg][roi][data]") {
  CONVEYOR_REQUIRE_SHARED_DATA(data);
  int progressive = 0;
  for_each_progressive_file(data, [&](const std::filesystem::path& path, std::span<const std::byte> jpeg, const JpegInfo&) {
    INFO(path.string());
    CHECK(eighth(jpeg, true) == eighth(jpeg, false));
    ++progressive;
  });
  CHECK(progressive >= 25);
}

namespace {

/// Windows of `jpeg` at each scale, decoded strictly, against the same columns decoded down to
/// the bottom: a window that ends above it is decoded from a frame cut below it, one that reaches
/// it from the whole file, and their common rows must agree. Returns how many differed.
int differing_scaled_windows(std::span<const std::byte> jpeg, std::uint64_t seed, int per_scale) {
  CounterRng rng(seed, 0, 0, RngOp::user);
  int bad = 0;
  JpegDecoder d;
  for (int n : {1, 2, 4, 8}) {
    const JpegInfo info = d.read_header(jpeg);
    const int w = scaled_size(info.width, n), h = scaled_size(info.height, n);
    for (int t = 0; t < per_scale; ++t) {
      const int ww = 1 + int(rng.below(std::uint64_t(w))), wh = 1 + int(rng.below(std::uint64_t(h)));
      const int x = int(rng.below(std::uint64_t(w - ww + 1))), y = int(rng.below(std::uint64_t(h - wh + 1)));
      std::vector<std::uint8_t> window(std::size_t(ww) * wh * 3), to_bottom(std::size_t(ww) * (h - y) * 3);
      d.read_header(jpeg);
      d.decode_region({x, y, ww, wh, n}, window.data(), std::size_t(ww) * 3);
      d.read_header(jpeg);
      d.decode_region({x, y, ww, h - y, n}, to_bottom.data(), std::size_t(ww) * 3);
      bad += !std::equal(window.begin(), window.end(), to_bottom.begin());
    }
  }
  return bad;
}

}  // namespace

TEST_CASE("progressive windows above the bottom decode, strictly, to the pixels of the whole file", "[io][jpeg][roi]") {
  int i = 0;
  for (ChromaSubsampling s : {ChromaSubsampling::s444, ChromaSubsampling::s422, ChromaSubsampling::s420})
    for (int restart : {0, 2}) {
      const auto jpeg = conveyor_test::random_jpeg(83 + 9 * i, 301 + 17 * i, 31 + i,
                                                   {.quality = 90, .subsampling = s, .progressive = true,
                                                    .restart_rows = restart});
      INFO("case " << i);
      CHECK(differing_scaled_windows(jpeg, 5 + i, 25) == 0);
      ++i;
    }
  const auto gray = conveyor_test::random_jpeg(77, 260, 8, {.progressive = true}, 1);
  CHECK(differing_scaled_windows(gray, 4, 25) == 0);
}

TEST_CASE("the frame height is rewritten in place, or not at all", "[io][jpeg][roi]") {
  const auto jpeg = conveyor_test::random_jpeg(64, 48, 9, {.progressive = true});
  std::vector<unsigned char> bytes(reinterpret_cast<const unsigned char*>(jpeg.data()),
                                   reinterpret_cast<const unsigned char*>(jpeg.data()) + jpeg.size());
  REQUIRE(set_frame_height(bytes, 17));
  CHECK(JpegDecoder().read_header(std::as_bytes(std::span(bytes))).height == 17);
  CHECK(JpegDecoder().read_header(std::as_bytes(std::span(bytes))).width == 64);
  const std::vector<unsigned char> patched = bytes;
  CHECK_FALSE(set_frame_height(bytes, 0));
  CHECK_FALSE(set_frame_height(bytes, 70000));
  for (std::size_t n = 0; n < 40; ++n) {  // the frame header ends past the first 40 bytes
    std::vector<unsigned char> cut(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(n));
    CHECK_FALSE(set_frame_height(cut, 5));
  }
  std::vector<unsigned char> text(100, 'x');
  CHECK_FALSE(set_frame_height(text, 5));
  CHECK(bytes == patched);
}

TEST_CASE("progressive photos and conformance files decode windows above the bottom strictly to the same pixels",
          "[io][jpeg][roi][data]") {
  CONVEYOR_REQUIRE_SHARED_DATA(data);
  int progressive = 0;
  for_each_progressive_file(data, [&](const std::filesystem::path& path, std::span<const std::byte> jpeg,
                                      const JpegInfo& info) {
    try {
      JpegDecoder whole;
      whole.read_header(jpeg);
      std::vector<std::uint8_t> all(std::size_t(info.width) * std::size_t(info.height) * 3);
      whole.decode(all.data(), std::size_t(info.width) * 3);
    } catch (const DecodeError&) {
      return;  // strict decoding refuses it whole: not a case for windows
    }
    INFO(path.string());
    CHECK(differing_scaled_windows(jpeg, ++progressive, 3) == 0);
  });
  CHECK(progressive >= 20);
}

// The PNG and PGM/PPM codecs and the decoder that tells formats apart: windows equal the same
// windows of a whole decode, rows below a window are never read, headers too large are refused
// before any buffer, damaged files fail cleanly, and the format comes from the bytes. (That the
// pixels equal Pillow's is tests/python/test_formats.py's: Pillow decodes the same files there.)

#include <conveyor/conveyor.hpp>

#include <catch2/catch.hpp>

#include "support/data.hpp"
#include "support/datasets.hpp"
#include "support/temp_dir.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include <sys/resource.h>

using namespace conveyor;

namespace {

std::vector<std::filesystem::path> pngs_under(const std::filesystem::path& dir) {
  std::vector<std::filesystem::path> out;
  for (const auto& e : std::filesystem::recursive_directory_iterator(dir))
    if (e.path().extension() == ".png") out.push_back(e.path());
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<std::uint8_t> whole(ImageDecoder& d, std::span<const std::byte> bytes, ImageInfo& info) {
  info = d.read_header(bytes);
  std::vector<std::uint8_t> out(std::size_t(info.width) * info.height * 3);
  d.decode(out.data(), std::size_t(info.width) * 3);
  return out;
}

/// PNG's CRC-32 (zlib's), for rewriting a chunk in a test.
std::uint32_t crc32(const unsigned char* p, std::size_t n) {
  std::uint32_t c = 0xFFFFFFFFu;
  for (std::size_t i = 0; i < n; ++i) {
    c ^= p[i];
    for (int k = 0; k < 8; ++k) c = c & 1 ? (c >> 1) ^ 0xEDB88320u : c >> 1;
  }
  return ~c;
}

}  // namespace

TEST_CASE("every PNG of the suites decodes, and its windows are those of its whole decode", "[io][png][data]") {
  CONVEYOR_REQUIRE_SHARED_DATA(data);
  const DecodeOptions high_bytes{.sixteen_bit = SixteenBit::high_byte};
  ImageDecoder d(high_bytes);
  ByteBuffer bytes;
  int files = 0, interlaced = 0;
  for (const auto& dir : {data / "png" / "pngsuite", data / "png" / "testpngs"})
    for (const auto& path : pngs_under(dir)) {
      if (path.string().find("crashers") != std::string::npos || path.string().find("badpal") != std::string::npos) continue;
      INFO(path.string());
      read_file(path.string(), bytes);
      ImageInfo info;
      const auto all = whole(d, bytes.span(), info);
      CHECK(info.format == ImageFormat::png);
      CHECK_FALSE(info.scalable);
      PngDecoder probe(high_bytes);
      interlaced += probe.read_header(bytes.span()).interlaced;
      CounterRng rng(9, 0, std::uint64_t(files), RngOp::user);
      for (int k = 0; k < 4; ++k) {
        const int w = 1 + int(rng.below(std::uint64_t(info.width))), h = 1 + int(rng.below(std::uint64_t(info.height)));
        const int x = int(rng.below(std::uint64_t(info.width - w + 1))), y = int(rng.below(std::uint64_t(info.height - h + 1)));
        std::vector<std::uint8_t> window(std::size_t(w) * h * 3);
        (void)d.read_header(bytes.span());
        d.decode_columns({x, y, w, h, 8}, window.data(), std::size_t(w) * 3);
        bool same = true;
        for (int r = 0; r < h && same; ++r)
          same = std::equal(window.begin() + std::ptrdiff_t(r) * w * 3, window.begin() + std::ptrdiff_t(r + 1) * w * 3,
                            all.begin() + (std::ptrdiff_t(y + r) * info.width + x) * 3);
        CHECK(same);
      }
      ++files;
    }
  CHECK(files >= 140);
  CHECK(interlaced >= 20);  // pngsuite's i*.png and interlaced/
}

TEST_CASE("a 16-bit PNG is refused from its header unless its high bytes are asked for", "[io][png][data]") {
  // torchvision.io.decode_image gives uint16 (ToDtype then divides by 65535): truncating it to 8
  // bits silently would differ from it by up to 0.0038 after ToDtype.
  CONVEYOR_REQUIRE_SHARED_DATA(data);
  ByteBuffer bytes;
  int sixteen = 0;
  for (const auto& path : pngs_under(data / "png" / "pngsuite")) {
    read_file(path.string(), bytes);
    PngDecoder probe({.sixteen_bit = SixteenBit::high_byte});
    if (probe.read_header(bytes.span()).bit_depth != 16) continue;
    INFO(path.string());
    ++sixteen;
    ImageDecoder refusing;
    CHECK_THROWS_WITH(refusing.read_header(bytes.span()), Catch::Matchers::Contains("16-bit PNG") &&
                                                             Catch::Matchers::Contains("sixteen_bit = high_byte"));
    ImageDecoder taking({.sixteen_bit = SixteenBit::high_byte});
    ImageInfo info;
    const std::size_t decoded = whole(taking, bytes.span(), info).size();
    CHECK(decoded == std::size_t(info.width) * std::size_t(info.height) * 3);
  }
  CHECK(sixteen >= 10);
}

TEST_CASE("a PNG is decoded only down to the window's last row", "[io][png][data]") {
  CONVEYOR_REQUIRE_SHARED_DATA(data);
  if (std::system("command -v pnmtopng > /dev/null && command -v djpeg > /dev/null") != 0)
    CONVEYOR_SKIP("netpbm's pnmtopng or libjpeg-turbo's djpeg not found (Debian: netpbm, libjpeg-turbo-progs)");
  conveyor_test::TempDir t;
  const std::string png = (t.path() / "storm.png").string();
  const std::string command = "djpeg -pnm '" + (data / "photos" / "mate_Storm.jpg").string() + "' | pnmtopng > '" + png + "'";
  REQUIRE(std::system(command.c_str()) == 0);  // 1920 x 1280, written by netpbm
  ByteBuffer bytes;
  read_file(png, bytes);
  ImageDecoder d;
  ImageInfo info;
  const auto all = whole(d, bytes.span(), info);
  REQUIRE(info.width == 1920);
  // The file cut at 30 %: a window in the top 20 % of the rows decodes, strictly, to the same
  // pixels; the whole image cannot.
  const ByteBuffer cut(bytes.span().first(bytes.size() * 3 / 10));
  std::vector<std::uint8_t> window(200 * 250 * 3);
  (void)d.read_header(cut.span());
  d.decode_columns({700, 6, 200, 250, 8}, window.data(), 200 * 3);
  for (int r = 0; r < 250; ++r)
    REQUIRE(std::equal(window.begin() + r * 600, window.begin() + (r + 1) * 600,
                       all.begin() + (std::ptrdiff_t(6 + r) * 1920 + 700) * 3));
  std::vector<std::uint8_t> sink(all.size());
  (void)d.read_header(cut.span());
  CHECK_THROWS_AS(d.decode(sink.data(), 1920 * 3), DecodeError);
}

TEST_CASE("damaged PNGs give a DecodeError or a decode, never a crash", "[io][png][damaged][data]") {
  CONVEYOR_REQUIRE_SHARED_DATA(data);
  ImageDecoder d;
  ByteBuffer bytes;
  int failed = 0, decoded = 0;
  for (const char* sub : {"crashers", "badpal"})
    for (const auto& path : pngs_under(data / "png" / "testpngs" / sub)) {
      INFO(path.string());
      read_file(path.string(), bytes);
      try {
        ImageInfo info;
        (void)whole(d, bytes.span(), info);
        ++decoded;
      } catch (const DecodeError& e) {
        CHECK_FALSE(e.reason().empty());
        ++failed;
      }
    }
  CHECK(failed + decoded == 32);
  CHECK(failed >= 10);
}

TEST_CASE("a PNG header claiming 60000x60000 pixels is refused before allocation", "[io][png]") {
  // A real PNG with its IHDR rewritten (and its CRC recomputed): 3.6 billion pixels claimed.
  const ImageAugment aug = ImageAugment::eval(40, 32);
  auto ws = aug.make_workspace();
  ByteBuffer bytes;
  conveyor_test::TempDir t;
  const auto ppm = conveyor_test::random_image(64, 48, 3, 5);
  std::string pnm = "P6\n64 48\n255\n";
  pnm.append(reinterpret_cast<const char*>(ppm.data()), ppm.size());
  const std::string path = (t.path() / "x.png").string();
  conveyor_test::write_text(t.path() / "x.ppm", pnm);
  if (std::system(("pnmtopng '" + (t.path() / "x.ppm").string() + "' > '" + path + "' 2> /dev/null").c_str()) != 0)
    CONVEYOR_SKIP("netpbm's pnmtopng not found (Debian: netpbm)");
  read_file(path, bytes);
  auto* p = reinterpret_cast<unsigned char*>(bytes.data());
  REQUIRE(std::memcmp(p + 12, "IHDR", 4) == 0);
  for (int k : {16, 20}) {  // width, height: big-endian 60000
    p[k] = 0;
    p[k + 1] = 0;
    p[k + 2] = 0xEA;
    p[k + 3] = 0x60;
  }
  const std::uint32_t crc = crc32(p + 12, 17);
  for (int k = 0; k < 4; ++k) p[29 + k] = static_cast<unsigned char>(crc >> (24 - 8 * k));
  rusage before{};
  getrusage(RUSAGE_SELF, &before);
  std::vector<std::byte> out(aug.sample_spec().bytes());
  CHECK_THROWS_WITH(aug.apply({}, bytes.span(), out, ws), Catch::Contains("60000x60000") && Catch::Contains("max_image_pixels"));
  rusage after{};
  getrusage(RUSAGE_SELF, &after);
  CHECK(after.ru_maxrss - before.ru_maxrss < 100 * 1024);  // KiB
}

// Found by fuzz_decode: a 433-byte file whose iTXt chunk declares 1.9 GB made libpng allocate it
// (1.8 GB, 2.8 s) before finding the data missing. Chunks the pixels do not need are now skipped.
TEST_CASE("a text or ICC chunk declaring gigabytes is skipped and not allocated", "[io][png][data]") {
  CONVEYOR_REQUIRE_SHARED_DATA(data);
  ByteBuffer real;
  read_file((data / "png" / "pngsuite" / "basn3p01.png").string(), real);
  const ImageAugment aug = ImageAugment::eval(40, 32);
  auto ws = aug.make_workspace();
  std::vector<std::byte> out(aug.sample_spec().bytes());
  for (const char* chunk : {"iTXt", "zTXt", "tEXt", "iCCP", "eXIf", "sPLT", "zzZz"}) {
    INFO(chunk);
    // After the IHDR (8 + 25 bytes): a chunk of 0x72000000 bytes with 40 of them present, then
    // the file's own chunks.
    std::vector<std::byte> bomb(real.data(), real.data() + 33);
    const unsigned char head[8] = {0x72, 0, 0, 0, static_cast<unsigned char>(chunk[0]), static_cast<unsigned char>(chunk[1]),
                                   static_cast<unsigned char>(chunk[2]), static_cast<unsigned char>(chunk[3])};
    for (unsigned char c : head) bomb.push_back(std::byte{c});
    for (int k = 0; k < 40; ++k) bomb.push_back(std::byte{0x78});
    bomb.insert(bomb.end(), real.data() + 33, real.data() + real.size());
    rusage before{};
    getrusage(RUSAGE_SELF, &before);
    CHECK_THROWS_WITH(aug.apply({}, bomb, out, ws), Catch::Contains("Premature end"));
    rusage after{};
    getrusage(RUSAGE_SELF, &after);
    CHECK(after.ru_maxrss - before.ru_maxrss < 100 * 1024);  // KiB
  }
}

TEST_CASE("the format comes from the bytes, and one without a codec is named", "[io][codec]") {
  ImageDecoder d;
  const auto jpeg = conveyor_test::random_jpeg(40, 30, 3);
  CHECK(d.read_header(jpeg).format == ImageFormat::jpeg);
  const auto refused = [&](std::string bytes, const char* format) {
    INFO(format);
    CHECK_THROWS_WITH(d.read_header(std::as_bytes(std::span(bytes))), Catch::Contains(format) && Catch::Contains("not decoded"));
  };
  refused(std::string("BM") + std::string(60, '\0'), "BMP");
  refused("GIF89a" + std::string(60, '\0'), "GIF");
  refused(std::string("II*\0", 4) + std::string(60, '\0'), "TIFF");
  refused(std::string("RIFF\x10\0\0\0WEBPVP8 ", 16) + std::string(60, '\0'), "WebP");
  const std::string text = "This is not an image.";
  CHECK_THROWS_WITH(d.read_header(std::as_bytes(std::span(text))), Catch::Contains("Not a JPEG file"));
  // The same pixels as a PPM and as a PNG (netpbm) named .jpg: the augmented outputs are equal.
  if (std::system("command -v pnmtopng > /dev/null") != 0) CONVEYOR_SKIP("netpbm's pnmtopng not found (Debian: netpbm)");
  conveyor_test::TempDir t;
  const auto px = conveyor_test::random_image(123, 77, 3, 8);
  std::string pnm = "P6\n# a comment\n123 77\n255\n";
  pnm.append(reinterpret_cast<const char*>(px.data()), px.size());
  conveyor_test::write_text(t.path() / "a.ppm", pnm);
  REQUIRE(std::system(("pnmtopng '" + (t.path() / "a.ppm").string() + "' > '" + (t.path() / "a.jpg").string() + "'").c_str()) == 0);
  InMemory mem;
  ByteBuffer b;
  read_file((t.path() / "a.ppm").string(), b);
  mem.add(b.span(), 0);
  read_file((t.path() / "a.jpg").string(), b);
  mem.add(b.span(), 0);
  for (ImageAugment aug : {ImageAugment::eval(64, 48), ImageAugment::train(40)}) {
    aug.dtype = DType::u8;
    aug.normalize.reset();
    for (bool roi : {true, false}) {
      aug.roi = roi;
      auto ws = aug.make_workspace();
      std::vector<std::byte> from_ppm(aug.sample_spec().bytes()), from_png(from_ppm.size());
      aug.apply({.seed = 1}, mem.bytes(0), from_ppm, ws);
      aug.apply({.seed = 1}, mem.bytes(1), from_png, ws);
      CHECK(from_ppm == from_png);
    }
  }
}

TEST_CASE("PGM and PPM headers, depths and damage", "[io][pnm]") {
  PnmDecoder d;
  const auto decode = [&](const std::string& file) {
    const PnmInfo info = d.read_header(std::as_bytes(std::span(file)));
    std::vector<std::uint8_t> out(std::size_t(info.width) * info.height * 3);
    d.decode_region(0, 0, info.width, info.height, out.data(), std::size_t(info.width) * 3);
    return out;
  };
  CHECK(decode("P5 2 1 255\n\x10\x80") == std::vector<std::uint8_t>{16, 16, 16, 128, 128, 128});
  CHECK(decode("P5\n#c\n1 1\n#d\n15\n\x07") == std::vector<std::uint8_t>{119, 119, 119});  // round(7 / 15 * 255)
  CHECK(decode(std::string("P6 1 1 65535\n\x12\x34\xff\xff\0\0", 19)) == std::vector<std::uint8_t>{18, 255, 0});
  CHECK_THROWS_WITH(decode("P6 4 4 255\nabc"), Catch::Contains("48 expected"));
  CHECK_THROWS_WITH(decode("P6 4 4 70000\n"), Catch::Contains("maxval"));
  CHECK_THROWS_WITH(decode("P6 x 4 255\n"), Catch::Contains("width"));
  d.set_options({.max_image_pixels = 100});
  CHECK_THROWS_WITH(decode("P5 20 20 255\n"), Catch::Contains("max_image_pixels"));
}

// Every conformance image libjpeg-turbo decodes must decode bit-identically to djpeg's reference
// (the stored PPM/PGM, or the MD5 of djpeg's output where the file was too large to store); every
// one it rejects must raise DecodeError.

#include <conveyor/io/file.hpp>
#include <conveyor/io/jpeg.hpp>

#include <catch2/catch.hpp>

#include "support/data.hpp"
#include "support/md5.hpp"

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

using namespace conveyor;

namespace {

struct Pnm {
  bool color = true;
  int width = 0, height = 0;
  std::vector<std::uint8_t> pixels;
};

Pnm read_pnm(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  std::string magic;
  int maxval = 0;
  Pnm p;
  in >> magic >> p.width >> p.height >> maxval;
  in.get();
  p.color = magic == "P6";
  p.pixels.resize(std::size_t(p.width) * p.height * (p.color ? 3 : 1));
  in.read(reinterpret_cast<char*>(p.pixels.data()), static_cast<std::streamsize>(p.pixels.size()));
  return p;
}

/// The MD5 djpeg's PNM output would have: the header it writes, then the samples.
std::string pnm_md5(const RgbImage& img, bool color) {
  conveyor_test::Md5 md5;
  const std::string header = std::string(color ? "P6" : "P5") + "\n" + std::to_string(img.width) + " " +
                             std::to_string(img.height) + "\n255\n";
  md5.update(header.data(), header.size());
  if (color) {
    md5.update(img.pixels.data(), img.pixels.size());
  } else {
    for (std::size_t i = 0; i < img.pixels.size(); i += 3) md5.update(&img.pixels[i], 1);
  }
  return md5.hex();
}

}  // namespace

TEST_CASE("conformance images decode bit-identically to djpeg", "[io][jpeg][conformance][data]") {
  CONVEYOR_REQUIRE_SHARED_DATA(data);
  const auto dir = data / "conformance";
  const auto rows = conveyor_test::read_tsv(dir / "reference" / "INDEX.tsv");
  REQUIRE(rows.size() >= 90);
  int decoded = 0, rejected = 0, compared_pixels = 0;
  ByteBuffer bytes;
  for (const auto& row : rows) {
    const std::string& name = row.at("source_jpeg");
    const std::string exit_code = row.at("djpeg_exit");
    INFO(name << " (djpeg exit " << exit_code << ")");
    read_file((dir / name).string(), bytes);
    if (exit_code == "1") {
      CHECK_THROWS_AS(decode_jpeg(bytes.span()), DecodeError);
      ++rejected;
      continue;
    }
    // Exit 2: djpeg warned but wrote an image; strict decoding refuses, lenient decoding matches it.
    if (exit_code == "2") CHECK_THROWS_AS(decode_jpeg(bytes.span()), DecodeError);
    const RgbImage img = decode_jpeg(bytes.span(), {.lenient = exit_code == "2"});
    const bool color = row.at("pnm_header").rfind("P6", 0) == 0;
    CHECK(pnm_md5(img, color) == row.at("md5_of_djpeg_pnm_output"));
    const std::string stored = row.at("stored_as");
    if (stored.rfind("reference/", 0) == 0) {
      const Pnm ref = read_pnm(dir / stored);
      REQUIRE(ref.width == img.width);
      REQUIRE(ref.height == img.height);
      bool same = true;
      for (std::size_t i = 0, n = std::size_t(ref.width) * ref.height; i < n && same; ++i)
        for (int c = 0; c < 3; ++c)
          same = same && img.pixels[i * 3 + c] == ref.pixels[ref.color ? i * 3 + c : i];
      CHECK(same);
      ++compared_pixels;
    }
    ++decoded;
  }
  CHECK(decoded == 88);
  CHECK(rejected == 4);
  CHECK(compared_pixels == 84);
}

namespace {

/// The MD5 of the PNM djpeg writes for `rgb` (`width` x `height`, 3 bytes a pixel).
std::string pnm_md5(const std::vector<std::uint8_t>& rgb, int width, int height, bool color) {
  return pnm_md5(RgbImage{width, height, rgb}, color);
}

/// The words of a command line.
std::vector<std::string> words(const std::string& line) {
  std::vector<std::string> out;
  std::istringstream in(line);
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

}  // namespace

// libjpeg-turbo's own test suite records the MD5s of djpeg's partial decodes: -skip (rows skipped
// with jpeg_skip_scanlines), -crop (jpeg_crop_scanline, then skipped rows), -scale (DCT scaling).
// conveyor's window decode must give exactly those pixels. The scaled rows are run without fancy
// upsampling (-nosmooth); at the 1/8, 1/4 and 1/2 conveyor decodes at, libjpeg-turbo scales the
// chroma by its IDCT instead of upsampling it, so the setting does not matter there (it does at
// 5/8 and above, which conveyor never uses). The other rows use the fast or float IDCT, merged
// upsampling or an encoder, which conveyor does not.
TEST_CASE("window, skip and scaled decodes give the MD5s of libjpeg-turbo's own test suite",
          "[io][jpeg][conformance][data]") {
  CONVEYOR_REQUIRE_SHARED_DATA(data);
  const auto dir = data / "conformance";
  const auto rows = conveyor_test::read_tsv(dir / "libjpeg-turbo-checks.tsv");
  REQUIRE(rows.size() == 41);
  ByteBuffer bytes;
  JpegDecoder d;
  int checked = 0;
  std::string kinds;
  for (const auto& row : rows) {
    const std::string command = row.at("command (run in conformance/)");
    const std::vector<std::string> w = words(command);
    if (w[0] != "djpeg" || w[1] != "-dct" || w[2] != "int") continue;
    const std::string expected = row.at("upstream_md5_of_output");
    INFO(command);
    read_file((dir / w.back()).string(), bytes);
    const JpegInfo info = d.read_header(bytes.span());
    const bool color = info.components != 1;
    const std::string option = w.size() > 4 ? w[3] : "";
    std::vector<std::uint8_t> out;
    int ow = info.width, oh = info.height;
    if (option.empty()) {  // the whole image
      out.resize(std::size_t(ow) * oh * 3);
      d.decode(out.data(), std::size_t(ow) * 3);
    } else if (option == "-scale") {
      int n = 0, denom = 0;  // "1/2", "1/4", "1/8": conveyor's scales, in eighths
      REQUIRE(std::sscanf(w[4].c_str(), "%d/%d", &n, &denom) == 2);
      const int num = 8 * n / denom;
      if (8 * n % denom != 0 || (num != 1 && num != 2 && num != 4)) continue;
      ow = scaled_size(info.width, num);
      oh = scaled_size(info.height, num);
      out.resize(std::size_t(ow) * oh * 3);
      d.decode_columns({0, 0, ow, oh, num}, out.data(), std::size_t(ow) * 3);
    } else if (option == "-crop") {  // WxH+X+Y: the columns widened left to an iMCU, as djpeg does
      int cw = 0, ch = 0, x = 0, y = 0;
      REQUIRE(std::sscanf(w[4].c_str(), "%dx%d+%d+%d", &cw, &ch, &x, &y) == 4);
      const int x0 = x / info.column_alignment(8) * info.column_alignment(8);
      ow = cw + x - x0;
      oh = ch;
      out.resize(std::size_t(ow) * oh * 3);
      d.decode_columns({x0, y, ow, oh, 8}, out.data(), std::size_t(ow) * 3);
    } else if (option == "-skip") {  // Y0,Y1: rows Y0..Y1 left out
      int y0 = 0, y1 = 0;
      REQUIRE(std::sscanf(w[4].c_str(), "%d,%d", &y0, &y1) == 2);
      oh = info.height - (y1 - y0 + 1);
      out.resize(std::size_t(ow) * oh * 3);
      d.decode_columns({0, 0, ow, y0, 8}, out.data(), std::size_t(ow) * 3);
      (void)d.read_header(bytes.span());
      d.decode_columns({0, y1 + 1, ow, info.height - y1 - 1, 8}, out.data() + std::size_t(y0) * ow * 3,
                       std::size_t(ow) * 3);
    } else {
      continue;
    }
    CHECK(pnm_md5(out, ow, oh, color) == expected);
    kinds += option.empty() ? "full " : option + " ";
    ++checked;
  }
  INFO(kinds);
  CHECK(checked == 12);  // 2 whole images, 3 scales, 4 crops, 3 skips
}

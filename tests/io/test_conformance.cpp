// Every conformance image libjpeg-turbo decodes must decode bit-identically to djpeg's reference
// (the stored PPM/PGM, or the MD5 of djpeg's output where the file was too large to store); every
// one it rejects must raise DecodeError.

#include <conveyor/io/file.hpp>
#include <conveyor/io/jpeg.hpp>

#include <catch2/catch.hpp>

#include "support/data.hpp"
#include "support/md5.hpp"

#include <fstream>
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

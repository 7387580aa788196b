// The eval preset (Resize 256 + CenterCrop 224, u8) against torchvision's antialiased resize of
// the same decoded pixels, recorded by tests/parity/make_eval_reference.py.

#include <conveyor/io/file.hpp>
#include <conveyor/io/jpeg.hpp>
#include <conveyor/pipeline/image_augment.hpp>

#include <catch2/catch.hpp>

#include "support/data.hpp"
#include "support/md5.hpp"

#include <cmath>
#include <fstream>
#include <string>
#include <vector>

using namespace conveyor;

TEST_CASE("the eval preset is within 1 LSB of torchvision and 0.1 LSB on average", "[ops][parity][data]") {
  CONVEYOR_REQUIRE_SHARED_DATA(data);
  const auto ref_dir = std::filesystem::path(CONVEYOR_SOURCE_DIR) / "tests" / "data" / "eval";
  const auto rows = conveyor_test::read_tsv(ref_dir / "INDEX.tsv");
  REQUIRE(rows.size() == 6);
  ImageAugment eval{.crop = CenterCrop{224}, .resize = Resize{256}, .dtype = DType::u8, .layout = Layout::NHWC,
                    .decode_scaling = false};  // full resolution: torchvision resizes the whole decode
  auto ws = eval.make_workspace();
  ByteBuffer jpeg;
  for (const auto& row : rows) {
    const std::string photo = row.at("photo");
    INFO(photo);
    read_file((data / "photos" / photo).string(), jpeg);
    // The reference was computed from libjpeg-turbo's decode; check ours is that decode.
    const RgbImage decoded = decode_jpeg(jpeg.span());
    conveyor_test::Md5 md5;
    md5.update(decoded.pixels.data(), decoded.pixels.size());
    REQUIRE(md5.hex() == row.at("md5_rgb_decode"));

    std::vector<std::uint8_t> out(224 * 224 * 3);
    eval.apply({}, jpeg.span(), std::as_writable_bytes(std::span(out)), ws);
    std::ifstream in(ref_dir / (std::filesystem::path(photo).stem().string() + ".ppm"), std::ios::binary);
    std::string magic;
    int w = 0, h = 0, maxval = 0;
    in >> magic >> w >> h >> maxval;
    in.get();
    std::vector<std::uint8_t> ref(224 * 224 * 3);
    in.read(reinterpret_cast<char*>(ref.data()), static_cast<std::streamsize>(ref.size()));
    REQUIRE(in.good());
    int max_diff = 0;
    double sum = 0;
    for (std::size_t i = 0; i < ref.size(); ++i) {
      const int d = std::abs(int(out[i]) - int(ref[i]));
      max_diff = std::max(max_diff, d);
      sum += d;
    }
    const double mean = sum / double(ref.size());
    UNSCOPED_INFO(photo << ": max " << max_diff << ", mean " << mean);
    CHECK(max_diff <= 1);
    CHECK(mean <= 0.1);
  }
}

// The eval preset (Resize 256 + CenterCrop 224, u8) and resized crops against torchvision's
// antialiased resize of the same decoded pixels, recorded by tests/parity/make_eval_reference.py.

#include <conveyor/io/file.hpp>
#include <conveyor/io/jpeg.hpp>
#include <conveyor/ops/cpu/resample.hpp>
#include <conveyor/pipeline/image_augment.hpp>

#include <catch2/catch.hpp>

#include "support/data.hpp"
#include "support/md5.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <string>
#include <vector>

using namespace conveyor;

namespace {

/// A reference image of tests/data/eval.
std::vector<std::uint8_t> read_ppm(const std::filesystem::path& path, int width, int height) {
  std::ifstream in(path, std::ios::binary);
  std::string magic;
  int w = 0, h = 0, maxval = 0;
  in >> magic >> w >> h >> maxval;
  in.get();
  REQUIRE((magic == "P6" && w == width && h == height && maxval == 255));
  std::vector<std::uint8_t> ref(std::size_t(w) * h * 3);
  in.read(reinterpret_cast<char*>(ref.data()), static_cast<std::streamsize>(ref.size()));
  REQUIRE(in.good());
  return ref;
}

/// Requires `out` to equal `ref`, saying by how much it does not.
void require_equal(const std::vector<std::uint8_t>& out, const std::vector<std::uint8_t>& ref) {
  REQUIRE(out.size() == ref.size());
  int max_diff = 0, differ = 0;
  for (std::size_t i = 0; i < ref.size(); ++i) {
    const int d = std::abs(int(out[i]) - int(ref[i]));
    max_diff = std::max(max_diff, d);
    differ += d != 0;
  }
  INFO(differ << " bytes differ, by up to " << max_diff);
  CHECK(differ == 0);
}

const std::filesystem::path ref_dir = std::filesystem::path(CONVEYOR_SOURCE_DIR) / "tests" / "data" / "eval";

}  // namespace

TEST_CASE("the eval preset, with its default options, equals torchvision's uint8 path bit for bit",
          "[ops][parity][data]") {
  CONVEYOR_REQUIRE_SHARED_DATA(data);
  const auto rows = conveyor_test::read_tsv(ref_dir / "INDEX.tsv");
  REQUIRE(rows.size() == 7);
  // The preset as a user gets it, but for the output's encoding: u8 HWC, as the references are.
  ImageAugment eval = ImageAugment::eval(256, 224);
  eval.dtype = DType::u8;
  eval.layout = Layout::NHWC;
  eval.normalize.reset();
  CHECK_FALSE(eval.scaled_decoding());
  auto ws = eval.make_workspace();
  ByteBuffer jpeg;
  int large = 0;  // photos of 2 MP and more, where a scaled decode would differ
  // Margins (Resize 256's long side less 224) of 3 mod 4: the only ones where torchvision's
  // round-half-even centre and a floor differ, by one pixel.
  int odd_half_margins = 0;
  for (const auto& row : rows) {
    const std::string photo = row.at("photo");
    INFO(photo);
    const long long width = std::stoll(row.at("width")), height = std::stoll(row.at("height"));
    large += width * height >= 2'000'000;
    odd_half_margins += (256 * std::max(width, height) / std::min(width, height) - 224) % 4 == 3;
    read_file((data / "photos" / photo).string(), jpeg);
    // The reference was computed from libjpeg-turbo's decode; check ours is that decode.
    const RgbImage decoded = decode_jpeg(jpeg.span());
    conveyor_test::Md5 md5;
    md5.update(decoded.pixels.data(), decoded.pixels.size());
    REQUIRE(md5.hex() == row.at("md5_rgb_decode"));

    std::vector<std::uint8_t> out(224 * 224 * 3);
    eval.apply({}, jpeg.span(), std::as_writable_bytes(std::span(out)), ws);
    require_equal(out, read_ppm(ref_dir / (std::filesystem::path(photo).stem().string() + ".ppm"), 224, 224));
  }
  CHECK(large >= 2);
  CHECK(odd_half_margins >= 1);
}

TEST_CASE("resized crops equal torchvision's resized_crop on uint8 bit for bit", "[ops][parity][data]") {
  CONVEYOR_REQUIRE_SHARED_DATA(data);
  const auto rows = conveyor_test::read_tsv(ref_dir / "crops" / "INDEX.tsv");
  REQUIRE(rows.size() == 14);
  ByteBuffer jpeg;
  ops::cpu::ResampleScratch scratch;
  for (const auto& row : rows) {
    const auto at = [&](const char* key) { return std::stoi(row.at(key)); };
    const int left = at("left"), top = at("top"), bw = at("width"), bh = at("height");
    const int ow = at("out_width"), oh = at("out_height");
    INFO(row.at("file") << ": box " << bw << "x" << bh << "+" << left << "+" << top << " -> " << ow << "x" << oh);
    read_file((data / "photos" / row.at("photo")).string(), jpeg);
    const RgbImage decoded = decode_jpeg(jpeg.span());
    ops::SamplePlan p;
    p.out_width = ow;
    p.out_height = oh;
    p.x = {0.0, double(bw) / ow, 0, ow, left, left + bw};
    p.y = {0.0, double(bh) / oh, 0, oh, top, top + bh};
    p.src = {0, 3, std::int64_t{decoded.width} * 3, decoded.width, decoded.height};
    const ops::OutputParams params{.dtype = DType::u8, .layout = Layout::NHWC};
    std::vector<std::uint8_t> out(std::size_t(ow) * oh * 3);
    ops::cpu::resample(decoded.pixels.data(), p, params, out.data(), scratch);
    require_equal(out, read_ppm(ref_dir / "crops" / row.at("file"), ow, oh));
  }
}

// ImageAugment's region-of-interest and DCT-scaled decoding: ROI changes nothing; scaling changes
// little, and never the geometry.

#include <conveyor/conveyor.hpp>

#include <catch2/catch.hpp>

#include "support/data.hpp"
#include "support/datasets.hpp"

#include <cmath>
#include <vector>

using namespace conveyor;

namespace {

std::vector<std::uint8_t> decode_augmented(const ImageAugment& aug, std::span<const std::byte> jpeg, std::uint64_t index) {
  auto ws = aug.make_workspace();
  std::vector<std::uint8_t> out(aug.sample_spec().bytes());
  aug.apply({.seed = 1, .epoch = 0, .index = index}, jpeg, std::as_writable_bytes(std::span(out)), ws);
  return out;
}

std::vector<std::vector<std::byte>> photo_files(const std::filesystem::path& data) {
  std::vector<std::vector<std::byte>> out;
  ByteBuffer b;
  std::vector<std::filesystem::path> files;
  for (const auto& e : std::filesystem::directory_iterator(data / "photos"))
    if (e.path().extension() == ".jpg") files.push_back(e.path());
  std::sort(files.begin(), files.end());
  for (const auto& f : files) {
    read_file(f.string(), b);
    out.emplace_back(b.data(), b.data() + b.size());
  }
  return out;
}

}  // namespace

TEST_CASE("decoding only the crop's window changes no output bit", "[ops][roi]") {
  const InMemory data = conveyor_test::jpeg_dataset(30, 9);
  for (std::uint64_t i = 0; i < data.size(); ++i)
    for (int orientation_on = 0; orientation_on < 2; ++orientation_on) {
      for (ImageAugment aug : {ImageAugment::train(40), ImageAugment::eval(48, 40)}) {
        aug.dtype = DType::u8;
        aug.normalize.reset();
        aug.decode_scaling = false;
        aug.exif_orientation = orientation_on;
        ImageAugment whole = aug;
        whole.roi = false;
        REQUIRE(decode_augmented(aug, data.bytes(i), i) == decode_augmented(whole, data.bytes(i), i));
      }
    }
}

TEST_CASE("ROI changes no output bit on real photos in any orientation", "[ops][roi][data]") {
  CONVEYOR_REQUIRE_SHARED_DATA(data);
  const auto all = photo_files(data);
  REQUIRE(all.size() >= 50);
  for (std::size_t i = 0; i < all.size(); ++i) {
    INFO("photo " << i);
    ImageAugment aug = i % 2 ? ImageAugment::train(224) : ImageAugment::eval();
    aug.dtype = DType::u8;
    aug.normalize.reset();
    aug.decode_scaling = false;
    aug.exif_orientation = i % 3 == 0;
    ImageAugment whole = aug;
    whole.roi = false;
    REQUIRE(decode_augmented(aug, all[i], i) == decode_augmented(whole, all[i], i));
  }
}

TEST_CASE("DCT-scaled decoding stays within 0.6 LSB and above 44 dB of full-size decoding", "[ops][roi][data]") {
  CONVEYOR_REQUIRE_SHARED_DATA(data);
  const auto all = photo_files(data);
  double abs_sum = 0, sq_sum = 0, n = 0;
  double worst_mad = 0;
  for (std::size_t i = 0; i < all.size(); ++i)
    for (ImageAugment aug : {ImageAugment::train(224), ImageAugment::eval()}) {
      aug.dtype = DType::u8;
      aug.normalize.reset();
      aug.decode_scaling = true;  // the eval preset decodes at full size unless asked
      ImageAugment full = aug;
      full.decode_scaling = false;
      const auto a = decode_augmented(aug, all[i], i), b = decode_augmented(full, all[i], i);
      double photo_abs = 0;
      for (std::size_t k = 0; k < a.size(); ++k) {
        const double d = double(a[k]) - double(b[k]);
        photo_abs += std::fabs(d);
        sq_sum += d * d;
      }
      abs_sum += photo_abs;
      n += double(a.size());
      worst_mad = std::max(worst_mad, photo_abs / double(a.size()));
    }
  const double mad = abs_sum / n, psnr = 10 * std::log10(255.0 * 255.0 / (sq_sum / n));
  WARN("DCT-scaled vs full-size decode over " << all.size() << " photos, train and eval presets: mean |diff| "
                                              << mad << " LSB, PSNR " << psnr << " dB, worst photo " << worst_mad);
  // Measured with libjpeg-turbo 2.1.5 over the 60 photos: 0.5615 LSB, 44.65 dB. The bounds leave
  // 0.04 LSB and 0.65 dB for another libjpeg-turbo's rounding; a wrong scale or window is far off.
  CHECK(mad <= 0.6);
  CHECK(psnr >= 44.0);
}

TEST_CASE("every Exif orientation of a photo gives the same upright crop", "[ops][roi][exif][data]") {
  CONVEYOR_REQUIRE_SHARED_DATA(data);
  ByteBuffer b;
  for (const char* scene : {"Landscape", "Portrait"})
    for (bool scaling : {false, true}) {
      ImageAugment aug = ImageAugment::eval();
      aug.dtype = DType::u8;
      aug.normalize.reset();
      aug.exif_orientation = true;
      aug.decode_scaling = scaling;
      std::vector<std::uint8_t> upright;
      for (int o = 1; o <= 8; ++o) {
        read_file((data / "photos" / ("exif_" + std::string(scene) + "_" + std::to_string(o) + ".jpg")).string(), b);
        const auto out = decode_augmented(aug, b.span(), 0);
        if (o == 1) {
          upright = out;
          continue;
        }
        double sq = 0;
        for (std::size_t k = 0; k < out.size(); ++k) sq += (double(out[k]) - upright[k]) * (double(out[k]) - upright[k]);
        const double rmse = std::sqrt(sq / double(out.size())) / 255.0;
        INFO(scene << " orientation " << o << " scaling " << scaling << ": RMSE " << rmse);
        CHECK(rmse < 0.05);  // re-encoded copies; a wrong rotation is far above this
      }
      // And the orientation does matter: without applying it, orientation 6 is another picture.
      aug.exif_orientation = false;
      read_file((data / "photos" / ("exif_" + std::string(scene) + "_6.jpg")).string(), b);
      const auto raw = decode_augmented(aug, b.span(), 0);
      double sq = 0;
      for (std::size_t k = 0; k < raw.size(); ++k) sq += (double(raw[k]) - upright[k]) * (double(raw[k]) - upright[k]);
      CHECK(std::sqrt(sq / double(raw.size())) / 255.0 > 0.1);
    }
}

// The presets' float output against torchvision's Normalize with the ImageNet statistics its
// documentation and models publish. The statistics are literals here, never read from conveyor,
// so a wrong constant in Normalize::imagenet() cannot set its own expectation.

#include <conveyor/io/file.hpp>
#include <conveyor/pipeline/image_augment.hpp>

#include <catch2/catch.hpp>

#include "support/data.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <string>
#include <vector>

using namespace conveyor;

namespace {

constexpr double imagenet_mean[3] = {0.485, 0.456, 0.406};
constexpr double imagenet_std[3] = {0.229, 0.224, 0.225};

/// torchvision's ToTensor (x / 255) then Normalize ((x - mean) / std), in double.
double torchvision_normalize(std::uint8_t v, int channel) {
  return (v / 255.0 - imagenet_mean[channel]) / imagenet_std[channel];
}

/// The bundled photos: real JPEGs of every sampling the demo has, present in every checkout.
std::vector<std::filesystem::path> photos() {
  std::vector<std::filesystem::path> out;
  for (const auto& e : std::filesystem::recursive_directory_iterator(conveyor_test::sample_photos() / "samples"))
    if (e.is_regular_file()) out.push_back(e.path());
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

TEST_CASE("the train and eval presets' f32 output is torchvision's Normalize of their u8 output, "
          "with the published ImageNet mean and std",
          "[ops][normalize][parity]") {
  const auto files = photos();
  REQUIRE(files.size() >= 10);
  for (const bool train : {true, false}) {
    const ImageAugment preset = train ? ImageAugment::train(224) : ImageAugment::eval(256, 224);
    REQUIRE(preset.dtype == DType::f32);
    REQUIRE(preset.layout == Layout::NCHW);
    // The same crop and flip as u8 pixels: what torchvision's Normalize is given.
    ImageAugment pixels = preset;
    pixels.dtype = DType::u8;
    pixels.normalize.reset();
    auto ws = preset.make_workspace();
    auto pixels_ws = pixels.make_workspace();
    ByteBuffer jpeg;
    constexpr std::size_t plane = 224 * 224;
    std::vector<float> out(3 * plane);
    std::vector<std::uint8_t> u8(3 * plane);
    for (std::size_t i = 0; i < files.size(); ++i) {
      INFO((train ? "train" : "eval") << ": " << files[i].filename().string());
      read_file(files[i].string(), jpeg);
      const SampleContext ctx{.seed = 11, .epoch = 2, .index = i};
      preset.apply(ctx, jpeg.span(), std::as_writable_bytes(std::span(out)), ws);
      pixels.apply(ctx, jpeg.span(), std::as_writable_bytes(std::span(u8)), pixels_ws);
      double worst[3] = {0, 0, 0};
      for (std::size_t e = 0; e < u8.size(); ++e) {
        const int c = static_cast<int>(e / plane);
        worst[c] = std::max(worst[c], std::fabs(double(out[e]) - torchvision_normalize(u8[e], c)));
      }
      INFO("largest difference per channel: " << worst[0] << ", " << worst[1] << ", " << worst[2]);
      // One fmaf of float constants against double arithmetic: below 5.5e-7 for values under 2.7
      // (three roundings of 2^-24 relative); a constant wrong in its third digit is 1e-3 away.
      CHECK(std::max({worst[0], worst[1], worst[2]}) < 1e-6);
    }
  }
}

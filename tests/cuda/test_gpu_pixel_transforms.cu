// ImageAugment's pixel transforms through the CUDA backend (programs in the slot's table, the
// fused kernel into u8 images, the pixel-program kernel into the output) against the CPU backend,
// bit for bit: every dtype and layout, on the real photos, recipes drawn at random, samples the
// CPU resamples among them. Runs only where a GPU is (label gpu).

#include <conveyor/cuda/all.cuh>

#include <catch2/catch.hpp>

#include "cuda/gpu_batches.hpp"
#include "support/data.hpp"
#include "support/images.hpp"
#include "support/recipes.hpp"
#include "support/temp_dir.hpp"

#include <filesystem>
#include <fstream>
#include <variant>
#include <vector>

using namespace conveyor;
using conveyor_test::require_same_as_cpu;

namespace {

/// A list of pixel transforms drawn from `rng`: each kind now and then, with its arguments across
/// their ranges, nested in RandomApply, RandomChoice or RandomOrder sometimes, erasing (random
/// values or numbers, or a choice of the two) last; no more ops than a program holds.
std::vector<PixelTransform> random_recipe(CounterRng& rng) {
  const auto p = [&] { return rng.below(4) == 0 ? 1.0 : rng.uniform(); };
  std::vector<PixelTransform> leaves;
  int ops = 0;
  for (int k = 0; k < 6 && ops + 4 <= ops::pixel::max_program_ops - 3; ++k) {  // a jitter's 4, three erasings
    switch (rng.below(9)) {
      case 0: leaves.push_back(RandomVerticalFlip{.p = p()}); break;
      case 1:
        leaves.push_back(ColorJitter{.brightness = rng.uniform(0, 1), .contrast = rng.uniform(0, 1),
                                     .saturation = {rng.uniform(0, 1), 1.0 + rng.uniform(0, 1)},
                                     .hue = rng.uniform(0, 0.5)});
        break;
      case 2: leaves.push_back(rng.below(2) ? PixelTransform{Grayscale{}} : PixelTransform{RandomGrayscale{.p = p()}}); break;
      case 3: leaves.push_back(RandomInvert{.p = p()}); break;
      case 4: leaves.push_back(RandomPosterize{.bits = static_cast<int>(rng.below(9)), .p = p()}); break;
      case 5: leaves.push_back(RandomSolarize{.threshold = rng.uniform(0, 255), .p = p()}); break;
      case 6: leaves.push_back(RandomApply{.transforms = {RandomInvert{.p = p()}, RandomGrayscale{.p = p()}}, .p = p()}); break;
      case 7:
        leaves.push_back(RandomChoice{.transforms = {RandomInvert{.p = p()}, RandomSolarize{.threshold = rng.uniform(0, 255), .p = p()},
                                                     RandomVerticalFlip{.p = p()}},
                                      .p = rng.below(2) ? std::vector<double>{} : std::vector<double>{p(), 1.0, p()}});
        break;
      default:
        leaves.push_back(RandomOrder{.transforms = {RandomGrayscale{.p = p()}, RandomHorizontalFlip{.p = p()},
                                                    RandomPosterize{.bits = static_cast<int>(rng.below(9)), .p = p()}}});
    }
    ops += std::visit([](const auto& x) { return x.max_ops(); }, leaves.back());
  }
  if (rng.below(2)) leaves.push_back(RandomErasing{.p = p(), .value = ErasingValue::random()});
  if (rng.below(2)) leaves.push_back(RandomErasing{.p = p(), .value = {rng.uniform(-2, 2), rng.uniform(-2, 2), 0.5}});
  if (rng.below(3) == 0)
    leaves.push_back(RandomChoice{.transforms = {RandomErasing{.p = p(), .value = ErasingValue::random()},
                                                 RandomErasing{.p = p(), .value = {rng.uniform(-2, 2), 0.0, 1.0}}},
                                  .p = {p(), 1.0}});
  return leaves;
}

}  // namespace

TEST_CASE("pixel programs on the GPU equal the CPU backend's batches for every dtype and layout on the photos",
          "[gpu][transforms][data]") {
  CONVEYOR_REQUIRE_SHARED_DATA(data);
  const conveyor_test::TempDir t;
  const FileList photos = conveyor_test::corpus_photos(data, t);
  CounterRng rng(2026, 0, 0, RngOp::user);
  for (DType dtype : {DType::u8, DType::f32, DType::f16, DType::bf16})
    for (Layout layout : {Layout::NCHW, Layout::NHWC}) {
      ImageAugment aug = ImageAugment::train(224);
      aug.dtype = dtype;
      aug.layout = layout;
      if (dtype == DType::u8) aug.normalize.reset();
      aug.transforms = conveyor_test::for_output(random_recipe(rng), dtype);
      aug.validate();
      INFO("dtype " << to_string(dtype) << ", layout " << to_string(layout) << ", " << aug.transforms.size()
                    << " transforms");
      require_same_as_cpu(photos, aug, {.batch_size = 16, .workers = 8, .seed = 3, .device = 0}, 2);
      ImageAugment eval = ImageAugment::eval(72, 64);  // full-scale decoding, a small output
      eval.dtype = dtype;
      eval.layout = layout;
      if (dtype == DType::u8) eval.normalize.reset();
      eval.transforms = conveyor_test::for_output(random_recipe(rng), dtype);
      eval.validate();
      require_same_as_cpu(photos, eval, {.batch_size = 7, .workers = 4, .seed = 4, .device = 0}, 1);
    }
}

// A compiled Compose normalises with torchvision's three roundings (Normalize::torchvision_rounding).
TEST_CASE("a compiled Compose's normalisation on the GPU equals the CPU's with and without pixel transforms",
          "[gpu][transforms][data]") {
  CONVEYOR_REQUIRE_SHARED_DATA(data);
  const conveyor_test::TempDir t;
  const FileList photos = conveyor_test::corpus_photos(data, t);
  for (DType dtype : {DType::f32, DType::f16, DType::bf16})
    for (Layout layout : {Layout::NCHW, Layout::NHWC})
      for (const bool transforms : {false, true}) {
        // the eval Compose as ImageAugment.from_transforms makes it, to (height, width)
        ImageAugment eval{.crop = CenterCrop{.size = {56, 72}}, .resize = Resize{.size = 80}, .dtype = dtype,
                          .layout = layout, .decode_scaling = false};
        eval.normalize = Normalize::imagenet();
        eval.normalize->torchvision_rounding = true;
        if (transforms) eval.transforms = {RandomInvert{.p = 0.5}, RandomErasing{.p = 0.5}};
        eval.validate();
        INFO(to_string(dtype) << " " << to_string(layout) << (transforms ? ", with transforms" : ""));
        require_same_as_cpu(photos, eval, {.batch_size = 8, .workers = 4, .seed = 5, .device = 0}, 1);
      }
}

TEST_CASE("many random recipes on the GPU equal the CPU backend's batches", "[gpu][transforms][data]") {
  CONVEYOR_REQUIRE_SHARED_DATA(data);
  const conveyor_test::TempDir t;
  const FileList photos = conveyor_test::corpus_photos(data, t);
  CounterRng rng(7, 0, 0, RngOp::user);
  for (int recipe = 0; recipe < 24; ++recipe) {
    const int side = 40 + 8 * static_cast<int>(rng.below(8));  // and every other recipe (height, width), odd ones too
    ImageAugment aug{.crop = RandomResizedCrop{.size = recipe % 2 ? Size{side} : Size{side - 5, side + 11}},
                     .flip = {.p = 0.5},
                     .transforms = random_recipe(rng),
                     .normalize = Normalize::imagenet(),
                     .dtype = DType::bf16,
                     .layout = recipe % 2 ? Layout::NHWC : Layout::NCHW};
    aug.validate();
    INFO("recipe " << recipe << ", size " << aug.output_size().height << " x " << aug.output_size().width);
    require_same_as_cpu(photos, aug, {.batch_size = 9, .workers = 4, .seed = std::uint64_t(recipe), .device = 0}, 1);
  }
}

TEST_CASE("samples resampled on the CPU run their programs on the GPU with the same bits", "[gpu][transforms][fallback]") {
  CONVEYOR_REQUIRE_SHARED_DATA(data);
  const conveyor_test::TempDir t;
  const FileList photos = conveyor_test::corpus_photos(data, t);
  CounterRng rng(99, 0, 0, RngOp::user);
  for (DType dtype : {DType::u8, DType::f16}) {
    ImageAugment aug{.crop = RandomResizedCrop{.size = 32}, .transforms = conveyor_test::for_output(random_recipe(rng), dtype),
                     .dtype = dtype};
    if (dtype != DType::u8) aug.normalize = Normalize::imagenet();
    aug.validate();
    // No room to stage a window: every sample's u8 image is made on the CPU and uploaded.
    require_same_as_cpu(photos, aug, {.batch_size = 6, .workers = 2, .device = 0, .arena_bytes = 1}, 1);
  }
}

TEST_CASE("pixel transforms hold two u8 images a sample of device memory more and none without them",
          "[gpu][transforms]") {
  const ImageAugment plain = ImageAugment::train(64);
  ImageAugment with = plain;
  with.transforms = {RandomInvert{}};
  const InMemory data = [] {
    InMemory d;
    for (int i = 0; i < 8; ++i) d.add(conveyor_test::random_jpeg(96, 80, std::uint64_t(i)), i);
    return d;
  }();
  const PipelineOptions o{.batch_size = 4, .workers = 2, .device = 0};
  BatchPipeline a(data, SequentialSampler(data.size()), plain, o), b(data, SequentialSampler(data.size()), with, o);
  for (const Batch& batch : a) (void)batch;
  for (const Batch& batch : b) (void)batch;
  // The program path holds two u8 images a sample (its input and the neighbourhood ops' scratch)
  // and tap tables as the fused kernel's; without transforms, only the fused kernel's.
  const std::uint64_t extra = b.stats().device_bytes - a.stats().device_bytes;
  CHECK(extra >= 2 * 4 * 64 * 64 * 3);
  CHECK(extra < 3 * 4 * 64 * 64 * 3 + 4 * 4 * sizeof(ops::pixel::PixelProgram));
}

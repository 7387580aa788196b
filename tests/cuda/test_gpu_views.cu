// Views on the CUDA backend against the CPU backend, bit for bit: DINO's multi-crop (two global
// views with their own pixel programs, local views with theirs) and a view without transforms
// (its own resampling step), on the real photos (Exif-rotated among them) and seeded JPEGs, every
// dtype, both layouts, decode scaling on and off, and an arena too small for the photos' windows
// (their copies finished on the CPU). Runs only where a GPU is (label gpu).

#include <conveyor/cuda/all.cuh>
#include <conveyor/pipeline/views.hpp>

#include <catch2/catch.hpp>

#include "cuda/gpu_batches.hpp"
#include "support/data.hpp"
#include "support/datasets.hpp"
#include "support/temp_dir.hpp"

#include <filesystem>
#include <fstream>

using namespace conveyor;
using conveyor_test::require_same_as_cpu;

namespace {

/// DINO's views at `global` and `local` sizes, plus two copies of a view without pixel transforms.
Views dino(DType dtype, Layout layout, bool scaling, int global = 224, int local = 96) {
  const RandomApply jitter{
      .transforms = {ColorJitter{.brightness = 0.4, .contrast = 0.4, .saturation = 0.2, .hue = 0.1}}, .p = 0.8};
  ImageAugment g{.crop = RandomResizedCrop{.size = global, .scale = {0.4, 1.0}}, .flip = {.p = 0.5}, .dtype = dtype,
                 .layout = layout, .exif_orientation = layout == Layout::NHWC, .decode_scaling = scaling};
  if (dtype != DType::u8) g.normalize = Normalize::imagenet();
  ImageAugment first = g, second = g, small = g, plain = g;
  first.transforms = {jitter, RandomGrayscale{.p = 0.2}, GaussianBlur{.kernel_size = 23, .sigma = Numbers{0.1, 2.0}}};
  second.transforms = {jitter, RandomGrayscale{.p = 0.2},
                       RandomApply{.transforms = {GaussianBlur{.kernel_size = 23, .sigma = Numbers{0.1, 2.0}}}, .p = 0.1},
                       RandomSolarize{.threshold = 128.0, .p = 0.2}};
  small.crop = RandomResizedCrop{.size = local, .scale = {0.05, 0.4}};
  small.transforms = {jitter, RandomGrayscale{.p = 0.2},
                      RandomApply{.transforms = {GaussianBlur{.kernel_size = 9, .sigma = Numbers{0.1, 2.0}}}, .p = 0.5}};
  plain.crop = RandomResizedCrop{.size = local, .scale = {0.2, 1.0}};
  return Views{{View{first}, View{second}, View{small, 8}, View{plain, 2}}};
}

TEST_CASE("GPU Views equal CPU Views bit for bit on real photos for every dtype and layout", "[gpu][parity][views][data]") {
  CONVEYOR_REQUIRE_SHARED_DATA(data_dir);
  conveyor_test::TempDir t;
  const FileList photos = conveyor_test::corpus_photos(data_dir, t);
  REQUIRE(photos.size() >= 50);
  for (DType dtype : {DType::u8, DType::f32, DType::f16, DType::bf16})
    for (Layout layout : {Layout::NCHW, Layout::NHWC}) {
      INFO("dtype " << to_string(dtype) << " layout " << to_string(layout));
      require_same_as_cpu(photos, dino(dtype, layout, true), {.batch_size = 16, .workers = 8, .seed = 3, .device = 0}, 1);
    }
  INFO("without decode scaling");
  require_same_as_cpu(photos, dino(DType::bf16, Layout::NCHW, false), {.batch_size = 8, .workers = 8, .device = 0}, 1);
}

TEST_CASE("GPU Views whose windows do not fit the arena are finished on the CPU with the same bits",
          "[gpu][parity][views][fallback]") {
  const InMemory jpegs = conveyor_test::jpeg_dataset(40, 5);
  require_same_as_cpu(jpegs, dino(DType::f16, Layout::NCHW, true, 64, 32),
                      {.batch_size = 6, .workers = 4, .seed = 9, .device = 0, .arena_bytes = 1}, 2);
  require_same_as_cpu(jpegs, dino(DType::u8, Layout::NHWC, false, 64, 32),
                      {.batch_size = 7, .workers = 3, .seed = 9, .device = 0}, 2);
}

}  // namespace

// ImageAugment's pixel transforms on the real photos. The CPU backend: a program that draws nothing
// takes today's path bit for bit; otherwise the drawn program runs on the resampled u8 image
// before normalisation, and erasing on the normalised output. The device path through a
// host-memory backend (its "kernels" the CPU's functions): programs staged in the slot's table,
// samples resampled into u8 images then run, CPU-finished samples among them, JPEGs staged for
// the device decoder; its batches equal the CPU backend's, for every worker count.

#include <conveyor/conveyor.hpp>
#include <conveyor/ops/cpu/pixel_program.hpp>

#include "support/data.hpp"
#include "support/digest.hpp"
#include "support/host_device.hpp"
#include "support/images.hpp"
#include "support/recipes.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <set>
#include <string>
#include <vector>

using namespace conveyor;
namespace fs = std::filesystem;

namespace {

/// The photos of the real-image corpus (JPEGs of 0.1 to 13 megapixels, colour and grey,
/// baseline and progressive), in name order.
InMemory corpus_photos(const fs::path& data) {
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(data / "photos"))
    if (e.path().extension() == ".jpg") files.push_back(e.path());
  std::sort(files.begin(), files.end());
  InMemory d;
  for (std::size_t i = 0; i < files.size(); ++i) {
    std::ifstream in(files[i], std::ios::binary);
    const std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    d.add(std::as_bytes(std::span(bytes)), std::int64_t(i));
  }
  return d;
}

/// `aug` on sample `index` of `data`, on the CPU.
std::vector<std::byte> apply_one(const ImageAugment& aug, const InMemory& data, std::uint64_t index,
                                 std::uint64_t seed = 5, std::uint64_t epoch = 0) {
  auto ws = aug.make_workspace();
  std::vector<std::byte> out(aug.sample_spec().bytes());
  aug.apply({seed, epoch, index, nullptr}, data.bytes(index), out, ws);
  return out;
}

/// `aug` with `transforms` (their erasings' values ones its output holds).
ImageAugment with(ImageAugment aug, std::vector<PixelTransform> transforms) {
  aug.transforms = conveyor_test::for_output(std::move(transforms), aug.dtype);
  aug.validate();
  return aug;
}

std::vector<ImageAugment> settings() {
  std::vector<ImageAugment> out;
  for (const DType dtype : {DType::u8, DType::f32, DType::f16, DType::bf16})
    for (const Layout layout : {Layout::NCHW, Layout::NHWC}) {
      ImageAugment a{.crop = RandomResizedCrop{.size = 48}, .flip = {.p = 0.5}, .dtype = dtype, .layout = layout};
      if (dtype != DType::u8) a.normalize = Normalize::imagenet();
      out.push_back(a);
    }
  out.push_back(ImageAugment{.crop = CenterCrop{40}, .resize = Resize{44}, .dtype = DType::f32, .layout = Layout::NHWC});
  return out;
}

}  // namespace

TEST_CASE("a program that draws nothing takes today's path: the same bytes as no transforms", "[pipeline][transforms]") {
  CONVEYOR_REQUIRE_SHARED_DATA(data);
  const InMemory photos = corpus_photos(data);
  for (const ImageAugment& base : settings()) {
    const ImageAugment idle = with(base, {RandomInvert{.p = 0.0}, RandomApply{.transforms = {Grayscale{}}, .p = 0.0},
                                          ColorJitter{.brightness = {1.0, 1.0}},
                                          RandomChoice{.transforms = {RandomInvert{.p = 0.0}, RandomSolarize{.threshold = 9.0, .p = 0.0}}},
                                          RandomOrder{.transforms = {RandomEqualize{.p = 0.0}, RandomGrayscale{.p = 0.0}}},
                                          RandomErasing{.p = 0.0}});
    for (std::uint64_t i = 0; i < photos.size(); ++i) {
      REQUIRE(idle.program({5, 0, i, nullptr}).pixels.count == 0);
      REQUIRE(apply_one(idle, photos, i) == apply_one(base, photos, i));
    }
  }
}

TEST_CASE("the drawn program runs on the resampled u8 image, then the store normalises it", "[pipeline][transforms]") {
  CONVEYOR_REQUIRE_SHARED_DATA(data);
  const InMemory photos = corpus_photos(data);
  const std::vector<PixelTransform> recipe{ColorJitter{.brightness = 0.4, .contrast = 0.4, .saturation = 0.4, .hue = 0.1},
                                           RandomGrayscale{.p = 0.3},
                                           RandomVerticalFlip{.p = 0.5},
                                           RandomPosterize{.bits = 5, .p = 0.3},
                                           RandomSolarize{.threshold = 160.0, .p = 0.3},
                                           RandomInvert{.p = 0.3},
                                           RandomErasing{.p = 0.7, .value = ErasingValue::random()}};
  for (const ImageAugment& base : settings()) {
    INFO("dtype " << to_string(base.dtype) << ", layout " << to_string(base.layout));
    const ImageAugment aug = with(base, recipe);
    // The same crop and flip, resampled to u8 HWC with no transforms: the program's input.
    ImageAugment plain = base;
    plain.dtype = DType::u8;
    plain.layout = Layout::NHWC;
    plain.normalize.reset();
    const int n = aug.output_size().width;  // square recipes
    for (std::uint64_t i = 0; i < photos.size(); ++i) {
      const SampleProgram drawn = aug.program({5, 0, i, nullptr});
      std::vector<std::byte> image = apply_one(plain, photos, i);
      if (drawn.flip_y)  // folded into the plan: mirror the rows as the resampler's store does
        for (int y = 0; y < n / 2; ++y)
          std::swap_ranges(image.begin() + std::ptrdiff_t(y) * n * 3, image.begin() + std::ptrdiff_t(y + 1) * n * 3,
                           image.begin() + std::ptrdiff_t(n - 1 - y) * n * 3);
      std::vector<std::byte> expect(aug.sample_spec().bytes());
      ops::cpu::PixelScratch scratch;
      ops::cpu::run_pixel_program(drawn.pixels, reinterpret_cast<std::uint8_t*>(image.data()), n, n,
                                  aug.output_params(), expect.data(), scratch);
      REQUIRE(apply_one(aug, photos, i) == expect);
    }
  }
}

TEST_CASE("RandomInvert, RandomVerticalFlip and Grayscale change today's u8 output as torchvision's functionals do",
          "[pipeline][transforms]") {
  CONVEYOR_REQUIRE_SHARED_DATA(data);
  const InMemory photos = corpus_photos(data);
  const ImageAugment base{.crop = RandomResizedCrop{.size = 56}, .flip = {.p = 0.5}, .dtype = DType::u8,
                          .layout = Layout::NHWC};
  const int n = 56;
  for (std::uint64_t i = 0; i < photos.size(); ++i) {
    const auto plain = apply_one(base, photos, i);
    const auto at = [&](const std::vector<std::byte>& img, int x, int y, int c) {
      return std::to_integer<int>(img[(std::size_t(y) * n + std::size_t(x)) * 3 + std::size_t(c)]);
    };
    const auto inverted = apply_one(with(base, {RandomInvert{.p = 1.0}}), photos, i);
    const auto flipped = apply_one(with(base, {RandomVerticalFlip{.p = 1.0}}), photos, i);
    const auto gray = apply_one(with(base, {Grayscale{}}), photos, i);
    for (int y = 0; y < n; ++y)
      for (int x = 0; x < n; ++x) {
        // rgb_to_grayscale: floor(0.2989 r + 0.587 g + 0.114 b), in float32 with torch's roundings
        const float l = std::fma(float(at(plain, x, y, 2)), 0.114f,
                                 std::fma(float(at(plain, x, y, 1)), 0.587f, float(at(plain, x, y, 0)) * 0.2989f));
        for (int c = 0; c < 3; ++c) {
          REQUIRE(at(inverted, x, y, c) == 255 - at(plain, x, y, c));
          REQUIRE(at(flipped, x, y, c) == at(plain, x, n - 1 - y, c));
          REQUIRE(at(gray, x, y, c) == static_cast<int>(l));
        }
      }
  }
}

TEST_CASE("RandomErasing replaces a rectangle of the normalised output with its value", "[pipeline][transforms]") {
  CONVEYOR_REQUIRE_SHARED_DATA(data);
  const InMemory photos = corpus_photos(data);
  const ImageAugment base{.crop = RandomResizedCrop{.size = 64}, .normalize = Normalize::imagenet(),
                          .dtype = DType::f32, .layout = Layout::NCHW};
  const ImageAugment aug = with(base, {RandomErasing{.p = 1.0, .value = {0.5, -1.25, 3.0}}});
  const int n = 64;
  for (std::uint64_t i = 0; i < photos.size(); ++i) {
    const SampleProgram drawn = aug.program({5, 0, i, nullptr});
    REQUIRE(drawn.pixels.count == 1);
    const ops::pixel::PixelOp& e = drawn.pixels.ops[0];
    const auto plain = apply_one(base, photos, i), erased = apply_one(aug, photos, i);
    const auto value = [](const std::vector<std::byte>& v, std::size_t k) {
      float f;
      std::memcpy(&f, v.data() + k * 4, 4);
      return f;
    };
    const float values[3] = {0.5f, -1.25f, 3.0f};
    for (int c = 0; c < 3; ++c)
      for (int y = 0; y < n; ++y)
        for (int x = 0; x < n; ++x) {
          const std::size_t k = (std::size_t(c) * n + std::size_t(y)) * n + std::size_t(x);
          const bool inside = y >= e.i[0] && y < e.i[0] + e.i[2] && x >= e.i[1] && x < e.i[1] + e.i[3];
          REQUIRE(value(erased, k) == (inside ? values[c] : value(plain, k)));
        }
  }
}

TEST_CASE("ImageAugment refuses transforms it cannot run, naming them", "[pipeline][transforms]") {
  ImageAugment aug = ImageAugment::train(32);
  aug.transforms = {RandomErasing{}, ColorJitter{.brightness = 0.2}};
  CHECK_THROWS_WITH(aug.validate(), Catch::Matchers::Contains("ColorJitter comes after RandomErasing"));
  aug.transforms = {RandomSolarize{.threshold = 256.0}};
  CHECK_THROWS_WITH(aug.validate(), Catch::Matchers::Contains("transforms[0]: RandomSolarize: threshold must be at most 255"));
}

TEST_CASE("a GaussianBlur whose half kernel reaches the output's side is refused before any sample, as torchvision "
          "refuses its image", "[pipeline][transforms]") {
  // torchvision reflect-pads by kernel_size // 2, which torch's pad takes only below the side.
  for (int size = 1; size <= 12; ++size)
    for (int k = 1; k <= ops::pixel::max_blur_kernel; k += 2) {
      INFO("size " << size << ", kernel " << k);
      ImageAugment aug{.crop = RandomResizedCrop{.size = size}, .transforms = {GaussianBlur{.kernel_size = k}}};
      if (k / 2 < size) {
        CHECK_NOTHROW(aug.validate());
      } else {
        CHECK_THROWS_WITH(aug.validate(), Catch::Matchers::Contains("transforms[0]: GaussianBlur: kernel_size") &&
                                              Catch::Matchers::Contains("Padding size should be less"));
      }
    }
  // one axis is enough; nested in containers the message follows the nesting
  ImageAugment tall{.crop = CenterCrop{12}, .transforms = {GaussianBlur{.kernel_size = KernelSize{3, 25}}}};
  CHECK_THROWS_WITH(tall.validate(), Catch::Matchers::Contains("kernel_size (3, 25)"));
  ImageAugment nested{.crop = CenterCrop{12},
                      .transforms = {RandomInvert{},
                                     RandomChoice{.transforms = {RandomInvert{},
                                                                 RandomApply{.transforms = {RandomEqualize{},
                                                                                            GaussianBlur{.kernel_size = 25}}}}}}};
  CHECK_THROWS_WITH(nested.validate(),
                    Catch::Matchers::Contains("transforms[1]: RandomChoice: transforms[1]: RandomApply: transforms[1]: "
                                              "GaussianBlur: kernel_size (25, 25)"));
  Views views{{View{ImageAugment::train(32)}, View{ImageAugment{.crop = RandomResizedCrop{.size = 8},
                                                                  .transforms = {GaussianBlur{.kernel_size = 17}}}}}};
  CHECK_THROWS_WITH(views.validate(), Catch::Matchers::Contains("view 1: ImageAugment: transforms[0]: GaussianBlur"));
}

TEST_CASE("a sample whose program cannot run on its image fails with an error, never a read outside it",
          "[pipeline][transforms]") {
  // Unvalidated, so the draw reaches the sample: its program is checked record by record first.
  const ImageAugment aug{.crop = RandomResizedCrop{.size = 8}, .transforms = {GaussianBlur{.kernel_size = 23}}};
  InMemory data;
  data.add(conveyor_test::random_jpeg(1, 1, 3), 0);
  data.add(conveyor_test::random_jpeg(40, 30, 4), 1);
  for (std::uint64_t index : {0, 1}) {
    INFO("sample " << index);
    auto ws = aug.make_workspace();
    std::vector<std::byte> out(aug.sample_spec().bytes());
    CHECK_THROWS_WITH(aug.apply({5, 0, index, nullptr}, data.bytes(index), out, ws),
                      Catch::Matchers::Contains("gaussian_blur: the kernel's half size must be less than the image's"));
  }
}

namespace {

/// A recipe whose programs vary from sample to sample in length, order and kind: jitter in a
/// random order, flips folded or not, nested RandomApply, RandomChoice and RandomOrder (a flip
/// among them, before or after a neighbourhood op), erasing with random values or one of two.
std::vector<PixelTransform> varied_recipe() {
  return {RandomVerticalFlip{.p = 0.5},
          ColorJitter{.brightness = 0.4, .contrast = 0.4, .saturation = 0.4, .hue = 0.1},
          RandomApply{.transforms = {RandomGrayscale{.p = 0.5}, RandomPosterize{.bits = 3, .p = 0.5},
                                     RandomChoice{.transforms = {RandomEqualize{}, RandomAutocontrast{}}}},
                      .p = 0.6},
          RandomOrder{.transforms = {RandomSolarize{.threshold = 128.0, .p = 0.3},
                                     RandomChoice{.transforms = {RandomInvert{.p = 0.4}, RandomHorizontalFlip{},
                                                                 RandomAdjustSharpness{.sharpness_factor = 2.0}},
                                                  .p = {2.0, 1.0, 1.0}},
                                     RandomApply{.transforms = {RandomVerticalFlip{}}, .p = 0.5}}},
          RandomErasing{.p = 0.5, .value = ErasingValue::random()},
          RandomChoice{.transforms = {RandomErasing{.p = 0.3, .value = {0.5, 0.25, -0.5}},
                                      RandomErasing{.p = 0.6, .value = ErasingValue::random()}},
                       .p = {3.0, 1.0}}};
}

std::vector<std::uint64_t> epoch_digests(const InMemory& data, const ImageAugment& aug, const PipelineOptions& o, int epochs = 2) {
  BatchPipeline pipe(data, RandomSampler(data.size(), {.seed = 11}), aug, o);
  return conveyor_test::digests(pipe, epochs);
}

}  // namespace

TEST_CASE("the varied recipe's programs hold every op it can draw, flips kept in order among them",
          "[pipeline][transforms]") {
  namespace px = ops::pixel;
  const ImageAugment aug = with(ImageAugment::train(48), varied_recipe());
  std::set<std::int32_t> codes;
  int longest = 0, flip_ops = 0, folded = 0;
  for (std::uint64_t i = 0; i < 2000; ++i) {
    const SampleProgram p = aug.program({5, 0, i, nullptr});
    for (int k = 0; k < p.pixels.count; ++k) codes.insert(p.pixels.ops[k].code);
    for (int k = 0; k < p.pixels.count; ++k) flip_ops += p.pixels.ops[k].code == px::Flip::code;
    folded += p.flip_x + p.flip_y;
    longest = std::max(longest, p.pixels.count);
  }
  for (const std::int32_t code : {px::AdjustBrightness::code, px::AdjustHue::code, px::RgbToGrayscale::code,
                                  px::Posterize::code, px::Equalize::code, px::Autocontrast::code, px::Solarize::code,
                                  px::Invert::code, px::AdjustSharpness::code, px::Flip::code, px::Erase::code}) {
    INFO("op " << px::op_name(code));
    CHECK(codes.count(code) == 1);
  }
  CHECK(flip_ops > 10);
  CHECK(folded > 500);
  CHECK(longest >= 9);
}

TEST_CASE("programs staged in the slot's table give the CPU backend's batches through the device path",
          "[pipeline][transforms][device]") {
  CONVEYOR_REQUIRE_SHARED_DATA(data);
  const InMemory photos = corpus_photos(data);
  const conveyor_test::HostDevice device;
  for (const ImageAugment& base : settings()) {
    INFO("dtype " << to_string(base.dtype) << ", layout " << to_string(base.layout));
    const ImageAugment aug = with(base, varied_recipe());
    const PipelineOptions cpu{.batch_size = 7, .workers = 2, .seed = 3};
    PipelineOptions on_device = cpu;
    on_device.device = 0;
    const auto expected = epoch_digests(photos, aug, cpu);
    CHECK(epoch_digests(photos, aug, on_device) == expected);
    // No room to stage: every sample resampled on the CPU, its program still run by the device.
    on_device.arena_bytes = 1;
    CHECK(epoch_digests(photos, aug, on_device) == expected);
  }
}

TEST_CASE("programs of samples sent to the device's JPEG decoder run there too", "[pipeline][transforms][device]") {
  CONVEYOR_REQUIRE_SHARED_DATA(data);
  const InMemory photos = corpus_photos(data);
  const conveyor_test::HostDevice device;
  // Full-scale decoding (CenterCrop), as the engines decode: the staged windows are the CPU's.
  const ImageAugment aug = with(ImageAugment{.crop = CenterCrop{48}, .resize = Resize{56}, .normalize = Normalize::imagenet(),
                                             .dtype = DType::f16, .layout = Layout::NCHW},
                                varied_recipe());
  const PipelineOptions cpu{.batch_size = 6, .workers = 3, .seed = 9};
  const auto expected = epoch_digests(photos, aug, cpu);
  PipelineOptions o = cpu;
  o.device = 0;
  o.decode = JpegDecode::gpu;
  BatchPipeline pipe(photos, RandomSampler(photos.size(), {.seed = 11}), aug, o);
  CHECK(conveyor_test::digests(pipe, 2) == expected);
  CHECK(pipe.stats().gpu_decoded > 10);
}

TEST_CASE("a sample's program is a pure function of (seed, epoch, index): the same batches for 0, 1 and 4 "
          "workers, on the CPU and through the device path",
          "[pipeline][transforms][determinism]") {
  CONVEYOR_REQUIRE_SHARED_DATA(data);
  const InMemory photos = corpus_photos(data);
  const conveyor_test::HostDevice device;
  const ImageAugment aug = with(ImageAugment{.crop = RandomResizedCrop{.size = 40}, .flip = {.p = 0.5},
                                             .normalize = Normalize::imagenet(), .dtype = DType::bf16},
                                varied_recipe());
  const auto expected = epoch_digests(photos, aug, {.batch_size = 5, .workers = 0, .seed = 21}, 3);
  for (const int workers : {0, 1, 4})
    for (const int device_ordinal : {cpu_device, 0}) {
      INFO(workers << " workers, device " << device_ordinal);
      CHECK(epoch_digests(photos, aug, {.batch_size = 5, .workers = workers, .seed = 21, .device = device_ordinal}, 3) ==
            expected);
    }
  // And it is the sample's own: another seed or epoch draws other programs.
  CHECK(epoch_digests(photos, aug, {.batch_size = 5, .workers = 2, .seed = 22}, 3) != expected);
}

TEST_CASE("without pixel transforms the device work is today's: the fused kernel alone and no program table",
          "[pipeline][transforms][device]") {
  const ImageAugment plain = ImageAugment::train(64);
  const DeviceWork work = plain.device_work();
  REQUIRE(work.steps.size() == 1);
  CHECK(std::string(work.steps[0].name()) == ResampleSamples::name);
  CHECK_FALSE(work.programs);
  const SlotLayout today = SlotLayout::make(256, 1 << 20), tables = SlotLayout::make(256, 1 << 20, 0, 0, true);
  CHECK(today.data_offset == (256 * (8 + sizeof(ops::SamplePlan)) + 255) / 256 * 256);
  std::byte arena[64] = {};
  CHECK(today.programs(arena) == nullptr);
  CHECK(tables.programs(arena) == reinterpret_cast<ops::pixel::PixelProgram*>(arena + tables.programs_offset));
  CHECK(tables.data_offset >= today.data_offset + 256 * sizeof(ops::pixel::PixelProgram));
  ImageAugment with = plain;
  with.transforms = {RandomInvert{}};
  CHECK(with.device_work().programs);
  CHECK(std::string(with.device_work().steps[0].name()) == ProgramSamples::name);
}

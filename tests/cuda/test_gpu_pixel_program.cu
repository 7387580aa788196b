// The pixel-program kernel against the CPU executor, sample by sample, bit for bit: fresh random
// programs (every op, parameters across their ranges and at their edges, erasing included) on
// windows of real photos and on random pixels, every dtype and layout, sizes from 1 x 1 to
// 224 x 224. Runs only where a GPU is (label gpu).

#include <conveyor/core/rng.hpp>
#include <conveyor/core/tensor.hpp>
#include <conveyor/cuda/buffer.hpp>
#include <conveyor/cuda/error.hpp>
#include <conveyor/cuda/kernels/pixel_program.cuh>
#include <conveyor/cuda/stream.hpp>
#include <conveyor/ops/cpu/pixel_program.hpp>

#include <catch2/catch.hpp>

#include "support/data.hpp"
#include "support/pixel_programs.hpp"
#include "support/torchvision_values.hpp"

#include <algorithm>
#include <array>
#include <cstring>
#include <string>
#include <vector>

using namespace conveyor;
namespace px = conveyor::ops::pixel;
using conveyor_test::PixelImage;

namespace {

ops::OutputParams output(DType dtype, Layout layout) {
  ops::OutputParams p;
  p.dtype = dtype;
  p.layout = layout;
  for (int c = 0; dtype != DType::u8 && c < 3; ++c) {  // arbitrary statistics, not ImageNet's
    p.scale[c] = 1.0f / (255.0f * (0.2f + 0.01f * c));
    p.bias[c] = -2.0f + static_cast<float>(c);
  }
  return p;
}

/// `images` (all one size) with `programs` through the kernel, the output copied back.
std::vector<std::byte> on_device(const std::vector<PixelImage>& images, const std::vector<px::PixelProgram>& programs,
                                 const ops::OutputParams& params) {
  const int width = images[0].width, height = images[0].height;
  const std::size_t count = images.size(), image_bytes = std::size_t(width) * height * 3;
  const std::size_t sample_bytes = image_bytes * dtype_size(params.dtype);
  std::vector<std::uint8_t> packed;
  for (const PixelImage& image : images) packed.insert(packed.end(), image.pixels.begin(), image.pixels.end());
  cuda::DeviceBuffer pixels(packed.size()), scratch(cuda::kernels::pixel_scratch_bytes(count, width, height)),
      table(count * sizeof(px::PixelProgram)), out(count * sample_bytes), mix_saved(packed.size()),
      mix_sums(packed.size() * sizeof(float));
  CONVEYOR_CUDA_TRY(cudaMemcpy(pixels.data(), packed.data(), packed.size(), cudaMemcpyHostToDevice));
  CONVEYOR_CUDA_TRY(cudaMemcpy(table.data(), programs.data(), table.size(), cudaMemcpyHostToDevice));
  CONVEYOR_CUDA_TRY(cudaMemset(scratch.data(), 0x5A, scratch.size()));
  CONVEYOR_CUDA_TRY(cudaMemset(mix_saved.data(), 0x5A, mix_saved.size()));  // a mix reads only what it wrote
  CONVEYOR_CUDA_TRY(cudaMemset(mix_sums.data(), 0x5A, mix_sums.size()));
  CONVEYOR_CUDA_TRY(cudaMemset(out.data(), 0xA5, out.size()));
  cuda::Stream stream;
  cuda::kernels::PixelBatch batch;
  batch.programs = reinterpret_cast<const px::PixelProgram*>(table.data());
  batch.images = reinterpret_cast<std::uint8_t*>(pixels.data());
  batch.scratch = reinterpret_cast<std::uint8_t*>(scratch.data());
  batch.mix_saved = reinterpret_cast<std::uint8_t*>(mix_saved.data());
  batch.mix_sums = reinterpret_cast<float*>(mix_sums.data());
  batch.out = out.data();
  batch.sample_bytes = sample_bytes;
  batch.params = params;
  batch.width = width;
  batch.height = height;
  batch.count = static_cast<std::int32_t>(count);
  cuda::kernels::launch_pixel_program(batch, stream.get());
  std::vector<std::byte> host(out.size());
  CONVEYOR_CUDA_TRY(cudaMemcpyAsync(host.data(), out.data(), host.size(), cudaMemcpyDeviceToHost, stream.get()));
  CONVEYOR_CUDA_TRY(cudaStreamSynchronize(stream.get()));
  return host;
}

/// The kernel's output for `images` equals the CPU executor's, sample by sample, in every dtype
/// and layout.
void require_same_as_cpu(const std::vector<PixelImage>& images, const std::vector<px::PixelProgram>& programs) {
  for (DType dtype : {DType::u8, DType::f32, DType::f16, DType::bf16})
    for (Layout layout : {Layout::NCHW, Layout::NHWC}) {
      const ops::OutputParams params = output(dtype, layout);
      INFO(images[0].width << " x " << images[0].height << ", " << to_string(dtype) << " " << to_string(layout));
      const std::vector<std::byte> got = on_device(images, programs, params);
      const std::size_t sample_bytes = images[0].pixels.size() * dtype_size(dtype);
      std::vector<std::byte> expected(sample_bytes);
      ops::cpu::PixelScratch scratch;
      for (std::size_t i = 0; i < images.size(); ++i) {
        const px::PixelProgram& p = programs[i];
        INFO("sample " << i << ": " << p.count << " ops: " << [&] {
          std::string names;
          for (int k = 0; k < p.count; ++k) names += std::string(px::op_name(p.ops[k].code)) + " ";
          return names;
        }());
        PixelImage image = images[i];
        ops::cpu::run_pixel_program(p, image.pixels.data(), image.width, image.height, params, expected.data(),
                                    scratch);
        REQUIRE(std::memcmp(got.data() + i * sample_bytes, expected.data(), sample_bytes) == 0);  // no tolerance
      }
    }
}

std::vector<px::PixelProgram> random_programs(CounterRng& rng, std::size_t count, int width, int height) {
  std::vector<px::PixelProgram> programs;
  for (std::size_t i = 0; i < count; ++i) programs.push_back(conveyor_test::random_program(rng, width, height));
  return programs;
}

}  // namespace

TEST_CASE("the pixel-program kernel equals the CPU executor on random programs and random pixels",
          "[gpu][pixel]") {
  const int sizes[][2] = {{224, 224}, {61, 37}, {1, 1}, {2, 9}, {200, 3}};
  std::uint64_t seed = 70;
  for (auto [width, height] : sizes) {
    CounterRng rng(++seed, 0, 0, RngOp::user);
    std::vector<PixelImage> images;
    for (int i = 0; i < 40; ++i) images.push_back(conveyor_test::random_pixels(width, height, seed * 1000 + i));
    require_same_as_cpu(images, random_programs(rng, images.size(), width, height));
  }
}

// The sanitizers' case (racecheck and synccheck cost is the kernel's shared memory and barriers):
// every op on small images, and GaussianBlur's tiles across several tiles and bands.
TEST_CASE("the pixel-program kernel on small images equals the CPU executor for every op and GaussianBlur's tiles",
          "[gpu][pixel][kernels]") {
  const int sizes[][2] = {{37, 23}, {1, 1}, {16, 40}};
  std::uint64_t seed = 90;
  for (auto [width, height] : sizes) {
    CounterRng rng(++seed, 0, 0, RngOp::user);
    std::vector<PixelImage> images;
    for (int i = 0; i < 12; ++i) images.push_back(conveyor_test::random_pixels(width, height, seed * 1000 + i));
    const std::vector<px::PixelProgram> programs = random_programs(rng, images.size(), width, height);
    for (const ops::OutputParams& params : {output(DType::u8, Layout::NHWC), output(DType::bf16, Layout::NCHW)}) {
      const std::vector<std::byte> got = on_device(images, programs, params);
      const std::size_t sample_bytes = images[0].pixels.size() * dtype_size(params.dtype);
      std::vector<std::byte> expected(sample_bytes);
      ops::cpu::PixelScratch scratch;
      for (std::size_t i = 0; i < images.size(); ++i) {
        PixelImage image = images[i];
        ops::cpu::run_pixel_program(programs[i], image.pixels.data(), width, height, params, expected.data(), scratch);
        REQUIRE(std::memcmp(got.data() + i * sample_bytes, expected.data(), sample_bytes) == 0);
      }
    }
  }
  for (auto [width, height] : {std::array{33, 250}, std::array{70, 9}}) {
    std::vector<PixelImage> images;
    std::vector<px::PixelProgram> programs;
    for (int i = 0; i < 3; ++i) {
      images.push_back(conveyor_test::random_pixels(width, height, 4000 + static_cast<std::uint64_t>(i)));
      px::PixelProgram p;
      const int across = std::min(px::max_blur_kernel, 2 * (width - 1) + 1), down = std::min(15, 2 * (height - 1) + 1);
      px::append(p, px::gaussian_blur(i == 0 ? across : 5, i == 2 ? 1 : down, 1.5 + i, 0.7));
      programs.push_back(p);
    }
    require_same_as_cpu(images, programs);
  }
}

TEST_CASE("GaussianBlur's tiles equal the CPU pass on random sizes and kernels up to 63 and sigmas", "[gpu][pixel]") {
  // one tile and many, bands of every height, kernels whose zero taps are skipped or not
  // (a section a size, so racecheck can take one size at a time: `-c 224x224`)
  const int sizes[][2] = {{224, 224}, {300, 97}, {33, 250}, {8, 5}, {1, 1}, {97, 1}};
  std::uint64_t seed = 200;
  for (auto [width, height] : sizes) {
    ++seed;
    DYNAMIC_SECTION(width << "x" << height) {
      CounterRng rng(seed, 0, 0, RngOp::user);
      const auto kernel = [&](int side) {
        const int most = std::min(px::max_blur_kernel, 2 * (side - 1) + 1);
        return rng.below(3) == 0 ? most : 1 + 2 * static_cast<int>(rng.below(static_cast<std::uint64_t>(most / 2 + 1)));
      };
      const auto sigma = [&] { return rng.below(3) == 0 ? rng.uniform(0.05, 0.6) : rng.uniform(0.1, 12.0); };
      std::vector<PixelImage> images;
      std::vector<px::PixelProgram> programs;
      for (int i = 0; i < 24; ++i) {
        images.push_back(conveyor_test::random_pixels(width, height, seed * 1000 + static_cast<std::uint64_t>(i)));
        px::PixelProgram p;
        px::append(p, px::gaussian_blur(kernel(width), kernel(height), sigma(), sigma()));
        programs.push_back(p);
      }
      require_same_as_cpu(images, programs);
    }
  }
}

TEST_CASE("the pixel-program kernel equals the CPU executor on random programs and real photos", "[gpu][pixel]") {
  CONVEYOR_REQUIRE_SHARED_DATA(data);
  std::vector<PixelImage> photos;
  for (const auto& name : conveyor_test::small_photos()) photos.push_back(conveyor_test::decode_photo(data, name));
  CounterRng rng(90, 0, 0, RngOp::user);
  for (auto [width, height] : {std::array{224, 224}, std::array{97, 61}}) {
    std::vector<PixelImage> windows;
    for (int round = 0; round < 6; ++round)
      for (const PixelImage& photo : photos)
        windows.push_back(conveyor_test::window(photo, static_cast<int>(rng.below(std::uint64_t(photo.width))),
                                                static_cast<int>(rng.below(std::uint64_t(photo.height))), width,
                                                height));
    require_same_as_cpu(windows, random_programs(rng, windows.size(), width, height));
  }
}

TEST_CASE("the pixel-program kernel runs every op alone on real photos", "[gpu][pixel]") {
  CONVEYOR_REQUIRE_SHARED_DATA(data);
  const int width = 224, height = 224;
  std::vector<PixelImage> images;
  std::vector<px::PixelProgram> programs;
  const std::vector<px::PixelOp> ops = {
      px::adjust_brightness(1.7), px::adjust_contrast(0.4), px::adjust_saturation(1.9), px::adjust_hue(-0.5),
      px::rgb_to_grayscale(), px::invert(), px::posterize(3), px::solarize(128.0), px::autocontrast(), px::equalize(),
      px::adjust_sharpness(2.0), px::gaussian_blur(23, 23, 2.0, 2.0), px::gaussian_blur(23, 9, 0.1, 1.3),
      px::affine({.angle = -45.0, .translate = {11.0, -6.0}, .scale = 1.1, .shear = {8.0, 3.0},
                  .interpolation = px::Interpolation::bilinear, .fill = std::array{10.0, 200.0, 127.6}},
                 width, height),
      px::affine({.angle = 0.0, .shear = {16.7, 0.0}, .center = std::array{0.0, 0.0}}, width, height),
      px::rotate({.angle = 90.0}, width, height), px::rotate({.angle = 33.3, .interpolation = px::Interpolation::bilinear},
                                                             width, height),
      px::erase(30, 17, 50, 101, {0.5, -1.25, 2.0}), px::erase_random(0, 0, 224, 224, 0x0123456789ABCDEFull)};
  for (const auto& name : conveyor_test::small_photos()) {
    const PixelImage photo = conveyor_test::decode_photo(data, name);
    for (const px::PixelOp& op : ops) {
      images.push_back(conveyor_test::window(photo, (photo.width - width) / 2, (photo.height - height) / 2, width,
                                             height));
      px::PixelProgram program;
      px::append(program, op);
      programs.push_back(program);
    }
  }
  require_same_as_cpu(images, programs);
}

TEST_CASE("the kernel's hue and equalize equal torchvision's where random images may not tell their branches apart",
          "[gpu][pixel]") {
  // The op functions are the CPU executor's too, so comparing the two cannot catch a wrong branch:
  // these compare the kernel with torchvision's own outputs (support/torchvision_values.hpp).
  namespace tv = conveyor_test::torchvision_values;
  const int colours = static_cast<int>(tv::hue_colours.size());
  std::vector<PixelImage> images;
  std::vector<px::PixelProgram> programs;
  for (const double factor : tv::hue_factors) {
    PixelImage image{colours, 1, {}};
    for (const auto& rgb : tv::hue_colours)
      for (const int c : rgb) image.pixels.push_back(static_cast<std::uint8_t>(c));
    images.push_back(image);
    px::PixelProgram program;
    px::append(program, px::adjust_hue(factor));
    programs.push_back(program);
  }
  const std::vector<std::byte> hued = on_device(images, programs, output(DType::u8, Layout::NHWC));
  for (std::size_t f = 0; f < tv::hue_factors.size(); ++f)
    for (int k = 0; k < colours; ++k)
      for (int c = 0; c < 3; ++c) {
        INFO("factor " << tv::hue_factors[f] << ", colour " << k << ", channel " << c);
        CHECK(std::to_integer<int>(hued[(f * colours + k) * 3 + c]) == tv::hue_adjusted[f][k][c]);
      }
  const std::vector<int> values = tv::equalize_values();  // 700 values: a 35 x 20 image
  PixelImage grey{35, 20, {}};
  for (const int v : values) grey.pixels.insert(grey.pixels.end(), 3, static_cast<std::uint8_t>(v));
  px::PixelProgram equalize;
  px::append(equalize, px::equalize());
  const std::vector<std::byte> equalized = on_device({grey}, {equalize}, output(DType::u8, Layout::NHWC));
  for (std::size_t i = 0; i < values.size(); ++i) {
    INFO("value " << values[i]);
    REQUIRE(std::to_integer<int>(equalized[i * 3]) == tv::equalized(values[i]));
  }
}

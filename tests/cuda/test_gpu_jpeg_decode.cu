// decode = gpu: JPEGs decoded by the hardware engines, against the same pipeline decoding them on
// the CPU. The engines' IDCT and upsampling are not libjpeg-turbo's, so batches are compared
// within the tolerance the README states; what stays on the CPU is compared bit for bit. Needs a
// GPU with JPEG engines and a build with nvJPEG (label gpu); skipped without nvJPEG.

#include <conveyor/cuda/all.cuh>

#include <catch2/catch.hpp>

#include "support/data.hpp"
#include "support/datasets.hpp"
#include "support/images.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <variant>
#include <vector>

using namespace conveyor;

namespace {

struct HostBatch {
  std::vector<std::uint8_t> images;
  std::vector<std::int64_t> labels, indices;
};

/// Every batch of `epochs` epochs as u8 pixels on the host; the stats after.
template <class D>
std::vector<HostBatch> run(const D& data, const ImageAugment& aug, PipelineOptions o, int epochs,
                           PipelineStats* stats = nullptr) {
  BatchPipeline pipe(data, RandomSampler(data.size(), {.seed = 11}), aug, o);
  std::vector<HostBatch> out;
  for (int e = 0; e < epochs; ++e) {
    pipe.set_epoch(e);
    for (const Batch& b : pipe) {
      HostBatch h;
      h.images.resize(b.images().nbytes());
      h.labels.resize(b.size());
      if (o.device == cpu_device) {
        std::memcpy(h.images.data(), b.images().data, h.images.size());
        std::memcpy(h.labels.data(), b.labels().data, b.size() * 8);
      } else {
        CONVEYOR_CUDA_TRY(cudaMemcpy(h.images.data(), b.images().data, h.images.size(), cudaMemcpyDeviceToHost));
        CONVEYOR_CUDA_TRY(cudaMemcpy(h.labels.data(), b.labels().data, b.size() * 8, cudaMemcpyDeviceToHost));
      }
      h.indices.assign(b.indices().begin(), b.indices().end());
      out.push_back(std::move(h));
    }
  }
  if (stats) *stats = pipe.stats();
  return out;
}

struct Difference {
  double mean = 0;
  int max = 0;
};

Difference difference(const HostBatch& a, const HostBatch& b) {
  double sum = 0;
  int max = 0;
  for (std::size_t i = 0; i < a.images.size(); ++i) {
    const int d = std::abs(int(a.images[i]) - int(b.images[i]));
    sum += d;
    max = std::max(max, d);
  }
  return {sum / double(a.images.size()), max};
}

/// The photos (JPEG only) as one in-memory dataset, sorted by name.
InMemory photos(const std::filesystem::path& dir) {
  std::vector<std::filesystem::path> files;
  for (const auto& e : std::filesystem::directory_iterator(dir))
    if (e.path().extension() == ".jpg") files.push_back(e.path());
  std::sort(files.begin(), files.end());
  InMemory d;
  ByteBuffer bytes;
  for (const auto& f : files) {
    read_file(f.string(), bytes);
    d.add(bytes.span(), std::int64_t(d.size() % 10));
  }
  return d;
}

/// u8 output, so differences are in pixel levels; DCT scaling off, so both decoders read the
/// same full-scale window.
ImageAugment u8(ImageAugment a) {
  a.dtype = DType::u8;
  a.layout = Layout::NHWC;
  a.normalize.reset();
  a.decode_scaling = false;
  return a;
}

bool has_nvjpeg() {
#if defined(CONVEYOR_WITH_NVJPEG)
  return true;
#else
  return false;
#endif
}

}  // namespace

// Mean difference per pixel level of each batch within 0.5 with interpolated chroma upsampling
// (DALI's own tests allow 1 with it) and within 1 with replicated chroma, which must differ from
// the interpolated batches; every sample the engines take decoded there.
TEST_CASE("GPU-decoded batches are within their stated bound of CPU-decoded ones on the photos", "[gpu][nvjpeg][data]") {
  if (!has_nvjpeg()) CONVEYOR_SKIP("built without nvJPEG");
  CONVEYOR_REQUIRE_SHARED_DATA(data_dir);
  const InMemory data = photos(data_dir / "photos");
  REQUIRE(data.size() >= 50);
  // The photos the engines take whole: each of these goes to them whatever its crop.
  std::uint64_t whole_fits = 0;
  {
    JpegDecoder d;
    ByteBuffer bytes;
    for (std::uint64_t i = 0; i < data.size(); ++i) {
      data.read(i, bytes);
      const JpegInfo info = d.read_header(bytes.span());
      whole_fits += engine_decodable(info) && bytes.size() <= (4u << 20) &&
                    std::uint64_t(info.width) * info.height <= 1800 * 1200;
    }
  }
  REQUIRE(whole_fits >= 20);
  for (const ImageAugment& aug : {u8(ImageAugment::train(224)), u8(ImageAugment::eval())}) {
    const PipelineOptions cpu{.batch_size = 16, .workers = 8, .seed = 3, .device = 0};
    const auto expected = run(data, aug, cpu, 2);
    std::vector<HostBatch> interpolated;
    for (const ChromaUpsampling upsampling : {ChromaUpsampling::interpolated, ChromaUpsampling::replicated}) {
      INFO(to_string(upsampling) << " chroma upsampling, " << (std::holds_alternative<RandomResizedCrop>(aug.crop) ? "train" : "eval"));
      PipelineOptions gpu = cpu;
      gpu.decode = JpegDecode::gpu;
      gpu.gpu_max_file_bytes = 4u << 20;
      gpu.gpu_max_window_pixels = 1800 * 1200;  // the photos whole
      gpu.gpu_upsampling = upsampling;
      const double bound = upsampling == ChromaUpsampling::interpolated ? 0.5 : 1.0;
      PipelineStats st;
      const auto got = run(data, aug, gpu, 2, &st);
      REQUIRE(got.size() == expected.size());
      double worst = 0, apart = 0;
      for (std::size_t i = 0; i < got.size(); ++i) {
        INFO("batch " << i);
        REQUIRE(got[i].indices == expected[i].indices);
        REQUIRE(got[i].labels == expected[i].labels);
        const Difference d = difference(got[i], expected[i]);
        CHECK(d.mean <= bound);
        worst = std::max(worst, d.mean);
        if (!interpolated.empty()) apart += difference(got[i], interpolated[i]).mean / double(got.size());
      }
      UNSCOPED_INFO(to_string(upsampling) << ": worst batch mean difference " << worst);
      CHECK(st.gpu_decoded >= 2 * whole_fits);  // in each of two epochs
      CHECK(st.gpu_decode_fallbacks == 0);
      CHECK(st.decode == "gpu");
      if (interpolated.empty())
        interpolated = got;
      else
        CHECK(apart > 0.01);  // the option reached the decoder
    }
  }
}

// Slots reused as fast as they come back (two slots, a consumer that only copies): a decode that
// wrote into a window the previous kernel was still reading would show as a batch far off the
// CPU's, or as one that differs from a calmer run's (four slots, two workers): the engines
// decode the same bits each time, so those must agree bit for bit.
TEST_CASE("GPU decodes into reused slots never corrupt a batch", "[gpu][nvjpeg][race]") {
  if (!has_nvjpeg()) CONVEYOR_SKIP("built without nvJPEG");
  InMemory data;
  for (int i = 0; i < 96; ++i)
    data.add(conveyor_test::random_jpeg(96 + 8 * (i % 9), 80 + 4 * (i % 13), 900 + i,
                                        {.quality = 85, .subsampling = ChromaSubsampling(i % 3)}),
             i % 4);
  const ImageAugment aug = u8(ImageAugment{.crop = RandomResizedCrop{.size = 64}, .flip = {.p = 0.5}});
  const PipelineOptions cpu{.batch_size = 8, .workers = 12, .prefetch = 2, .seed = 9, .device = 0};
  const auto expected = run(data, aug, cpu, 6);
  for (const ChromaUpsampling upsampling : {ChromaUpsampling::interpolated, ChromaUpsampling::replicated}) {
    INFO(to_string(upsampling) << " chroma upsampling");
    PipelineOptions gpu = cpu;
    gpu.decode = JpegDecode::gpu;
    gpu.gpu_upsampling = upsampling;
    PipelineStats st;
    const auto got = run(data, aug, gpu, 6, &st);
    PipelineOptions calm = gpu;
    calm.prefetch = 4;
    calm.workers = 2;
    const auto calm_got = run(data, aug, calm, 6);
    REQUIRE(got.size() == expected.size());
    REQUIRE(calm_got.size() == expected.size());
    for (std::size_t i = 0; i < got.size(); ++i) {
      INFO("batch " << i);
      REQUIRE(got[i].indices == expected[i].indices);
      CHECK(got[i].images == calm_got[i].images);
      // Random pixels: every block is an edge for the upsampling, and more so replicated.
      CHECK(difference(got[i], expected[i]).mean <= (upsampling == ChromaUpsampling::interpolated ? 1.5 : 6.0));
    }
    CHECK(st.gpu_decoded == 6 * 96);
  }
}

// Which decoder takes a sample is its own draw, so a share gives the same bits for any number of
// workers, and what the CPU decodes is the CPU's exactly.
TEST_CASE("a GPU share splits samples the same way for any worker count", "[gpu][nvjpeg][kernels]") {
  if (!has_nvjpeg()) CONVEYOR_SKIP("built without nvJPEG");
  const InMemory data = conveyor_test::jpeg_dataset(120, 4);
  const ImageAugment aug = u8(ImageAugment{.crop = RandomResizedCrop{.size = 48}, .flip = {.p = 0.5}});
  int eligible = 0;
  {
    JpegDecoder d;
    ByteBuffer bytes;
    for (std::uint64_t i = 0; i < data.size(); ++i) {
      data.read(i, bytes);
      eligible += engine_decodable(d.read_header(bytes.span()));
    }
  }
  REQUIRE(eligible >= 40);
  PipelineOptions o{.batch_size = 16, .workers = 2, .seed = 21, .device = 0, .decode = JpegDecode::gpu, .gpu_share = 0.5};
  PipelineStats two, many;
  const auto a = run(data, aug, o, 2, &two);
  o.workers = 12;
  const auto b = run(data, aug, o, 2, &many);
  REQUIRE(a.size() == b.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    INFO("batch " << i);
    REQUIRE(a[i].images == b[i].images);  // bit for bit
  }
  CHECK(two.gpu_decoded == many.gpu_decoded);
  CHECK(two.gpu_decoded > eligible - 25);  // half of them in each of two epochs
  CHECK(two.gpu_decoded < eligible + 25);
  CHECK(two.gpu_share == 0.5);
}

// Unset, auto's first share is the model's for the worker count (a function of the settings, so
// the first epoch is the same in every run); given, it is the option's.
TEST_CASE("auto starts at the model's share for its worker count", "[gpu][nvjpeg]") {
  if (!has_nvjpeg()) CONVEYOR_SKIP("built without nvJPEG");
  const InMemory data = conveyor_test::jpeg_dataset(64, 4);
  const ImageAugment aug = u8(ImageAugment{.crop = RandomResizedCrop{.size = 48}});
  for (const int workers : {4, 16}) {
    BatchPipeline pipe(data, RandomSampler(data.size(), {.seed = 11}), aug,
                       {.batch_size = 16, .workers = workers, .seed = 5, .device = 0, .decode = JpegDecode::adaptive});
    CHECK(pipe.stats().gpu_share == starting_gpu_share(workers, 16));
    std::size_t batches = 0;
    for (const Batch& b : pipe) batches += b.size() > 0;
    CHECK(batches == 4);
    CHECK(pipe.stats().gpu_decoded > 0);
  }
  BatchPipeline given(data, RandomSampler(data.size(), {.seed = 11}), aug,
                      {.batch_size = 16, .workers = 4, .device = 0, .decode = JpegDecode::adaptive, .gpu_share = 0.3});
  CHECK(given.stats().gpu_share == 0.3);
}

TEST_CASE("files the engines do not take stay on the CPU bit for bit", "[gpu][nvjpeg]") {
  if (!has_nvjpeg()) CONVEYOR_SKIP("built without nvJPEG");
  InMemory data;
  for (int i = 0; i < 24; ++i) {
    EncodeOptions e{.subsampling = ChromaSubsampling(i % 3)};
    if (i % 3 == 0) e.progressive = true;
    if (i % 3 == 1) e.arithmetic = true;
    data.add(conveyor_test::random_jpeg(64 + i, 56, 300 + i, e, i % 3 == 2 ? 1 : 3), i % 2);
  }
  data.add(conveyor_test::random_jpeg(20, 20, 5), 0);  // tiny
  const ImageAugment aug = u8(ImageAugment{.crop = RandomResizedCrop{.size = 32}});
  const PipelineOptions cpu{.batch_size = 5, .workers = 4, .device = 0};
  PipelineOptions gpu = cpu;
  gpu.decode = JpegDecode::gpu;
  PipelineStats st;
  const auto expected = run(data, aug, cpu, 1);
  const auto got = run(data, aug, gpu, 1, &st);
  REQUIRE(got.size() == expected.size());
  for (std::size_t i = 0; i < got.size(); ++i) REQUIRE(got[i].images == expected[i].images);
  CHECK(st.gpu_decoded == 0);
}

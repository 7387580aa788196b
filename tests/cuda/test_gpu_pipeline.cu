// The CUDA backend against the CPU backend: every element of every batch, bit for bit, for every
// dtype and layout, on real photos and on awkward synthetic sizes, with slow consumers, slow
// producers, kept batches, CPU fallbacks and failures. Runs only where a GPU is (label gpu).

#include <conveyor/cuda/all.cuh>
#include <conveyor/pipeline/dlpack.hpp>

#include <catch2/catch.hpp>

#include "cuda/gpu_batches.hpp"
#include "support/data.hpp"
#include "support/datasets.hpp"
#include "support/temp_dir.hpp"

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <vector>

using namespace conveyor;
using conveyor_test::FaultyDataset;
using conveyor_test::host_copy;
using conveyor_test::HostBatch;
using conveyor_test::require_same_as_cpu;
using conveyor_test::run;
using conveyor_test::jpeg_dataset;

namespace {

/// Waits on the device for about `ns` nanoseconds: a consumer that is slower than the loader.
__global__ void spin(long long ns) {
  long long start = 0, now = 0;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
  do {
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
  } while (now - start < ns);
}

InMemory awkward_sizes() {
  InMemory d;
  const int sizes[][2] = {{1, 1}, {3, 1000}, {1000, 3}, {4000, 3000}, {17, 9}, {640, 480}};
  int i = 0;
  for (auto [w, h] : sizes) {
    d.add(conveyor_test::random_jpeg(w, h, 500 + i, {.subsampling = ChromaSubsampling(i % 3)}), i);
    ++i;
  }
  return d;
}

}  // namespace

TEST_CASE("GPU batches equal CPU batches bit for bit for every dtype and layout", "[gpu][parity]") {
  const InMemory data = jpeg_dataset(21);
  for (DType t : {DType::u8, DType::f32, DType::f16, DType::bf16})
    for (Layout l : {Layout::NCHW, Layout::NHWC}) {
      INFO("dtype " << to_string(t) << " layout " << to_string(l));
      ImageAugment train{.crop = RandomResizedCrop{.size = 40}, .flip = {.p = 0.5}, .dtype = t, .layout = l};
      ImageAugment eval{.crop = CenterCrop{40}, .resize = Resize{48}, .dtype = t, .layout = l};
      if (t != DType::u8) train.normalize = eval.normalize = Normalize::imagenet();
      require_same_as_cpu(data, train, {.batch_size = 8, .workers = 3, .seed = 5, .device = 0});
      require_same_as_cpu(data, eval, {.batch_size = 8, .workers = 3, .seed = 5, .device = 0});
    }
}

TEST_CASE("GPU batches equal CPU batches on awkward sizes 1x1 3x1000 4000x3000", "[gpu][parity]") {
  const InMemory data = awkward_sizes();
  for (DType t : {DType::u8, DType::f32, DType::f16, DType::bf16})
    for (Layout l : {Layout::NCHW, Layout::NHWC}) {
      INFO("dtype " << to_string(t) << " layout " << to_string(l));
      ImageAugment aug{.crop = RandomResizedCrop{.size = 64}, .flip = {.p = 0.5}, .dtype = t, .layout = l};
      if (t != DType::u8) aug.normalize = Normalize::imagenet();
      require_same_as_cpu(data, aug, {.batch_size = 4, .workers = 4, .device = 0}, 3);
      ImageAugment eval{.crop = CenterCrop{64}, .resize = Resize{72}, .dtype = t, .layout = l};
      require_same_as_cpu(data, eval, {.batch_size = 3, .workers = 2, .device = 0}, 1);
    }
}

TEST_CASE("GPU batches equal CPU batches on real photos", "[gpu][parity][data]") {
  CONVEYOR_REQUIRE_SHARED_DATA(data_dir);
  conveyor_test::TempDir t;
  const FileList photos = conveyor_test::corpus_photos(data_dir, t);
  REQUIRE(photos.size() >= 50);
  for (DType dtype : {DType::u8, DType::f32, DType::f16, DType::bf16})
    for (Layout layout : {Layout::NCHW, Layout::NHWC}) {
      INFO("dtype " << to_string(dtype) << " layout " << to_string(layout));
      ImageAugment aug = ImageAugment::train(224);
      aug.dtype = dtype;
      aug.layout = layout;
      aug.exif_orientation = layout == Layout::NHWC;
      if (dtype == DType::u8) aug.normalize.reset();
      require_same_as_cpu(photos, aug, {.batch_size = 16, .workers = 8, .seed = 3, .device = 0}, 1);
    }
  const ImageFolder folder((data_dir / "imagefolder").string());
  require_same_as_cpu(folder, ImageAugment::eval(), {.batch_size = 5, .workers = 4, .device = 0}, 2);
}

// The fused kernel reads a decoded window whichever codec filled it: PNGs of every colour type,
// depth and interlacing, mixed in one batch with JPEG photos, give the CPU backend's bits.
TEST_CASE("GPU batches equal CPU batches on PNGs of every kind mixed with JPEGs", "[gpu][parity][png][data]") {
  CONVEYOR_REQUIRE_SHARED_DATA(data_dir);
  InMemory mixed;
  ByteBuffer bytes;
  std::vector<std::filesystem::path> files;
  for (const auto& dir : {data_dir / "png" / "pngsuite", data_dir / "png" / "testpngs"})
    for (const auto& e : std::filesystem::directory_iterator(dir))
      if (e.path().extension() == ".png") files.push_back(e.path());
  for (const auto& e : std::filesystem::directory_iterator(data_dir / "photos"))
    if (e.path().extension() == ".jpg") files.push_back(e.path());
  std::sort(files.begin(), files.end());
  for (const auto& f : files) {
    read_file(f.string(), bytes);
    mixed.add(bytes.span(), std::int64_t(mixed.size() % 7));
  }
  REQUIRE(mixed.size() >= 150);
  for (DType dtype : {DType::u8, DType::bf16})
    for (Layout layout : {Layout::NCHW, Layout::NHWC}) {
      INFO("dtype " << to_string(dtype) << " layout " << to_string(layout));
      ImageAugment train = ImageAugment::train(48), eval = ImageAugment::eval(56, 48);
      train.dtype = eval.dtype = dtype;
      train.layout = eval.layout = layout;
      if (dtype == DType::u8) train.normalize.reset(), eval.normalize.reset();
      train.decode.sixteen_bit = eval.decode.sixteen_bit = SixteenBit::high_byte;  // the suites' 16-bit files
      require_same_as_cpu(mixed, train, {.batch_size = 16, .workers = 8, .seed = 4, .device = 0}, 1);
      require_same_as_cpu(mixed, eval, {.batch_size = 16, .workers = 8, .device = 0}, 1);
    }
}

TEST_CASE("a slow consumer never reads a batch being overwritten", "[gpu][race]") {
  const InMemory data = jpeg_dataset(48, 3);
  const ImageAugment aug{.crop = RandomResizedCrop{.size = 48}, .flip = {.p = 0.5},
                         .normalize = Normalize::imagenet(), .dtype = DType::f32};
  const auto expected = run(data, aug, {.batch_size = 4, .workers = 6, .prefetch = 2, .seed = 9}, 1);
  cudaStream_t stream;
  CONVEYOR_CUDA_TRY(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  {
    BatchPipeline pipe(data, RandomSampler(data.size(), {.seed = 7}), aug,
                       {.batch_size = 4, .workers = 6, .prefetch = 2, .seed = 9, .device = 0, .stream = stream});
    std::vector<cuda::PinnedBuffer> copies;
    std::vector<std::size_t> sizes;
    for (const Batch& b : pipe) {
      spin<<<1, 1, 0, stream>>>(4'000'000);  // 4 ms of "training" before the batch is read
      CONVEYOR_CUDA_TRY(cudaGetLastError());
      copies.emplace_back(b.images().nbytes());
      sizes.push_back(b.images().nbytes());
      CONVEYOR_CUDA_TRY(cudaMemcpyAsync(copies.back().data(), b.images().data, b.images().nbytes(),
                                        cudaMemcpyDeviceToHost, stream));
    }
    CONVEYOR_CUDA_TRY(cudaStreamSynchronize(stream));
    REQUIRE(copies.size() == expected.size());
    for (std::size_t i = 0; i < copies.size(); ++i)
      REQUIRE(std::memcmp(copies[i].data(), expected[i].images.data(), sizes[i]) == 0);
  }
  CONVEYOR_CUDA_TRY(cudaStreamDestroy(stream));
}

// Images read on one stream, slowly, and labels on another, quickly, handed out last: the slot is
// refilled only after both streams' work, not after the last stream's alone.
TEST_CASE("a batch read on two streams is overwritten only after both have read it", "[gpu][race]") {
  const InMemory data = jpeg_dataset(48, 3);
  const ImageAugment aug{.crop = RandomResizedCrop{.size = 48}, .flip = {.p = 0.5},
                         .normalize = Normalize::imagenet(), .dtype = DType::f32};
  const auto expected = run(data, aug, {.batch_size = 4, .workers = 6, .prefetch = 2, .seed = 9}, 1);
  cuda::Stream images_stream, labels_stream;
  {
    BatchPipeline pipe(data, RandomSampler(data.size(), {.seed = 7}), aug,
                       {.batch_size = 4, .workers = 6, .prefetch = 2, .seed = 9, .device = 0,
                        .stream = labels_stream.get()});
    std::vector<cuda::PinnedBuffer> images, labels;
    for (const Batch& b : pipe) {
      b.wait_async(images_stream.get());
      spin<<<1, 1, 0, images_stream.get()>>>(4'000'000);  // 4 ms of "training" before the images are read
      CONVEYOR_CUDA_TRY(cudaGetLastError());
      images.emplace_back(b.images().nbytes());
      CONVEYOR_CUDA_TRY(cudaMemcpyAsync(images.back().data(), b.images().data, b.images().nbytes(),
                                        cudaMemcpyDeviceToHost, images_stream.get()));
      b.wait_async(labels_stream.get());  // the last stream it is handed to; its work is done at once
      labels.emplace_back(b.labels().nbytes());
      CONVEYOR_CUDA_TRY(cudaMemcpyAsync(labels.back().data(), b.labels().data, b.labels().nbytes(),
                                        cudaMemcpyDeviceToHost, labels_stream.get()));
    }
    images_stream.synchronize();
    labels_stream.synchronize();
    REQUIRE(images.size() == expected.size());
    for (std::size_t i = 0; i < images.size(); ++i) {
      INFO("batch " << i);
      REQUIRE(std::memcmp(images[i].data(), expected[i].images.data(), expected[i].images.size()) == 0);
      REQUIRE(std::memcmp(labels[i].data(), expected[i].labels.data(), expected[i].labels.size() * 8) == 0);
    }
  }
}

TEST_CASE("a batch handed to more streams than a slot records for is refused with an Error", "[gpu][race]") {
  std::vector<cuda::Stream> streams(8);
  BatchPipeline pipe(jpeg_dataset(8), SequentialSampler(8), ImageAugment::train(16),
                     {.batch_size = 4, .workers = 2, .device = 0, .stream = streams[0].get()});
  for (const Batch& b : pipe) {
    for (const cuda::Stream& s : streams) b.wait_async(s.get());  // the pipeline's among them: 8 in all
    b.wait_async(streams[3].get());                                // again: nothing new
    cuda::Stream ninth;
    CHECK_THROWS_WITH(b.wait_async(ninth.get()), Catch::Contains("handed to more than 8 CUDA streams"));
  }
}

TEST_CASE("a slow producer's batches are complete when the consumer reads them", "[gpu][race]") {
  FaultyDataset<InMemory> data(jpeg_dataset(24, 4));
  data.delay = std::chrono::microseconds(3000);
  const ImageAugment aug{.crop = RandomResizedCrop{.size = 32}, .dtype = DType::bf16};
  const auto expected = run(data, aug, {.batch_size = 6, .workers = 2, .prefetch = 2}, 1);
  cudaStream_t stream;
  CONVEYOR_CUDA_TRY(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  {
    BatchPipeline pipe(data, RandomSampler(data.size(), {.seed = 7}), aug,
                       {.batch_size = 6, .workers = 2, .prefetch = 2, .device = 0, .stream = stream});
    std::size_t i = 0;
    for (const Batch& b : pipe) {
      std::vector<std::byte> host(b.images().nbytes());
      CONVEYOR_CUDA_TRY(cudaMemcpyAsync(host.data(), b.images().data, host.size(), cudaMemcpyDeviceToHost, stream));
      CONVEYOR_CUDA_TRY(cudaStreamSynchronize(stream));
      REQUIRE(host == expected[i++].images);
    }
    REQUIRE(i == expected.size());
  }
  CONVEYOR_CUDA_TRY(cudaStreamDestroy(stream));
}

TEST_CASE("a kept GPU batch holds its slot and its data", "[gpu][lifecycle]") {
  const InMemory data = jpeg_dataset(30, 5);
  const ImageAugment aug{.crop = RandomResizedCrop{.size = 24}, .dtype = DType::u8};
  const auto expected = run(data, aug, {.batch_size = 3, .workers = 4, .prefetch = 3}, 1);
  std::optional<Batch> kept;
  {
    BatchPipeline pipe(data, RandomSampler(data.size(), {.seed = 7}), aug,
                       {.batch_size = 3, .workers = 4, .prefetch = 3, .device = 0});
    for (const Batch& b : pipe) {
      if (b.number() == 1) kept = b;
      REQUIRE(host_copy(b) == expected[b.number()]);
    }
    REQUIRE(host_copy(*kept) == expected[1]);
  }
  REQUIRE(host_copy(*kept) == expected[1]);  // past the pipeline's end
}

TEST_CASE("samples that do not fit the arena are finished on the CPU with the same bits", "[gpu][fallback]") {
  const InMemory data = awkward_sizes();
  const ImageAugment aug{.crop = RandomResizedCrop{.size = 32}, .normalize = Normalize::imagenet(), .dtype = DType::f16};
  require_same_as_cpu(data, aug, {.batch_size = 6, .workers = 2, .device = 0, .arena_bytes = 1});
  // A 600x1 crop scaled to 8 needs more taps than the kernel keeps: the CPU finishes it too.
  InMemory wide;
  wide.add(conveyor_test::random_jpeg(2000, 4, 77), 0);
  require_same_as_cpu(wide, ImageAugment{.crop = CenterCrop{8}, .resize = Resize{4}, .dtype = DType::u8},
                      {.batch_size = 1, .workers = 1, .device = 0}, 1);
}

TEST_CASE("raw tensors and zero workers go through the device too", "[gpu][raw]") {
  InMemory data;
  for (int i = 0; i < 9; ++i) {
    std::vector<float> v(12);
    for (int j = 0; j < 12; ++j) v[j] = float(i * 100 + j);
    data.add(std::as_bytes(std::span(v)), i);
  }
  require_same_as_cpu(data, RawTensor{SampleSpec{DType::f32, 2, {3, 4, 0}}}, {.batch_size = 4, .workers = 2, .device = 0});
  require_same_as_cpu(jpeg_dataset(10), ImageAugment::train(16), {.batch_size = 4, .workers = 0, .device = 0});
}

TEST_CASE("an erased pipeline on the GPU gives the typed CPU pipeline's batches", "[gpu][any]") {
  const InMemory data = jpeg_dataset(17);
  const PipelineOptions o{.batch_size = 5, .workers = 3, .seed = 4, .device = 0};
  PipelineOptions cpu = o;
  cpu.device = cpu_device;
  ImageAugment aug = ImageAugment::train(32);
  aug.dtype = DType::bf16;
  const RawTensor raw{SampleSpec{DType::u8, 1, {8, 0, 0}}};
  InMemory raws;
  for (std::uint64_t i = 0; i < 11; ++i) {
    std::byte b[8];
    std::memcpy(b, &i, 8);
    raws.add(b, std::int64_t(i));
  }
  const auto check = [&](const InMemory& set, const AnyTransform& transform, const std::vector<HostBatch>& typed) {
    AnyPipeline erased(AnyDataset(set), AnySampler(RandomSampler(set.size(), {.seed = 7})), transform, o);
    std::vector<HostBatch> got;
    for (int e = 0; e < 2; ++e) {
      erased.set_epoch(e);
      for (const Batch& b : erased) got.push_back(host_copy(b));
    }
    REQUIRE(got.size() == typed.size());
    for (std::size_t i = 0; i < got.size(); ++i) REQUIRE(got[i] == typed[i]);
  };
  check(data, AnyTransform(aug), run(data, aug, cpu));
  check(raws, AnyTransform(raw), run(raws, raw, cpu));
}

TEST_CASE("a failed sample is raised at its GPU batch and the next epoch runs", "[gpu][errors]") {
  FaultyDataset<InMemory> data(jpeg_dataset(12, 6));
  data.corrupt = {7};
  BatchPipeline pipe(std::move(data), SequentialSampler(12), ImageAugment::train(16),
                     {.batch_size = 4, .workers = 2, .device = 0});
  for (int epoch = 0; epoch < 2; ++epoch) {
    pipe.set_epoch(epoch);
    std::vector<std::uint64_t> seen;
    try {
      for (const Batch& b : pipe) seen.push_back(b.number());
      FAIL("no error");
    } catch (const SampleError& e) {
      CHECK(e.index() == 7);
    }
    CHECK(seen == std::vector<std::uint64_t>{0});
  }
}

TEST_CASE("the pipeline's device is used whatever the current device and a bad one is refused", "[gpu][device]") {
  int before = -1;
  CONVEYOR_CUDA_TRY(cudaGetDevice(&before));
  {
    BatchPipeline pipe(jpeg_dataset(6), SequentialSampler(6), ImageAugment::train(16),
                       {.batch_size = 3, .workers = 2, .device = 0});
    for (const Batch& b : pipe) {
      CHECK(b.images().device == Device{Device::Kind::cuda, 0});
      cudaPointerAttributes attr{};
      CONVEYOR_CUDA_TRY(cudaPointerGetAttributes(&attr, b.images().data));
      CHECK(attr.type == cudaMemoryTypeDevice);
      CHECK(attr.device == 0);
    }
  }
  int after = -1;
  CONVEYOR_CUDA_TRY(cudaGetDevice(&after));
  CHECK(after == before);
  const int n = cuda::device_count();
  CHECK_THROWS_WITH(BatchPipeline(jpeg_dataset(2), SequentialSampler(2), ImageAugment::train(16), {.device = n}),
                    Catch::Contains("device " + std::to_string(n) + " does not exist"));
}

TEST_CASE("CudaError names the call and the status and the place", "[gpu][errors][injected]") {
  void* p = nullptr;
  try {
    CONVEYOR_CUDA_TRY(cudaMalloc(&p, std::size_t{1} << 62));
    FAIL("an impossible allocation succeeded");
  } catch (const CudaError& e) {
    CHECK(e.status() == cudaErrorMemoryAllocation);
    CHECK_THAT(e.what(), Catch::Contains("test_gpu_pipeline.cu:") && Catch::Contains("cudaMalloc(&p") &&
                             Catch::Contains("cudaErrorMemoryAllocation"));
  }
  CHECK(cudaGetLastError() == cudaSuccess);  // cleared: the next call is not blamed
}

TEST_CASE("create then iterate a little then break and destroy GPU pipelines many times", "[gpu][lifecycle]") {
  const InMemory data = jpeg_dataset(16, 8);
  for (int cycle = 0; cycle < 40; ++cycle) {
    BatchPipeline pipe(data, RandomSampler(data.size(), {.seed = std::uint64_t(cycle)}), ImageAugment::train(24),
                       {.batch_size = 4, .workers = 1 + cycle % 4, .prefetch = std::size_t(2 + cycle % 2), .device = 0});
    int k = 0;
    for (const Batch& b : pipe) {
      CHECK(b.size() == 4);
      if (++k == 1 + cycle % 3) break;
    }
  }
}

namespace {
__global__ void trap_kernel() { __trap(); }
}  // namespace

// Poisons the CUDA context for the rest of the process: CTest runs every GPU case in its own.
TEST_CASE("a CUDA error mid-epoch surfaces as a CudaError naming the call and the pipeline stays failed",
          "[gpu][errors][injected]") {
  cuda::Stream consumer;
  BatchPipeline pipe(jpeg_dataset(64, 8), SequentialSampler(64), ImageAugment::train(16),
                     {.batch_size = 4, .workers = 3, .device = 0, .stream = consumer.get()});
  int seen = 0;
  try {
    for (const Batch& b : pipe) {
      CHECK(b.size() == 4);
      if (++seen == 3) {  // the user's work on the consumer stream faults
        trap_kernel<<<1, 1, 0, consumer.get()>>>();
        CHECK(cudaStreamSynchronize(consumer.get()) != cudaSuccess);
      }
    }
    FAIL("the epoch ended normally on a failed device");
  } catch (const CudaError& e) {
    CHECK(e.status() != cudaSuccess);
    CHECK_THAT(e.what(), Catch::Contains(e.call()) && Catch::Contains(" failed (cudaError"));
    CHECK_THAT(e.call(), Catch::StartsWith("cuda"));
  }
  CHECK(seen >= 3);  // the batch in hand when it failed, at most one more already on its way
  CHECK(seen <= 4);
  pipe.set_epoch(1);
  CHECK_THROWS_AS(pipe.begin(), CudaError);  // stays failed
}  // and is destroyed, its threads joined, without hanging on the dead context

TEST_CASE("an allocation the device cannot make fails construction with a CudaError and leaves the device usable",
          "[gpu][errors][injected]") {
  const ImageAugment aug = ImageAugment::train(224);  // f32: 256 x 602 KB of output, and as much arena, per slot
  const PipelineOptions options{.batch_size = 256, .workers = 2, .device = 0};
  // Construction fails with an out-of-memory CudaError from `call`.
  const auto refused = [&](const PipelineOptions& o, const char* call, const char* otherwise) {
    try {
      BatchPipeline pipe(jpeg_dataset(8), SequentialSampler(8), aug, o);
      FAIL(otherwise);
    } catch (const CudaError& e) {
      CHECK(e.status() == cudaErrorMemoryAllocation);
      CHECK_THAT(e.call(), Catch::StartsWith(call));
    }
  };
  SECTION("device memory: another user holds all but 256 MB") {
    std::size_t free = 0, total = 0;
    CONVEYOR_CUDA_TRY(cudaMemGetInfo(&free, &total));
    const cuda::DeviceBuffer hog(free - (std::size_t{256} << 20));
    refused(options, "cudaMalloc(", "a pipeline needing over 900 MB fitted in 256 MB");
  }
  SECTION("pinned host memory: an arena of 64 TiB") {
    PipelineOptions huge = options;
    huge.arena_bytes = std::size_t{1} << 46;
    huge.memory_budget = std::size_t{1} << 50;  // past memory_budget's own ConfigError, to the allocation
    huge.prefetch = 2;
    refused(huge, "cudaHostAlloc(", "64 TiB of pinned memory was allocated");
  }
  CHECK(cudaGetLastError() == cudaSuccess);
  BatchPipeline pipe(jpeg_dataset(8), SequentialSampler(8), aug, options);  // the memory is back
  int batches = 0;
  for (const Batch& b : pipe) batches += b.size() == 8;
  CHECK(batches == 1);
}

TEST_CASE("a DLPack tensor of a GPU batch held past the loop's advance still reads its batch", "[gpu][dlpack]") {
#if CONVEYOR_HAS_DLPACK()
  const InMemory data = jpeg_dataset(24, 9);
  ImageAugment aug = ImageAugment::train(16);
  aug.dtype = DType::bf16;
  const auto host_batches = [&](int device) {  // every batch's images, copied to the host as delivered
    std::vector<std::vector<std::byte>> v;
    BatchPipeline pipe(data, SequentialSampler(data.size()), aug,
                       {.batch_size = 4, .workers = 3, .prefetch = 2, .device = device});
    for (const Batch& b : pipe) {
      v.emplace_back(b.images().nbytes());
      if (device == cpu_device) std::memcpy(v.back().data(), b.images().data, v.back().size());
      else CONVEYOR_CUDA_TRY(cudaMemcpy(v.back().data(), b.images().data, v.back().size(), cudaMemcpyDeviceToHost));
    }
    return v;
  };
  const auto expected = host_batches(cpu_device);
  BatchPipeline pipe(data, SequentialSampler(data.size()), aug, {.batch_size = 4, .workers = 3, .prefetch = 2, .device = 0});
  DLManagedTensor* held = nullptr;
  DLManagedTensor* labels = nullptr;
  for (const Batch& b : pipe)
    if (b.number() == 1) {
      held = to_dlpack(b);
      labels = to_dlpack(b, BatchTensor::labels);
    }
  // Four more batches went through the other slots meanwhile.
  REQUIRE(held != nullptr);
  const DLTensor& t = held->dl_tensor;
  CHECK(t.device.device_type == kDLCUDA);
  CHECK(t.device.device_id == 0);
  CHECK(t.dtype.code == kDLBfloat);
  CHECK(t.ndim == 4);
  CHECK(t.shape[0] == 4);
  CHECK(t.shape[1] == 3);  // NCHW
  std::vector<std::byte> seen(expected[1].size());
  CONVEYOR_CUDA_TRY(cudaMemcpy(seen.data(), t.data, seen.size(), cudaMemcpyDeviceToHost));
  CHECK(seen == expected[1]);
  std::int64_t label = -1;
  CONVEYOR_CUDA_TRY(cudaMemcpy(&label, labels->dl_tensor.data, sizeof label, cudaMemcpyDeviceToHost));
  CHECK(labels->dl_tensor.device.device_type == kDLCUDA);
  CHECK(label == data.label(4));
  labels->deleter(labels);
  held->deleter(held);  // the slot is free again: another epoch goes through all of them
  std::size_t n = 0;
  for (const Batch& b : pipe) n += b.size();
  CHECK(n == data.size());
#else
  CONVEYOR_SKIP("DLPack's header (Debian: libdlpack-dev) was not found");
#endif
}

// An evaluation loop keeps every batch's labels: their DLPack tensors are device copies made in
// order on the consumer's stream that hold no slot, so the loop goes through every batch (it used
// to stall at batch prefetch + 1) and the copies keep their values after the slots are refilled.
TEST_CASE("GPU labels kept from every batch hold no slot and keep their values", "[gpu][dlpack]") {
#if CONVEYOR_HAS_DLPACK()
  const InMemory data = jpeg_dataset(26, 12);
  cuda::Stream stream;
  std::vector<DLManagedTensor*> targets;
  {
    BatchPipeline pipe(data, SequentialSampler(data.size()), ImageAugment::train(16),
                       {.batch_size = 4, .workers = 3, .prefetch = 2, .device = 0, .stream = stream.get()});
    for (const Batch& b : pipe) {
      targets.push_back(to_dlpack(b, BatchTensor::labels, stream.get()));
      REQUIRE(pipe.slots_held() == 1);  // the loop's batch; none for the labels kept so far
    }
  }  // the pipeline is gone too
  REQUIRE(targets.size() == 7);
  stream.synchronize();
  std::vector<std::int64_t> seen;
  for (DLManagedTensor* t : targets) {
    CHECK(t->dl_tensor.device.device_type == kDLCUDA);
    std::vector<std::int64_t> labels(static_cast<std::size_t>(t->dl_tensor.shape[0]));
    CONVEYOR_CUDA_TRY(cudaMemcpy(labels.data(), t->dl_tensor.data, labels.size() * 8, cudaMemcpyDeviceToHost));
    seen.insert(seen.end(), labels.begin(), labels.end());
    t->deleter(t);
  }
  REQUIRE(seen.size() == data.size());
  for (std::size_t i = 0; i < seen.size(); ++i) CHECK(seen[i] == data.label(i));
#else
  CONVEYOR_SKIP("DLPack's header (Debian: libdlpack-dev) was not found");
#endif
}

// A JPEG whose header parses and whose scan data is cut (a real photo cut in half) fails only while
// it decodes into the room it claimed in the pinned arena; under on_error = skip its replacement is
// prepared at the same position. The claim used to stay taken beside the replacement's, and with
// f32 (whose default arena has no room to spare) the batch's last sample was written past the data
// section. At every batch position, for every dtype, with the default arena: the guard after each
// slot's data section, checked before every upload, stays whole, and the batches equal the CPU's.
TEST_CASE("a photo cut in half at any batch position leaves the pinned arena whole under skip", "[gpu][arena][data]") {
  CONVEYOR_REQUIRE_SHARED_DATA(data_dir);
  auto photos = conveyor_test::square_photos(data_dir / "photos", 448);
  REQUIRE(photos.size() >= 16);
  photos.resize(16);
  const std::size_t batch = 8;
  for (DType dtype : {DType::f32, DType::f16, DType::bf16, DType::u8})
    for (std::size_t cut = 0; cut < batch; ++cut) {
      INFO("dtype " << to_string(dtype) << ", position " << cut << " cut");
      InMemory data;
      for (std::size_t i = 0; i < photos.size(); ++i)
        data.add(std::span(photos[i].data(), i == cut ? photos[i].size() / 2 : photos[i].size()), std::int64_t(i));
      ImageAugment aug{.crop = CenterCrop{224}, .resize = Resize{230}, .dtype = dtype};
      if (dtype != DType::u8) aug.normalize = Normalize::imagenet();
      const auto batches = [&](int device) {
        BatchPipeline pipe(data, SequentialSampler(data.size()), aug,
                           {.batch_size = batch, .workers = 4, .on_error = OnError::skip, .device = device});
        std::vector<HostBatch> out;
        for (const Batch& b : pipe) out.push_back(host_copy(b));  // each upload checked the guard first
        REQUIRE(pipe.skipped().size() == 1);
        CHECK(pipe.skipped()[0].index == cut);
        return out;
      };
      const auto expected = batches(cpu_device);
      const auto got = batches(0);
      REQUIRE(got.size() == expected.size());
      for (std::size_t i = 0; i < got.size(); ++i) REQUIRE(got[i] == expected[i]);
    }
}

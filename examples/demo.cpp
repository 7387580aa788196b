// conveyor-demo: two epochs of training-style batches from a folder of JPEGs, with a progress
// line, then the throughput, a per-stage time table, and a contact sheet of the first batch.
// Batches are made on the GPU when the demo was built with CUDA and a device is present, on the
// CPU otherwise.
//
//   conveyor-demo [DIR] [--sheet FILE]      DIR defaults to the bundled samples
//
// The contact sheet shows each augmented image de-normalized: the random crops and flips the
// first batch received.

#include <conveyor/conveyor.hpp>
#if CONVEYOR_CUDA_COMPILATION()
#include <conveyor/cuda/all.cuh>
#endif

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#ifndef CONVEYOR_SAMPLES_DIR
#define CONVEYOR_SAMPLES_DIR "examples/data/samples"
#endif

namespace {

/// The first batch's images as a host view, copied from the device when need be.
conveyor::TensorView on_host(const conveyor::TensorView& images, std::vector<std::byte>& storage) {
  if (images.device.kind == conveyor::Device::Kind::cpu) return images;
  storage.resize(images.nbytes());
#if CONVEYOR_CUDA_COMPILATION()
  CONVEYOR_CUDA_TRY(cudaMemcpy(storage.data(), images.data, storage.size(), cudaMemcpyDeviceToHost));
#endif
  conveyor::TensorView host = images;
  host.data = storage.data();
  host.device = {};
  return host;
}

}  // namespace

int main(int argc, char** argv) {
  std::string dir = CONVEYOR_SAMPLES_DIR, sheet = "contact_sheet.jpg";
  for (int i = 1; i < argc; ++i) {
    const std::string_view a = argv[i];
    if (a == "--sheet" && i + 1 < argc) sheet = argv[++i];
    else dir = argv[i];
  }
  try {
    const conveyor::ImageFolder data(dir);
    int device = conveyor::cpu_device;
#if CONVEYOR_CUDA_COMPILATION()
    if (conveyor::cuda::device_count() > 0) device = 0;
#endif
    std::printf("%llu images in %zu classes under %s (%s backend)\n", static_cast<unsigned long long>(data.size()),
                data.classes().size(), dir.c_str(), device == conveyor::cpu_device ? "CPU" : "CUDA");
    conveyor::RandomSampler order(data.size(), {.seed = 42});
    const conveyor::ImageAugment aug{.crop = conveyor::RandomResizedCrop{.size = 160},
                                     .flip = conveyor::HorizontalFlip{.p = 0.5},
                                     .normalize = conveyor::Normalize::imagenet(),
                                     .dtype = conveyor::DType::f32,
                                     .layout = conveyor::Layout::NCHW};
    conveyor::BatchPipeline pipe(data, order, aug,
                                 {.batch_size = 8, .workers = 4, .prefetch = 3, .seed = 42, .device = device});

    const auto t0 = std::chrono::steady_clock::now();
    std::uint64_t images = 0;
    for (std::uint64_t epoch = 0; epoch < 2; ++epoch) {
      pipe.set_epoch(epoch);
      for (const conveyor::Batch& b : pipe) {
        images += b.size();
        if (epoch == 0 && b.number() == 0) {
          std::vector<std::byte> storage;
          conveyor::write_file(sheet, conveyor::contact_sheet(on_host(b.images(), storage), aug.layout, *aug.normalize, 4));
        }
        std::printf("\repoch %llu  batch %llu/%llu  %llu images", static_cast<unsigned long long>(epoch + 1),
                    static_cast<unsigned long long>(b.number() + 1),
                    static_cast<unsigned long long>(pipe.batches_per_epoch()), static_cast<unsigned long long>(images));
        std::fflush(stdout);
      }
    }
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::printf("\n\n%s\n%.1f img/s over 2 epochs; contact sheet of the first batch: %s\n",
                pipe.stats().table().c_str(), double(images) / s, sheet.c_str());
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "conveyor-demo: %s\n", e.what());
    return 1;
  }
}

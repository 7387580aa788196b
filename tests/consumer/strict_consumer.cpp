// A user's translation unit, compiled by tests/CMakeLists.txt under strict warnings with -Werror by
// g++, clang++ and nvcc (as CUDA, with the CUDA backend): every public header, and the README's ten
// lines, a type-erased pipeline, the request path, Prometheus text and a DLPack export written
// out, so that the headers' templates are compiled as a user's program compiles them. Nothing
// here runs: the test is the compile.

#if CONVEYOR_STRICT_CUDA
#include <conveyor/cuda/all.cuh>
#endif
#include "conveyor_public_headers.hpp"  // every public header a C++ compiler takes (generated)

#include <cstddef>
#include <span>
#include <string>

void train_step(const conveyor::TensorView& images, const conveyor::TensorView& labels);
void publish(const std::string& text);

// The README's ten lines, on the CPU or (nvcc) on a device.
void ten_lines(int device) {
  conveyor::ImageFolder train("/data/imagenet/train");            // torchvision's class-folder layout
  conveyor::RandomSampler order(train.size(), {.seed = 42});       // a new permutation every epoch
  conveyor::ImageAugment aug{.crop = conveyor::RandomResizedCrop{.size = 224},
                             .flip = {.p = 0.5}, .normalize = conveyor::Normalize::imagenet(),
                             .dtype = conveyor::DType::f16, .layout = conveyor::Layout::NCHW};
  conveyor::BatchPipeline pipe(train, order, aug, {.batch_size = 256, .workers = 12, .prefetch = 3, .device = device});
  for (unsigned epoch = 0; epoch < 90; ++epoch) {
    pipe.set_epoch(epoch);
    for (const conveyor::Batch& b : pipe) train_step(b.images(), b.labels());
  }
  publish(conveyor::prometheus_text(pipe.stats()));
}

// Parts chosen at run time, and a batch handed on as DLPack.
void erased(const std::string& root, int device) {
  conveyor::AnyPipeline pipe(conveyor::AnyDataset(conveyor::ImageFolder(root)),
                             conveyor::AnySampler(conveyor::RandomSampler(100, {.seed = 1})),
                             conveyor::AnyTransform(conveyor::ImageAugment::train()),
                             {.batch_size = 32, .device = device});
  for (const conveyor::Batch& b : pipe) {
#if CONVEYOR_HAS_DLPACK()
    DLManagedTensor* t = conveyor::to_dlpack(b);
    t->deleter(t);
#else
    train_step(b.images(), b.labels());
#endif
  }
}

// The request path: one request's images preprocessed into a batch.
void serve(std::span<const std::span<const std::byte>> images, int device) {
  conveyor::Preprocessor pre(conveyor::ImageAugment::eval(), {.max_images = 8, .pipeline = {.device = device}});
  const conveyor::Batch b = pre(images);
  train_step(b.images(), b.labels());
  publish(conveyor::prometheus_text(pre.stats()));
}

// Pixel transforms, torchvision v2's classes, and what one sample drew as torchvision's calls.
void recipe(const std::string& root, int device) {
  conveyor::ImageFolder train(root);
  conveyor::ImageAugment aug = conveyor::ImageAugment::train(224);
  aug.transforms = {conveyor::ColorJitter{.brightness = 0.4, .contrast = 0.4, .saturation = 0.4, .hue = 0.1},
                    conveyor::RandomGrayscale{.p = 0.2},
                    conveyor::RandomApply{.transforms = {conveyor::RandomInvert{}, conveyor::RandomVerticalFlip{}}},
                    conveyor::RandomOrder{.transforms = {conveyor::RandomEqualize{},
                                                         conveyor::RandomChoice{.transforms = {conveyor::RandomInvert{},
                                                                                               conveyor::Grayscale{}},
                                                                                .p = {1.0, 3.0}}}},
                    conveyor::RandomErasing{.p = 0.25, .value = conveyor::ErasingValue::random()}};
  conveyor::BatchPipeline pipe(train, conveyor::RandomSampler(train.size(), {.seed = 3}), aug,
                               {.batch_size = 32, .device = device});
  for (const conveyor::Batch& b : pipe) train_step(b.images(), b.labels());
  for (const conveyor::DrawnCall& call : aug.drawn_calls(1, 0, 0, 640, 480)) publish(call.function);
}

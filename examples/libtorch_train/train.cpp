// conveyor-libtorch-train: a ResNet-18-like network trained with SGD + momentum on an ImageFolder
// that conveyor feeds through DLPack: each batch becomes two at::Tensors (images, labels) without
// a copy, on the GPU when there is one (built with CUDA), on the CPU otherwise.
//
//   conveyor-libtorch-train [--data DIR] [--steps N] [--batch B] [--size S] [--width W]
//                           [--workers N] [--csv FILE]
//
// Prints the loss as it goes, then the first and last ten steps' mean loss, img/s and the
// pipeline's stats; exits 1 if the loss did not fall.

// libtorch first: its ATen/dlpack.h is then the DLPack header conveyor's to_dlpack uses.
#include <ATen/DLConvertor.h>
#include <torch/torch.h>

#include <conveyor/conveyor.hpp>
#include <conveyor/pipeline/dlpack.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <numeric>
#include <string>
#include <string_view>
#include <vector>

#ifndef CONVEYOR_SAMPLES_DIR
#define CONVEYOR_SAMPLES_DIR "examples/data/samples"
#endif

namespace {

namespace nn = torch::nn;

nn::Conv2dOptions conv(int in, int out, int kernel, int stride) {
  return nn::Conv2dOptions(in, out, kernel).stride(stride).padding(kernel / 2).bias(false);
}

struct BasicBlockImpl : nn::Module {
  BasicBlockImpl(int in, int out, int stride)
      : conv1(register_module("conv1", nn::Conv2d(conv(in, out, 3, stride)))),
        bn1(register_module("bn1", nn::BatchNorm2d(out))),
        conv2(register_module("conv2", nn::Conv2d(conv(out, out, 3, 1)))),
        bn2(register_module("bn2", nn::BatchNorm2d(out))) {
    if (stride != 1 || in != out)
      shortcut = register_module("shortcut", nn::Sequential(nn::Conv2d(conv(in, out, 1, stride)), nn::BatchNorm2d(out)));
  }
  torch::Tensor forward(const torch::Tensor& x) {
    const torch::Tensor y = bn2(conv2(torch::relu(bn1(conv1(x)))));
    return torch::relu(y + (shortcut.is_empty() ? x : shortcut->forward(x)));
  }
  nn::Conv2d conv1, conv2;
  nn::BatchNorm2d bn1, bn2;
  nn::Sequential shortcut{nullptr};
};
TORCH_MODULE(BasicBlock);

/// ResNet-18's layout (four stages of two basic blocks, widths w, 2w, 4w, 8w); ImageNet's stem
/// (7x7 stride 2, max pool) for inputs of 128 pixels and more, a 3x3 stem for small ones.
struct ResNetImpl : nn::Module {
  ResNetImpl(int width, int classes, int size) : big_stem(size >= 128) {
    stem = register_module("stem", nn::Sequential(nn::Conv2d(conv(3, width, big_stem ? 7 : 3, big_stem ? 2 : 1)),
                                                  nn::BatchNorm2d(width), nn::ReLU()));
    int in = width;
    for (int stage = 0; stage < 4; ++stage) {
      const int out = width << stage;
      for (int b = 0; b < 2; ++b) {
        blocks->push_back(BasicBlock(in, out, b == 0 && stage > 0 ? 2 : 1));
        in = out;
      }
    }
    register_module("blocks", blocks);
    fc = register_module("fc", nn::Linear(in, classes));
  }
  torch::Tensor forward(torch::Tensor x) {
    x = stem->forward(x);
    if (big_stem) x = torch::max_pool2d(x, 3, 2, 1);
    x = blocks->forward(x);
    return fc(torch::adaptive_avg_pool2d(x, {1, 1}).flatten(1));
  }
  bool big_stem;
  nn::Sequential stem{nullptr};
  nn::Sequential blocks;
  nn::Linear fc{nullptr};
};
TORCH_MODULE(ResNet);

struct Args {
  std::string data = CONVEYOR_SAMPLES_DIR, csv;
  int steps = 200, batch = 16, size = 64, width = 16, workers = 4;
};

Args parse(int argc, char** argv) {
  Args a;
  for (int i = 1; i < argc; ++i) {
    const std::string_view k = argv[i];
    if (i + 1 >= argc) throw std::invalid_argument("missing value after " + std::string(k));
    const char* v = argv[++i];
    if (k == "--data") a.data = v;
    else if (k == "--csv") a.csv = v;
    else if (k == "--steps") a.steps = std::stoi(v);
    else if (k == "--batch") a.batch = std::stoi(v);
    else if (k == "--size") a.size = std::stoi(v);
    else if (k == "--width") a.width = std::stoi(v);
    else if (k == "--workers") a.workers = std::stoi(v);
    else throw std::invalid_argument("unknown option " + std::string(k));
  }
  return a;
}

double mean(const std::vector<double>& v, std::size_t first, std::size_t n) {
  return std::accumulate(v.begin() + first, v.begin() + first + n, 0.0) / double(n);
}

}  // namespace

int main(int argc, char** argv) {
  try {
    const Args a = parse(argc, argv);
    const conveyor::ImageFolder data(a.data);
#ifdef CONVEYOR_EXAMPLE_CUDA  // the CUDA backend is linked in (cuda_backend.cu)
    const bool gpu = torch::cuda::is_available();
#else
    const bool gpu = false;
#endif
    const torch::Device device = gpu ? torch::Device(torch::kCUDA, 0) : torch::Device(torch::kCPU);
    torch::manual_seed(0);
    ResNet net(a.width, static_cast<int>(data.classes().size()), a.size);
    net->to(device);
    torch::optim::SGD sgd(net->parameters(), torch::optim::SGDOptions(0.05).momentum(0.9).weight_decay(5e-4));

    const conveyor::ImageAugment aug{.crop = conveyor::RandomResizedCrop{.size = a.size},
                                     .flip = conveyor::HorizontalFlip{.p = 0.5},
                                     .normalize = conveyor::Normalize::imagenet(),
                                     .dtype = conveyor::DType::f32,
                                     .layout = conveyor::Layout::NCHW};
    // On the GPU the batches are ordered on the legacy default stream (.stream = nullptr), which
    // is also libtorch's default stream: its kernels run after each batch is ready.
    conveyor::BatchPipeline pipe(data, conveyor::RandomSampler(data.size(), {.seed = 1}), aug,
                                 {.batch_size = static_cast<std::size_t>(a.batch), .workers = a.workers,
                                  .seed = 1, .device = gpu ? 0 : conveyor::cpu_device});
    std::printf("%llu images in %zu classes, %s, %d steps of %d at %d px\n",
                static_cast<unsigned long long>(data.size()), data.classes().size(), gpu ? "CUDA" : "CPU", a.steps,
                a.batch, a.size);

    std::vector<double> losses;
    std::uint64_t images = 0;
    const auto t0 = std::chrono::steady_clock::now();
    net->train();
    for (std::uint64_t epoch = 0; static_cast<int>(losses.size()) < a.steps; ++epoch) {
      pipe.set_epoch(epoch);
      for (const conveyor::Batch& b : pipe) {
        // Views of the slot: it is not refilled while these tensors (or autograd's copies) live.
        const torch::Tensor x = at::fromDLPack(conveyor::to_dlpack(b, conveyor::BatchTensor::images));
        const torch::Tensor y = at::fromDLPack(conveyor::to_dlpack(b, conveyor::BatchTensor::labels));
        sgd.zero_grad();
        const torch::Tensor loss = torch::nn::functional::cross_entropy(net->forward(x), y);
        loss.backward();
        sgd.step();
        losses.push_back(loss.item<double>());  // waits for the step: the loss is the host's
        images += b.size();
        if (losses.size() % 20 == 0 || losses.size() == 1)
          std::printf("step %4zu  epoch %3llu  loss %.4f\n", losses.size(), static_cast<unsigned long long>(epoch),
                      losses.back());
        if (static_cast<int>(losses.size()) == a.steps) break;
      }
    }
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

    if (!a.csv.empty()) {
      std::ofstream out(a.csv);
      out << "step,loss\n";
      for (std::size_t i = 0; i < losses.size(); ++i) out << i + 1 << ',' << losses[i] << '\n';
    }
    const std::size_t n = std::min<std::size_t>(10, losses.size() / 2);
    const double first = mean(losses, 0, n), last = mean(losses, losses.size() - n, n);
    const conveyor::PipelineStats stats = pipe.stats();
    std::printf("\nloss: first %zu steps %.4f, last %zu steps %.4f\n%.1f img/s (training included); the loop waited "
                "for data %.1f%% of the time\n\n%s",
                n, first, n, last, double(images) / seconds, 100.0 * stats.starvation, stats.table().c_str());
    if (!(last < first)) {
      std::fprintf(stderr, "conveyor-libtorch-train: the loss did not fall\n");
      return 1;
    }
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "conveyor-libtorch-train: %s\n", e.what());
    return 2;
  }
}

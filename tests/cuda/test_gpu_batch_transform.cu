// Batch transforms on the GPU: the mixing kernel against the CPU's mixing functions on random
// batches and draws (every dtype, both layouts and pairings, draws per batch or per sample, boxes
// anywhere, odd batches), and
// a CUDA pipeline's mixed batches and soft targets against the CPU backend's, bit for bit. Runs
// only where a GPU is (label gpu).

#include <conveyor/cuda/all.cuh>

#include <catch2/catch.hpp>

#include "cuda/gpu_batches.hpp"
#include "support/datasets.hpp"

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <tuple>
#include <vector>

using namespace conveyor;

namespace {

/// A draw of `kind` with lambda and box anywhere (the ends too), for images `g`.
BatchMix random_mix(CounterRng& rng, const MixGeometry& g, BatchMix::Kind kind, BatchMix::Pairing pairing) {
  BatchMix m;
  m.kind = kind;
  m.pairing = pairing;
  m.lam = rng.below(5) == 0 ? double(rng.below(2)) : double(float(rng.uniform()));
  m.x1 = std::int64_t(rng.below(std::uint64_t(g.width + 1)));
  m.x2 = m.x1 + std::int64_t(rng.below(std::uint64_t(g.width - m.x1 + 1)));
  m.y1 = std::int64_t(rng.below(std::uint64_t(g.height + 1)));
  m.y2 = m.y1 + std::int64_t(rng.below(std::uint64_t(g.height - m.y1 + 1)));
  return m;
}

/// `count` samples of `g` mixed by the CPU's functions as a pipeline would: out of place for
/// torchvision's pairs (each with its partner as it was), each mirrored pair at once, by the
/// samples' own draws `each` when `m` draws per sample.
std::vector<std::byte> mixed_on_cpu(std::vector<std::byte> x, std::size_t count, const MixGeometry& g, const BatchMix& m,
                                    const std::vector<BatchMix>& each) {
  const std::size_t bytes = g.sample_bytes();
  if (m.per_sample) {
    std::vector<std::byte> scratch(bytes);
    for (std::size_t i = 0; i < (count + 1) / 2; ++i)
      mix_pair_each(x.data() + i * bytes, x.data() + (count - 1 - i) * bytes, g, each[i], each[count - 1 - i], scratch.data());
    return x;
  }
  if (m.pairing == BatchMix::Pairing::mirror) {
    for (std::size_t i = 0; i < (count + 1) / 2; ++i) mix_pair(x.data() + i * bytes, x.data() + (count - 1 - i) * bytes, g, m);
    return x;
  }
  const std::vector<std::byte> before = x;
  for (std::size_t i = 0; i < count; ++i) mix_sample(x.data() + i * bytes, before.data() + m.partner(i, count) * bytes, g, m);
  return x;
}

}  // namespace

TEST_CASE("The mixing kernel equals the CPU's mixing on random batches and draws",
          "[gpu][batch_transform][kernels]") {
  CounterRng rng(0x6d1c, 0, 0, RngOp::user);
  for (int round = 0; round < 200; ++round) {
    const DType dtype = std::array{DType::f32, DType::bf16, DType::f16, DType::u8}[rng.below(4)];
    MixGeometry g{dtype, rng.below(2) ? Layout::NCHW : Layout::NHWC, 3, std::int64_t(1 + rng.below(40)),
                  std::int64_t(1 + rng.below(40))};
    const std::size_t count = 1 + rng.below(19);
    const auto kind = [&] {
      return dtype == DType::u8 || rng.below(2) ? BatchMix::Kind::cutmix : BatchMix::Kind::mixup;
    };
    const BatchMix::Pairing pairing = rng.below(2) ? BatchMix::Pairing::previous : BatchMix::Pairing::mirror;
    BatchMix m = random_mix(rng, g, kind(), pairing);
    std::vector<BatchMix> each;
    if (pairing == BatchMix::Pairing::mirror && rng.below(2)) {  // per sample, as timm's 'elem' mode
      m = BatchMix{.pairing = pairing, .per_sample = true, .images_dtype = dtype};
      for (std::size_t i = 0; i < count; ++i)
        each.push_back(rng.below(4) == 0 ? BatchMix{.pairing = pairing} : random_mix(rng, g, kind(), pairing));
    }
    CAPTURE(round, to_string(dtype), to_string(g.layout), g.height, g.width, count, int(m.kind), int(m.pairing),
            m.per_sample, m.lam, m.x1, m.y1, m.x2, m.y2);
    // Values across the dtype's range, no two samples alike (floats as small integers over 16 and
    // signed, so 16-bit types hold them and the products round).
    std::vector<std::byte> x(count * g.sample_bytes());
    const std::size_t n = x.size() / dtype_size(dtype);
    for (std::size_t e = 0; e < n; ++e) {
      const float v = float(int(rng.below(4096)) - 2048) / 16.0f + float(rng.uniform());
      if (dtype == DType::f32) std::memcpy(x.data() + 4 * e, &v, 4);
      if (dtype == DType::bf16 || dtype == DType::f16) {
        const std::uint16_t h = dtype == DType::f16 ? ops::to_f16_bits(v) : ops::to_bf16_bits(v);
        std::memcpy(x.data() + 2 * e, &h, 2);
      }
      if (dtype == DType::u8) x[e] = std::byte(rng.below(256));
    }
    const std::vector<std::byte> expected = mixed_on_cpu(x, count, g, m, each);
    cuda::DeviceBuffer d(x.size()), table(count * sizeof(BatchMix));
    CONVEYOR_CUDA_TRY(cudaMemcpy(d.data(), x.data(), x.size(), cudaMemcpyHostToDevice));
    if (!each.empty()) CONVEYOR_CUDA_TRY(cudaMemcpy(table.data(), each.data(), table.size(), cudaMemcpyHostToDevice));
    cuda::kernels::launch_mix(d.data(), int(count), g, m, reinterpret_cast<const BatchMix*>(table.data()), nullptr);
    std::vector<std::byte> got(x.size());
    CONVEYOR_CUDA_TRY(cudaMemcpy(got.data(), d.data(), got.size(), cudaMemcpyDeviceToHost));
    REQUIRE(got == expected);
  }
}

TEST_CASE("A CUDA pipeline's mixed batches and soft targets equal the CPU backend's", "[gpu][batch_transform]") {
  const InMemory data = conveyor_test::jpeg_dataset(23, 4);  // batches of 8, 8 and 7
  const std::vector<std::tuple<DType, Layout, BatchTransform>> cases{
      {DType::f32, Layout::NCHW, MixUp{.alpha = 0.4, .num_classes = 5}},
      {DType::bf16, Layout::NHWC, BatchTransform({MixUp{.alpha = 0.2, .num_classes = 5}, CutMix{.alpha = 1.0, .num_classes = 5}})},
      {DType::f16, Layout::NCHW, CutMix{.alpha = 1.0, .num_classes = 5}},
      {DType::u8, Layout::NHWC, CutMix{.alpha = 0.5, .num_classes = 5}},
      {DType::bf16, Layout::NCHW, TimmMixup{.mixup_alpha = 0.8, .cutmix_alpha = 1.0, .prob = 0.9, .num_classes = 5}},
      {DType::f32, Layout::NHWC, TimmMixup{.mixup_alpha = 1.0, .label_smoothing = 0.1, .num_classes = 5}},
      {DType::bf16, Layout::NHWC, TimmMixup{.mixup_alpha = 0.8, .cutmix_alpha = 1.0, .num_classes = 5,
                                            .mode = TimmMixup::Mode::elem}},
      {DType::f16, Layout::NCHW, TimmMixup{.mixup_alpha = 0.8, .cutmix_alpha = 1.0, .prob = 0.8, .num_classes = 5,
                                           .mode = TimmMixup::Mode::pair}},
  };
  for (const auto& [dtype, layout, transform] : cases) {
    CAPTURE(to_string(dtype), to_string(layout));
    ImageAugment aug = ImageAugment::train(32);
    aug.dtype = dtype;
    aug.layout = layout;
    if (dtype == DType::u8) aug.normalize.reset();
    const PipelineOptions cpu{.batch_size = 8, .workers = 3, .seed = 5, .batch_transform = transform};
    PipelineOptions gpu = cpu;
    gpu.device = 0;
    using Pipe = BatchPipeline<InMemory, SequentialSampler, ImageAugment>;
    Pipe a(data, SequentialSampler(data.size()), aug, cpu), b(data, SequentialSampler(data.size()), aug, gpu);
    std::size_t mixed = 0;
    for (std::uint64_t epoch = 0; epoch < 3; ++epoch) {
      a.set_epoch(epoch);
      b.set_epoch(epoch);
      auto ia = a.begin();
      for (auto ib = b.begin(); ib != b.end(); ++ia, ++ib) {
        const Batch& x = *ia;
        const Batch& y = *ib;
        CAPTURE(epoch, x.number());
        REQUIRE(y.targets().device.kind == Device::Kind::cuda);
        CHECK(conveyor_test::host_copy(y) == conveyor_test::host_copy(x));
        std::vector<float> targets(x.targets().numel());
        CONVEYOR_CUDA_TRY(cudaMemcpy(targets.data(), y.targets().data, targets.size() * 4, cudaMemcpyDeviceToHost));
        const auto* expected = static_cast<const float*>(x.targets().data);
        CHECK(std::equal(targets.begin(), targets.end(), expected));
        CHECK((y.mix().kind == x.mix().kind && y.mix().lam == x.mix().lam && y.mix().x1 == x.mix().x1 &&
               y.mix().y2 == x.mix().y2));
        mixed += x.mix().kind != BatchMix::Kind::none || x.mix().per_sample;
      }
    }
    CHECK(mixed >= 6);  // of 9 batches: the comparison is not of unmixed ones
  }
}

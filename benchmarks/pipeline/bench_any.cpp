// The type-erased pipeline (AnyPipeline) against the typed one on the CPU backend, one worker:
// 256 synthetic 320 x 240 JPEGs through the train preset (what a sample costs), and 8-byte raw
// samples (where nothing but the pipeline's own per-sample work is left to hide the erasure's
// virtual calls). Each iteration is one epoch.

#include <conveyor/conveyor.hpp>

#include <benchmark/benchmark.h>

#include <cstdint>
#include <cstring>
#include <vector>

namespace {

/// 256 seeded JPEGs of smooth gradients and noise, as photos decode about as fast.
conveyor::InMemory jpegs() {
  conveyor::InMemory d;
  conveyor::CounterRng rng(1, 0, 0, conveyor::RngOp::user);
  std::vector<std::uint8_t> px(320 * 240 * 3);
  for (int i = 0; i < 256; ++i) {
    for (int y = 0; y < 240; ++y)
      for (int x = 0; x < 320; ++x)
        for (int c = 0; c < 3; ++c)
          px[(std::size_t(y) * 320 + x) * 3 + c] =
              static_cast<std::uint8_t>((x * (c + 1) + y * (3 - c) + i * 7) / 3 + (rng.next_u32() & 15));
    d.add(conveyor::encode_jpeg(px.data(), 320, 240, 3, 320 * 3, {}), i % 10);
  }
  return d;
}

/// 8-byte samples holding their index.
conveyor::InMemory raw() {
  conveyor::InMemory d;
  for (std::uint64_t i = 0; i < 4096; ++i) {
    std::byte b[8];
    std::memcpy(b, &i, 8);
    d.add(b, static_cast<std::int64_t>(i % 10));
  }
  return d;
}

template <class Pipeline>
void run_epochs(benchmark::State& state, Pipeline& pipe, std::uint64_t samples) {
  std::uint64_t epoch = 0;
  for (auto _ : state) {
    pipe.set_epoch(epoch++);
    for (const conveyor::Batch& b : pipe) benchmark::DoNotOptimize(b.images().data);
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * samples));
}

const conveyor::PipelineOptions options{.batch_size = 64, .workers = 1, .seed = 3};

void typed_jpeg(benchmark::State& state) {
  const conveyor::InMemory data = jpegs();
  conveyor::BatchPipeline pipe(data, conveyor::RandomSampler(data.size(), {.seed = 1}),
                               conveyor::ImageAugment::train(224), options);
  run_epochs(state, pipe, data.size());
}
void erased_jpeg(benchmark::State& state) {
  const conveyor::InMemory data = jpegs();
  conveyor::AnyPipeline pipe(conveyor::AnyDataset(data), conveyor::AnySampler(conveyor::RandomSampler(data.size(), {.seed = 1})),
                             conveyor::AnyTransform(conveyor::ImageAugment::train(224)), options);
  run_epochs(state, pipe, data.size());
}

const conveyor::RawTensor index_tensor{conveyor::SampleSpec{conveyor::DType::u8, 1, {8, 0, 0}}};

void typed_raw(benchmark::State& state) {
  const conveyor::InMemory data = raw();
  conveyor::BatchPipeline pipe(data, conveyor::RandomSampler(data.size(), {.seed = 1}), index_tensor, options);
  run_epochs(state, pipe, data.size());
}
void erased_raw(benchmark::State& state) {
  const conveyor::InMemory data = raw();
  conveyor::AnyPipeline pipe(conveyor::AnyDataset(data), conveyor::AnySampler(conveyor::RandomSampler(data.size(), {.seed = 1})),
                             conveyor::AnyTransform(index_tensor), options);
  run_epochs(state, pipe, data.size());
}

}  // namespace

BENCHMARK(typed_jpeg)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(erased_jpeg)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(typed_raw)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(erased_raw)->Unit(benchmark::kMillisecond)->UseRealTime();

BENCHMARK_MAIN();

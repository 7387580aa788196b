// The CPU backend's resample-flip-normalize for one RandomResizedCrop(224) sample, one core, from
// decoded windows the size ROI + DCT-scaled decoding hands it (1 to 2 source pixels per output
// pixel), to each dtype and layout.

#include <conveyor/conveyor.hpp>

#include <benchmark/benchmark.h>

#include <vector>

namespace {

void resample(benchmark::State& state) {
  const auto dtype = static_cast<conveyor::DType>(state.range(0));
  const auto layout = static_cast<conveyor::Layout>(state.range(1));
  conveyor::ImageAugment aug = conveyor::ImageAugment::train(224);
  aug.dtype = dtype;
  aug.layout = layout;
  if (dtype == conveyor::DType::u8) aug.normalize.reset();
  // 64 windows of 224..447 pixels a side, seeded, each with its sample's plan.
  std::vector<std::vector<std::uint8_t>> windows;
  std::vector<conveyor::ops::SamplePlan> plans;
  conveyor::CounterRng rng(1, 0, 0, conveyor::RngOp::user);
  for (int i = 0; i < 64; ++i) {
    const int w = 224 + int(rng.below(224)), h = 224 + int(rng.below(224));
    std::vector<std::uint8_t> px(std::size_t(w) * h * 3);
    for (auto& v : px) v = static_cast<std::uint8_t>(rng.next_u32());
    conveyor::ops::SamplePlan p;
    p.out_width = p.out_height = 224;
    p.x = {0.0, double(w) / 224, 0, 224, 0, w};
    p.y = {0.0, double(h) / 224, 0, 224, 0, h};
    p.src = {0, 3, std::int64_t{w} * 3, w, h};
    p.flip = i % 2;
    windows.push_back(std::move(px));
    plans.push_back(p);
  }
  const conveyor::ops::OutputParams params = aug.output_params();
  std::vector<std::byte> out(aug.sample_spec().bytes());
  conveyor::ops::cpu::ResampleScratch scratch;
  std::size_t i = 0;
  for (auto _ : state) {
    conveyor::ops::cpu::resample(windows[i % 64].data(), plans[i % 64], params, out.data(), scratch);
    benchmark::DoNotOptimize(out.data());
    ++i;
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()));
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * out.size()));
}

}  // namespace

BENCHMARK(resample)
    ->ArgNames({"dtype", "layout"})
    ->ArgsProduct({{0, 1, 2, 3}, {0, 1}})
    ->Unit(benchmark::kMicrosecond);

BENCHMARK_MAIN();

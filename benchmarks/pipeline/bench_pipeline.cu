// The GPU side of conveyor, against its ceilings and its baseline, in one run:
//   kernel/*      the fused augmentation kernel on a 256-image batch (bytes moved per second)
//   kernel_filter/*  the same (bf16 NCHW) with each filter the kernel resamples: torch's bicubic,
//                 Pillow's (torchvision v1), against the default bilinear
//   layout        the kernel that lays out its filter windows, which the pipeline runs on its
//                 load stream
//   d2d_copy      a device-to-device copy: the bandwidth ceiling, measured beside it
//   serial_loop   the seeds' loop: one thread decodes, crops, resizes, flips and normalises to f32
//                 on the CPU, then copies the batch with a pageable cudaMemcpy
//   conveyor/N    the same transforms through BatchPipeline on the GPU with N workers
//   overlap/T     conveyor with a consumer that spends T us of GPU time per batch: GPU busy
//                 fraction and the consumer's wait per batch
// Prints the ratios last.
//
//   bench_pipeline --data DIR [Google Benchmark flags]      (DIR: an ImageFolder tree)

#include <conveyor/cuda/all.cuh>

#include "bench_common.hpp"

#include <benchmark/benchmark.h>

#include <chrono>
#include <cstdio>
#include <map>
#include <string>
#include <thread>
#include <vector>

namespace {

conveyor::InMemory g_data;
conveyor::InMemory g_long;  // g_data four times over: an epoch long enough to see the steady state

/// Waits on the device for `ns` nanoseconds, reading one element of the batch it is given.
__global__ void consume(const std::uint16_t* batch, long long ns, std::uint16_t* sink) {
  long long start = 0, now = 0;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
  do {
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
  } while (now - start < ns);
  *sink = batch[0];
}

// --- the kernel against the copy ceiling -------------------------------------------------------

void run_kernel(benchmark::State& state, bool layout_only) {
  using namespace conveyor;
  const auto dtype = static_cast<DType>(state.range(0));
  const auto layout = static_cast<Layout>(state.range(1));
  const auto filter = static_cast<ops::Resampling>(state.range(2));
  ImageAugment aug = ImageAugment::train(224);
  aug.dtype = dtype;
  aug.layout = layout;
  if (dtype == DType::u8) aug.normalize.reset();
  const std::size_t batch = 256, sample_bytes = aug.sample_spec().bytes();
  // Windows as ROI + DCT scaling hands them over: 224..447 a side (1-2 source pixels per output pixel).
  CounterRng rng(3, 0, 0, RngOp::user);
  std::vector<ops::SamplePlan> plans(batch);
  std::size_t data = 0;
  for (std::size_t i = 0; i < batch; ++i) {
    const int w = 224 + int(rng.below(224)), h = 224 + int(rng.below(224));
    ops::SamplePlan& p = plans[i];
    p.out_width = p.out_height = 224;
    p.x = {0.0f, float(w) / 224.0f, 0, 224, 0, w, filter};
    p.y = {0.0f, float(h) / 224.0f, 0, 224, 0, h, filter};
    p.src = {static_cast<std::int64_t>(data), 3, std::int64_t{w} * 3, w, h};
    p.flip = static_cast<std::int32_t>(i % 2);
    data += (std::size_t(w) * h * 3 + 15) / 16 * 16;
  }
  std::vector<std::uint8_t> pixels(data);
  for (auto& v : pixels) v = static_cast<std::uint8_t>(rng.next_u32());
  cuda::DeviceBuffer in(data), plan_buf(batch * sizeof(ops::SamplePlan)), out(batch * sample_bytes),
      taps(cuda::kernels::TapTable::bytes(batch, 224, 224));
  CONVEYOR_CUDA_TRY(cudaMemcpy(in.data(), pixels.data(), data, cudaMemcpyHostToDevice));
  CONVEYOR_CUDA_TRY(cudaMemcpy(plan_buf.data(), plans.data(), plan_buf.size(), cudaMemcpyHostToDevice));
  cuda::Stream stream;
  cuda::TimedEvent start, stop;
  const ops::OutputParams params = aug.output_params();
  const auto* plan_ptr = reinterpret_cast<const ops::SamplePlan*>(plan_buf.data());
  // The windows' layout runs on the pipeline's load stream, off the consumer's path; timed alone below.
  cuda::kernels::launch_layout(plan_ptr, taps.data(), batch, 224, 224, stream.get());
  cuda::kernels::load_augment_kernels(params);
  for (auto _ : state) {
    start.record(stream);
    if (layout_only)
      cuda::kernels::launch_layout(plan_ptr, taps.data(), batch, 224, 224, stream.get());
    else
      cuda::kernels::launch_augment(in.data(), plan_ptr, taps.data(), out.data(), batch, sample_bytes, params, 224,
                                    224, stream.get());
    stop.record(stream);
    stop.synchronize();
    state.SetIterationTime(1e-3 * stop.elapsed_ms_since(start));
  }
  if (layout_only) return;
  const std::size_t moved = data + batch * sample_bytes;  // each input byte read once, each output byte written once
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * moved));
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * batch));
  state.counters["MB_moved"] = double(moved) / 1e6;
}

void kernel(benchmark::State& state) { run_kernel(state, false); }
void layout(benchmark::State& state) { run_kernel(state, true); }

void d2d_copy(benchmark::State& state) {
  const std::size_t bytes = std::size_t{1} << 30;
  conveyor::cuda::DeviceBuffer a(bytes), b(bytes);
  CONVEYOR_CUDA_TRY(cudaMemset(a.data(), 7, bytes));
  conveyor::cuda::Stream stream;
  conveyor::cuda::TimedEvent start, stop;
  for (auto _ : state) {
    start.record(stream);
    CONVEYOR_CUDA_TRY(cudaMemcpyAsync(b.data(), a.data(), bytes, cudaMemcpyDeviceToDevice, stream.get()));
    stop.record(stream);
    stop.synchronize();
    state.SetIterationTime(1e-3 * stop.elapsed_ms_since(start));
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * 2 * bytes));  // read + write
}

// --- the seeds' serial loop against conveyor ---------------------------------------------------

constexpr std::size_t batch_size = 256;

void serial_loop(benchmark::State& state) {
  using namespace conveyor;
  ImageAugment aug = ImageAugment::train(224);  // f32 NCHW, ImageNet normalisation
  aug.roi = false;
  aug.decode_scaling = false;
  auto ws = aug.make_workspace();
  const std::size_t sample_bytes = aug.sample_spec().bytes();
  std::vector<std::byte> host(batch_size * sample_bytes);  // pageable, as the loop had it
  cuda::DeviceBuffer device(batch_size * sample_bytes);
  ByteBuffer bytes;
  const std::size_t images = std::min<std::size_t>(g_data.size(), 4 * batch_size);
  for (auto _ : state) {
    const auto t0 = std::chrono::steady_clock::now();
    for (std::size_t first = 0; first < images; first += batch_size) {
      const std::size_t n = std::min(batch_size, images - first);
      for (std::size_t k = 0; k < n; ++k) {
        g_data.read(first + k, bytes);
        aug.apply({.seed = 1, .epoch = 0, .index = first + k}, bytes.span(),
                  std::span<std::byte>(host.data() + k * sample_bytes, sample_bytes), ws);
      }
      CONVEYOR_CUDA_TRY(cudaMemcpy(device.data(), host.data(), n * sample_bytes, cudaMemcpyHostToDevice));
    }
    CONVEYOR_CUDA_TRY(cudaDeviceSynchronize());
    state.SetIterationTime(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * images));
}

/// `epochs` epochs of `data` through a CUDA pipeline, timed from the first iterator's creation;
/// the consumer spends `consumer_us` of GPU time per batch on its own stream.
void run_pipeline(benchmark::State& state, const conveyor::InMemory& data, int epochs, int workers,
                  conveyor::DType dtype, long long consumer_us) {
  using namespace conveyor;
  ImageAugment aug = ImageAugment::train(224);
  aug.dtype = dtype;
  cudaStream_t stream;
  CONVEYOR_CUDA_TRY(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  cuda::DeviceBuffer sink(16);
  std::uint64_t images = 0, batches = 0;
  double wait = 0, wall = 0;
  for (auto _ : state) {
    BatchPipeline pipe(data, RandomSampler(data.size(), {.seed = 1}), aug,
                       {.batch_size = batch_size, .workers = workers, .device = 0, .stream = stream});
    const auto t0 = std::chrono::steady_clock::now();
    for (int epoch = 0; epoch < epochs; ++epoch) {
      pipe.set_epoch(static_cast<std::uint64_t>(epoch));
      for (const Batch& b : pipe) {
        if (consumer_us > 0)
          consume<<<1, 1, 0, stream>>>(static_cast<const std::uint16_t*>(b.images().data), consumer_us * 1000,
                                       reinterpret_cast<std::uint16_t*>(sink.data()));
        images += b.size();
        ++batches;
      }
    }
    CONVEYOR_CUDA_TRY(cudaStreamSynchronize(stream));
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    state.SetIterationTime(seconds);
    wall += seconds;
    wait += pipe.stats().consumer_wait_seconds;
  }
  CONVEYOR_CUDA_TRY(cudaStreamDestroy(stream));
  state.SetItemsProcessed(static_cast<std::int64_t>(images));
  if (consumer_us > 0) {
    state.counters["gpu_busy_pct"] = 100.0 * double(batches) * double(consumer_us) * 1e-6 / wall;
    state.counters["wait_ms_per_batch"] = 1e3 * wait / double(batches);
  }
}

/// Keeps items/s and counters per benchmark for the table printed last.
class Reporter : public benchmark::ConsoleReporter {
 public:
  std::map<std::string, Run> runs;
  void ReportRuns(const std::vector<Run>& rs) override {
    for (const Run& r : rs)
      if (!r.error_occurred) runs[r.run_name.str()] = r;
    ConsoleReporter::ReportRuns(rs);
  }
  double counter(const std::string& name, const char* c) {
    auto it = runs.find(name);
    return it == runs.end() || !it->second.counters.count(c) ? 0.0 : double(it->second.counters.at(c));
  }
};

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  std::string dir;
  for (int i = 1; i + 1 < argc; i += 2)
    if (std::string(argv[i]) == "--data") dir = argv[i + 1];
  if (dir.empty()) {
    std::fprintf(stderr, "usage: bench_pipeline --data DIR [benchmark flags]\n");
    return 2;
  }
  const conveyor::ImageFolder folder(dir);
  conveyor::ByteBuffer b;
  for (std::uint64_t i = 0; i < folder.size(); ++i) {
    folder.read(i, b);
    g_data.add(b.span(), folder.label(i));
  }
  for (int dtype : {0, 1, 3})
    for (int layout : {0, 1})
      benchmark::RegisterBenchmark(("kernel/" + std::string(to_string(conveyor::DType(dtype))) + "/" +
                                    std::string(to_string(conveyor::Layout(layout)))).c_str(),
                                   kernel)
          ->Args({dtype, layout, 0})
          ->UseManualTime()
          ->Unit(benchmark::kMicrosecond);
  const auto filters = conveyor::ops::enum_names(conveyor::ops::Resampling{});
  for (std::size_t f = 0; f < filters.size(); ++f)
    if (conveyor::ops::exact_on_device(static_cast<conveyor::ops::Resampling>(f)))
      benchmark::RegisterBenchmark(("kernel_filter/" + std::string(filters[f])).c_str(), kernel)
          ->Args({3, 0, static_cast<long long>(f)})
          ->UseManualTime()
          ->Unit(benchmark::kMicrosecond);
  benchmark::RegisterBenchmark("layout", layout)->Args({3, 0, 0})->UseManualTime()->Unit(benchmark::kMicrosecond);
  benchmark::RegisterBenchmark("d2d_copy", d2d_copy)->UseManualTime()->Unit(benchmark::kMicrosecond);
  benchmark::RegisterBenchmark("serial_loop", serial_loop)->UseManualTime()->Iterations(1)->Unit(benchmark::kSecond);
  const int cores = static_cast<int>(std::thread::hardware_concurrency());
  std::vector<int> counts = {1, 2, 4, 8, 16};
  if (cores > 16) counts.push_back(cores);
  for (int w : counts)
    if (w <= cores)
      benchmark::RegisterBenchmark(("conveyor_f32/" + std::to_string(w)).c_str(), [w](benchmark::State& s) {
        run_pipeline(s, g_data, 2, w, conveyor::DType::f32, 0);
      })->UseManualTime()->Iterations(1)->Unit(benchmark::kSecond);
  // One long epoch: each epoch starts with one batch of latency (nothing is prefetched across
  // epochs), which a 20-batch epoch would count twenty times more than ImageNet's 5,000.
  for (int copy = 0; copy < 4; ++copy)
    for (std::uint64_t i = 0; i < g_data.size(); ++i) g_long.add(g_data.bytes(i), g_data.label(i));
  for (long long us : {5000LL, 40000LL})
    benchmark::RegisterBenchmark(("overlap/" + std::to_string(us) + "us").c_str(), [us, cores](benchmark::State& s) {
      run_pipeline(s, g_long, 1, cores, conveyor::DType::bf16, us);
    })->UseManualTime()->Iterations(1)->Unit(benchmark::kSecond);

  Reporter rep;
  benchmark::RunSpecifiedBenchmarks(&rep);
  const double d2d = rep.counter("d2d_copy/manual_time", "bytes_per_second");
  std::printf("\n| kernel (256 x 224x224) | us per batch | GB/s moved | share of d2d copy (%.0f GB/s) |\n|---|---|---|---|\n",
              d2d / 1e9);
  for (const auto& [name, run] : rep.runs)
    if (name.rfind("kernel", 0) == 0) {
      const double bps = rep.counter(name, "bytes_per_second");
      std::printf("| %s | %.1f | %.0f | %.1f %% |\n", name.c_str(), run.GetAdjustedRealTime(), bps / 1e9,
                  d2d > 0 ? 100.0 * bps / d2d : 0.0);
    }
  for (const auto& [name, run] : rep.runs)
    if (name.rfind("layout", 0) == 0)
      std::printf("| the windows' layout before it (load stream) | %.1f | | |\n", run.GetAdjustedRealTime());
  double serial = 0;
  for (const auto& [name, run] : rep.runs)
    if (name.rfind("serial_loop", 0) == 0) serial = rep.counter(name, "items_per_second");
  std::printf("\n| loader | img/s | vs serial loop |\n|---|---|---|\n| serial loop (1 thread, f32, pageable copy) | %.0f | 1.0x |\n",
              serial);
  for (const auto& [name, run] : rep.runs)
    if (name.rfind("conveyor_f32/", 0) == 0) {
      const double r = rep.counter(name, "items_per_second");
      std::printf("| %s | %.0f | %.1fx |\n", name.c_str(), r, serial > 0 ? r / serial : 0.0);
    }
  std::printf("\n| consumer GPU time per batch | img/s | GPU busy | consumer wait per batch |\n|---|---|---|---|\n");
  for (const auto& [name, run] : rep.runs)
    if (name.rfind("overlap/", 0) == 0)
      std::printf("| %s | %.0f | %.1f %% | %.2f ms |\n", name.c_str(), rep.counter(name, "items_per_second"),
                  rep.counter(name, "gpu_busy_pct"), rep.counter(name, "wait_ms_per_batch"));
  benchmark::Shutdown();
  return 0;
}

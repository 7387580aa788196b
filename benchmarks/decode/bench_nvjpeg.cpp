// The hardware JPEG engines' own ceiling, measured alone (no pipeline, no augmentation): batches
// of files from pinned memory decoded by nvJPEG's hardware backend with conveyor's settings
// (interleaved RGB, interpolated chroma upsampling), whole and as RandomResizedCrop-sized windows,
// synchronised per batch, by 1 to 3 threads at once. Only the files the engines take
// (engine_decodable). Counters per batch: the batched call's host time (call_ms), the calling
// thread's CPU time in it (cpu_ms: whether the call waits for the engines by spinning a core) and
// the whole process's (proc_cpu_ms: nvJPEG's own threads too). Prints img/s last.
//
//   bench_nvjpeg --jpegs DIR [--device-sync spin|yield|blocking] [Google Benchmark flags]
//
// --device-sync: how host threads wait for the device (cudaSetDeviceFlags), default CUDA's auto.

#include <conveyor/core/clock.hpp>
#include <conveyor/cuda/device.hpp>
#include <conveyor/cuda/error.hpp>
#include <conveyor/device/jpeg_offload.hpp>
#include <conveyor/io/file.hpp>

#include "rate_reporter.hpp"

#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <sys/resource.h>
#include <time.h>

#include <cuda_runtime_api.h>
#include <nvjpeg.h>

namespace {

struct File {
  std::byte* pinned = nullptr;
  std::size_t bytes = 0;
  int width = 0, height = 0;
};
std::vector<File> files;

double thread_cpu_seconds() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return double(t.tv_sec) + 1e-9 * double(t.tv_nsec);
}
double process_cpu_seconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return double(u.ru_utime.tv_sec + u.ru_stime.tv_sec) + 1e-6 * double(u.ru_utime.tv_usec + u.ru_stime.tv_usec);
}

#define NVJPEG_OK(call)                                                                   \
  do {                                                                                    \
    if (const nvjpegStatus_t s = (call); s != NVJPEG_STATUS_SUCCESS)                      \
      throw std::runtime_error(std::string(#call " returned status ") + std::to_string(int(s))); \
  } while (0)

/// Batches of `batch` files; `window`: decode the centre 60 % of each side (a typical crop);
/// `reinitialize`: every other batch one file smaller, the state initialised again for each (as a
/// pipeline's device share gives batches of varying size).
void engines(benchmark::State& state, bool window, bool reinitialize = false) {
  const int batch = static_cast<int>(state.range(0));
  nvjpegHandle_t h = nullptr;
  nvjpegJpegState_t js = nullptr;
  NVJPEG_OK(nvjpegCreateEx(NVJPEG_BACKEND_HARDWARE, nullptr, nullptr, NVJPEG_FLAGS_UPSAMPLING_WITH_INTERPOLATION, &h));
  NVJPEG_OK(nvjpegJpegStateCreate(h, &js));
  NVJPEG_OK(nvjpegDecodeBatchedInitialize(h, js, batch, 1, NVJPEG_OUTPUT_RGBI));
  cudaStream_t stream = nullptr;
  CONVEYOR_CUDA_TRY(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  std::vector<nvjpegDecodeParams_t> params(batch);
  std::vector<const unsigned char*> data(batch);
  std::vector<std::size_t> lengths(batch);
  std::unique_ptr<nvjpegImage_t[]> out(new nvjpegImage_t[batch]);
  std::size_t max_pixels = 0;
  for (const File& f : files) max_pixels = std::max(max_pixels, std::size_t(f.width) * f.height);
  void* dev = nullptr;
  CONVEYOR_CUDA_TRY(cudaMalloc(&dev, std::size_t(batch) * max_pixels * 3));
  std::size_t next = std::size_t(state.thread_index()) * batch;  // threads start apart
  for (auto& p : params) {
    NVJPEG_OK(nvjpegDecodeParamsCreate(h, &p));
    NVJPEG_OK(nvjpegDecodeParamsSetOutputFormat(p, NVJPEG_OUTPUT_RGBI));
  }
  const auto fill = [&] {
    for (int i = 0; i < batch; ++i) {
      const File& f = files[next++ % files.size()];
      const int x = window ? (f.width / 5) & ~15 : 0, y = window ? f.height / 5 : 0;
      const int w = window ? f.width * 3 / 5 : f.width, hh = window ? f.height * 3 / 5 : f.height;
      NVJPEG_OK(nvjpegDecodeParamsSetROI(params[i], x, y, w, hh));
      data[i] = reinterpret_cast<const unsigned char*>(f.pinned);
      lengths[i] = f.bytes;
      out[i] = nvjpegImage_t{};
      out[i].channel[0] = static_cast<unsigned char*>(dev) + std::size_t(i) * max_pixels * 3;
      out[i].pitch[0] = std::size_t(w) * 3;
    }
  };
  bool odd = false;
  std::int64_t images = 0;
  double call = 0, cpu = 0, process_cpu = 0;
  for (auto _ : state) {
    state.PauseTiming();
    fill();
    state.ResumeTiming();
    if (reinitialize) {
      odd = !odd;
      NVJPEG_OK(nvjpegDecodeBatchedInitialize(h, js, batch - odd, 1, NVJPEG_OUTPUT_RGBI));
    }
    const double cpu0 = thread_cpu_seconds(), process0 = process_cpu_seconds();
    const auto t0 = std::chrono::steady_clock::now();
    NVJPEG_OK(nvjpegDecodeBatchedEx(h, js, data.data(), lengths.data(), out.get(), params.data(), stream));
    call += conveyor::seconds_since(t0);
    cpu += thread_cpu_seconds() - cpu0;
    process_cpu += process_cpu_seconds() - process0;
    CONVEYOR_CUDA_TRY(cudaStreamSynchronize(stream));
    images += batch - odd;
  }
  state.SetItemsProcessed(images);
  const double iterations = double(state.iterations());
  state.counters["call_ms"] = 1e3 * call / iterations;
  state.counters["cpu_ms"] = 1e3 * cpu / iterations;
  state.counters["proc_cpu_ms"] = 1e3 * process_cpu / iterations;
  for (auto p : params) nvjpegDecodeParamsDestroy(p);
  cudaFree(dev);
  cudaStreamDestroy(stream);
  nvjpegJpegStateDestroy(js);
  nvjpegDestroy(h);
}


}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  const auto usage = [] {
    std::fprintf(stderr, "usage: bench_nvjpeg --jpegs DIR [--device-sync spin|yield|blocking] [benchmark flags]\n");
    return 2;
  };
  if ((argc != 3 && argc != 5) || std::string(argv[1]) != "--jpegs") return usage();
  if (argc == 5) {
    if (std::string_view(argv[3]) != "--device-sync") return usage();
    try {
      conveyor::cuda::set_device_sync(argv[4]);
    } catch (const conveyor::ConfigError& e) {
      std::fprintf(stderr, "bench_nvjpeg: %s\n", e.what());
      return usage();
    }
  }
  conveyor::JpegDecoder decoder;
  conveyor::ByteBuffer bytes;
  std::size_t refused = 0;
  for (const auto& e : std::filesystem::recursive_directory_iterator(argv[2])) {
    if (!e.is_regular_file() || files.size() >= 2048) continue;
    conveyor::read_file(e.path().string(), bytes);
    conveyor::JpegInfo info;
    try {
      info = decoder.read_header(bytes.span());
    } catch (const conveyor::DecodeError&) {
      continue;
    }
    if (!conveyor::engine_decodable(info)) {
      ++refused;
      continue;
    }
    File f{nullptr, bytes.size(), info.width, info.height};
    void* pinned = nullptr;
    CONVEYOR_CUDA_TRY(cudaMallocHost(&pinned, f.bytes));
    f.pinned = static_cast<std::byte*>(pinned);
    std::memcpy(f.pinned, bytes.data(), f.bytes);
    files.push_back(f);
  }
  if (files.empty()) {
    std::fprintf(stderr, "bench_nvjpeg: no JPEG the engines take under %s\n", argv[2]);
    return 1;
  }
  std::printf("%zu files the engines take (%zu others left out)\n", files.size(), refused);
  // Windows of batch 96 also with 2 and 3 threads calling at once, each with its own handle and
  // state: whether the engines take a second batch while one caller waits in its call.
  for (const int batch : {32, 96, 256})
    for (const bool window : {false, true})
      for (const int threads : {1, 2, 3}) {
        if (threads > 1 && !(window && batch == 96)) continue;
        benchmark::RegisterBenchmark((std::string(window ? "engines_window_b" : "engines_whole_b") + std::to_string(batch) +
                                      "_x" + std::to_string(threads)).c_str(),
                                     [window](benchmark::State& s) { engines(s, window); })
            ->Arg(batch)
            ->Threads(threads)
            ->UseRealTime()
            ->Unit(benchmark::kMillisecond);
      }
  benchmark::RegisterBenchmark("engines_window_b96_reinit", [](benchmark::State& s) { engines(s, true, true); })
      ->Arg(96)
      ->UseRealTime()
      ->Unit(benchmark::kMillisecond);
  conveyor_bench::RateReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  for (const auto& [name, rate] : reporter.rate) std::printf("%-28s %10.0f img/s\n", name.c_str(), rate);
  return 0;
}

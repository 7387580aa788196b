// The hardware JPEG engines' own ceiling, measured alone (no pipeline, no augmentation): batches
// of files from pinned memory decoded by nvJPEG's hardware backend with conveyor's settings
// (interleaved RGB, interpolated chroma upsampling), whole and as RandomResizedCrop-sized windows,
// synchronised per batch, by 1 to 3 threads at once. Only the files the engines take
// (engine_decodable). Counters per batch: the batched call's host time (call_ms), the calling
// thread's CPU time in it (cpu_ms: whether the call waits for the engines by spinning a core) and
// the whole process's (proc_cpu_ms: nvJPEG's own threads too); with the state initialised again
// before each call, that too (init_ms). Prints img/s last.
//
//   bench_nvjpeg --jpegs DIR [--device-sync spin|yield|blocking] [Google Benchmark flags]
//
// --device-sync: how host threads wait for the device (cudaSetDeviceFlags), default CUDA's auto.

#include <conveyor/core/clock.hpp>
#include <conveyor/cuda/device.hpp>
#include <conveyor/cuda/error.hpp>
#include <conveyor/device/jpeg_offload.hpp>
#include <conveyor/io/file.hpp>
#include <conveyor/io/jpeg.hpp>

#include "rate_reporter.hpp"

#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <utility>
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

/// The centre 60 % of each side (x a multiple of 16): a typical RandomResizedCrop window.
conveyor::DecodeRegion centre_window(const File& f) {
  return {(f.width / 5) & ~15, f.height / 5, f.width * 3 / 5, f.height * 3 / 5, 8};
}

std::size_t max_pixels_of_files() {
  std::size_t n = 0;
  for (const File& f : files) n = std::max(n, std::size_t(f.width) * f.height);
  return n;
}

/// A handle of `backend` with one state initialised for `batch` images, a stream, and the batched
/// call's arrays.
struct BatchedDecoder {
  nvjpegHandle_t h = nullptr;
  nvjpegJpegState_t js = nullptr;
  cudaStream_t stream = nullptr;
  std::vector<const unsigned char*> data;
  std::vector<std::size_t> lengths;
  std::unique_ptr<nvjpegImage_t[]> out;

  BatchedDecoder(nvjpegBackend_t backend, int batch, nvjpegOutputFormat_t format = NVJPEG_OUTPUT_RGBI,
                 unsigned flags = NVJPEG_FLAGS_UPSAMPLING_WITH_INTERPOLATION)
      : data(batch), lengths(batch), out(new nvjpegImage_t[batch]) {
    NVJPEG_OK(nvjpegCreateEx(backend, nullptr, nullptr, flags, &h));
    NVJPEG_OK(nvjpegJpegStateCreate(h, &js));
    NVJPEG_OK(nvjpegDecodeBatchedInitialize(h, js, batch, 1, format));
    CONVEYOR_CUDA_TRY(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  }
  BatchedDecoder(const BatchedDecoder&) = delete;
  BatchedDecoder& operator=(const BatchedDecoder&) = delete;
  ~BatchedDecoder() {
    (void)cudaStreamSynchronize(stream);
    (void)cudaStreamDestroy(stream);
    (void)nvjpegJpegStateDestroy(js);
    (void)nvjpegDestroy(h);
  }

  /// Sets up position i for file `f`, decoded into `dev` (`pitch` bytes a row); a planar format
  /// gets three planes of `plane` bytes each there, `pitch / 3` bytes a row.
  void place(int i, const File& f, unsigned char* dev, std::size_t pitch, std::size_t plane = 0) {
    data[i] = reinterpret_cast<const unsigned char*>(f.pinned);
    lengths[i] = f.bytes;
    out[i] = nvjpegImage_t{};
    out[i].channel[0] = dev;
    out[i].pitch[0] = pitch;
    if (plane == 0) return;
    for (int c = 0; c < 3; ++c) {
      out[i].channel[c] = dev + c * plane;
      out[i].pitch[c] = pitch / 3;
    }
  }
  /// Every position: files `first`, `first + 1`, ... (wrapping), whole, each into its
  /// `stride`-byte part of `dev`.
  void place_whole(std::size_t first, unsigned char* dev, std::size_t stride) {
    for (std::size_t i = 0; i < lengths.size(); ++i) {
      const File& f = files[(first + i) % files.size()];
      place(static_cast<int>(i), f, dev + i * stride, std::size_t(f.width) * 3);
    }
  }
  /// The batched call over every position (whole images).
  void decode_whole() { NVJPEG_OK(nvjpegDecodeBatched(h, js, data.data(), lengths.data(), out.get(), stream)); }
};

/// What the engines are asked for, beside conveyor's (interleaved RGB, interpolated chroma
/// upsampling): whether the format or the upsampling sets the call's host cost.
struct EngineOutput {
  nvjpegOutputFormat_t format = NVJPEG_OUTPUT_RGBI;
  unsigned flags = NVJPEG_FLAGS_UPSAMPLING_WITH_INTERPOLATION;
};

/// Batches of `batch` files; `window`: decode the centre 60 % of each side (a typical crop);
/// `reinitialize`: every other batch one file smaller, the state initialised again for each (as a
/// pipeline's device share gives batches of varying size).
void engines(benchmark::State& state, bool window, bool reinitialize = false, EngineOutput o = {}) {
  const int batch = static_cast<int>(state.range(0));
  BatchedDecoder d(NVJPEG_BACKEND_HARDWARE, batch, o.format, o.flags);
  const bool planar = o.format != NVJPEG_OUTPUT_RGBI;
  const nvjpegHandle_t h = d.h;
  const nvjpegJpegState_t js = d.js;
  const cudaStream_t stream = d.stream;
  std::vector<nvjpegDecodeParams_t> params(batch);
  const std::size_t max_pixels = max_pixels_of_files();
  void* dev = nullptr;
  CONVEYOR_CUDA_TRY(cudaMalloc(&dev, std::size_t(batch) * max_pixels * 3));
  std::size_t next = std::size_t(state.thread_index()) * batch;  // threads start apart
  for (auto& p : params) {
    NVJPEG_OK(nvjpegDecodeParamsCreate(h, &p));
    NVJPEG_OK(nvjpegDecodeParamsSetOutputFormat(p, o.format));
  }
  const auto fill = [&] {
    for (int i = 0; i < batch; ++i) {
      const File& f = files[next++ % files.size()];
      const conveyor::DecodeRegion r = window ? centre_window(f) : conveyor::DecodeRegion{0, 0, f.width, f.height, 8};
      NVJPEG_OK(nvjpegDecodeParamsSetROI(params[i], r.x, r.y, r.width, r.height));
      d.place(i, f, static_cast<unsigned char*>(dev) + std::size_t(i) * max_pixels * 3, std::size_t(r.width) * 3,
              planar ? max_pixels : 0);
    }
  };
  bool odd = false;
  std::int64_t images = 0;
  double call = 0, cpu = 0, process_cpu = 0, init = 0;
  for (auto _ : state) {
    state.PauseTiming();
    fill();
    state.ResumeTiming();
    if (reinitialize) {
      odd = !odd;
      const auto i0 = std::chrono::steady_clock::now();
      NVJPEG_OK(nvjpegDecodeBatchedInitialize(h, js, batch - odd, 1, o.format));
      init += conveyor::seconds_since(i0);
    }
    const double cpu0 = thread_cpu_seconds(), process0 = process_cpu_seconds();
    const auto t0 = std::chrono::steady_clock::now();
    NVJPEG_OK(nvjpegDecodeBatchedEx(h, js, d.data.data(), d.lengths.data(), d.out.get(), params.data(), stream));
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
  if (reinitialize) state.counters["init_ms"] = 1e3 * init / iterations;
  for (auto p : params) nvjpegDecodeParamsDestroy(p);
  cudaFree(dev);
}


/// One caller of nvJPEG's decoupled API: a decoder of `backend`, its state, two parsed streams
/// and two pinned buffers (so the host phase of one image overlaps the upload of the last), and
/// one device buffer. HYBRID decodes Huffman on the calling thread; GPU_HYBRID on the device.
struct Decoupled {
  nvjpegHandle_t h = nullptr;
  nvjpegJpegDecoder_t dec = nullptr;
  nvjpegJpegState_t st = nullptr;
  nvjpegJpegStream_t js[2]{};
  nvjpegBufferPinned_t pinned[2]{};
  cudaEvent_t pinned_free[2]{};
  nvjpegBufferDevice_t device = nullptr;
  nvjpegDecodeParams_t params = nullptr;
  cudaStream_t stream = nullptr;
  int turn = 0;

  explicit Decoupled(nvjpegBackend_t backend) {
    NVJPEG_OK(nvjpegCreateEx(NVJPEG_BACKEND_DEFAULT, nullptr, nullptr, NVJPEG_FLAGS_UPSAMPLING_WITH_INTERPOLATION, &h));
    NVJPEG_OK(nvjpegDecoderCreate(h, backend, &dec));
    NVJPEG_OK(nvjpegDecoderStateCreate(h, dec, &st));
    for (int k = 0; k < 2; ++k) {
      NVJPEG_OK(nvjpegJpegStreamCreate(h, &js[k]));
      NVJPEG_OK(nvjpegBufferPinnedCreate(h, nullptr, &pinned[k]));
      CONVEYOR_CUDA_TRY(cudaEventCreateWithFlags(&pinned_free[k], cudaEventDisableTiming));
    }
    NVJPEG_OK(nvjpegBufferDeviceCreate(h, nullptr, &device));
    NVJPEG_OK(nvjpegStateAttachDeviceBuffer(st, device));
    NVJPEG_OK(nvjpegDecodeParamsCreate(h, &params));
    NVJPEG_OK(nvjpegDecodeParamsSetOutputFormat(params, NVJPEG_OUTPUT_RGBI));
    CONVEYOR_CUDA_TRY(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  }
  Decoupled(const Decoupled&) = delete;
  Decoupled& operator=(const Decoupled&) = delete;
  ~Decoupled() {
    (void)cudaStreamSynchronize(stream);
    (void)cudaStreamDestroy(stream);
    (void)nvjpegDecodeParamsDestroy(params);
    for (int k = 0; k < 2; ++k) {
      (void)nvjpegJpegStreamDestroy(js[k]);
      (void)nvjpegBufferPinnedDestroy(pinned[k]);
      (void)cudaEventDestroy(pinned_free[k]);
    }
    (void)nvjpegBufferDeviceDestroy(device);
    (void)nvjpegJpegStateDestroy(st);
    (void)nvjpegDecoderDestroy(dec);
    (void)nvjpegDestroy(h);
  }

  /// Queues `f`'s window `r` (whole image: width 0) into `out` (`r.width * 3` bytes a row).
  void decode(const File& f, const conveyor::DecodeRegion& r, unsigned char* out) {
    const int k = turn;
    turn ^= 1;
    CONVEYOR_CUDA_TRY(cudaEventSynchronize(pinned_free[k]));  // the upload from this buffer is done
    NVJPEG_OK(nvjpegStateAttachPinnedBuffer(st, pinned[k]));
    NVJPEG_OK(nvjpegJpegStreamParse(h, reinterpret_cast<const unsigned char*>(f.pinned), f.bytes, 0, 0, js[k]));
    NVJPEG_OK(r.width > 0 ? nvjpegDecodeParamsSetROI(params, r.x, r.y, r.width, r.height)
                          : nvjpegDecodeParamsSetROI(params, 0, 0, -1, -1));
    NVJPEG_OK(nvjpegDecodeJpegHost(h, dec, st, params, js[k]));
    NVJPEG_OK(nvjpegDecodeJpegTransferToDevice(h, dec, st, js[k], stream));
    CONVEYOR_CUDA_TRY(cudaEventRecord(pinned_free[k], stream));
    nvjpegImage_t image{};
    image.channel[0] = out;
    image.pitch[0] = std::size_t(r.width > 0 ? r.width : f.width) * 3;
    NVJPEG_OK(nvjpegDecodeJpegDevice(h, dec, st, &image, stream));
  }
};

/// Each thread its own decoupled decoder; 32 images an iteration, synchronised at its end.
/// cpu_us: the calling thread's CPU time per image (run with --device-sync blocking, so that
/// waiting is not counted as work).
void decoupled(benchmark::State& state, nvjpegBackend_t backend, bool window) {
  constexpr int per_iteration = 32;
  Decoupled d(backend);
  const std::size_t max_pixels = max_pixels_of_files();
  void* dev = nullptr;
  CONVEYOR_CUDA_TRY(cudaMalloc(&dev, 2 * max_pixels * 3));
  std::size_t next = std::size_t(state.thread_index()) * 101;
  std::int64_t images = 0;
  double cpu = 0;
  try {
    for (auto _ : state) {
      const double cpu0 = thread_cpu_seconds();
      for (int i = 0; i < per_iteration; ++i) {
        const File& f = files[next++ % files.size()];
        const conveyor::DecodeRegion r = window ? centre_window(f) : conveyor::DecodeRegion{0, 0, 0, 0, 8};
        d.decode(f, r, static_cast<unsigned char*>(dev) + std::size_t(i & 1) * max_pixels * 3);
      }
      CONVEYOR_CUDA_TRY(cudaStreamSynchronize(d.stream));
      cpu += thread_cpu_seconds() - cpu0;
      images += per_iteration;
    }
    state.SetItemsProcessed(images);
    state.counters["cpu_us"] = 1e6 * cpu / double(images);
  } catch (const std::exception& e) {
    state.SkipWithError(e.what());
  }
  cudaStreamSynchronize(d.stream);
  cudaFree(dev);
}

/// nvJPEG's batched call on the GPU_HYBRID backend (the device decodes Huffman for batches over
/// 50): whole images only (regions of interest are the engines'), synchronised per batch.
void gpu_batched(benchmark::State& state) {
  const int batch = static_cast<int>(state.range(0));
  BatchedDecoder d(NVJPEG_BACKEND_GPU_HYBRID, batch);
  const std::size_t max_pixels = max_pixels_of_files();
  void* dev = nullptr;
  CONVEYOR_CUDA_TRY(cudaMalloc(&dev, std::size_t(batch) * max_pixels * 3));
  std::size_t next = 0;
  std::int64_t images = 0;
  double call = 0, cpu = 0;
  for (auto _ : state) {
    d.place_whole(next, static_cast<unsigned char*>(dev), max_pixels * 3);
    next += batch;
    const double cpu0 = thread_cpu_seconds();
    const auto t0 = std::chrono::steady_clock::now();
    d.decode_whole();
    call += conveyor::seconds_since(t0);
    cpu += thread_cpu_seconds() - cpu0;
    CONVEYOR_CUDA_TRY(cudaStreamSynchronize(d.stream));
    images += batch;
  }
  state.SetItemsProcessed(images);
  state.counters["call_ms"] = 1e3 * call / double(state.iterations());
  state.counters["cpu_us"] = 1e6 * cpu / double(images);
  cudaFree(dev);
}

/// The engines (windows) and the GPU_HYBRID batched call at once, from two threads with their own
/// handles and streams, `state.range(0)` images a call each: whether the two decoders share the
/// device without slowing each other.
void engines_and_gpu(benchmark::State& state) {
  if (state.thread_index() == 0)
    engines(state, true);
  else
    gpu_batched(state);
}

/// libjpeg-turbo (conveyor's CPU decoder) on the same windows, full scale, one thread: the worker
/// cost the device backends are weighed against.
void libjpeg_window(benchmark::State& state) {
  conveyor::JpegDecoder decoder;
  std::vector<std::uint8_t> out(max_pixels_of_files() * 3);
  std::size_t next = 0;
  std::int64_t images = 0;
  for (auto _ : state) {
    const File& f = files[next++ % files.size()];
    (void)decoder.read_header(std::span(f.pinned, f.bytes));
    const conveyor::DecodeRegion r = centre_window(f);
    decoder.decode_region(r, out.data(), std::size_t(r.width) * 3);
    ++images;
  }
  state.SetItemsProcessed(images);
}

/// Absolute differences of decoded pixels: their sum, count and largest.
struct Difference {
  int files = 0, worst = 0;
  double sum = 0, count = 0;
  void add(const std::uint8_t* got, const std::uint8_t* want, std::size_t n) {
    for (std::size_t k = 0; k < n; ++k) {
      const int diff = std::abs(int(got[k]) - int(want[k]));
      sum += diff;
      worst = std::max(worst, diff);
    }
    count += double(n);
    ++files;
  }
};

/// Mean and largest absolute difference of the decoupled backends' windows from libjpeg-turbo's,
/// over the first 64 files: whether their regions of interest are what they were asked for.
void check_decoupled(nvjpegBackend_t backend, const char* name) {
  try {
    Decoupled d(backend);
    conveyor::JpegDecoder decoder;
    const std::size_t max_pixels = max_pixels_of_files();
    void* dev = nullptr;
    CONVEYOR_CUDA_TRY(cudaMalloc(&dev, max_pixels * 3));
    std::vector<std::uint8_t> got(max_pixels * 3), want(max_pixels * 3);
    Difference diff;
    for (std::size_t i = 0; i < std::min<std::size_t>(64, files.size()); ++i) {
      const File& f = files[i];
      const conveyor::DecodeRegion r = centre_window(f);
      d.decode(f, r, static_cast<unsigned char*>(dev));
      CONVEYOR_CUDA_TRY(cudaStreamSynchronize(d.stream));
      const std::size_t n = std::size_t(r.width) * r.height * 3;
      CONVEYOR_CUDA_TRY(cudaMemcpy(got.data(), dev, n, cudaMemcpyDeviceToHost));
      (void)decoder.read_header(std::span(f.pinned, f.bytes));
      decoder.decode_region(r, want.data(), std::size_t(r.width) * 3);
      diff.add(got.data(), want.data(), n);
    }
    cudaFree(dev);
    std::printf("%s windows against libjpeg-turbo: mean %.3f, max %d\n", name, diff.sum / diff.count, diff.worst);
  } catch (const std::exception& e) {
    std::printf("%s windows: %s\n", name, e.what());
  }
}

/// Whole images decoded by a batched call of `backend` (batches of 64, so GPU_HYBRID decodes on
/// the device) against libjpeg-turbo's full decode of each: files, mean and largest absolute
/// difference per chroma layout, with `flags`' upsampling. The exactness the README states for each.
void check_whole(nvjpegBackend_t backend, const char* name, unsigned flags = NVJPEG_FLAGS_UPSAMPLING_WITH_INTERPOLATION) {
  try {
    constexpr int batch = 64;
    BatchedDecoder d(backend, batch, NVJPEG_OUTPUT_RGBI, flags);
    const std::size_t max_pixels = max_pixels_of_files();
    void* dev = nullptr;
    CONVEYOR_CUDA_TRY(cudaMalloc(&dev, std::size_t(batch) * max_pixels * 3));
    std::vector<std::uint8_t> got(max_pixels * 3), want(max_pixels * 3);
    conveyor::JpegDecoder decoder;
    std::map<std::string, Difference> by_layout;
    for (std::size_t first = 0; first < files.size(); first += batch) {
      d.place_whole(first, static_cast<unsigned char*>(dev), max_pixels * 3);  // the last batch wraps to the first files
      d.decode_whole();
      CONVEYOR_CUDA_TRY(cudaStreamSynchronize(d.stream));
      for (std::size_t i = first; i < std::min(first + batch, files.size()); ++i) {
        const File& f = files[i];
        const std::size_t n = std::size_t(f.width) * f.height * 3;
        CONVEYOR_CUDA_TRY(cudaMemcpy(got.data(), d.out[i - first].channel[0], n, cudaMemcpyDeviceToHost));
        const conveyor::JpegInfo info = decoder.read_header(std::span(f.pinned, f.bytes));
        decoder.decode(want.data(), std::size_t(f.width) * 3);
        by_layout[info.subsampling()].add(got.data(), want.data(), n);
      }
    }
    cudaFree(dev);
    for (const auto& [layout, t] : by_layout)
      std::printf("%s whole images against libjpeg-turbo, %s: %d files, mean %.5f, max %d\n", name, layout.c_str(), t.files,
                  t.sum / t.count, t.worst);
  } catch (const std::exception& e) {
    std::printf("%s whole images: %s\n", name, e.what());
  }
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
  // The state initialised again before every call (one file fewer every other call), with both
  // upsamplings: how much of a pipeline call's fixed part that is, as the device share gives
  // calls of varying size (the _x1 and no_interpolation cases at 96 are the same calls without it).
  for (const bool interpolated : {true, false})
    benchmark::RegisterBenchmark(interpolated ? "engines_window_b96_reinit" : "engines_window_b96_no_interpolation_reinit",
                                 [interpolated](benchmark::State& s) {
                                   EngineOutput o;
                                   if (!interpolated) o.flags = NVJPEG_FLAGS_DEFAULT;
                                   engines(s, true, true, o);
                                 })
        ->Arg(96)
        ->UseRealTime()
        ->Unit(benchmark::kMillisecond);
  // Other outputs of the engines, windows in batches of 96; without the flag also calls of more
  // files, as a pipeline with a large device share makes them, and two or three callers at once
  // (whether the host's part of a call, not the engines, is what bounds it).
  const auto engines_with = [](const std::string& name, int batch, EngineOutput o, int threads = 1) {
    benchmark::RegisterBenchmark(("engines_window_b" + std::to_string(batch) + "_" + name +
                                  (threads > 1 ? "_x" + std::to_string(threads) : std::string()))
                                     .c_str(),
                                 [o](benchmark::State& s) { engines(s, true, false, o); })
        ->Arg(batch)
        ->Threads(threads)
        ->UseRealTime()
        ->Unit(benchmark::kMillisecond);
  };
  engines_with("planar_rgb", 96, {NVJPEG_OUTPUT_RGB});
  engines_with("yuv", 96, {NVJPEG_OUTPUT_YUV});
  engines_with("yuv_no_interpolation", 96, {NVJPEG_OUTPUT_YUV, NVJPEG_FLAGS_DEFAULT});
  for (const int batch : {96, 128, 192, 256}) engines_with("no_interpolation", batch, {NVJPEG_OUTPUT_RGBI, NVJPEG_FLAGS_DEFAULT});
  for (const int threads : {2, 3}) engines_with("no_interpolation", 96, {NVJPEG_OUTPUT_RGBI, NVJPEG_FLAGS_DEFAULT}, threads);
  check_whole(NVJPEG_BACKEND_HARDWARE, "engines");
  check_whole(NVJPEG_BACKEND_HARDWARE, "engines, replicated chroma", NVJPEG_FLAGS_DEFAULT);
  check_whole(NVJPEG_BACKEND_GPU_HYBRID, "gpu_hybrid");
  check_decoupled(NVJPEG_BACKEND_HYBRID, "hybrid");
  check_decoupled(NVJPEG_BACKEND_GPU_HYBRID, "gpu_hybrid");
  benchmark::RegisterBenchmark("libjpeg_window_x1", libjpeg_window)->UseRealTime()->Unit(benchmark::kMicrosecond);
  for (const int batch : {32, 48, 64, 128, 256})
    for (const int threads : {1, 2, 4}) {
      if (threads > 1 && batch != 128) continue;
      benchmark::RegisterBenchmark(("gpu_batched_whole_b" + std::to_string(batch) + "_x" + std::to_string(threads)).c_str(),
                                   gpu_batched)
          ->Arg(batch)
          ->Threads(threads)
          ->UseRealTime()
          ->Unit(benchmark::kMillisecond);
    }
  benchmark::RegisterBenchmark("engines_window_and_gpu_whole_b128", engines_and_gpu)
      ->Arg(128)
      ->Threads(2)
      ->UseRealTime()
      ->Unit(benchmark::kMillisecond);
  for (const auto& [backend, name] : {std::pair{NVJPEG_BACKEND_HYBRID, "hybrid"}, std::pair{NVJPEG_BACKEND_GPU_HYBRID, "gpu_hybrid"}})
    for (const bool window : {false, true})
      for (const int threads : {1, 4, 8})
        benchmark::RegisterBenchmark((std::string("decoupled_") + name + (window ? "_window_x" : "_whole_x") +
                                      std::to_string(threads)).c_str(),
                                     [backend, window](benchmark::State& s) { decoupled(s, backend, window); })
            ->Threads(threads)
            ->UseRealTime()
            ->Unit(benchmark::kMillisecond);
  conveyor_bench::RateReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  for (const auto& [name, rate] : reporter.rate) std::printf("%-28s %10.0f img/s\n", name.c_str(), rate);
  return 0;
}

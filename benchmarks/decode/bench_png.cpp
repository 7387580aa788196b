// PNG decoding on one core, to 8-bit RGB: conveyor's decoder (libpng) on the whole image and on a
// RandomResizedCrop(224) window (rows below the window are never inflated), against libpng's own
// simplified API and libspng (Debian: libspng-dev; built only where it is found) whole and row by
// row: the two libraries the decoder could be built on (conveyor_whole is libpng row by row).
// Prints img/s per core and the ratios last.
//
//   bench_png --pngs DIR [Google Benchmark flags]

#include <conveyor/conveyor.hpp>

#include "rate_reporter.hpp"

#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include <png.h>
#ifdef CONVEYOR_BENCH_SPNG
#include <spng.h>
#endif

namespace {

std::vector<std::vector<std::byte>> pngs;

enum class Mode { conveyor_whole, conveyor_window, libpng_simplified, libspng, libspng_rows };

void libpng_simplified(const std::vector<std::byte>& bytes, std::vector<std::uint8_t>& out) {
  png_image image{};
  image.version = PNG_IMAGE_VERSION;
  if (!png_image_begin_read_from_memory(&image, bytes.data(), bytes.size())) throw std::runtime_error(image.message);
  image.format = PNG_FORMAT_RGB;
  out.resize(PNG_IMAGE_SIZE(image));
  if (!png_image_finish_read(&image, nullptr, out.data(), 0, nullptr)) throw std::runtime_error(image.message);
}

#ifdef CONVEYOR_BENCH_SPNG
/// libspng to RGB8: the whole image in one call, or row by row (its progressive mode, the way a
/// window would be decoded; non-interlaced files).
void libspng(const std::vector<std::byte>& bytes, std::vector<std::uint8_t>& out, bool rows) {
  spng_ctx* ctx = spng_ctx_new(0);
  spng_set_png_buffer(ctx, bytes.data(), bytes.size());
  std::size_t size = 0;
  int e = spng_decoded_image_size(ctx, SPNG_FMT_RGB8, &size);
  spng_ihdr ihdr{};
  if (e == 0) e = spng_get_ihdr(ctx, &ihdr);
  if (e == 0) {
    out.resize(size);
    if (!rows) {
      e = spng_decode_image(ctx, out.data(), size, SPNG_FMT_RGB8, 0);
    } else {
      const std::size_t stride = size / ihdr.height;
      e = spng_decode_image(ctx, nullptr, 0, SPNG_FMT_RGB8, SPNG_DECODE_PROGRESSIVE);
      for (std::uint32_t r = 0; e == 0 && r < ihdr.height; ++r) e = spng_decode_row(ctx, out.data() + r * stride, stride);
      if (e == SPNG_EOI) e = 0;
    }
  }
  spng_ctx_free(ctx);
  if (e != 0) throw std::runtime_error(spng_strerror(e));
}
#endif

void run(benchmark::State& state, Mode mode) {
  if (pngs.empty()) {
    state.SkipWithError("no images: pass --pngs DIR");
    return;
  }
  const conveyor::ImageAugment aug = conveyor::ImageAugment::train(224);
  auto ws = aug.make_workspace();
  conveyor::ImageDecoder decoder;
  std::vector<std::uint8_t> out;
  std::size_t pixels = 0;
  for (auto _ : state) {
    for (std::size_t i = 0; i < pngs.size(); ++i) {
      switch (mode) {
        case Mode::conveyor_whole: {
          const conveyor::ImageInfo info = decoder.read_header(pngs[i]);
          out.resize(std::size_t(info.width) * info.height * 3);
          decoder.decode(out.data(), std::size_t(info.width) * 3);
          pixels += std::size_t(info.width) * info.height;
          break;
        }
        case Mode::conveyor_window: {  // a worker's path: header, plan, the crop's window
          const auto job = aug.plan_decode({.seed = 1, .epoch = 0, .index = i}, pngs[i], ws, conveyor::SampleProgram{});
          out.resize(job.bytes());
          aug.decode_into({}, job, out.data(), ws);
          pixels += std::size_t(job.region.width) * job.region.height;
          break;
        }
        case Mode::libpng_simplified: libpng_simplified(pngs[i], out); break;
        case Mode::libspng:
        case Mode::libspng_rows:
#ifdef CONVEYOR_BENCH_SPNG
          libspng(pngs[i], out, mode == Mode::libspng_rows);
#endif
          break;
      }
      benchmark::DoNotOptimize(out.data());
    }
  }
  const auto decoded = static_cast<std::int64_t>(state.iterations() * pngs.size());
  state.SetItemsProcessed(decoded);
  if (pixels) state.counters["MP_per_img"] = benchmark::Counter(double(pixels) / 1e6 / double(decoded));
}

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  std::string dir;
  if (argc == 3 && std::string(argv[1]) == "--pngs") dir = argv[2];
  else {
    std::fprintf(stderr, "usage: bench_png --pngs DIR [benchmark flags]\n");
    return 2;
  }
  std::vector<std::filesystem::path> files;
  for (const auto& e : std::filesystem::recursive_directory_iterator(dir))
    if (e.path().extension() == ".png") files.push_back(e.path());
  std::sort(files.begin(), files.end());
  if (files.size() > 500) files.resize(500);
  conveyor::ByteBuffer b;
  for (const auto& f : files) {
    conveyor::read_file(f.string(), b);
    pngs.emplace_back(b.data(), b.data() + b.size());
  }
  std::vector<std::pair<const char*, Mode>> modes = {{"conveyor_whole", Mode::conveyor_whole},
                                                     {"conveyor_window", Mode::conveyor_window},
                                                     {"libpng_simplified", Mode::libpng_simplified}};
#ifdef CONVEYOR_BENCH_SPNG
  modes.push_back({"libspng", Mode::libspng});
  modes.push_back({"libspng_rows", Mode::libspng_rows});
#endif
  for (const auto& [name, mode] : modes)
    benchmark::RegisterBenchmark((std::string("png/") + name).c_str(), [mode = mode](benchmark::State& s) { run(s, mode); })
        ->MinTime(2.0)
        ->Unit(benchmark::kMillisecond);
  conveyor_bench::RateReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  const double whole = reporter.rate["png/conveyor_whole"];
  if (whole <= 0) return 0;
  std::printf("\n| decoder | img/s per core | / conveyor whole |\n|---|---|---|\n");
  for (const auto& [name, mode] : modes) {
    const double r = reporter.rate[std::string("png/") + name];
    std::printf("| %s | %.0f | %.2fx |\n", name, r, r / whole);
  }
  std::printf("\n%zu PNG files from %s\n", pngs.size(), dir.c_str());
  return 0;
}

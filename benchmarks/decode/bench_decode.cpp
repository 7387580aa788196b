// Decoding for a RandomResizedCrop(224), one core: the whole image, only the crop's window (ROI),
// and the window at the smallest sufficient DCT scale (ROI + scaled), on an ImageNet-like set and
// on photos of 2 MP and more. The ROI + scaled variant is conveyor's whole per-sample host path
// (header, plan, window decode into a buffer); it is also timed against bare libjpeg-turbo calls
// decoding the same windows, to show what the wrapper costs. Prints img/s per core and the ratios
// last.
//
//   bench_decode --imagenet DIR --photos DIR [Google Benchmark flags]

#include "bench_common.hpp"
#include "rate_reporter.hpp"

#include <benchmark/benchmark.h>

#include <csetjmp>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include <jpeglib.h>

namespace {

using conveyor_bench::Image;

std::map<std::string, std::vector<Image>> sets;

/// The train preset's decode job for image i (the same crop box for every variant).
conveyor::ImageAugment::DecodeJob job_for(const conveyor::ImageAugment& aug, const Image& img, std::uint64_t i,
                                          conveyor::ImageAugment::Workspace& ws) {
  return aug.plan_decode({.seed = 1, .epoch = 0, .index = i}, img.bytes, ws, conveyor::SampleProgram{});
}

enum class Mode { full, roi, roi_scaled, bare_libjpeg };

/// Bare libjpeg-turbo: no error manager beyond the default, no checks; decodes the window.
void bare_decode(const Image& img, const conveyor::DecodeRegion& r, std::vector<std::uint8_t>& row) {
  jpeg_decompress_struct c{};
  jpeg_error_mgr err{};
  c.err = jpeg_std_error(&err);
  jpeg_create_decompress(&c);
  jpeg_mem_src(&c, reinterpret_cast<const unsigned char*>(img.bytes.data()), img.bytes.size());
  jpeg_read_header(&c, TRUE);
  c.out_color_space = JCS_RGB;
  c.scale_num = static_cast<unsigned>(r.scale_num);
  c.scale_denom = 8;
  jpeg_start_decompress(&c);
  JDIMENSION x = static_cast<JDIMENSION>(r.x), w = static_cast<JDIMENSION>(r.width);
  if (w < c.output_width) jpeg_crop_scanline(&c, &x, &w);
  if (r.y > 0) jpeg_skip_scanlines(&c, static_cast<JDIMENSION>(r.y));
  row.resize(std::size_t(c.output_width) * 3 + 64);
  for (int k = 0; k < r.height; ++k) {
    JSAMPROW p = row.data();
    jpeg_read_scanlines(&c, &p, 1);
  }
  jpeg_abort_decompress(&c);
  jpeg_destroy_decompress(&c);
}

void run(benchmark::State& state, const std::string& set, Mode mode) {
  const auto& images = sets[set];
  if (images.empty()) {
    state.SkipWithError("no images: pass --imagenet DIR and --photos DIR");
    return;
  }
  conveyor::ImageAugment aug = conveyor::ImageAugment::train(224);
  aug.roi = mode != Mode::full;
  aug.decode_scaling = mode == Mode::roi_scaled || mode == Mode::bare_libjpeg;
  auto ws = aug.make_workspace();
  std::vector<conveyor::ImageAugment::DecodeJob> jobs;
  for (std::size_t i = 0; i < images.size(); ++i) jobs.push_back(job_for(aug, images[i], i, ws));
  std::vector<std::uint8_t> buffer, row;
  std::size_t pixels = 0;
  // One iteration decodes every image of the set once, so all variants time the same mix.
  for (auto _ : state) {
    for (std::size_t i = 0; i < images.size(); ++i) {
      if (mode == Mode::bare_libjpeg) {
        bare_decode(images[i], jobs[i].region, row);
      } else {  // conveyor's own path: header, plan, window, decode (what a worker does per sample)
        const auto job = job_for(aug, images[i], i, ws);
        buffer.resize(job.bytes());
        aug.decode_into({}, job, buffer.data(), ws);
        pixels += std::size_t(job.region.width) * job.region.height;
      }
      benchmark::DoNotOptimize(buffer.data());
    }
  }
  const auto decoded = static_cast<std::int64_t>(state.iterations() * images.size());
  state.SetItemsProcessed(decoded);
  state.counters["decoded_MP_per_img"] = benchmark::Counter(double(pixels) / 1e6 / double(std::max<std::int64_t>(1, decoded)));
}

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  std::string imagenet, photos;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--imagenet") imagenet = argv[i + 1];
    else if (flag == "--photos") photos = argv[i + 1];
    else {
      std::fprintf(stderr, "usage: bench_decode --imagenet DIR --photos DIR [benchmark flags]\n");
      return 2;
    }
  }
  sets["imagenet"] = conveyor_bench::load_images(imagenet, 0, 2000);
  sets["photos_2mp"] = conveyor_bench::load_images(photos, 2'000'000);
  // Split by coding: a progressive file's scans are all entropy-decoded before any row comes out,
  // whatever the window, so ROI saves only the inverse DCT and colour conversion there.
  for (const Image& img : sets["photos_2mp"]) {
    conveyor::JpegDecoder d;
    sets[d.read_header(img.bytes).progressive ? "photos_2mp_progressive" : "photos_2mp_baseline"].push_back(img);
  }
  const std::pair<const char*, Mode> modes[] = {{"full", Mode::full}, {"roi", Mode::roi},
                                               {"roi_scaled", Mode::roi_scaled}, {"bare_libjpeg", Mode::bare_libjpeg}};
  for (const auto& [set, images] : sets)
    for (const auto& [name, mode] : modes)
      benchmark::RegisterBenchmark(("decode/" + set + "/" + name).c_str(),
                                   [set = set, mode = mode](benchmark::State& s) { run(s, set, mode); })
          ->MinTime(2.0)
          ->Unit(benchmark::kMillisecond);
  conveyor_bench::RateReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  std::printf("\n| set | images | full img/s | roi img/s | roi+scaled img/s | roi / full | roi+scaled / full | host path / bare libjpeg (time) |\n|---|---|---|---|---|---|---|---|\n");
  for (const auto& [set, images] : sets) {
    auto r = [&](const char* m) { return reporter.rate["decode/" + set + "/" + m]; };
    if (r("full") <= 0) continue;
    std::printf("| %s | %zu | %.0f | %.0f | %.0f | %.2fx | %.2fx | %.3f |\n", set.c_str(), images.size(), r("full"),
                r("roi"), r("roi_scaled"), r("roi") / r("full"), r("roi_scaled") / r("full"),
                r("roi_scaled") > 0 ? r("bare_libjpeg") / r("roi_scaled") : 0.0);
  }
  benchmark::Shutdown();
  return 0;
}

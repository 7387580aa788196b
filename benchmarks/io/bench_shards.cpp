// Shards against files, on one core, warm page cache (each benchmark runs once untimed first): opening 1,000 WebDataset tar shards (with
// wds2idx indices, and by walking their headers) and a TFRecord set of the same samples, and
// reading every sample once in a shard-window order from tar shards, TFRecords and one file per
// sample (FileList), with the system time each read costs. The samples are real JPEG bytes (the
// bundled photos, cut to --bytes), written here by conveyor's own writers into --dir.
//
//   bench_shards [--dir DIR] [--shards 1000] [--per-shard 100] [--bytes 4096] [Google Benchmark flags]
//
// The open figures scale with members (a header read each when walked; a label read each
// either way): ImageNet's 1,282 shards of 1,000 samples are about 13x the default set.

#include <conveyor/conveyor.hpp>

#include <benchmark/benchmark.h>

#include <sys/resource.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

namespace fs = std::filesystem;

namespace {

struct Config {
  std::string dir = (fs::temp_directory_path() / "conveyor-bench-shards").string();
  int shards = 1000, per_shard = 100;
  std::size_t bytes = 4096;
} cfg;

std::string tar_pattern, tfrecord_pattern, list_file;

std::string padded(int v, int width) {
  std::string s = std::to_string(v);
  return std::string(std::size_t(std::max(0, width - int(s.size()))), '0') + s;
}

/// Writes the three layouts of the same shards x per_shard samples, unless they are there.
void make_sets() {
  const fs::path root(cfg.dir);
  const std::string tag = std::to_string(cfg.shards) + "x" + std::to_string(cfg.per_shard) + "x" + std::to_string(cfg.bytes);
  tar_pattern = (root / tag / "tar" / ("train-{" + padded(0, 6) + ".." + padded(cfg.shards - 1, 6) + "}.tar")).string();
  tfrecord_pattern = (root / tag / "tfrecord" / ("train-{" + padded(0, 5) + ".." + padded(cfg.shards - 1, 5) + "}-of-" +
                                                  padded(cfg.shards, 5))).string();
  list_file = (root / tag / "files.txt").string();
  if (fs::exists(root / tag / "done")) return;
  for (const char* d : {"tar", "tfrecord", "files"}) fs::create_directories(root / tag / d);
  const conveyor::ImageFolder photos((fs::path(CONVEYOR_SOURCE_DIR) / "examples" / "data" / "samples").string());
  conveyor::ByteBuffer b;
  std::vector<std::vector<std::byte>> payloads;
  for (std::uint64_t i = 0; i < photos.size(); ++i) {
    photos.read(i, b);
    payloads.emplace_back(b.data(), b.data() + std::min(b.size(), cfg.bytes));
  }
  std::ofstream list(list_file);
  for (int s = 0; s < cfg.shards; ++s) {
    conveyor::TarWriter tar((root / tag / "tar" / ("train-" + padded(s, 6) + ".tar")).string());
    conveyor::TFRecordWriter records((root / tag / "tfrecord" / ("train-" + padded(s, 5) + "-of-" + padded(cfg.shards, 5))).string());
    for (int k = 0; k < cfg.per_shard; ++k) {
      const int i = s * cfg.per_shard + k;
      const auto& image = payloads[std::size_t(i) % payloads.size()];
      const std::string cls = std::to_string(i % 1000), key = padded(i, 8);
      const auto cls_bytes = std::as_bytes(std::span(cls));
      const std::pair<std::string, std::span<const std::byte>> members[] = {{"jpg", image}, {"cls", cls_bytes}};
      tar.add(key, members);
      const std::pair<std::string, std::span<const std::byte>> features[] = {{"image/encoded", image}};
      const std::pair<std::string, std::int64_t> labels[] = {{"image/class/label", i % 1000}};
      records.add(features, labels);
      const fs::path file = root / tag / "files" / (key + ".jpg");
      std::ofstream(file, std::ios::binary).write(reinterpret_cast<const char*>(image.data()), std::streamsize(image.size()));
      list << file.string() << ' ' << i % 1000 << '\n';
    }
    tar.close();
    records.close();  // and its index
  }
  std::ofstream(root / tag / "done") << "ok\n";
}

double system_seconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return double(u.ru_stime.tv_sec) + double(u.ru_stime.tv_usec) * 1e-6;
}

void open_tar(benchmark::State& state, bool index) {
  (void)conveyor::TarShards(tar_pattern, {.use_index = index});  // untimed: the page cache warm
  for (auto _ : state) {
    const conveyor::TarShards d(tar_pattern, {.use_index = index});
    benchmark::DoNotOptimize(d.size());
  }
  state.counters["shards"] = cfg.shards;
  state.counters["samples"] = double(cfg.shards) * cfg.per_shard;
}

void open_tfrecord(benchmark::State& state, bool index) {
  (void)conveyor::TFRecordDataset(tfrecord_pattern, {.use_index = index});
  for (auto _ : state) {
    const conveyor::TFRecordDataset d(tfrecord_pattern, {.use_index = index});
    benchmark::DoNotOptimize(d.size());
  }
  state.counters["shards"] = cfg.shards;
}

/// Every sample once, in the order a ShardShuffleSampler with a 4-shard window gives (the files
/// in the same order), image bytes and label as a worker asks for them.
template <class D>
void read_all(benchmark::State& state, const D& data) {
  std::vector<std::uint64_t> sizes(std::size_t(cfg.shards), std::uint64_t(cfg.per_shard));
  const auto order = conveyor::ShardShuffleSampler(sizes, {.seed = 1, .window = 4}).indices(0);
  conveyor::ByteBuffer b;
  std::int64_t labels = 0;
  for (std::uint64_t i : order) labels += conveyor::read_labeled(data, i, b);  // untimed: the cache warm
  const double sys0 = system_seconds();
  for (auto _ : state)
    for (std::uint64_t i : order) labels += conveyor::read_labeled(data, i, b);
  benchmark::DoNotOptimize(labels);
  const double reads = double(state.iterations()) * double(order.size());
  state.SetItemsProcessed(std::int64_t(reads));
  state.counters["sys_us_per_sample"] = (system_seconds() - sys0) / reads * 1e6;
}

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i], v = argv[i + 1];
    if (flag == "--dir") cfg.dir = v;
    else if (flag == "--shards") cfg.shards = std::stoi(v);
    else if (flag == "--per-shard") cfg.per_shard = std::stoi(v);
    else if (flag == "--bytes") cfg.bytes = std::stoul(v);
    else {
      std::fprintf(stderr, "usage: bench_shards [--dir DIR] [--shards N] [--per-shard M] [--bytes B] [benchmark flags]\n");
      return 2;
    }
  }
  make_sets();
  benchmark::RegisterBenchmark("open/tar/index", [](benchmark::State& s) { open_tar(s, true); })->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark("open/tar/walk", [](benchmark::State& s) { open_tar(s, false); })->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark("open/tfrecord/index", [](benchmark::State& s) { open_tfrecord(s, true); })
      ->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark("open/tfrecord/walk", [](benchmark::State& s) { open_tfrecord(s, false); })
      ->Unit(benchmark::kMillisecond);
  const auto tar = std::make_shared<const conveyor::TarShards>(tar_pattern);
  const auto records = std::make_shared<const conveyor::TFRecordDataset>(tfrecord_pattern);
  const auto files = std::make_shared<const conveyor::FileList>(list_file);
  benchmark::RegisterBenchmark("read/tar", [&](benchmark::State& s) { read_all(s, *tar); })->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark("read/tfrecord", [&](benchmark::State& s) { read_all(s, *records); })
      ->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark("read/files", [&](benchmark::State& s) { read_all(s, *files); })->Unit(benchmark::kMillisecond);
  benchmark::RunSpecifiedBenchmarks();
  std::printf("\n%d shards x %d samples of %zu bytes under %s\n", cfg.shards, cfg.per_shard, cfg.bytes, cfg.dir.c_str());
  return 0;
}

// conveyor-pack: a dataset (a folder, a file list, or shards) written as WebDataset tar shards or
// TFRecord files, with their indices, for datasets that live on filesystems where a million small
// files cost a million metadata round trips.
//
//   conveyor-pack --data SPEC --out PREFIX [--format wds|tfrecord] [--shard-size N] [--shuffle SEED]
//                 [--label-offset K] [--input-format auto|folder|wds|tfrecord|list]
//
// wds: PREFIX-000000.tar, PREFIX-000001.tar, ... with PREFIX-000000.idx (DALI's wds2idx v1.2)
// beside each; a sample is KEY.<jpg|png|ppm> (as its bytes say) and KEY.cls (its label + K, in
// ASCII), KEY the sample's position, zero-padded. tfrecord: PREFIX-00000-of-0000N, ... with
// PREFIX-00000-of-0000N.idx (tfrecord2idx); each record a tf.train.Example with image/encoded,
// image/format, image/filename and image/class/label (+ K). The output is the same bytes for the
// same input and options, and PREFIX's folder is created. A progress line goes to stderr; the last
// line says what was written.

#include <conveyor/conveyor.hpp>

#include "dataset_arg.hpp"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <memory>
#include <numeric>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace {

struct Args {
  std::string data, out, format = "wds", input_format = "auto";
  std::uint64_t shard_size = 1000;
  std::optional<std::uint64_t> shuffle;
  std::int64_t label_offset = 0;
};

[[noreturn]] void usage(const std::string& error) {
  std::cerr << "conveyor-pack: " << error << "\n"
            << "usage: conveyor-pack --data SPEC --out PREFIX [--format wds|tfrecord] [--shard-size N] [--shuffle SEED]\n"
               "                     [--label-offset K] [--input-format auto|folder|wds|tfrecord|list]\n";
  std::exit(2);
}

Args parse(int argc, char** argv) {
  Args a;
  for (int i = 1; i < argc; ++i) {
    const std::string_view f = argv[i];
    if (i + 1 >= argc) usage(std::string(f) + " needs a value");
    const std::string v = argv[++i];
    try {
      if (f == "--data") a.data = v;
      else if (f == "--out") a.out = v;
      else if (f == "--format") a.format = v;
      else if (f == "--input-format") a.input_format = v;
      else if (f == "--shard-size") a.shard_size = std::stoull(v);
      else if (f == "--shuffle") a.shuffle = std::stoull(v);
      else if (f == "--label-offset") a.label_offset = std::stoll(v);
      else usage("unknown option '" + std::string(f) + "'");
    } catch (const std::logic_error&) {
      usage(std::string(f) + " expects a number, got '" + v + "'");
    }
  }
  if (a.data.empty() || a.out.empty()) usage("--data and --out are required");
  if (a.format != "wds" && a.format != "tfrecord") usage("--format expects wds or tfrecord, got '" + a.format + "'");
  if (a.shard_size == 0) usage("--shard-size must be >= 1");
  return a;
}

/// The extension WebDataset readers expect for these bytes.
std::string extension(std::span<const std::byte> bytes) {
  switch (conveyor::detect_format(bytes)) {
    case conveyor::ImageFormat::png: return "png";
    case conveyor::ImageFormat::pnm: return "ppm";
    default: return "jpg";
  }
}

/// `k` in decimal, zero-padded to `width` digits.
std::string padded(std::uint64_t k, std::size_t width) {
  std::string n = std::to_string(k);
  if (n.size() < width) n.insert(0, width - n.size(), '0');
  return n;
}

}  // namespace

int main(int argc, char** argv) {
  const Args a = parse(argc, argv);
  try {
    const conveyor_tools::OpenedDataset opened = conveyor_tools::open_dataset(a.data, a.input_format);
    const conveyor::AnyDataset& data = opened.data;
    const std::uint64_t n = data.size();
    if (const auto folder = std::filesystem::path(a.out).parent_path(); !folder.empty())
      std::filesystem::create_directories(folder);
    std::vector<std::uint64_t> order;
    if (a.shuffle) {
      order = conveyor::RandomSampler(n, {.seed = *a.shuffle}).indices(0);
    } else {
      order.resize(n);
      std::iota(order.begin(), order.end(), std::uint64_t{0});
    }
    const std::uint64_t shards = (n + a.shard_size - 1) / a.shard_size;
    const auto t0 = std::chrono::steady_clock::now();
    conveyor::ByteBuffer bytes;
    std::uint64_t written_bytes = 0;
    for (std::uint64_t s = 0; s < shards; ++s) {
      std::unique_ptr<conveyor::TarWriter> tar;
      std::unique_ptr<conveyor::TFRecordWriter> records;
      if (a.format == "wds")
        tar = std::make_unique<conveyor::TarWriter>(a.out + "-" + padded(s, 6) + ".tar");
      else
        records = std::make_unique<conveyor::TFRecordWriter>(a.out + "-" + padded(s, 5) + "-of-" + padded(shards, 5));
      for (std::uint64_t p = s * a.shard_size; p < std::min(n, (s + 1) * a.shard_size); ++p) {
        const std::uint64_t i = order[p];
        const std::int64_t label = conveyor::read_labeled(data, i, bytes) + a.label_offset;
        written_bytes += bytes.size();
        const std::string ext = extension(bytes.span());
        if (tar) {
          const std::string cls = std::to_string(label);
          const std::pair<std::string, std::span<const std::byte>> members[] = {
              {ext, bytes.span()}, {"cls", std::as_bytes(std::span(cls))}};
          tar->add(padded(p, 9), members);
        } else {
          const std::string format = ext == "jpg" ? "jpeg" : ext, name = data.name(i);
          const std::pair<std::string, std::span<const std::byte>> features[] = {
              {"image/encoded", bytes.span()},
              {"image/format", std::as_bytes(std::span(format))},
              {"image/filename", std::as_bytes(std::span(name))}};
          const std::pair<std::string, std::int64_t> labels[] = {{"image/class/label", label}};
          records->add(features, labels);
        }
        if (p % 256 == 0 || p + 1 == n)
          std::fprintf(stderr, "\rconveyor-pack: %llu / %llu samples, shard %llu / %llu",
                       static_cast<unsigned long long>(p + 1), static_cast<unsigned long long>(n),
                       static_cast<unsigned long long>(s + 1), static_cast<unsigned long long>(shards));
      }
      if (tar) tar->close();
      if (records) records->close();
    }
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::fprintf(stderr, "\n");
    std::printf("%llu samples in %llu %s shards of up to %llu, %.1f MB of images, %.1f s\n",
                static_cast<unsigned long long>(n), static_cast<unsigned long long>(shards), a.format.c_str(),
                static_cast<unsigned long long>(a.shard_size), double(written_bytes) / 1e6, seconds);
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "conveyor-pack: %s\n", e.what());
    return 1;
  }
}

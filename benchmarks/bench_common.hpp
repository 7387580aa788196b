#pragma once
// Image sets for the benchmarks: every JPEG under a folder, loaded into memory once, so the
// benchmarks time decoding and augmenting, not the disk.

#include <conveyor/conveyor.hpp>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace conveyor_bench {

struct Image {
  std::string name;
  std::vector<std::byte> bytes;
  int width = 0, height = 0;
};

/// Every decodable JPEG under `dir` (recursively) with at least `min_pixels` pixels, sorted by path.
inline std::vector<Image> load_images(const std::string& dir, std::uint64_t min_pixels = 0, std::size_t limit = SIZE_MAX) {
  std::vector<std::filesystem::path> files;
  if (dir.empty() || !std::filesystem::is_directory(dir)) return {};
  for (const auto& e : std::filesystem::recursive_directory_iterator(dir))
    if (e.is_regular_file() && conveyor::ImageFolder::is_jpeg_name(e.path().filename().string()))
      files.push_back(e.path());
  std::sort(files.begin(), files.end());
  std::vector<Image> out;
  conveyor::ByteBuffer b;
  conveyor::JpegDecoder probe;
  for (const auto& f : files) {
    if (out.size() >= limit) break;
    conveyor::read_file(f.string(), b);
    try {
      const conveyor::JpegInfo info = probe.read_header(b.span());
      if (std::uint64_t(info.width) * std::uint64_t(info.height) < min_pixels) continue;
      out.push_back({f.filename().string(), {b.data(), b.data() + b.size()}, info.width, info.height});
    } catch (const conveyor::DecodeError&) {
    }
  }
  return out;
}

}  // namespace conveyor_bench

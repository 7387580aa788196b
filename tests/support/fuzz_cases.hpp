#pragma once
// The transform-program fuzzer's cases as the suites replay them (program_fuzz.hpp runs one): the
// corpus it kept (fuzz/seeds/programs) and fresh random ones.

#include <conveyor/core/rng.hpp>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

namespace conveyor_test {

/// A kept case: its file's name and bytes.
struct FuzzCase {
  std::string name;
  std::vector<std::uint8_t> bytes;
};

/// The corpus under `source_dir` (fuzz/seeds/programs), in name order.
inline std::vector<FuzzCase> corpus_cases(const std::filesystem::path& source_dir) {
  std::vector<std::filesystem::path> files;
  for (const auto& e : std::filesystem::directory_iterator(source_dir / "fuzz" / "seeds" / "programs"))
    files.push_back(e.path());
  std::sort(files.begin(), files.end());
  std::vector<FuzzCase> out;
  for (const auto& f : files) {
    std::ifstream in(f, std::ios::binary);
    out.push_back({f.filename().string(), {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()}});
  }
  return out;
}

/// A fresh case: 160 to 359 bytes from `rng`.
inline std::vector<std::uint8_t> random_case(conveyor::CounterRng& rng) {
  std::vector<std::uint8_t> bytes(160 + rng.below(200));
  for (std::uint8_t& b : bytes) b = static_cast<std::uint8_t>(rng.next_u32());
  return bytes;
}

}  // namespace conveyor_test

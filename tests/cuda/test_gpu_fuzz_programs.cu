// The transform-program fuzzer's cases (tests/support/program_fuzz.hpp) through the CUDA backend:
// the cases it found and its corpus (fuzz/seeds/programs), then fresh random ones, each through the
// device path on device 0 (staging, reserves, the fused and pixel-program kernels, views, the JPEG
// engines' windows), whose batches must equal the CPU backend's. benchmarks/gpu/run.sh runs this
// under compute-sanitizer memcheck: the corpus's programs through the kernels. Label gpu.

#include <conveyor/cuda/all.cuh>

#include <catch2/catch.hpp>

#include "cuda/gpu_batches.hpp"
#include "support/program_fuzz.hpp"

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <vector>

namespace {

/// A device batch's digest, its memory copied back first.
std::uint64_t device_digest(const conveyor::Batch& b) {
  const conveyor_test::HostBatch h = conveyor_test::host_copy(b);
  std::uint64_t d = conveyor::fnv1a64(h.images);
  d = conveyor::fnv1a64(std::as_bytes(std::span(h.labels)), d);
  return conveyor::fnv1a64(std::as_bytes(std::span(h.indices)), d);
}

std::vector<std::uint8_t> file_bytes(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

}  // namespace

TEST_CASE("the fuzzer's programs run through the CUDA kernels as on the CPU", "[gpu][fuzz]") {
  const std::filesystem::path seeds = std::filesystem::path(CONVEYOR_SOURCE_DIR) / "fuzz" / "seeds" / "programs";
  std::vector<std::filesystem::path> files;
  for (const auto& e : std::filesystem::directory_iterator(seeds)) files.push_back(e.path());
  std::sort(files.begin(), files.end());
  REQUIRE(!files.empty());
  int ran = 0;
  for (const auto& f : files) {
    INFO(f.filename().string());
    conveyor_test::FuzzOutcome o;
    REQUIRE_NOTHROW(o = conveyor_test::run_program_case(file_bytes(f), conveyor_test::DevicePath::cuda, &device_digest));
    ran += !o.refused;
  }
  conveyor::CounterRng rng(20261207, 0, 0, conveyor::RngOp::user);
  for (int k = 0; k < 150; ++k) {
    std::vector<std::uint8_t> bytes(160 + rng.below(200));
    for (std::uint8_t& b : bytes) b = static_cast<std::uint8_t>(rng.next_u32());
    INFO("random case " << k);
    conveyor_test::FuzzOutcome o;
    REQUIRE_NOTHROW(o = conveyor_test::run_program_case(bytes, conveyor_test::DevicePath::cuda, &device_digest));
    ran += !o.refused;
  }
  CHECK(ran > 50);
}

// The transform-program fuzzer's cases (tests/support/program_fuzz.hpp) through the CUDA backend:
// the cases it found and its corpus (fuzz/seeds/programs), then fresh random ones, each through the
// device path on device 0 (staging, reserves, the fused and pixel-program kernels, views, the JPEG
// engines' windows), whose batches must equal the CPU backend's. benchmarks/gpu/run.sh runs this
// under compute-sanitizer memcheck: the corpus's programs through the kernels. Label gpu.

#include <conveyor/cuda/all.cuh>

#include <catch2/catch.hpp>

#include "cuda/gpu_batches.hpp"
#include "support/fuzz_cases.hpp"
#include "support/program_fuzz.hpp"

#include <cstdint>
#include <vector>

namespace {

/// A device batch's digest, its memory copied back first.
std::uint64_t device_digest(const conveyor::Batch& b) {
  const conveyor_test::HostBatch h = conveyor_test::host_copy(b);
  std::uint64_t d = conveyor::fnv1a64(h.images);
  d = conveyor::fnv1a64(std::as_bytes(std::span(h.labels)), d);
  return conveyor::fnv1a64(std::as_bytes(std::span(h.indices)), d);
}

}  // namespace

TEST_CASE("the fuzzer's programs run through the CUDA kernels as on the CPU", "[gpu][fuzz]") {
  const auto cases = conveyor_test::corpus_cases(CONVEYOR_SOURCE_DIR);
  REQUIRE(!cases.empty());
  int ran = 0;
  for (const auto& c : cases) {
    INFO(c.name);
    conveyor_test::FuzzOutcome o;
    REQUIRE_NOTHROW(o = conveyor_test::run_program_case(c.bytes, conveyor_test::DevicePath::cuda, &device_digest));
    ran += !o.refused;
  }
  conveyor::CounterRng rng(20261207, 0, 0, conveyor::RngOp::user);
  for (int k = 0; k < 150; ++k) {
    const std::vector<std::uint8_t> bytes = conveyor_test::random_case(rng);
    INFO("random case " << k);
    conveyor_test::FuzzOutcome o;
    REQUIRE_NOTHROW(o = conveyor_test::run_program_case(bytes, conveyor_test::DevicePath::cuda, &device_digest));
    ran += !o.refused;
  }
  CHECK(ran > 50);
}

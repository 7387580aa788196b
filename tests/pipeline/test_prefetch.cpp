// prefetch = auto_prefetch: the slots a pipeline keeps, chosen from the decode mode and the memory
// budget, said in its stats; the batches do not depend on the number of slots.

#include <conveyor/conveyor.hpp>

#include <catch2/catch.hpp>

#include "support/datasets.hpp"
#include "support/digest.hpp"
#include "support/host_device.hpp"

#include <cstddef>
#include <string>

using namespace conveyor;

namespace {

/// The slot size a refused budget's message states ("... (N bytes, ...").
std::size_t stated_slot_bytes(const std::string& message) {
  const std::size_t open = message.find(" (");
  REQUIRE(open != std::string::npos);
  return std::stoull(message.substr(open + 2));
}

template <class T>
std::size_t slot_bytes_of(const InMemory& data, const T& transform, PipelineOptions o) {
  o.memory_budget = 1;
  try {
    BatchPipeline pipe(data, SequentialSampler(data.size()), transform, o);
  } catch (const ConfigError& e) {
    CHECK_THAT(e.what(), Catch::Contains("fewer than the 2 slots") && Catch::Contains("memory_budget"));
    return stated_slot_bytes(e.what());
  }
  FAIL("a 1-byte memory budget was accepted");
  return 0;
}

TEST_CASE("prefetch auto keeps 3 slots on the CPU, what is asked when asked, and the batches do not change",
          "[pipeline][prefetch]") {
  const InMemory data = conveyor_test::jpeg_dataset(30, 4);
  const ImageAugment aug = ImageAugment::train(32);
  const auto run = [&](PipelineOptions o) {
    BatchPipeline pipe(data, RandomSampler(data.size(), {.seed = 3}), aug, o);
    return std::make_pair(conveyor_test::digests(pipe, 2), pipe.stats());
  };
  const auto [automatic, st] = run({.batch_size = 4, .workers = 3, .seed = 8});
  CHECK(st.prefetch == 3);
  CHECK_THAT(st.prefetch_reason, Catch::Contains("3 slots") && Catch::Contains("decoding on the CPU"));
  CHECK_THAT(st.json(), Catch::Contains("\"prefetch\": 3, \"prefetch_reason\": \"3 slots"));
  const auto [asked, st5] = run({.batch_size = 4, .workers = 3, .prefetch = 5, .seed = 8});
  CHECK(st5.prefetch == 5);
  CHECK(st5.prefetch_reason == "prefetch = 5, as asked");
  CHECK(st5.host_bytes * 3 == st.host_bytes * 5);  // five slots' buffers, not three
  CHECK(asked == automatic);
  CHECK(run({.batch_size = 4, .workers = 3, .prefetch = 2, .seed = 8}).first == automatic);
}

TEST_CASE("memory_budget caps the slots prefetch auto keeps, and one below two slots is refused with the slot's size",
          "[pipeline][prefetch][errors]") {
  const InMemory data = conveyor_test::jpeg_dataset(12, 5);
  const ImageAugment aug = ImageAugment::train(32);
  const PipelineOptions o{.batch_size = 4, .workers = 1};
  const std::size_t slot = slot_bytes_of(data, aug, o);
  // The CPU backend's slot: the images, labels and indices of a batch.
  CHECK(slot == 4 * (aug.sample_spec().bytes() + 16));
  PipelineOptions two = o;
  two.memory_budget = 2 * slot + slot / 2;
  BatchPipeline pipe(data, SequentialSampler(data.size()), aug, two);
  CHECK(pipe.stats().prefetch == 2);
  CHECK_THAT(pipe.stats().prefetch_reason, Catch::Contains("holds 2"));
  PipelineOptions roomy = o;
  roomy.memory_budget = 100 * slot;
  CHECK(BatchPipeline(data, SequentialSampler(data.size()), aug, roomy).stats().prefetch == 3);
  PipelineOptions asked = o;  // an explicit prefetch is not second-guessed by the budget
  asked.prefetch = 4;
  asked.memory_budget = 1;
  CHECK(BatchPipeline(data, SequentialSampler(data.size()), aug, asked).stats().prefetch == 4);
}

TEST_CASE("prefetch auto keeps 6 slots where a device decodes JPEGs, 3 where its workers do, within the budget",
          "[pipeline][prefetch][offload]") {
  const conveyor_test::HostDevice device;
  const InMemory data = conveyor_test::jpeg_dataset(24, 6);
  const ImageAugment eval = ImageAugment::eval(48, 40);
  PipelineOptions o{.batch_size = 4, .workers = 2, .seed = 1, .device = 0};
  BatchPipeline cpu_decode(data, SequentialSampler(data.size()), eval, o);
  CHECK(cpu_decode.stats().prefetch == 3);
  o.decode = JpegDecode::gpu;
  BatchPipeline gpu_decode(data, SequentialSampler(data.size()), eval, o);
  CHECK(gpu_decode.stats().prefetch == 6);
  CHECK_THAT(gpu_decode.stats().prefetch_reason, Catch::Contains("a device decodes JPEGs, which gains from 6"));
  // A device slot: both arenas (pinned and device), the decoder's places and the output.
  const std::size_t slot = slot_bytes_of(data, eval, o);
  CHECK(slot > 2 * 4 * eval.sample_spec().bytes());
  o.memory_budget = 4 * slot + 1;
  BatchPipeline capped(data, SequentialSampler(data.size()), eval, o);
  CHECK(capped.stats().prefetch == 4);
  CHECK_THAT(capped.stats().prefetch_reason, Catch::Contains("holds 4"));
  CHECK(conveyor_test::digests(capped, 1) == conveyor_test::digests(gpu_decode, 1));
}

}  // namespace

// Loops one after another on one pipeline: whatever the sequence (the next epoch, a jump, the same
// epoch again, a resume part-way, a break), each loop's batches are those of a loop started from
// scratch, and a failure is raised at its batch in every loop.
#include <conveyor/conveyor.hpp>

#include <catch2/catch.hpp>

#include "support/datasets.hpp"
#include "support/digest.hpp"

#include <cstdint>
#include <tuple>
#include <vector>

using namespace conveyor;
using conveyor_test::FaultyDataset;
using conveyor_test::IndexDataset;
using conveyor_test::index_tensor;
using conveyor_test::digest;

namespace {

/// The first `limit` batches (all when negative) of one loop over the selected epoch: each one's
/// digest, number and epoch; the loop breaks after the last one taken.
template <class P>
std::vector<std::uint64_t> loop(P& pipe, int limit = -1) {
  std::vector<std::uint64_t> out;
  for (const Batch& b : pipe) {
    if (limit >= 0 && out.size() == std::size_t(limit)) break;
    out.push_back(digest(b) ^ (b.number() << 48) ^ (b.epoch() << 56));
  }
  return out;
}

}  // namespace

TEST_CASE("any sequence of loops gives the batches of loops started from scratch", "[pipeline][epochs][determinism]") {
  const InMemory data = conveyor_test::jpeg_dataset(45, 5);
  const ImageAugment aug{.crop = RandomResizedCrop{.size = 24}, .flip = {.p = 0.5}, .dtype = DType::u8};
  const RandomSampler sampler(data.size(), {.seed = 8});
  // (epoch, first batch, batches taken before a break or -1 for all): the next epoch, a jump, the
  // same epoch three times, a resume part-way, a break, and an epoch smaller than prefetch.
  const std::vector<std::tuple<std::uint64_t, std::uint64_t, int>> loops = {
      {0, 0, -1}, {1, 0, -1}, {5, 0, -1}, {5, 0, -1}, {5, 0, -1}, {6, 3, -1}, {7, 0, 2}, {8, 0, -1}, {9, 10, -1}, {10, 0, -1}};
  std::vector<std::vector<std::uint64_t>> want;
  for (const auto& [epoch, first, taken] : loops) {
    BatchPipeline fresh(data, sampler, aug, {.batch_size = 4, .workers = 0, .seed = 2});
    fresh.set_epoch(epoch, first);
    want.push_back(loop(fresh, taken));
  }
  for (int workers : {1, 3, 8}) {
    INFO("workers " << workers);
    BatchPipeline pipe(data, sampler, aug, {.batch_size = 4, .workers = workers, .prefetch = 4, .seed = 2});
    for (std::size_t i = 0; i < loops.size(); ++i) {
      INFO("loop " << i);
      const auto& [epoch, first, taken] = loops[i];
      pipe.set_epoch(epoch, first);
      CHECK(loop(pipe, taken) == want[i]);
    }
  }
}

TEST_CASE("a failure in an epoch's first batch is raised at that batch of every loop", "[pipeline][epochs][errors]") {
  FaultyDataset<IndexDataset> data(IndexDataset{24});
  const SequentialSampler sampler(24);
  data.unreadable = {1};  // in the first batch of every epoch
  BatchPipeline pipe(data, sampler, index_tensor, {.batch_size = 4, .workers = 2});
  for (std::uint64_t epoch = 0; epoch < 3; ++epoch) {
    INFO("epoch " << epoch);
    pipe.set_epoch(epoch);
    auto it = pipe.begin();
    CHECK_THROWS_AS(*it, SampleError);
    std::size_t batches = 1;
    for (++it; it != pipe.end(); ++it) batches += it->size() == 4;
    CHECK(batches == 6);
  }
}

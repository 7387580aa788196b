#include <conveyor/conveyor.hpp>

#include <catch2/catch.hpp>

#include "support/datasets.hpp"
#include "support/digest.hpp"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <map>
#include <numeric>
#include <optional>
#include <set>
#include <thread>
#include <vector>

using namespace conveyor;
using conveyor_test::FaultyDataset;
using conveyor_test::IndexDataset;
using conveyor_test::index_tensor;
using conveyor_test::digest;
using conveyor_test::digests;
using conveyor_test::jpeg_dataset;

namespace {

std::uint64_t sample_value(const Batch& b, std::size_t i) {
  std::uint64_t v;
  std::memcpy(&v, b.images().as<std::uint8_t>() + i * 8, 8);
  return v;
}

}  // namespace

TEST_CASE("every index exactly once per epoch in sampler order for any workers and sizes", "[pipeline][order]") {
  for (int workers : {0, 1, 4})
    for (std::size_t prefetch : {2, 3})
      for (std::size_t batch : {1, 7, 256})
        for (std::uint64_t n : {std::uint64_t{1}, std::uint64_t(batch > 1 ? batch - 1 : 2), std::uint64_t(batch + 1),
                                std::uint64_t(3 * batch + 2)})
          for (bool drop_last : {false, true}) {
            INFO("workers " << workers << " prefetch " << prefetch << " batch " << batch << " n " << n << " drop_last "
                            << drop_last);
            const RandomSampler sampler(n, {.seed = n});
            BatchPipeline pipe(IndexDataset{n}, sampler, index_tensor,
                               {.batch_size = batch, .workers = workers, .prefetch = prefetch, .drop_last = drop_last});
            for (std::uint64_t epoch : {0, 1}) {
              pipe.set_epoch(epoch);
              const auto expected = sampler.indices(epoch);
              std::vector<std::uint64_t> seen;
              std::uint64_t number = 0;
              for (const Batch& b : pipe) {
                REQUIRE(b.number() == number++);
                REQUIRE(b.epoch() == epoch);
                const std::size_t want = std::min<std::uint64_t>(batch, n - (b.number() * batch));
                REQUIRE(b.size() == want);
                REQUIRE(b.images().shape[0] == static_cast<std::int64_t>(want));
                for (std::size_t i = 0; i < b.size(); ++i) {
                  const auto idx = static_cast<std::uint64_t>(b.indices()[i]);
                  REQUIRE(sample_value(b, i) == idx);
                  REQUIRE(b.labels().as<std::int64_t>()[i] == static_cast<std::int64_t>((7 * idx) % 10));
                  seen.push_back(idx);
                }
              }
              const std::size_t full = drop_last ? (n / batch) * batch : n;
              REQUIRE(seen.size() == full);
              REQUIRE(std::equal(seen.begin(), seen.end(), expected.begin()));
              if (!drop_last) {
                std::sort(seen.begin(), seen.end());
                REQUIRE(std::adjacent_find(seen.begin(), seen.end()) == seen.end());
              }
              REQUIRE(number == pipe.batches_per_epoch());
            }
          }
}

TEST_CASE("the same seed gives bitwise-identical batches with 1 or 2 or 8 workers", "[pipeline][determinism]") {
  const InMemory data = jpeg_dataset(40);
  const ImageAugment aug{.crop = RandomResizedCrop{.size = 32}, .flip = {.p = 0.5},
                         .normalize = Normalize::imagenet(), .dtype = DType::f16};
  const RandomSampler sampler(data.size(), {.seed = 3});
  std::vector<std::vector<std::uint64_t>> runs;
  for (int workers : {1, 2, 8}) {
    BatchPipeline pipe(data, sampler, aug, {.batch_size = 6, .workers = workers, .seed = 11});
    runs.push_back(digests(pipe, 2));
  }
  CHECK(runs[0].size() == 14);
  CHECK(runs[0] == runs[1]);
  CHECK(runs[0] == runs[2]);
  BatchPipeline other(data, sampler, aug, {.batch_size = 6, .workers = 2, .seed = 12});
  const auto different = digests(other, 2);
  for (std::size_t i = 0; i < different.size(); ++i) CHECK(different[i] != runs[0][i]);
}

TEST_CASE("breaking out of the loop ends the epoch and the next one starts clean", "[pipeline][lifecycle]") {
  const std::uint64_t n = 50;
  BatchPipeline pipe(IndexDataset{n}, SequentialSampler{n}, index_tensor, {.batch_size = 4, .workers = 3});
  for (int round = 0; round < 5; ++round) {
    int taken = 0;
    for (const Batch& b : pipe) {
      CHECK(b.number() == static_cast<std::uint64_t>(taken));
      if (++taken == round + 1) break;
    }
    std::vector<std::uint64_t> seen;
    for (const Batch& b : pipe)
      for (std::size_t i = 0; i < b.size(); ++i) seen.push_back(sample_value(b, i));
    std::vector<std::uint64_t> all(n);
    std::iota(all.begin(), all.end(), 0);
    CHECK(seen == all);
  }
}

TEST_CASE("create then iterate a little then break and destroy many times", "[pipeline][lifecycle]") {
  const InMemory data = jpeg_dataset(12);
  const ImageAugment aug{.crop = RandomResizedCrop{.size = 16}, .flip = {.p = 0.5}};
  // The batches of an undisturbed run, per sampler seed: what every short-lived pipeline must give.
  std::vector<std::vector<std::uint64_t>> expected;
  for (std::uint64_t seed = 0; seed < 3; ++seed) {
    BatchPipeline ref(data, RandomSampler(data.size(), {.seed = seed}), aug, {.batch_size = 3, .workers = 1});
    expected.push_back(digests(ref, 1));
  }
  for (int cycle = 0; cycle < 100; ++cycle) {
    const auto seed = std::uint64_t(cycle % 3);
    BatchPipeline pipe(data, RandomSampler(data.size(), {.seed = seed}), aug, {.batch_size = 3, .workers = 1 + cycle % 4});
    int k = 0;
    for (const Batch& b : pipe) {
      REQUIRE(b.number() == std::uint64_t(k));
      REQUIRE(digest(b) == expected[seed][k]);
      if (++k == 1 + cycle % 3) break;
    }
    REQUIRE(k == 1 + cycle % 3);
  }
}

TEST_CASE("only one epoch is live and set_epoch waits for the loop to end", "[pipeline][lifecycle]") {
  BatchPipeline pipe(IndexDataset{10}, SequentialSampler{10}, index_tensor, {.batch_size = 2, .workers = 2});
  auto it = pipe.begin();
  CHECK_THROWS_WITH(pipe.begin(), Catch::Contains("already being iterated"));
  CHECK_THROWS_WITH(pipe.set_epoch(1), Catch::Contains("being iterated"));
  CHECK((*it).size() == 2);
}

TEST_CASE("a kept batch holds its slot and stays valid even past the pipeline", "[pipeline][lifecycle]") {
  const std::uint64_t n = 40;
  std::optional<Batch> kept;
  std::vector<std::uint64_t> kept_values;
  {
    BatchPipeline pipe(IndexDataset{n}, SequentialSampler{n}, index_tensor,
                       {.batch_size = 4, .workers = 4, .prefetch = 3});
    for (const Batch& b : pipe) {
      if (b.number() == 1) {
        kept = b;
        for (std::size_t i = 0; i < b.size(); ++i) kept_values.push_back(sample_value(b, i));
      }
      if (kept) {  // the kept slot is never refilled while held
        for (std::size_t i = 0; i < kept->size(); ++i) REQUIRE(sample_value(*kept, i) == kept_values[i]);
        REQUIRE((b.images().data != kept->images().data || b.number() == 1));
      }
    }
  }
  REQUIRE(kept);
  for (std::size_t i = 0; i < kept->size(); ++i) CHECK(sample_value(*kept, i) == kept_values[i]);
  CHECK(kept_values == std::vector<std::uint64_t>{4, 5, 6, 7});
}

TEST_CASE("a failed sample is raised at its batch naming index and path", "[pipeline][errors]") {
  FaultyDataset<InMemory> data(jpeg_dataset(20));
  data.corrupt = {9, 13};
  data.unreadable = {17};
  BatchPipeline pipe(std::move(data), SequentialSampler{20}, ImageAugment{.crop = RandomResizedCrop{.size = 16}},
                     {.batch_size = 5, .workers = 3});
  std::vector<std::uint64_t> delivered;
  try {
    for (const Batch& b : pipe) delivered.push_back(b.number());
    FAIL("no error raised");
  } catch (const SampleError& e) {
    CHECK(e.index() == 9);  // batch 1 holds 5..9; batch 2's sample 13 never surfaces
    CHECK(e.path() == "faulty/9");
    CHECK_THAT(e.what(), Catch::Contains("sample 9") && Catch::Contains("faulty/9") && Catch::Contains("Not a JPEG"));
    CHECK_THROWS_AS(std::rethrow_if_nested(e), DecodeError);
  }
  CHECK(delivered == std::vector<std::uint64_t>{0});
  // The pipeline is not failed: the next epoch starts, and fails at the same place.
  pipe.set_epoch(1);
  auto it = pipe.begin();
  CHECK((*it).number() == 0);
  ++it;
  CHECK_THROWS_AS(*it, SampleError);
  ++it;
  CHECK_THROWS_WITH(*it, Catch::Contains("sample 13"));
  ++it;
  CHECK_THROWS_WITH(*it, Catch::Contains("sample 17") && Catch::Contains("injected fault"));
}

TEST_CASE("the earliest failed position of a batch wins", "[pipeline][errors]") {
  for (int workers : {0, 1, 4}) {
    FaultyDataset<IndexDataset> data(IndexDataset{8});
    data.unreadable = {1, 2, 3, 4, 5, 6};
    BatchPipeline pipe(std::move(data), SequentialSampler{8}, index_tensor, {.batch_size = 8, .workers = workers});
    CHECK_THROWS_WITH(*pipe.begin(), Catch::Contains("sample 1 "));
  }
}

TEST_CASE("skip replaces failed samples deterministically and lists them", "[pipeline][errors]") {
  std::vector<std::vector<std::int64_t>> runs;
  for (int workers : {0, 1, 5}) {
    FaultyDataset<InMemory> data(jpeg_dataset(30));
    data.corrupt = {3, 4, 22};
    data.unreadable = {11};
    BatchPipeline pipe(std::move(data), RandomSampler(30, {.seed = 8}), ImageAugment{.crop = RandomResizedCrop{.size = 8}},
                       {.batch_size = 7, .workers = workers, .on_error = OnError::skip});
    std::vector<std::int64_t> indices;
    std::size_t batch_skips = 0;
    for (const Batch& b : pipe) {
      CHECK(b.size() == (b.number() < 4 ? 7u : 2u));
      indices.insert(indices.end(), b.indices().begin(), b.indices().end());
      for (const SkippedSample& s : b.skipped()) {
        CHECK(s.replacement != s.index);
        CHECK(std::find(b.indices().begin(), b.indices().end(), std::int64_t(s.replacement)) != b.indices().end());
      }
      batch_skips += b.skipped().size();
    }
    const auto skipped = pipe.skipped();
    CHECK(batch_skips == 4);
    std::set<std::uint64_t> bad;
    for (const auto& s : skipped) bad.insert(s.index);
    CHECK(bad == std::set<std::uint64_t>{3, 4, 11, 22});
    for (const auto& s : skipped) {
      CHECK_FALSE(s.reason.empty());
      CHECK(s.name == "faulty/" + std::to_string(s.index));
    }
    CHECK(pipe.stats().skipped == 4);
    runs.push_back(indices);
  }
  CHECK(runs[0] == runs[1]);
  CHECK(runs[0] == runs[2]);
}

TEST_CASE("a replacement is drawn from the failed sample's own stream and carries its own pixels",
          "[pipeline][errors]") {
  const std::uint64_t n = 40, seed = 6;
  FaultyDataset<IndexDataset> data(IndexDataset{n});
  data.unreadable = {3, 9, 17, 21, 30, 35};
  BatchPipeline pipe(data, SequentialSampler{n}, index_tensor,
                     {.batch_size = 8, .workers = 3, .on_error = OnError::skip, .seed = seed});
  for (std::uint64_t epoch : {0, 4}) {
    pipe.set_epoch(epoch);
    std::set<std::uint64_t> replacements;
    std::size_t skips = 0;
    for (const Batch& b : pipe) {
      for (const SkippedSample& s : b.skipped()) {
        // The first candidate of (seed, epoch, failed index, replace) that reads.
        CounterRng rng(seed, epoch, s.index, RngOp::replace);
        std::uint64_t want = rng.below(n);
        while (data.unreadable.count(want)) want = rng.below(n);
        CHECK(s.epoch == epoch);
        CHECK(s.replacement == want);
        replacements.insert(s.replacement);
        const std::size_t pos = s.index - b.number() * 8;  // sequential: index i sits at position i % 8
        CHECK(b.indices()[pos] == std::int64_t(want));
        CHECK(sample_value(b, pos) == want);  // the replacement's own bytes, not zeros or the failed one's
        CHECK(b.labels().as<std::int64_t>()[pos] == std::int64_t((7 * want) % 10));
        ++skips;
      }
      for (std::size_t i = 0; i < b.size(); ++i)
        if (!data.unreadable.count(b.number() * 8 + i)) CHECK(sample_value(b, i) == b.number() * 8 + i);
    }
    CHECK(skips == data.unreadable.size());
    CHECK(replacements.size() > 3);  // six failures, drawn independently
  }
}

TEST_CASE("a replaced image is the replacement's own augmented image", "[pipeline][errors]") {
  FaultyDataset<InMemory> data(jpeg_dataset(16, 5));
  data.corrupt = {2, 11};
  const ImageAugment aug{.crop = RandomResizedCrop{.size = 24}, .flip = {.p = 0.5}, .dtype = DType::u8};
  BatchPipeline pipe(data, SequentialSampler{16}, aug,
                     {.batch_size = 16, .workers = 2, .on_error = OnError::skip, .seed = 3});
  const std::size_t bytes = aug.sample_spec().bytes();
  for (const Batch& b : pipe) {
    REQUIRE(b.skipped().size() == 2);
    const auto* px = b.images().as<std::uint8_t>();
    for (const SkippedSample& s : b.skipped()) {
      INFO("sample " << s.index << " replaced by " << s.replacement);
      REQUIRE_FALSE(data.corrupt.count(s.replacement));
      // Sequential order: the replacement also has its own position, prepared the same way.
      CHECK(std::memcmp(px + s.index * bytes, px + s.replacement * bytes, bytes) == 0);
      CHECK(std::any_of(px + s.index * bytes, px + (s.index + 1) * bytes, [](std::uint8_t v) { return v != 0; }));
    }
  }
}

TEST_CASE("starvation says which side waits: the loader or the consumer", "[pipeline][stats]") {
  const std::uint64_t n = 96;
  SECTION("a slow consumer: batches are ready before it asks") {
    BatchPipeline pipe(IndexDataset{n}, SequentialSampler{n}, index_tensor, {.batch_size = 8, .workers = 2});
    for (const Batch& b : pipe) {
      (void)b;
      std::this_thread::sleep_for(std::chrono::milliseconds(15));
    }
    const PipelineStats st = pipe.stats();
    INFO("starvation " << st.starvation << ", waited " << st.consumer_wait_seconds << " s of " << st.elapsed_seconds);
    CHECK(st.elapsed_seconds >= 12 * 0.015 * 0.9);
    CHECK(st.starvation < 0.2);
  }
  SECTION("a slow loader: the consumer waits for nearly every batch") {
    FaultyDataset<IndexDataset> slow(IndexDataset{n});
    slow.delay = std::chrono::milliseconds(2);
    BatchPipeline pipe(slow, SequentialSampler{n}, index_tensor, {.batch_size = 8, .workers = 2});
    for (const Batch& b : pipe) (void)b;
    const PipelineStats st = pipe.stats();
    INFO("starvation " << st.starvation << ", waited " << st.consumer_wait_seconds << " s of " << st.elapsed_seconds);
    CHECK(st.elapsed_seconds >= 96 * 0.002 / 2 * 0.9);
    CHECK(st.starvation > 0.8);
  }
}

TEST_CASE("wait_ready says when a batch can be taken without blocking, and slots_held what is kept",
          "[pipeline][lifecycle]") {
  FaultyDataset<IndexDataset> slow(IndexDataset{12});
  slow.delay = std::chrono::milliseconds(40);
  BatchPipeline pipe(slow, SequentialSampler{12}, index_tensor, {.batch_size = 2, .workers = 1, .prefetch = 2});
  auto it = pipe.begin();
  CHECK_FALSE(it.wait_ready(std::chrono::milliseconds(1)));  // 80 ms of reads to go
  REQUIRE(it.wait_ready(std::chrono::seconds(10)));
  const auto t0 = std::chrono::steady_clock::now();
  std::optional<Batch> first = *it;  // does not block now
  CHECK(std::chrono::steady_clock::now() - t0 < std::chrono::milliseconds(20));
  CHECK(pipe.slots_held() == 1);
  ++it;
  const Batch second = *it;
  CHECK(pipe.slots_held() == 2);  // every slot: no third batch can be made until one is released
  ++it;
  CHECK_FALSE(it.wait_ready(std::chrono::milliseconds(200)));
  first->wait_async(nullptr);  // a host batch: nothing to order
  first.reset();
  CHECK(pipe.slots_held() == 1);
  CHECK(it.wait_ready(std::chrono::seconds(10)));
  CHECK((*it).indices()[0] == 4);
}

TEST_CASE("the samples of one batch are prepared in parallel by all workers", "[pipeline][parallel]") {
  FaultyDataset<IndexDataset> data(IndexDataset{64});
  data.rendezvous = 4;  // a read returns only once 4 reads are in progress together (or after 5 s)
  BatchPipeline pipe(data, SequentialSampler{64}, index_tensor, {.batch_size = 16, .workers = 4, .prefetch = 2});
  std::size_t n = 0;
  for (const Batch& b : pipe) n += b.size();
  CHECK(n == 64);
  CHECK(data.peak_concurrency() == 4);
}

TEST_CASE("raw fixed-shape samples pass through unchanged", "[pipeline][raw]") {
  InMemory data;
  for (int i = 0; i < 10; ++i) {
    std::vector<float> v(6);
    for (int j = 0; j < 6; ++j) v[j] = float(i) + 0.25f * float(j);
    data.add(std::as_bytes(std::span(v)), i);
  }
  BatchPipeline pipe(data, SequentialSampler{10}, RawTensor{SampleSpec{DType::f32, 2, {2, 3, 0}}},
                     {.batch_size = 4, .workers = 2});
  for (const Batch& b : pipe) {
    CHECK(b.images().rank == 3);
    CHECK(b.images().shape[1] == 2);
    CHECK(b.images().shape[2] == 3);
    CHECK(b.images().dtype == DType::f32);
    for (std::size_t i = 0; i < b.size(); ++i)
      for (int j = 0; j < 6; ++j)
        CHECK(b.images().as<float>()[i * 6 + j] == float(b.indices()[i]) + 0.25f * float(j));
  }
  InMemory wrong;
  wrong.add(std::as_bytes(std::span("short")), 0);
  BatchPipeline bad(wrong, SequentialSampler{1}, RawTensor{SampleSpec{DType::f32, 1, {6, 0, 0}}}, {.batch_size = 1});
  CHECK_THROWS_WITH(*bad.begin(), Catch::Contains("expected 24"));
}

TEST_CASE("invalid options are refused by name", "[pipeline][errors]") {
  IndexDataset d(10);
  SequentialSampler s(10);
  CHECK_THROWS_WITH(BatchPipeline(d, s, index_tensor, {.batch_size = 0}), Catch::Contains("batch_size"));
  CHECK_THROWS_WITH(BatchPipeline(d, s, index_tensor, {.prefetch = 1}), Catch::Contains("prefetch"));
  CHECK_THROWS_WITH(BatchPipeline(d, s, index_tensor, {.workers = -2}), Catch::Contains("workers"));
  CHECK_THROWS_WITH(BatchPipeline(d, s, index_tensor, {.device = 0}), Catch::Contains("device 0"));
  CHECK_THROWS_WITH(BatchPipeline(IndexDataset{0}, SequentialSampler{0}, index_tensor), Catch::Contains("empty"));
  CHECK_THROWS_WITH(BatchPipeline(d, s, ImageAugment{.normalize = Normalize::imagenet(), .dtype = DType::u8}),
                    Catch::Contains("u8"));
  BatchPipeline wrong_sampler(d, SequentialSampler{11}, index_tensor, {.batch_size = 2});
  CHECK_THROWS_WITH(wrong_sampler.begin(), Catch::Contains("index 10"));
}

TEST_CASE("stats count batches and images and stages and waiting", "[pipeline][stats]") {
  const InMemory data = jpeg_dataset(24);
  BatchPipeline pipe(data, SequentialSampler{24}, ImageAugment::eval(40, 32), {.batch_size = 8, .workers = 2});
  for (int e = 0; e < 2; ++e) {
    pipe.set_epoch(e);
    for (const Batch& b : pipe) CHECK(b.size() == 8);
  }
  const PipelineStats st = pipe.stats();
  CHECK(st.epochs == 2);
  CHECK(st.batches == 6);
  CHECK(st.images == 48);
  CHECK(st.workers == 2);
  CHECK(st.stage("read").count >= 48);
  CHECK(st.stage("decode").count >= 48);
  CHECK(st.stage("augment").count >= 48);
  CHECK(st.stage("decode").seconds > 0);
  CHECK(st.elapsed_seconds > 0);
  CHECK(st.images_per_second > 0);
  CHECK(st.host_bytes >= 3 * 8 * 3 * 32 * 32 * 4);
  CHECK_THAT(st.table(), Catch::Contains("decode") && Catch::Contains("img/s"));
  CHECK_THAT(st.json(), Catch::StartsWith("{\"workers\": 2") && Catch::EndsWith("}"));
}

TEST_CASE("resuming at batch k gives exactly the batches of an uninterrupted run", "[pipeline][determinism]") {
  const InMemory data = jpeg_dataset(30, 12);
  const ImageAugment aug{.crop = RandomResizedCrop{.size = 24}, .flip = {.p = 0.5}, .dtype = DType::u8};
  BatchPipeline full(data, RandomSampler(data.size(), {.seed = 4}), aug, {.batch_size = 4, .workers = 3, .seed = 9});
  full.set_epoch(3);
  std::vector<std::uint64_t> expected;
  for (const Batch& b : full) expected.push_back(digest(b));
  REQUIRE(expected.size() == 8);
  for (std::uint64_t k : {0, 1, 5, 7, 8, 20}) {
    BatchPipeline resumed(data, RandomSampler(data.size(), {.seed = 4}), aug, {.batch_size = 4, .workers = 2, .seed = 9});
    resumed.set_epoch(3, k);
    std::vector<std::uint64_t> got;
    std::uint64_t number = k;
    for (const Batch& b : resumed) {
      CHECK(b.number() == number++);
      got.push_back(digest(b));
    }
    CHECK(got == std::vector<std::uint64_t>(expected.begin() + std::min<std::ptrdiff_t>(std::ptrdiff_t(k), 8), expected.end()));
    std::size_t again = 0;  // the start applies to one loop only
    for (const Batch& b : resumed) again += b.size();
    CHECK(again == data.size());
  }
}

// The request path on the CPU backend: each request's batch is what the eval pipeline makes of the
// same images, from many threads at once; a bad image fails its own request only; the queue is
// bounded; deadlines and cancellations give their lane back; the metrics pass promtool.

#include <conveyor/conveyor.hpp>

#include <catch2/catch.hpp>

#include "support/data.hpp"
#include "support/datasets.hpp"
#include "support/images.hpp"
#include "support/promtool.hpp"

#include <atomic>
#include <chrono>
#include <cstring>
#include <fstream>
#include <iterator>
#include <map>
#include <sstream>
#include <span>
#include <string>
#include <thread>
#include <vector>

using namespace conveyor;
using namespace std::chrono_literals;

namespace {

using Bytes = std::vector<std::byte>;

ImageAugment small_eval() { return ImageAugment::eval(40, 32); }

/// Each image alone through the eval pipeline: the bytes a request's batch must hold for it.
std::vector<Bytes> references(const std::vector<Bytes>& images, const ImageAugment& t) {
  InMemory data;
  for (const Bytes& b : images) data.add(b, 0);
  BatchPipeline pipe(data, SequentialSampler(data.size()), t, {.batch_size = 1, .workers = 2});
  std::vector<Bytes> out;
  for (const Batch& b : pipe) {
    const auto* p = static_cast<const std::byte*>(b.images().data);
    out.emplace_back(p, p + b.images().nbytes());
  }
  return out;
}

std::vector<std::span<const std::byte>> spans(const std::vector<Bytes>& images, std::size_t first, std::size_t n) {
  std::vector<std::span<const std::byte>> v;
  for (std::size_t i = first; i < first + n; ++i) v.emplace_back(images[i]);
  return v;
}

/// Whether `b` holds, in order, the references of images first .. first + n - 1.
bool holds(const Batch& b, const std::vector<Bytes>& refs, std::size_t first, std::size_t n) {
  if (b.size() != n) return false;
  const auto* p = static_cast<const std::byte*>(b.images().data);
  const std::size_t each = refs[first].size();
  if (b.images().nbytes() != n * each) return false;
  for (std::size_t i = 0; i < n; ++i)
    if (std::memcmp(p + i * each, refs[first + i].data(), each) != 0 || b.indices()[i] != std::int64_t(i)) return false;
  return true;
}

std::vector<Bytes> jpegs(std::size_t n, std::uint64_t seed) {
  const InMemory d = conveyor_test::jpeg_dataset(n, seed);
  std::vector<Bytes> v;
  for (std::uint64_t i = 0; i < d.size(); ++i) v.emplace_back(d.bytes(i).begin(), d.bytes(i).end());
  return v;
}

}  // namespace

TEST_CASE("a request's batch is what the eval pipeline makes of its images", "[serve]") {
  CONVEYOR_REQUIRE_SHARED_DATA(data);
  std::vector<Bytes> photos;
  for (const auto& e : std::filesystem::directory_iterator(data / "photos")) {
    if (e.path().extension() != ".jpg") continue;
    std::ifstream f(e.path(), std::ios::binary);
    photos.emplace_back();
    for (char c : std::string((std::istreambuf_iterator<char>(f)), {})) photos.back().push_back(std::byte(c));
    if (photos.size() == 12) break;
  }
  REQUIRE(photos.size() == 12);
  const ImageAugment eval = ImageAugment::eval();
  const std::vector<Bytes> refs = references(photos, eval);
  Preprocessor pre(eval, {.max_images = 8, .lanes = 2, .pipeline = {.workers = 2}});
  const auto first = spans(photos, 0, 8);
  const Batch a = pre(first);
  CHECK(a.images().shape[0] == 8);
  CHECK(a.images().shape[1] == 3);
  CHECK(a.images().shape[2] == 224);
  CHECK(holds(a, refs, 0, 8));
  // A smaller request after it, while the first batch is still held.
  const auto rest = spans(photos, 8, 4);
  const Batch b = pre(rest);
  CHECK(holds(b, refs, 8, 4));
  CHECK(holds(a, refs, 0, 8));  // untouched by the second request
  const PreprocessorStats st = pre.stats();
  CHECK(st.requests == 2);
  CHECK(st.images == 12);
  CHECK(st.latency.count == 2);
  CHECK(st.pipelines.images == 12);
}

TEST_CASE("requests from many threads at once are each answered with their own images", "[serve]") {
  const std::vector<Bytes> images = jpegs(64, 7);
  const ImageAugment t = small_eval();
  const std::vector<Bytes> refs = references(images, t);
  Preprocessor pre(t, {.max_images = 8, .lanes = 3, .pipeline = {.workers = 2}});
  std::atomic<int> wrong{0}, answered{0};
  std::vector<std::thread> clients;
  for (int c = 0; c < 8; ++c)
    clients.emplace_back([&, c] {
      CounterRng rng(3, 0, c, RngOp::user);
      for (int r = 0; r < 25; ++r) {
        const std::size_t n = 1 + rng.below(8), first = rng.below(64 - n + 1);
        const auto request = spans(images, first, n);
        const Batch b = pre(request);
        wrong += !holds(b, refs, first, n);
        ++answered;
      }
    });
  for (std::thread& c : clients) c.join();
  CHECK(answered == 200);
  CHECK(wrong == 0);
  const PreprocessorStats st = pre.stats();
  CHECK(st.requests == 200);
  CHECK(st.in_flight == 0);
  CHECK(st.waiting == 0);
}

TEST_CASE("a bad image fails its own request, naming its position, and no other", "[serve]") {
  std::vector<Bytes> images = jpegs(12, 9);
  const ImageAugment t = small_eval();
  const std::vector<Bytes> refs = references(images, t);
  Bytes truncated(images[5].begin(), images[5].begin() + 40);  // a header and no scan
  std::vector<std::span<const std::byte>> bad = spans(images, 2, 6);
  bad[3] = truncated;  // position 3
  Preprocessor pre(t, {.max_images = 8, .lanes = 2, .pipeline = {.workers = 3}});
  std::atomic<int> good_wrong{0};
  std::thread neighbour([&] {
    for (int r = 0; r < 20; ++r) good_wrong += !holds(pre(spans(images, 0, 8)), refs, 0, 8);
  });
  for (int r = 0; r < 10; ++r) {
    try {
      (void)pre(bad);
      FAIL("a request with a truncated image was answered");
    } catch (const SampleError& e) {
      CHECK(e.index() == 3);
      CHECK(e.path() == "request image 3");
      CHECK_FALSE(e.reason().empty());
    }
  }
  neighbour.join();
  CHECK(good_wrong == 0);
  // The lanes are fine after it.
  CHECK(holds(pre(spans(images, 4, 8)), refs, 4, 8));
  const PreprocessorStats st = pre.stats();
  CHECK(st.failed == 10);
  CHECK(st.requests == 21);
}

TEST_CASE("an empty or oversized request is refused with what it holds", "[serve]") {
  const std::vector<Bytes> images = jpegs(5, 2);
  Preprocessor pre(small_eval(), {.max_images = 4, .lanes = 1, .pipeline = {.workers = 1}});
  CHECK_THROWS_WITH(pre(spans(images, 0, 5)), Catch::Contains("5 images, more than max_images = 4"));
  CHECK_THROWS_AS(pre({}), ConfigError);
  CHECK(pre(spans(images, 0, 4)).size() == 4);
  CHECK_THROWS_AS(Preprocessor(small_eval(), {.max_images = 0}), ConfigError);
  CHECK_THROWS_AS(Preprocessor(small_eval(), {.lanes = 0}), ConfigError);
}

TEST_CASE("the queue is bounded: past max_waiting a request is refused, past its deadline it gives up", "[serve]") {
  const std::vector<Bytes> images = jpegs(8, 4);
  const ImageAugment t = small_eval();
  const std::vector<Bytes> refs = references(images, t);
  Preprocessor pre(t, {.max_images = 8, .lanes = 1, .max_waiting = 1, .pipeline = {.workers = 1}});
  const auto request = spans(images, 0, 8);
  auto held = pre.submit(request);  // takes the only lane until got or dropped
  std::atomic<bool> waited_out{false};
  std::thread waiter([&] {
    try {
      (void)pre.submit(request, std::chrono::steady_clock::now() + 300ms);
    } catch (const DeadlineExceeded&) {
      waited_out = true;
    }
  });
  while (pre.stats().waiting == 0) std::this_thread::sleep_for(1ms);
  CHECK_THROWS_AS(pre.submit(request), Overloaded);  // one already waits
  waiter.join();
  CHECK(waited_out);
  CHECK(holds(held.get(), refs, 0, 8));
  const PreprocessorStats st = pre.stats();
  CHECK(st.overloaded == 1);
  CHECK(st.deadline_exceeded == 1);
  CHECK(st.requests == 1);
  // Once the lane is free, the next request goes through at once.
  CHECK(holds(pre(request, std::chrono::steady_clock::now() + 10s), refs, 0, 8));
}

TEST_CASE("a cancelled request or one past its deadline gives its lane back and leaks no slot", "[serve]") {
  const std::vector<Bytes> images = jpegs(8, 5);
  const ImageAugment t = small_eval();
  const std::vector<Bytes> refs = references(images, t);
  Preprocessor pre(t, {.max_images = 8, .lanes = 1, .pipeline = {.workers = 1, .prefetch = 2}});
  const auto request = spans(images, 0, 8);
  for (int r = 0; r < 50; ++r) {
    auto p = pre.submit(request);
    if (r % 2) (void)p.wait_for(std::chrono::microseconds(r * 50));
  }  // dropped: cancelled
  CHECK(pre.stats().cancelled == 50);
  for (int r = 0; r < 20; ++r) {
    try {
      const Batch b = pre(request, std::chrono::steady_clock::now());  // already due
      CHECK(holds(b, refs, 0, 8));  // ready in time after all
    } catch (const DeadlineExceeded&) {
    }
  }
  const PreprocessorStats st = pre.stats();
  CHECK(st.deadline_exceeded + st.requests == 20);
  CHECK(st.deadline_exceeded > 0);
  CHECK(st.in_flight == 0);
  CHECK(st.slots_held == 0);
  // No slot is held: two batches can be kept at once (prefetch 2), then the lane is full.
  const Batch a = pre(request), b = pre(request);
  CHECK(pre.stats().slots_held == 2);
  CHECK(holds(a, refs, 0, 8));
  CHECK(holds(b, refs, 0, 8));
  CHECK_THROWS_AS(pre(request, std::chrono::steady_clock::now() + 50ms), DeadlineExceeded);
}

TEST_CASE("promtool accepts a preprocessor's metrics", "[serve][prometheus]") {
  const std::vector<Bytes> images = jpegs(6, 6);
  std::string text;
  {
    Preprocessor pre(small_eval(), {.max_images = 4, .lanes = 2, .pipeline = {.workers = 1}});
    for (int r = 0; r < 3; ++r) (void)pre(spans(images, r, 3));
    Bytes junk(100, std::byte{0x5a});
    const std::vector<std::span<const std::byte>> bad{junk};
    CHECK_THROWS_AS(pre(bad), SampleError);
    text = prometheus_text(pre.stats(), {{"service", "test"}});
  }
  CHECK_THAT(text, Catch::Contains("conveyor_requests_total{service=\"test\",outcome=\"answered\"} 3"));
  CHECK_THAT(text, Catch::Contains("conveyor_requests_total{service=\"test\",outcome=\"bad_image\"} 1"));
  CHECK_THAT(text, Catch::Contains("conveyor_request_latency_seconds_count{service=\"test\"} 3"));
  CHECK_THAT(text, Catch::Contains("conveyor_request_images_total{service=\"test\"} 9"));
  CHECK_THAT(text, Catch::Contains("conveyor_slots_held{service=\"test\"} 0"));
  const auto verdict = conveyor_test::promtool_check(text);
  if (!verdict) CONVEYOR_SKIP("promtool not installed (Debian: prometheus)");
  INFO(verdict->said);
  CHECK(verdict->status == 0);
  CHECK(verdict->said.empty());
}

// The lanes' work is written by the pipeline's own writer: every family the two expositions share
// has the same HELP text, and the service reports all of a pipeline's work families.
TEST_CASE("a preprocessor's metrics describe the lanes' work as a pipeline's do", "[serve][prometheus]") {
  const std::vector<Bytes> images = jpegs(4, 7);
  Preprocessor pre(small_eval(), {.max_images = 4, .lanes = 2, .pipeline = {.workers = 1}});
  (void)pre(spans(images, 0, 4));
  const std::string service = prometheus_text(pre.stats());
  const std::string pipeline = prometheus_text(PipelineStats{});
  const auto help = [](const std::string& text) {
    std::map<std::string, std::string> out;  // family -> its HELP text
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);)
      if (line.rfind("# HELP ", 0) == 0) {
        const std::size_t space = line.find(' ', 7);
        out[line.substr(7, space - 7)] = line.substr(space + 1);
      }
    return out;
  };
  const auto ours = help(service), theirs = help(pipeline);
  int shared = 0;
  for (const auto& [family, text] : ours)
    if (theirs.count(family)) {
      INFO(family);
      CHECK(text == theirs.at(family));
      ++shared;
    }
  for (const char* family : {"conveyor_workers", "conveyor_stage_seconds_total", "conveyor_stage_samples_total",
                             "conveyor_uploaded_bytes_total", "conveyor_gpu_decode_fallbacks_total",
                             "conveyor_gpu_decode_calls_total"}) {
    INFO(family);
    CHECK(ours.count(family) == 1);
  }
  CHECK(shared == 14);
}

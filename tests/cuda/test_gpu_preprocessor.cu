// The request path on the CUDA backend against the CPU backend: every request's batch bit for bit,
// from many threads at once, and cancelled or timed-out requests leave no slot or lane behind.
// Runs only where a GPU is (label gpu).

#include <conveyor/cuda/all.cuh>

#include <catch2/catch.hpp>

#include "support/datasets.hpp"

#include <atomic>
#include <chrono>
#include <cstring>
#include <span>
#include <thread>
#include <vector>

using namespace conveyor;
using namespace std::chrono_literals;

namespace {

using Bytes = std::vector<std::byte>;

std::vector<Bytes> jpegs(std::size_t n, std::uint64_t seed) {
  const InMemory d = conveyor_test::jpeg_dataset(n, seed);
  std::vector<Bytes> v;
  for (std::uint64_t i = 0; i < d.size(); ++i) v.emplace_back(d.bytes(i).begin(), d.bytes(i).end());
  return v;
}

std::vector<std::span<const std::byte>> spans(const std::vector<Bytes>& images, std::size_t first, std::size_t n) {
  std::vector<std::span<const std::byte>> v;
  for (std::size_t i = first; i < first + n; ++i) v.emplace_back(images[i]);
  return v;
}

/// A batch's images on the host. The batch is ready on the legacy default stream, which the
/// blocking copy follows.
Bytes host_images(const Batch& b) {
  Bytes h(b.images().nbytes());
  if (b.images().device.kind == Device::Kind::cpu)
    std::memcpy(h.data(), b.images().data, h.size());
  else
    CONVEYOR_CUDA_TRY(cudaMemcpy(h.data(), b.images().data, h.size(), cudaMemcpyDeviceToHost));
  return h;
}

}  // namespace

TEST_CASE("device requests from many threads equal the CPU backend's bit for bit", "[gpu][serve]") {
  const std::vector<Bytes> images = jpegs(64, 11);
  ImageAugment t = ImageAugment::eval(72, 64);
  t.dtype = DType::bf16;
  Preprocessor cpu(t, {.max_images = 16, .lanes = 1, .pipeline = {.workers = 2}});
  Preprocessor gpu(t, {.max_images = 16, .lanes = 3, .pipeline = {.workers = 2, .device = 0}});
  std::atomic<int> wrong{0}, answered{0};
  std::vector<std::thread> clients;
  for (int c = 0; c < 6; ++c)
    clients.emplace_back([&, c] {
      CounterRng rng(5, 0, c, RngOp::user);
      for (int r = 0; r < 20; ++r) {
        const std::size_t n = 1 + rng.below(16), first = rng.below(64 - n + 1);
        const auto request = spans(images, first, n);
        const Batch on_device = gpu(request);
        CHECK(on_device.images().device.kind == Device::Kind::cuda);
        wrong += host_images(on_device) != host_images(cpu(request));
        ++answered;
      }
    });
  for (std::thread& c : clients) c.join();
  CHECK(answered == 120);
  CHECK(wrong == 0);
  CHECK(gpu.stats().requests == 120);
}

TEST_CASE("cancelled and timed-out device requests leave no slot or lane behind", "[gpu][serve]") {
  const std::vector<Bytes> images = jpegs(32, 12);
  const ImageAugment t = ImageAugment::eval(72, 64);
  Preprocessor cpu(t, {.max_images = 32, .lanes = 1, .pipeline = {.workers = 2}});
  Preprocessor gpu(t, {.max_images = 32, .lanes = 2, .pipeline = {.workers = 2, .prefetch = 2, .device = 0}});
  const auto request = spans(images, 0, 32);
  const Bytes expected = host_images(cpu(request));
  const std::uint64_t device_bytes = gpu.stats().pipelines.device_bytes;
  for (int r = 0; r < 100; ++r) {
    auto p = gpu.submit(request);
    if (r % 3 == 0) (void)p.wait_for(std::chrono::microseconds(20 * r));
  }
  int late = 0;
  for (int r = 0; r < 20; ++r) {
    try {
      const Batch b = gpu(request, std::chrono::steady_clock::now());  // already due
      CHECK(host_images(b) == expected);  // ready in time after all
    } catch (const DeadlineExceeded&) {
      ++late;
    }
  }
  const PreprocessorStats st = gpu.stats();
  CHECK(st.cancelled == 100);
  CHECK(st.deadline_exceeded == std::uint64_t(late));
  CHECK(st.in_flight == 0);
  CHECK(st.pipelines.device_bytes == device_bytes);
  // Every lane takes requests again, and two batches per lane can be kept (prefetch 2).
  std::vector<Batch> kept;
  for (int r = 0; r < 4; ++r) kept.push_back(gpu(request));
  for (const Batch& b : kept) CHECK(host_images(b) == expected);
  CHECK_THROWS_AS(gpu(request, std::chrono::steady_clock::now() + 50ms), DeadlineExceeded);
  kept.pop_back();
  CHECK(host_images(gpu(request)) == expected);
}

// workers = -1: one worker per hardware thread, less one where a device's JPEG engines decode, so
// that the stager, busy in their calls, has a core of its own.

#include <conveyor/conveyor.hpp>
#include <conveyor/pipeline/auto_workers.hpp>

#include <catch2/catch.hpp>

#include "support/datasets.hpp"
#include "support/host_device.hpp"

#include <algorithm>
#include <thread>

using namespace conveyor;

TEST_CASE("workers -1 is one per hardware thread, less one where a device's engines decode", "[pipeline][workers]") {
  const PipelineOptions cpu{};
  PipelineOptions device{.device = 0};
  CHECK(detail::auto_workers(cpu, 16) == 16);
  CHECK(detail::auto_workers(device, 16) == 16);  // the device's workers decode every JPEG
  for (const JpegDecode d : {JpegDecode::gpu, JpegDecode::adaptive}) {
    device.decode = d;
    CHECK(detail::auto_workers(device, 16) == 15);
    CHECK(detail::auto_workers(device, 2) == 1);
    CHECK(detail::auto_workers(device, 1) == 1);  // never none
    CHECK(detail::auto_workers(device, 0) == 1);  // hardware_concurrency may not know
  }
  CHECK(detail::auto_workers(cpu, 0) == 1);
}

TEST_CASE("a pipeline started with workers -1 runs the workers auto_workers gives, and says so in its stats",
          "[pipeline][workers][offload]") {
  const conveyor_test::HostDevice device;
  const InMemory data = conveyor_test::jpeg_dataset(12, 3);
  const ImageAugment eval = ImageAugment::eval(48, 40);
  const int threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  PipelineOptions o{.batch_size = 4, .workers = -1, .seed = 1, .device = 0};
  BatchPipeline cpu_decode(data, SequentialSampler(data.size()), eval, o);
  CHECK(cpu_decode.stats().workers == threads);
  o.decode = JpegDecode::gpu;
  BatchPipeline gpu_decode(data, SequentialSampler(data.size()), eval, o);
  CHECK(gpu_decode.stats().workers == std::max(1, threads - 1));
  BatchPipeline on_cpu(data, SequentialSampler(data.size()), eval, PipelineOptions{.batch_size = 4});
  CHECK(on_cpu.stats().workers == threads);
}

// Routing JPEGs to a device decoder, without a device: which files the engines take (from their
// headers alone), which samples draw the device (from (seed, epoch, index) alone), how a slot's
// places are laid out, and the options a pipeline refuses. The decoding itself is tested on the
// GPU (tests/cuda/test_gpu_jpeg_decode.cu).

#include <conveyor/conveyor.hpp>

#include <catch2/catch.hpp>

#include "support/data.hpp"
#include "support/datasets.hpp"
#include "support/images.hpp"

#include <filesystem>
#include <map>
#include <string>

using namespace conveyor;

namespace {

JpegInfo header_of(std::span<const std::byte> jpeg) {
  JpegDecoder d;
  return d.read_header(jpeg);
}

}  // namespace

TEST_CASE("the engines take baseline YCbCr JPEGs of the four chroma layouts they decode exactly", "[offload]") {
  for (auto [s, name] : {std::pair{ChromaSubsampling::s444, "4:4:4"}, {ChromaSubsampling::s422, "4:2:2"},
                         {ChromaSubsampling::s420, "4:2:0"}}) {
    INFO(name);
    const auto jpeg = conveyor_test::random_jpeg(64, 48, 3, {.subsampling = s});
    REQUIRE(header_of(jpeg).subsampling() == name);
    CHECK(engine_decodable(header_of(jpeg)));
    // Progressive, arithmetic-coded, grayscale and tiny files stay on the CPU.
    CHECK_FALSE(engine_decodable(header_of(conveyor_test::random_jpeg(64, 48, 3, {.subsampling = s, .progressive = true}))));
    CHECK_FALSE(engine_decodable(header_of(conveyor_test::random_jpeg(64, 48, 3, {.subsampling = s, .arithmetic = true}))));
    CHECK_FALSE(engine_decodable(header_of(conveyor_test::random_jpeg(31, 48, 3, {.subsampling = s}))));
    CHECK_FALSE(engine_decodable(header_of(conveyor_test::random_jpeg(64, 20, 3, {.subsampling = s}))));
  }
  CHECK_FALSE(engine_decodable(header_of(conveyor_test::random_jpeg(64, 48, 3, {}, 1))));
}

TEST_CASE("conformance files the engines refuse or decode differently stay on the CPU", "[offload][data]") {
  CONVEYOR_REQUIRE_SHARED_DATA(data_dir);
  // name -> whether the engines take it
  const std::map<std::string, bool> expected = {
      {"libjpeg-turbo/testorig.jpg", true},           // baseline 4:2:0
      {"generated/testout_420_islow_prog.jpg", false},  // progressive
      {"libjpeg-turbo/testimgari.jpg", false},        // arithmetic
      {"generated/extra_411_islow.jpg", false},       // 4:1:1
      {"generated/extra_410_islow.jpg", false},       // 4:1:0
      {"generated/extra_rgb_islow.jpg", false},       // RGB-coded
      {"generated/testout_gray_islow.jpg", false},    // grayscale
      {"jpeg-decoder/mozilla_jpg-cmyk-2.jpg", false}, // CMYK
      {"generated/testout_440_islow.jpg", true},      // 4:4:0
      {"generated/testout_444_islow.jpg", true},      // 4:4:4
      {"generated/testout_422_ifast_opt.jpg", true},  // 4:2:2, optimised Huffman tables
      {"generated/extra_420_restart1row.jpg", true},  // restart markers
  };
  ByteBuffer bytes;
  int checked = 0;
  for (const auto& [name, takes] : expected) {
    const auto path = data_dir / "conformance" / name;
    if (!std::filesystem::exists(path)) continue;
    INFO(name);
    read_file(path.string(), bytes);
    CHECK(engine_decodable(header_of(bytes.span())) == takes);
    ++checked;
  }
  REQUIRE(checked == int(expected.size()));
}

TEST_CASE("a sample draws the device from its own stream: the share, and the same draw every time", "[offload]") {
  for (double share : {0.0, 0.25, 0.65, 1.0}) {
    INFO("share " << share);
    int drawn = 0;
    for (std::uint64_t i = 0; i < 20000; ++i) {
      const bool d = draws_device(7, 3, i, share);
      REQUIRE(d == draws_device(7, 3, i, share));
      drawn += d;
    }
    CHECK(drawn / 20000.0 == Approx(share).margin(0.015));
  }
  // Another epoch or seed draws other samples.
  int same_epoch = 0, same_seed = 0;
  for (std::uint64_t i = 0; i < 2000; ++i) {
    same_epoch += draws_device(7, 3, i, 0.5) == draws_device(7, 4, i, 0.5);
    same_seed += draws_device(7, 3, i, 0.5) == draws_device(8, 3, i, 0.5);
  }
  CHECK(same_epoch < 1150);
  CHECK(same_seed < 1150);
}

TEST_CASE("a slot's places for device decodes do not overlap and keep their alignment", "[offload]") {
  const JpegOffloadLayout L{5, 1000, 3001};
  CHECK(L.jobs_bytes() % 256 == 0);
  CHECK(L.file_offset(0) >= 5 * sizeof(JpegJob));
  for (std::size_t p = 0; p + 1 < 5; ++p) {
    CHECK(L.file_offset(p + 1) - L.file_offset(p) >= 1000);
    CHECK(L.window_offset(p + 1) - L.window_offset(p) >= 3001);
    CHECK(L.file_offset(p) % 256 == 0);
    CHECK(L.window_offset(p) % 256 == 0);
  }
  CHECK(L.host_bytes() >= L.file_offset(4) + 1000);
  CHECK(L.device_bytes() >= L.window_offset(4) + 3001);
}

TEST_CASE("decode = gpu is refused on the CPU backend and a share outside [0, 1] is refused", "[offload][config]") {
  const InMemory data = conveyor_test::jpeg_dataset(4);
  const auto build = [&](PipelineOptions o) { BatchPipeline p(data, SequentialSampler(data.size()), ImageAugment::train(32), o); };
  REQUIRE_THROWS_WITH(build({.batch_size = 2, .workers = 1, .decode = JpegDecode::gpu}),
                      Catch::Contains("decode = gpu decodes on a device"));
  REQUIRE_THROWS_WITH(build({.batch_size = 2, .workers = 1, .decode = JpegDecode::adaptive}),
                      Catch::Contains("decode = auto decodes on a device"));
  REQUIRE_THROWS_WITH(build({.batch_size = 2, .workers = 1, .gpu_share = 1.5}), Catch::Contains("gpu_share must be in [0, 1]"));
  REQUIRE_THROWS_WITH(build({.batch_size = 2, .workers = 1, .gpu_share = -0.1}), Catch::Contains("gpu_share must be in [0, 1]"));
  // decode = cpu, the default, stays bit-exact on the CPU backend and reports no device decode.
  BatchPipeline p(data, SequentialSampler(data.size()), ImageAugment::train(32), {.batch_size = 2, .workers = 1});
  for (const Batch& b : p) (void)b;
  CHECK(p.stats().decode == "cpu");
  CHECK(p.stats().gpu_decoded == 0);
}

TEST_CASE("the adaptive share balances the workers' rate against the engines'", "[offload]") {
  // 4 workers; 0.6 ms to decode an engine-able file on the CPU, 1.5 ms for the others (progressive),
  // 13 us to stage one for the device, 10 us to read; engines at 9,000/s; 93 % engine-able.
  const OffloadRates r{.workers = 4, .read_seconds = 10e-6, .cpu_seconds = 600e-6, .other_seconds = 1.5e-3,
                       .offload_seconds = 13e-6, .device_rate = 9000, .eligible = 0.93};
  const double s = balanced_gpu_share(r);
  REQUIRE(s > 0);
  REQUIRE(s < 1);
  const auto workers_rate = [&](double x) {
    const double e = r.eligible;
    return r.workers / (r.read_seconds + (1 - e) * r.other_seconds + e * (1 - x) * r.cpu_seconds + e * x * r.offload_seconds);
  };
  const auto device_rate = [&](double x) { return r.device_rate / (x * r.eligible); };
  CHECK(workers_rate(s) == Approx(device_rate(s)).epsilon(1e-9));
  // No other share does better, and the best is above either decoder alone.
  const double best = std::min(workers_rate(s), device_rate(s));
  for (double x = 0.01; x <= 1.0; x += 0.01) CHECK(std::min(workers_rate(x), device_rate(x)) <= best * (1 + 1e-9));
  CHECK(best > workers_rate(0));
  CHECK(best > std::min(workers_rate(1), device_rate(1)));
  // Engines faster than the workers can feed them: everything they take goes to them.
  CHECK(balanced_gpu_share({.workers = 1, .read_seconds = 1e-4, .cpu_seconds = 1e-3, .offload_seconds = 1e-4,
                            .device_rate = 1e6, .eligible = 1}) == 1.0);
  // Nothing measured: no reason to move off the device.
  CHECK(balanced_gpu_share({}) == 1.0);
}

TEST_CASE("a sample sent to the device decoder gives its arena reserve back to the others", "[offload]") {
  ArenaAllocator a;
  a.reset(1000, 3, 160);  // three samples, each guaranteed 160 bytes
  // 1000 - 2 x 160 = 680 may go to the first while the other two keep their reserves.
  REQUIRE_FALSE(a.try_allocate(700));
  a.forgo();  // one of the three is decoded on the device
  // Now only one other sample needs its reserve: 840 fit.
  const auto at = a.try_allocate(800);
  REQUIRE(at);
  CHECK(*at == 0);
  CHECK(a.allocate_reserve() == 800);
}

// The type-erased pipeline gives the batches the typed one gives, for every shipped part.

#include <conveyor/conveyor.hpp>

#include <catch2/catch.hpp>

#include "support/datasets.hpp"
#include "support/digest.hpp"
#include "support/temp_dir.hpp"

#include <fstream>
#include <string>
#include <vector>

using namespace conveyor;
using conveyor_test::FaultyDataset;
using conveyor_test::IndexDataset;
using conveyor_test::digest;
using conveyor_test::digests;

TEST_CASE("an erased pipeline gives the typed pipeline's batches", "[pipeline][any]") {
  const InMemory data = conveyor_test::jpeg_dataset(30, 9);
  const RandomSampler sampler(data.size(), {.seed = 2});
  const PipelineOptions options{.batch_size = 7, .workers = 3, .seed = 5};
  for (ImageAugment aug : {ImageAugment::train(24), ImageAugment::eval(28, 24)}) {
    aug.dtype = DType::bf16;
    BatchPipeline typed(data, sampler, aug, options);
    AnyPipeline erased(AnyDataset(data), AnySampler(sampler), AnyTransform(aug), options);
    const auto want = digests(typed, 2);
    CHECK(want.size() == 10);
    CHECK(digests(erased, 2) == want);
    // The transform's stage names survive the erasure.
    CHECK(erased.stats().stage("decode").count == 60);
    CHECK(erased.stats().stage("read").count == 60);
  }
  const RawTensor raw{SampleSpec{DType::u8, 1, {8, 0, 0}}};
  BatchPipeline typed(IndexDataset{20}, SequentialSampler{20}, raw, options);
  AnyPipeline erased(AnyDataset(IndexDataset{20}), AnySampler(SequentialSampler{20}), AnyTransform(raw), options);
  CHECK(digests(erased, 1) == digests(typed, 1));
  CHECK(erased.stats().stages.size() == 1);  // RawTensor names no stage of its own
}

TEST_CASE("erased datasets read files, and errors keep their kind and names", "[pipeline][any]") {
  conveyor_test::TempDir t;
  std::filesystem::create_directories(t.path() / "cat");
  for (int i = 0; i < 3; ++i)
    conveyor_test::write_file(t.path() / "cat" / ("c" + std::to_string(i) + ".jpg"),
                              conveyor_test::random_jpeg(40, 30, std::uint64_t(100 + i)));
  conveyor_test::write_text(t.path() / "cat" / "c3.jpg", "not a jpeg");
  const AnyDataset folder(ImageFolder(t.path().string()));
  CHECK(folder.size() == 4);
  CHECK_THAT(folder.name(3), Catch::EndsWith("c3.jpg"));
  AnyPipeline pipe(folder, AnySampler(SequentialSampler{4}), AnyTransform(ImageAugment::train(16)),
                   {.batch_size = 4, .workers = 2});
  try {
    for (const Batch& b : pipe) (void)b;
    FAIL("the damaged file went through");
  } catch (const SampleError& e) {
    CHECK(e.index() == 3);
    CHECK_THAT(e.path(), Catch::EndsWith("c3.jpg"));
    CHECK_THROWS_AS(std::rethrow_if_nested(e), DecodeError);
  }
  // Options are still validated through the erasure.
  CHECK_THROWS_WITH(AnyPipeline(folder, AnySampler(SequentialSampler{4}),
                                AnyTransform(ImageAugment{.normalize = Normalize::imagenet(), .dtype = DType::u8})),
                    Catch::Contains("u8"));
}

TEST_CASE("an erased transform that stages nothing refuses to stage", "[pipeline][any]") {
  const AnyTransform raw(RawTensor{SampleSpec{DType::u8, 1, {8, 0, 0}}});
  CHECK(raw.device_work().placement == DeviceWork::Placement::by_position);
  CHECK(raw.device_work().steps.at(0).name() == std::string("copy samples"));
  const AnyTransform aug(ImageAugment::train(32));
  CHECK(aug.device_work().placement == DeviceWork::Placement::staged);
  CHECK(aug.device_work().steps.at(0).name() == std::string("resample samples"));
  auto ws = raw.make_workspace();
  StagingArea area;
  CHECK_THROWS_WITH(raw.stage({}, {}, area, ws), Catch::Contains("does not stage"));
}

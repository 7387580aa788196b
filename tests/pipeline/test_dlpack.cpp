#include <conveyor/conveyor.hpp>
#include <conveyor/pipeline/dlpack.hpp>

#include <catch2/catch.hpp>

#include "support/data.hpp"
#include "support/datasets.hpp"
#include "support/host_device.hpp"

#include <cstring>
#include <vector>

using namespace conveyor;

#if CONVEYOR_HAS_DLPACK()

TEST_CASE("a DLPack tensor describes the batch and holds it past the loop's advance", "[pipeline][dlpack]") {
  const InMemory data = conveyor_test::jpeg_dataset(24, 41);
  ImageAugment aug = ImageAugment::train(16);
  aug.dtype = DType::bf16;
  aug.layout = Layout::NHWC;
  BatchPipeline pipe(data, SequentialSampler(data.size()), aug, {.batch_size = 4, .workers = 3, .prefetch = 2});
  DLManagedTensor* held = nullptr;
  DLManagedTensor* labels = nullptr;
  std::vector<std::byte> expected;
  for (const Batch& b : pipe) {
    if (b.number() == 1) {
      held = to_dlpack(b);
      labels = to_dlpack(b, BatchTensor::labels);
      expected.assign(static_cast<const std::byte*>(b.images().data),
                      static_cast<const std::byte*>(b.images().data) + b.images().nbytes());
    }
  }  // five more batches went through the other slot meanwhile
  REQUIRE(held != nullptr);
  const DLTensor& t = held->dl_tensor;
  CHECK(t.ndim == 4);
  CHECK(t.shape[0] == 4);
  CHECK(t.shape[1] == 16);
  CHECK(t.shape[3] == 3);
  CHECK(t.strides[3] == 1);
  CHECK(t.strides[0] == 16 * 16 * 3);
  CHECK(t.dtype.code == kDLBfloat);
  CHECK(t.dtype.bits == 16);
  CHECK(t.device.device_type == kDLCPU);
  CHECK(std::memcmp(t.data, expected.data(), expected.size()) == 0);
  CHECK(labels->dl_tensor.dtype.code == kDLInt);
  CHECK(labels->dl_tensor.ndim == 1);
  CHECK(static_cast<const std::int64_t*>(labels->dl_tensor.data)[0] == data.label(4));
  labels->deleter(labels);
  held->deleter(held);  // the slot is free again
  std::size_t n = 0;
  for (const Batch& b : pipe) n += b.size();
  CHECK(n == data.size());
}

// An evaluation loop keeps every batch's labels (`targets.append(labels)`): their tensors are
// copies that hold no slot, so the loop goes through every batch, where it used to stall at batch
// prefetch + 1 with every slot held by labels. On the CPU backend and through a device backend's
// copy (in host memory here).
TEST_CASE("labels kept from every batch hold no slot and keep their values", "[pipeline][dlpack]") {
  const conveyor_test::HostDevice host_device;
  const conveyor_test::IndexDataset data(14);
  const RawTensor raw{SampleSpec{DType::u8, 1, {8, 0, 0}}};
  for (int device : {cpu_device, 0}) {
    INFO("device " << device);
    BatchPipeline pipe(data, SequentialSampler(14), raw, {.batch_size = 2, .workers = 2, .prefetch = 2, .device = device});
    std::vector<DLManagedTensor*> targets;
    for (const Batch& b : pipe) {
      targets.push_back(to_dlpack(b, BatchTensor::labels));
      REQUIRE(pipe.slots_held() == 1);  // the loop's batch; none for the labels kept so far
    }
    REQUIRE(targets.size() == 7);
    for (std::size_t k = 0; k < targets.size(); ++k) {
      const DLTensor& t = targets[k]->dl_tensor;
      CHECK(t.dtype.code == kDLInt);
      CHECK(t.device.device_type == (device == cpu_device ? kDLCPU : kDLCUDA));
      REQUIRE(t.shape[0] == 2);
      for (std::size_t j = 0; j < 2; ++j) CHECK(static_cast<const std::int64_t*>(t.data)[j] == data.label(2 * k + j));
      targets[k]->deleter(targets[k]);
    }
  }
}

// Python's Batch.labels: kept before any stream is known (`Batch::keep_labels`), exported later,
// as often as asked, on the stream asked, from values the host holds: no slot held meanwhile.
TEST_CASE("kept labels hold no slot and copy their values where the batch's labels were, each time asked",
          "[pipeline][dlpack]") {
  const conveyor_test::HostDevice host_device;
  const conveyor_test::IndexDataset data(14);
  const RawTensor raw{SampleSpec{DType::u8, 1, {8, 0, 0}}};
  for (int device : {cpu_device, 0}) {
    INFO("device " << device);
    BatchPipeline pipe(data, RandomSampler(14, {.seed = 3}), raw,
                       {.batch_size = 3, .workers = 2, .prefetch = 2, .device = device});
    std::vector<KeptLabels> kept;
    std::vector<std::vector<std::int64_t>> expected;
    for (const Batch& b : pipe) {
      kept.push_back(b.keep_labels());
      const TensorCopy now = b.copy_labels();
      expected.emplace_back(static_cast<const std::int64_t*>(now.view().data),
                            static_cast<const std::int64_t*>(now.view().data) + b.size());
      REQUIRE(pipe.slots_held() == 1);  // the loop's batch; none for the labels kept so far
    }
    REQUIRE(kept.size() == 5);
    for (std::size_t k = 0; k < kept.size(); ++k)
      for (int twice = 0; twice < 2; ++twice) {
        DLManagedTensor* t = to_dlpack(kept[k].copy());
        CHECK(t->dl_tensor.device.device_type == (device == cpu_device ? kDLCPU : kDLCUDA));
        CHECK(t->dl_tensor.dtype.code == kDLInt);
        REQUIRE(t->dl_tensor.shape[0] == std::int64_t(expected[k].size()));
        const auto* values = static_cast<const std::int64_t*>(t->dl_tensor.data);
        CHECK(std::vector<std::int64_t>(values, values + expected[k].size()) == expected[k]);
        t->deleter(t);
      }
  }
}

#else

TEST_CASE("DLPack tensors of host batches", "[pipeline][dlpack]") {
  CONVEYOR_SKIP("DLPack's header (Debian: libdlpack-dev) was not found");
}

#endif

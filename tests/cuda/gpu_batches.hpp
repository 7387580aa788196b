#pragma once
// The photo corpus as a FileList, batches of a pipeline on either backend copied to the host, and
// the comparison every GPU parity test makes: the CUDA backend's batches against the CPU
// backend's, bit for bit.

#include <conveyor/cuda/all.cuh>

#include "support/temp_dir.hpp"

#include <catch2/catch.hpp>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <vector>

namespace conveyor_test {

/// The corpus' photos as a FileList (0.1 to 13 megapixels, colour and grey, baseline and
/// progressive): large ones cropped to small outputs exceed the kernel's taps and are resampled on
/// the CPU.
inline conveyor::FileList corpus_photos(const std::filesystem::path& data, const conveyor_test::TempDir& t) {
  std::ofstream list(t.path() / "photos.txt");
  for (const auto& e : std::filesystem::directory_iterator(data / "photos"))
    if (e.path().extension() == ".jpg") list << e.path().string() << " 0\n";
  list.close();
  return conveyor::FileList((t.path() / "photos.txt").string());
}

/// A batch's images, labels and indices on the host.
struct HostBatch {
  std::vector<std::byte> images;
  std::vector<std::int64_t> labels, indices;
  bool operator==(const HostBatch&) const = default;
};

/// `b` copied to the host, from the device or the CPU.
inline HostBatch host_copy(const conveyor::Batch& b) {
  HostBatch h;
  h.images.resize(b.images().nbytes());
  h.labels.resize(b.size());
  h.indices.assign(b.indices().begin(), b.indices().end());
  if (b.images().device.kind == conveyor::Device::Kind::cpu) {
    std::memcpy(h.images.data(), b.images().data, h.images.size());
    std::memcpy(h.labels.data(), b.labels().data, b.size() * 8);
  } else {
    CONVEYOR_CUDA_TRY(cudaMemcpy(h.images.data(), b.images().data, h.images.size(), cudaMemcpyDeviceToHost));
    CONVEYOR_CUDA_TRY(cudaMemcpy(h.labels.data(), b.labels().data, b.size() * 8, cudaMemcpyDeviceToHost));
  }
  return h;
}

/// Every batch of `epochs` epochs (a random order, seed 7), copied to the host.
template <class D, class T>
std::vector<HostBatch> run(const D& data, const T& transform, conveyor::PipelineOptions o, int epochs = 2) {
  conveyor::BatchPipeline pipe(data, conveyor::RandomSampler(data.size(), {.seed = 7}), transform, o);
  std::vector<HostBatch> out;
  for (int e = 0; e < epochs; ++e) {
    pipe.set_epoch(e);
    for (const conveyor::Batch& b : pipe) out.push_back(host_copy(b));
  }
  return out;
}

/// The CUDA backend's batches (options `o`) against the CPU backend's, every element equal.
template <class D, class T>
void require_same_as_cpu(const D& data, const T& transform, conveyor::PipelineOptions o, int epochs = 2) {
  conveyor::PipelineOptions cpu = o;
  cpu.device = conveyor::cpu_device;
  cpu.stream = nullptr;
  const auto expected = run(data, transform, cpu, epochs);
  const auto got = run(data, transform, o, epochs);
  REQUIRE(got.size() == expected.size());
  for (std::size_t i = 0; i < got.size(); ++i) {
    INFO("batch " << i);
    REQUIRE(got[i].indices == expected[i].indices);
    REQUIRE(got[i].labels == expected[i].labels);
    REQUIRE(got[i].images == expected[i].images);  // no tolerance
  }
}

}  // namespace conveyor_test

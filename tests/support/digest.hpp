#pragma once
// Digests of delivered batches, for tests that compare two pipelines' batches.

#include <conveyor/core/hash.hpp>
#include <conveyor/pipeline/batch.hpp>

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace conveyor_test {

/// A batch's images, labels and indices, hashed.
inline std::uint64_t digest(const conveyor::Batch& b) {
  using conveyor::fnv1a64;
  std::uint64_t h = fnv1a64({static_cast<const std::byte*>(b.images().data), b.images().nbytes()});
  h = fnv1a64({static_cast<const std::byte*>(b.labels().data), b.labels().nbytes()}, h);
  return fnv1a64(std::as_bytes(b.indices()), h);
}

/// Every batch's digest, for `epochs` epochs.
template <class P>
std::vector<std::uint64_t> digests(P& pipe, int epochs) {
  std::vector<std::uint64_t> out;
  for (int e = 0; e < epochs; ++e) {
    pipe.set_epoch(e);
    for (const conveyor::Batch& b : pipe) out.push_back(digest(b));
  }
  return out;
}

}  // namespace conveyor_test

#pragma once
// Small datasets for pipeline tests: samples that carry their own index, and wrappers that fail,
// stall or count on purpose.

#include <conveyor/core/bytes.hpp>
#include <conveyor/core/concepts.hpp>
#include <conveyor/core/error.hpp>
#include <conveyor/io/in_memory.hpp>
#include <conveyor/pipeline/raw_tensor.hpp>

#include "support/images.hpp"

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

namespace conveyor_test {

/// Sample i is the 8 bytes of i (little-endian) with label (7 i) % 10: the output proves which
/// sample landed where.
class IndexDataset {
 public:
  explicit IndexDataset(std::uint64_t n) : n_(n) {}
  [[nodiscard]] std::uint64_t size() const noexcept { return n_; }
  void read(std::uint64_t i, conveyor::ByteBuffer& out) const {
    out.resize(8);
    std::memcpy(out.data(), &i, 8);
  }
  [[nodiscard]] std::int64_t label(std::uint64_t i) const noexcept { return static_cast<std::int64_t>((7 * i) % 10); }
  [[nodiscard]] std::string name(std::uint64_t i) const { return "index/" + std::to_string(i); }

 private:
  std::uint64_t n_;
};
static_assert(conveyor::Dataset<IndexDataset>);

/// The transform that passes IndexDataset's 8 bytes through.
inline const conveyor::RawTensor index_tensor{conveyor::SampleSpec{conveyor::DType::u8, 1, {8, 0, 0}}};

/// `n` seeded JPEGs of assorted sizes and samplings, as an in-memory dataset.
inline conveyor::InMemory jpeg_dataset(std::uint64_t n, std::uint64_t seed = 1) {
  conveyor::InMemory d;
  for (std::uint64_t i = 0; i < n; ++i) {
    conveyor::CounterRng rng(seed, 0, i, conveyor::RngOp::user);
    const int w = 24 + int(rng.below(200)), h = 24 + int(rng.below(160));
    conveyor::EncodeOptions o;
    o.subsampling = static_cast<conveyor::ChromaSubsampling>(rng.below(3));
    o.progressive = rng.below(4) == 0;
    o.quality = 70 + int(rng.below(25));
    const auto jpeg = random_jpeg(w, h, seed * 1000003 + i, o, rng.below(10) == 0 ? 1 : 3);
    d.add(jpeg, static_cast<std::int64_t>(i % 5));
  }
  return d;
}

/// Wraps a dataset: the listed indices fail (read throws IoError, or yields bytes that are not a
/// JPEG), every read can be delayed, and the largest number of reads in progress at once is kept.
template <class D>
class FaultyDataset {
 public:
  explicit FaultyDataset(D inner) : inner_(std::move(inner)) {}
  std::set<std::uint64_t> unreadable, corrupt;
  std::chrono::microseconds delay{0};
  /// Reads block until this many are in progress together (or 5 s pass): proves parallelism.
  int rendezvous = 0;

  [[nodiscard]] std::uint64_t size() const { return inner_.size(); }
  [[nodiscard]] std::int64_t label(std::uint64_t i) const { return inner_.label(i); }
  [[nodiscard]] std::string name(std::uint64_t i) const { return "faulty/" + std::to_string(i); }
  void read(std::uint64_t i, conveyor::ByteBuffer& out) const {
    const int now = ++state_->active;
    for (int seen = state_->peak.load(); now > seen && !state_->peak.compare_exchange_weak(seen, now);) {
    }
    struct Leave {
      std::atomic<int>& a;
      ~Leave() { --a; }
    } leave{state_->active};
    ++state_->reads;
    if (rendezvous > 0) {
      const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
      while (state_->peak.load() < rendezvous && std::chrono::steady_clock::now() < deadline)
        std::this_thread::sleep_for(std::chrono::microseconds(100));
    }
    if (delay.count() > 0) std::this_thread::sleep_for(delay);
    if (unreadable.count(i)) throw conveyor::IoError("cannot open file: injected fault", name(i));
    inner_.read(i, out);
    if (corrupt.count(i)) out.assign(std::as_bytes(std::span("not a jpeg at all")));
  }
  [[nodiscard]] int peak_concurrency() const { return state_->peak.load(); }
  [[nodiscard]] std::uint64_t reads() const { return state_->reads.load(); }

 private:
  struct State {
    std::atomic<int> active{0}, peak{0};
    std::atomic<std::uint64_t> reads{0};
  };
  D inner_;
  std::shared_ptr<State> state_ = std::make_shared<State>();
};

}  // namespace conveyor_test

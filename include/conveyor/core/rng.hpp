#pragma once
/// @file
/// Counter-based random numbers. Every random decision conveyor makes is a pure function of
/// (seed, epoch, dataset index, operation): no shared or per-thread RNG state, so batches are the
/// same whatever the number of workers, the thread timing or the backend, and a run can resume
/// anywhere without replaying what came before.

#include <conveyor/config.hpp>

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>

namespace conveyor {
inline namespace v0 {

/// Philox4x32-10 (Salmon et al., SC'11): 4 x 32 random bits from a 128-bit counter and a 64-bit key.
/// Matches Random123's known-answer vectors.
[[nodiscard]] constexpr std::array<std::uint32_t, 4> philox4x32_10(std::array<std::uint32_t, 4> ctr,
                                                                             std::array<std::uint32_t, 2> key) noexcept {
  constexpr std::uint32_t m0 = 0xD2511F53u, m1 = 0xCD9E8D57u;
  constexpr std::uint32_t w0 = 0x9E3779B9u, w1 = 0xBB67AE85u;
  for (int round = 0; round < 10; ++round) {
    const std::uint64_t p0 = std::uint64_t{m0} * ctr[0];
    const std::uint64_t p1 = std::uint64_t{m1} * ctr[2];
    ctr = {static_cast<std::uint32_t>(p1 >> 32) ^ ctr[1] ^ key[0], static_cast<std::uint32_t>(p1),
           static_cast<std::uint32_t>(p0 >> 32) ^ ctr[3] ^ key[1], static_cast<std::uint32_t>(p0)};
    key[0] += w0;
    key[1] += w1;
  }
  return ctr;
}

/// What a random stream is for. Distinct operations on one sample draw independent streams, so
/// adding an operation never changes the draws of another. `pixel_transform` is the first of
/// 32,768: ImageAugment's pixel transform at position k (in order, nested ones counted) draws from
/// `pixel_transform + k`.
enum class RngOp : std::uint32_t {
  sampler = 1, crop = 2, flip = 3, replace = 4, sampler_window = 5, decoder = 6, batch_transform = 7, interpolation = 8, user = 1024, pixel_transform = 0x8000
};

/// A stream of random numbers keyed by (seed, epoch, index, op). Cheap to create; not shared.
///
/// The key is the seed; the counter holds a 32-bit block number, the epoch (32 bits), the index
/// (48 bits) and the op (16 bits), so one stream yields 2^32 blocks of 128 bits.
class CounterRng {
 public:
  constexpr CounterRng(std::uint64_t seed, std::uint64_t epoch, std::uint64_t index, RngOp op) noexcept
      : key_{static_cast<std::uint32_t>(seed), static_cast<std::uint32_t>(seed >> 32)},
        ctr_{0, static_cast<std::uint32_t>(epoch), static_cast<std::uint32_t>(index),
             static_cast<std::uint32_t>((index >> 32) & 0xFFFFu) | (static_cast<std::uint32_t>(op) << 16)} {}

  /// The next 32 random bits.
  constexpr std::uint32_t next_u32() noexcept {
    if (used_ == 4) refill();
    return block_[used_++];
  }
  /// The next 64 random bits.
  constexpr std::uint64_t next_u64() noexcept {
    const std::uint64_t hi = next_u32();
    return (hi << 32) | next_u32();
  }
  /// Uniform in [0, 1) with 53 random bits.
  constexpr double uniform() noexcept { return static_cast<double>(next_u64() >> 11) * 0x1.0p-53; }
  /// Uniform in [lo, hi).
  constexpr double uniform(double lo, double hi) noexcept { return lo + (hi - lo) * uniform(); }
  /// Uniform integer in [0, n), unbiased: draws below 2^64 mod n are rejected. `n` must be > 0.
  constexpr std::uint64_t below(std::uint64_t n) noexcept {
    const std::uint64_t threshold = (0 - n) % n;
    for (;;) {
      const std::uint64_t x = next_u64();
      if (x >= threshold) return x % n;
    }
  }

 private:
  constexpr void refill() noexcept {
    block_ = philox4x32_10(ctr_, key_);
    ctr_[0] += 1;  // the block number; 2^32 blocks before it wraps
    used_ = 0;
  }

  std::array<std::uint32_t, 2> key_;
  std::array<std::uint32_t, 4> ctr_;
  std::array<std::uint32_t, 4> block_{};
  unsigned used_ = 4;
};

/// An index below `count` with torch.multinomial(torch.tensor(p), 1)'s distribution: k with
/// probability p[k] / sum(p), every one alike when `p` is empty (one unbiased integer); a weighted
/// pick is the first index of positive weight whose cumulative normalised weight exceeds a uniform
/// number in [0, 1). RandomChoice's and the batch transforms' pick.
[[nodiscard]] inline std::size_t pick_index(CounterRng& rng, std::size_t count, std::span<const double> p) noexcept {
  if (p.empty()) return static_cast<std::size_t>(rng.below(count));
  double total = 0.0;
  for (const double w : p) total += w;
  const double u = rng.uniform();
  double cumulative = 0.0;
  std::size_t last = 0;
  for (std::size_t k = 0; k < p.size(); ++k) {
    if (p[k] <= 0.0) continue;
    cumulative += p[k] / total;
    if (u < cumulative) return k;
    last = k;
  }
  return last;  // the normalised weights summed, rounded, to no more than u
}

}  // namespace v0
}  // namespace conveyor

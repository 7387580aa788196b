#pragma once
/// @file
/// Placing device-bound samples in the data section of a slot's pinned arena (`SlotLayout`).
/// Decoded regions vary in size, so each sample allocates what it needs, but only if what is left
/// still covers a reserved minimum for every sample not yet placed: a sample that does not fit can
/// always be finished on the CPU into its reserve, so a batch never fails for lack of room.
///
/// A sample's room is claimed per batch position and is final only when the sample is done
/// (`ArenaClaim`): a decode that fails after its claim (a JPEG whose scan data is cut) gives the
/// room back, and the replacement prepared at the same position claims in its place rather than
/// beside it. A position that fails in a block it cannot give back (others were placed after it)
/// keeps that block, at least a reserve long, for its replacement, so the reserves stay covered
/// whatever fails, and the allocator never hands out a byte past its capacity: it throws first.

#include <conveyor/config.hpp>
#include <conveyor/core/error.hpp>
#include <conveyor/ops/pixel/op.hpp>
#include <conveyor/ops/plan.hpp>

#include <algorithm>
#include <cstddef>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace conveyor {
inline namespace v0 {

/// The data section's allocator, shared by the workers filling one slot (thread-safe). Each batch
/// position asks through its `ArenaClaim`.
///
/// Invariant: `top + uncovered * reserve <= capacity`, where `top` is the end of the highest
/// block handed out and `uncovered` counts the positions neither done nor holding a block of
/// their own (which is at least a reserve long and so covers theirs). A block from the middle
/// that a position gives back is kept in a free list for later, smaller requests.
class ArenaAllocator {
 public:
  static constexpr std::size_t alignment = 16;

  /// Starts a batch of `samples` in `capacity` bytes, each guaranteed `reserve` bytes. Allocates
  /// only when a batch has more positions than any before.
  /// @throws Error when the reserves alone do not fit.
  void reset(std::size_t capacity, std::size_t samples, std::size_t reserve) {
    std::lock_guard lock(m_);
    capacity_ = capacity;
    reserve_ = align(reserve);
    if (samples * reserve_ > capacity_)
      throw Error("ArenaAllocator: " + std::to_string(samples) + " reserves of " + std::to_string(reserve_) +
                  " bytes do not fit in " + std::to_string(capacity_));
    top_ = 0;
    uncovered_ = samples;
    positions_.assign(samples, Position{});
    free_.clear();
    free_.reserve(2 * samples + 1);
  }

  /// Bytes from the start of the section to the end of the last block in use: what to upload.
  [[nodiscard]] std::size_t used() const {
    std::lock_guard lock(m_);
    return top_;
  }

 private:
  friend class ArenaClaim;
  struct Block {
    std::size_t at = 0, size = 0;
    [[nodiscard]] std::size_t end() const noexcept { return at + size; }
  };
  enum class Placed : unsigned char { nothing, own, lent, elsewhere };
  struct Position {
    Block own;   // in the section's main run, >= a reserve: covers the position's reserve
    Block lent;  // a free block the sample sits in, while it is not done
    std::size_t used = 0;  // bytes of `own` the sample uses
    Placed placed = Placed::nothing;
    bool done = false;
  };

  static constexpr std::size_t align(std::size_t n) noexcept { return (n + alignment - 1) / alignment * alignment; }

  /// Room for `bytes` of the sample at `pos`, if the other positions' reserves stay covered.
  std::optional<std::size_t> try_allocate(std::size_t pos, std::size_t bytes) {
    std::lock_guard lock(m_);
    Position& p = open(pos);
    const std::size_t need = align(std::max<std::size_t>(bytes, 1));
    if (p.own.size >= need) return place_own(p, need);
    if (const std::optional<std::size_t> at = lend(p, need)) return at;
    const std::size_t size = std::max(need, reserve_);
    const std::size_t others = uncovered_ - (p.own.size ? 0 : 1);
    if (top_ + size + others * reserve_ > capacity_) return std::nullopt;
    take_own(p, size);
    return place_own(p, need);
  }

  /// The sample's reserve: always there, by the invariant.
  std::size_t allocate_reserve(std::size_t pos) {
    std::lock_guard lock(m_);
    Position& p = open(pos);
    if (p.own.size) return place_own(p, reserve_);
    if (const std::optional<std::size_t> at = lend(p, reserve_)) return *at;
    if (top_ + reserve_ > capacity_)
      throw Error("ArenaAllocator: position " + std::to_string(pos) + "'s reserve of " + std::to_string(reserve_) +
                  " bytes at " + std::to_string(top_) + " would pass the section's end at " + std::to_string(capacity_));
    take_own(p, reserve_);
    return place_own(p, reserve_);
  }

  /// The sample is placed outside the section (a device decoder's place).
  void forgo(std::size_t pos) {
    std::lock_guard lock(m_);
    open(pos).placed = Placed::elsewhere;
  }

  /// The sample is done: its room is final, and what it does not use goes back.
  void commit(std::size_t pos) noexcept {
    std::lock_guard lock(m_);
    if (pos >= positions_.size() || positions_[pos].done) return;  // refused when it asked
    Position& p = positions_[pos];
    if (p.placed == Placed::own) {
      give_back({p.own.at + p.used, p.own.size - p.used});
    } else if (p.own.size) {
      give_back(p.own);
    } else {
      --uncovered_;
    }
    p = Position{};
    p.done = true;
  }

  /// The sample failed: the room it was given goes back, except a block of its own that others
  /// were placed after, which it keeps (its reserve's cover) for its replacement.
  void abandon(std::size_t pos) noexcept {
    std::lock_guard lock(m_);
    if (pos >= positions_.size() || positions_[pos].done) return;  // refused when it asked
    Position& p = positions_[pos];
    if (p.placed == Placed::lent) give_back(p.lent);
    p.lent = {};
    p.used = 0;
    p.placed = Placed::nothing;
    if (p.own.size && p.own.end() == top_) {
      give_back(std::exchange(p.own, Block{}));
      ++uncovered_;
    }
  }

  Position& open(std::size_t pos) {
    if (pos >= positions_.size() || positions_[pos].done)
      throw Error("ArenaAllocator: position " + std::to_string(pos) + " of a batch of " +
                  std::to_string(positions_.size()) + " is " + (pos >= positions_.size() ? "outside it" : "done"));
    Position& p = positions_[pos];
    if (p.placed == Placed::lent) give_back(p.lent);  // a second request replaces the first
    p.lent = {};
    p.placed = Placed::nothing;
    return p;
  }

  std::size_t place_own(Position& p, std::size_t bytes) noexcept {
    p.placed = Placed::own;
    p.used = bytes;
    return p.own.at;
  }

  /// A free block's first `need` bytes, if one is long enough. The position stays uncovered: a
  /// free block covers no reserve.
  std::optional<std::size_t> lend(Position& p, std::size_t need) {
    for (std::size_t i = 0; i < free_.size(); ++i) {
      Block& b = free_[i];
      if (b.size < need) continue;
      p.lent = {b.at, need};
      p.placed = Placed::lent;
      b.at += need;
      b.size -= need;
      if (b.size == 0) free_.erase(free_.begin() + static_cast<std::ptrdiff_t>(i));
      return p.lent.at;
    }
    return std::nullopt;
  }

  /// A new block of `size` at the top for `p`, which its old one (if any) goes back for.
  void take_own(Position& p, std::size_t size) {
    const Block old = std::exchange(p.own, Block{top_, size});
    top_ += size;
    if (old.size)
      give_back(old);
    else
      --uncovered_;
  }

  /// Returns a block: merged with the free blocks it touches, then under the top (which comes
  /// down over it) or kept in the free list. Merged, free blocks lie between blocks in use, of
  /// which each position has at most two: the list never outgrows what `reset` reserved.
  void give_back(Block b) noexcept {
    if (b.size == 0) return;
    for (std::size_t i = 0; i < free_.size();) {
      if (free_[i].end() == b.at || b.end() == free_[i].at) {
        b = {std::min(b.at, free_[i].at), b.size + free_[i].size};
        free_[i] = free_.back();
        free_.pop_back();
      } else {
        ++i;
      }
    }
    if (b.end() == top_)
      top_ = b.at;
    else
      free_.push_back(b);
  }

  mutable std::mutex m_;
  std::size_t capacity_ = 0, reserve_ = 0, top_ = 0, uncovered_ = 0;
  std::vector<Position> positions_;
  std::vector<Block> free_;
};

/// One batch position's room in the data section, for the sample being prepared there: each
/// request replaces the last, `commit` makes the last final, and a claim destroyed without it
/// (the sample failed) gives its room back.
class ArenaClaim {
 public:
  ArenaClaim(ArenaAllocator& allocator, std::size_t pos) noexcept : a_(&allocator), pos_(pos) {}
  ArenaClaim(const ArenaClaim&) = delete;
  ArenaClaim& operator=(const ArenaClaim&) = delete;
  ~ArenaClaim() {
    if (!committed_) a_->abandon(pos_);
  }

  /// Room for `bytes`, if what is left still covers the other samples' reserves; its offset.
  [[nodiscard]] std::optional<std::size_t> try_allocate(std::size_t bytes) { return a_->try_allocate(pos_, bytes); }
  /// The sample's reserve (at least `DeviceWork::reserve` bytes): always available.
  [[nodiscard]] std::size_t allocate_reserve() { return a_->allocate_reserve(pos_); }
  /// The sample is placed elsewhere (a device decoder's place): its reserve goes to the others.
  void forgo() { a_->forgo(pos_); }
  /// The sample is done (the pipeline calls this).
  void commit() noexcept {
    committed_ = true;
    a_->commit(pos_);
  }

 private:
  ArenaAllocator* a_;
  std::size_t pos_;
  bool committed_ = false;
};

/// Where a device-bound sample's bytes go: the data section of the slot's pinned arena and the
/// sample's claim on it (`DeviceTransform::stage`).
struct StagingArea {
  std::byte* data = nullptr;
  ArenaClaim* claim = nullptr;
  /// Set when the sample drew the device's JPEG decoder (device/jpeg_offload.hpp): the transform
  /// may stage the file there instead of decoding it.
  const struct DeviceJpegPlace* device_jpeg = nullptr;
  /// The sample's entry in the slot's program table, when its device work has one
  /// (`DeviceWork::programs`): the transform writes the sample's pixel program there (its
  /// `DeviceWork::copies` programs, one per copy, from there on).
  ops::pixel::PixelProgram* program = nullptr;
  /// The sample's entries in the slot's plan table (`DeviceWork::copies` of them): the pipeline
  /// writes entry 0 from what `stage` returns; a multi-view transform writes its other copies'.
  std::span<ops::SamplePlan> plans{};
};

}  // namespace v0
}  // namespace conveyor

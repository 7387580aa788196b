#pragma once
/// @file
/// The bookkeeping of a device step that takes a batch in parts (`DeviceStep::takes_parts`): the
/// positions of each slot's batch it has handled, and those it holds back until enough wait for
/// one call. A batch is named by its fill (`StepContext::fill`), so a slot refilled, or a batch
/// that failed before its submit, starts clean.

#include <conveyor/config.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace conveyor {
inline namespace v0 {

class BatchParts {
 public:
  BatchParts(std::size_t slots, std::size_t batch) : slots_(slots) {
    for (Slot& s : slots_) {
      s.handled.resize(batch);
      s.waiting.reserve(batch);
      s.now.reserve(batch);
    }
  }

  /// Adds `positions` of `slot`'s batch `fill` to those waiting; returns them all, marked handled,
  /// once at least `min_call` wait, else nothing.
  std::span<const std::size_t> part(std::size_t slot, std::uint64_t fill, std::span<const std::size_t> positions,
                                    std::size_t min_call) {
    Slot& s = begin(slot, fill);
    s.waiting.insert(s.waiting.end(), positions.begin(), positions.end());
    if (s.waiting.empty() || s.waiting.size() < min_call) return {};
    s.now.swap(s.waiting);
    s.waiting.clear();
    for (const std::size_t pos : s.now) s.handled[pos] = 1;
    return s.now;
  }

  /// Every position of [0, count) of `slot`'s batch `fill` not handled yet (the waiting ones among
  /// them), marked handled.
  std::span<const std::size_t> rest(std::size_t slot, std::uint64_t fill, std::size_t count) {
    Slot& s = begin(slot, fill);
    s.now.clear();
    for (std::size_t pos = 0; pos < count && pos < s.handled.size(); ++pos)
      if (!s.handled[pos]) {
        s.handled[pos] = 1;
        s.now.push_back(pos);
      }
    s.waiting.clear();
    return s.now;
  }

 private:
  struct Slot {
    std::uint64_t fill = ~std::uint64_t{0};  // no batch yet
    std::vector<unsigned char> handled;      // per position
    std::vector<std::size_t> waiting, now;
  };

  Slot& begin(std::size_t slot, std::uint64_t fill) {
    Slot& s = slots_[slot];
    if (s.fill != fill) {
      s.fill = fill;
      std::fill(s.handled.begin(), s.handled.end(), 0);
      s.waiting.clear();
    }
    return s;
  }

  std::vector<Slot> slots_;
};

}  // namespace v0
}  // namespace conveyor

#pragma once
/// @file
/// `MixSamples`: a batch transform's step on a device. It runs after the transform's steps, on the
/// augment stream, over the batch's output: each sample mixed with its partner as the batch's draw
/// says (`SlotLayout::mix`, which the worker that finished the batch wrote into the pinned arena
/// with the soft targets), in place, equal to the CPU backend's `mix_sample` / `mix_pair`. The
/// draw is read on the host when the step is queued: it travels as the kernel's argument.

#include <conveyor/config.hpp>
#include <conveyor/batch/batch_mix.hpp>

namespace conveyor {
inline namespace v0 {

struct MixSamples {
  static constexpr const char* name = "mix samples";
  MixGeometry geometry{};
};

}  // namespace v0
}  // namespace conveyor

#pragma once
/// @file
/// FNV-1a, 64-bit: a stable checksum of batch bytes for comparing runs, backends and worker
/// counts (`conveyor-bench --checksum`). Not for security.

#include <conveyor/config.hpp>

#include <cstddef>
#include <cstdint>
#include <span>

namespace conveyor {
inline namespace v0 {

/// FNV-1a's 64-bit offset basis: the hash of nothing.
inline constexpr std::uint64_t fnv1a64_basis = 0xcbf29ce484222325ull;

/// Continues an FNV-1a hash `h` over `bytes`.
[[nodiscard]] inline std::uint64_t fnv1a64(std::span<const std::byte> bytes, std::uint64_t h = fnv1a64_basis) noexcept {
  for (std::byte b : bytes) {
    h ^= std::to_integer<std::uint64_t>(b);
    h *= 0x100000001b3ull;
  }
  return h;
}

}  // namespace v0
}  // namespace conveyor

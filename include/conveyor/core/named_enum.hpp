#pragma once
/// @file
/// Enums spelled by name: each declares its names once, as `enum_names(E)` beside it (found by
/// argument-dependent lookup), in the enum's order; the name of a value, the parser with its
/// error and the Python bindings' choices all derive from that one list.

#include <conveyor/core/error.hpp>

#include <algorithm>
#include <concepts>
#include <cstddef>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>

namespace conveyor {
inline namespace v0 {

/// An enum whose values `enum_names(E{})` spells, in order.
template <class E>
concept NamedEnum = std::is_enum_v<E> && requires(E e) {
  { enum_names(e) } -> std::convertible_to<std::span<const char* const>>;
};

/// The name of `e` ("?" for a value outside the enum's list).
template <NamedEnum E>
[[nodiscard]] constexpr const char* enum_name(E e) noexcept {
  const std::span<const char* const> names = enum_names(e);
  const auto k = static_cast<std::size_t>(e);
  return k < names.size() ? names[k] : "?";
}

/// "'a', 'b' or 'c'": the choices, as an error lists them.
[[nodiscard]] inline std::string listed_names(std::span<const char* const> names) {
  std::string listed;
  for (std::size_t k = 0; k < names.size(); ++k)
    listed += (k == 0 ? "'" : k + 1 < names.size() ? ", '" : " or '") + std::string(names[k]) + "'";
  return listed;
}

/// The index of `name` in `names`. @throws ConfigError "`what` must be 'a' or 'b', got 'c'".
[[nodiscard]] inline std::size_t named_choice(std::string_view what, std::string_view name,
                                              std::span<const char* const> names) {
  for (std::size_t k = 0; k < names.size(); ++k)
    if (name == names[k]) return k;
  throw ConfigError(std::string(what) + " must be " + listed_names(names) + ", got '" + std::string(name) + "'");
}

/// The value `name` spells, of the first `count` (all by default).
/// @throws ConfigError naming `what` and the choices for another name.
template <NamedEnum E>
[[nodiscard]] E parse_enum(std::string_view what, std::string_view name, std::size_t count = std::size_t(-1)) {
  const std::span<const char* const> names = enum_names(E{});
  return static_cast<E>(named_choice(what, name, names.first(std::min(count, names.size()))));
}

}  // namespace v0
}  // namespace conveyor

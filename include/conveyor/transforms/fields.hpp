#pragma once
/// @file
/// A transform's arguments, declared once: the aggregate's fields are its arguments, in
/// torchvision's order, with their types and defaults, and `fields` names them in the same order
/// (`required` marks those torchvision takes without a default). Everything else that speaks of a
/// transform's arguments is derived from the pair through `for_each_field`: the Python classes and
/// their stubs, the conversion of Python's values, the fuzzer's random transforms.
///
/// An aggregate of more options than `fields` names (ImageAugmentOptions, PipelineOptions) lists
/// them in `options()`, each a name and its member, and `for_each_option` walks them alike.
///
///   struct RandomPosterize {
///     static constexpr const char* name = "RandomPosterize";
///     static constexpr const char* summary = "Keeps the `bits` high bits of every value with probability `p`.";
///     static constexpr FieldName fields[] = {required("bits"), "p"};
///     std::optional<int> bits{};
///     double p = 0.5;
///     ...
///   };

#include <conveyor/config.hpp>

#include <array>
#include <cstddef>
#include <iterator>
#include <tuple>
#include <type_traits>
#include <utility>

namespace conveyor {
inline namespace v0 {

/// The name of a transform's field, torchvision's argument name; `required`: torchvision's
/// constructor has no default for it (the field is an empty optional until given).
struct FieldName {
  constexpr FieldName(const char* field, bool is_required = false) noexcept  // NOLINT: `"p"` reads as a name
      : name(field), required(is_required) {}
  const char* name;
  bool required;
};

/// A field without a default.
[[nodiscard]] constexpr FieldName required(const char* field) noexcept { return {field, true}; }

namespace detail {

/// Converts to any field's type, in unevaluated operands only: counting an aggregate's fields
/// needs no value of one.
struct AnyField {
  template <class U>
  operator U() const noexcept;  // NOLINT: implicit by design
};

template <class T, std::size_t... I>
constexpr bool takes_fields(std::index_sequence<I...>) {
  return requires { T{(void(I), AnyField{})...}; };
}

/// How many fields the aggregate `T` has (counted up to `Max`).
template <class T, std::size_t Max = 11, std::size_t N = 0>
constexpr std::size_t field_count() {
  if constexpr (N < Max && takes_fields<T>(std::make_index_sequence<N + 1>{})) return field_count<T, Max, N + 1>();
  else return N;
}

}  // namespace detail

/// A transform whose fields are all named.
template <class T>
concept NamedFields = requires { T::fields; } && std::size(T::fields) == detail::field_count<T>();

/// Calls `f(name, field)` for each field of the transform `t` (const or not), in declaration order.
template <class T, class F>
  requires NamedFields<std::remove_cvref_t<T>>
constexpr void for_each_field(T& t, F&& f) {
  constexpr std::size_t n = std::size(std::remove_cvref_t<T>::fields);
  static_assert(n <= 10, "a transform of at most 10 fields");
  constexpr const auto& names = std::remove_cvref_t<T>::fields;
  if constexpr (n == 1) { auto& [a] = t; f(names[0], a); }
  else if constexpr (n == 2) { auto& [a, b] = t; f(names[0], a), f(names[1], b); }
  else if constexpr (n == 3) { auto& [a, b, c] = t; f(names[0], a), f(names[1], b), f(names[2], c); }
  else if constexpr (n == 4) { auto& [a, b, c, d] = t; f(names[0], a), f(names[1], b), f(names[2], c), f(names[3], d); }
  else if constexpr (n == 5) {
    auto& [a, b, c, d, e] = t;
    f(names[0], a), f(names[1], b), f(names[2], c), f(names[3], d), f(names[4], e);
  } else if constexpr (n == 6) {
    auto& [a, b, c, d, e, g] = t;
    f(names[0], a), f(names[1], b), f(names[2], c), f(names[3], d), f(names[4], e), f(names[5], g);
  } else if constexpr (n == 7) {
    auto& [a, b, c, d, e, g, h] = t;
    f(names[0], a), f(names[1], b), f(names[2], c), f(names[3], d), f(names[4], e), f(names[5], g), f(names[6], h);
  } else if constexpr (n == 8) {
    auto& [a, b, c, d, e, g, h, i] = t;
    f(names[0], a), f(names[1], b), f(names[2], c), f(names[3], d), f(names[4], e), f(names[5], g), f(names[6], h),
        f(names[7], i);
  } else if constexpr (n == 9) {
    auto& [a, b, c, d, e, g, h, i, j] = t;
    f(names[0], a), f(names[1], b), f(names[2], c), f(names[3], d), f(names[4], e), f(names[5], g), f(names[6], h),
        f(names[7], i), f(names[8], j);
  } else if constexpr (n == 10) {
    auto& [a, b, c, d, e, g, h, i, j, k] = t;
    f(names[0], a), f(names[1], b), f(names[2], c), f(names[3], d), f(names[4], e), f(names[5], g), f(names[6], h),
        f(names[7], i), f(names[8], j), f(names[9], k);
  }
}

/// One of the aggregate `T`'s options: its name where a binding takes it by keyword, and its member.
template <class T, class M>
struct Option {
  using Member = M T::*;  // a member declared `M T::*member` nvcc's host code parenthesises, which GCC warns of
  const char* name;
  Member member;
};

/// `Option` from its name and member: `option("seed", &PipelineOptions::seed)`.
template <class T, class M>
[[nodiscard]] constexpr Option<T, M> option(const char* name, M T::*member) noexcept {
  return {name, member};
}

/// An aggregate whose `options()` names every field, each once (a field left out would be an
/// option no binding takes).
template <class T>
concept DeclaredOptions = requires { T::options(); } &&
                          std::tuple_size_v<decltype(T::options())> == detail::field_count<T, 40>();

/// Calls `f(name, field)` for each declared option of `t` (const or not), in `options()`' order.
template <class T, class F>
  requires DeclaredOptions<std::remove_cvref_t<T>>
constexpr void for_each_option(T& t, F&& f) {
  std::apply([&](const auto&... o) { (f(o.name, t.*o.member), ...); }, std::remove_cvref_t<T>::options());
}

}  // namespace v0
}  // namespace conveyor

#pragma once
// Declared options (`options()`: ImageAugmentOptions, PipelineOptions, PreprocessorOptions) from
// keyword arguments: each read by its name with `Field<T>` (transform_fields.hpp; the types only
// options have are below), a keyword none declares refused. `describe` gives the same options to
// Python as (name, annotation, default), from which the package's tests compare its classes.

#include "transform_fields.hpp"

#include <conveyor/batch/batch_transform.hpp>
#include <conveyor/core/named_enum.hpp>
#include <conveyor/core/tensor.hpp>
#include <conveyor/io/decode_options.hpp>
#include <conveyor/ops/augment.hpp>
#include <conveyor/pipeline/options.hpp>
#include <conveyor/transforms/fields.hpp>

#include <algorithm>
#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

namespace conveyor_ext {

/// An unsigned integer (sizes, counts, seeds): an int in its range, not a bool or a float.
std::uint64_t unsigned_integer(const Where& w, nb::handle value, std::uint64_t highest);

template <class U>
  requires(std::is_integral_v<U> && std::is_unsigned_v<U> && !std::is_same_v<U, bool>)
struct Field<U> {
  static constexpr const char* annotation = "int";
  static U from(const Where& w, nb::handle v) { return static_cast<U>(unsigned_integer(w, v, U(-1))); }
  static nb::object value(U v) { return nb::int_(v); }
};

template <>
struct Field<std::string> {
  static constexpr const char* annotation = "str";
  static std::string from(const Where& w, nb::handle v) {
    if (!nb::isinstance<nb::str>(v)) type_error(w, "a str", v);
    return nb::cast<std::string>(v);
  }
  static nb::object value(const std::string& v) { return nb::str(v.c_str(), v.size()); }
};

/// torchvision's size: an int (a square; a resize's shorter side) or (height, width).
template <>
struct Field<conveyor::Size> {
  static constexpr const char* annotation = "Union[int, Tuple[int, int]]";
  static conveyor::Size from(const Where& w, nb::handle v);
  static nb::object value(const conveyor::Size& v);
};

/// torchvision's padding: an int, (left/right, top/bottom) or (left, top, right, bottom).
template <>
struct Field<std::array<int, 4>> {
  static constexpr const char* annotation = "Union[int, Sequence[int]]";
  static std::array<int, 4> from(const Where& w, nb::handle v);
  static nb::object value(const std::array<int, 4>& v);
};

/// One number per channel (a normalisation's mean or std).
template <>
struct Field<std::array<float, 3>> {
  static constexpr const char* annotation = "Tuple[float, float, float]";
  static std::array<float, 3> from(const Where& w, nb::handle v);
  static nb::object value(const std::array<float, 3>& v);
};

/// The consumer's CUDA stream, as an int (a cudaStream_t; 0 the legacy default stream).
template <>
struct Field<CUstream_st*> {
  static constexpr const char* annotation = "int";
  static CUstream_st* from(const Where& w, nb::handle v) {
    return reinterpret_cast<CUstream_st*>(static_cast<std::uintptr_t>(unsigned_integer(w, v, UINTPTR_MAX)));
  }
  static nb::object value(CUstream_st* v) { return nb::int_(reinterpret_cast<std::uintptr_t>(v)); }
};

/// MixUp, CutMix or a choice of them, as the package's batch_ops gives them: (ops, p).
template <>
struct Field<conveyor::BatchTransform> {
  static constexpr const char* annotation = "Tuple[Sequence[Tuple[str, Sequence[float]]], Sequence[float]]";
  static conveyor::BatchTransform from(const Where& w, nb::handle v);
  static nb::object value(const conveyor::BatchTransform&) { return nb::none(); }
};

/// The index of `value` in `names`: a str spelled exactly as one of them (a ConfigError lists them).
std::size_t exact_choice(const Where& w, nb::handle value, std::span<const char* const> names);

/// An enum by the names C++ declares for it (`enum_names`), taken spelled exactly, of its first `Count`.
template <conveyor::NamedEnum E, std::size_t Count = std::size_t(-1)>
struct NamedEnumField {
  static constexpr const char* annotation = "str";
  static constexpr std::span<const char* const> names() {
    const std::span<const char* const> all = enum_names(E{});
    return all.first(std::min(Count, all.size()));
  }
  static E from(const Where& w, nb::handle v) { return static_cast<E>(exact_choice(w, v, names())); }
  static nb::object value(E v) { return nb::str(conveyor::enum_name(v)); }
};

template <>
struct Field<conveyor::DType> : NamedEnumField<conveyor::DType, conveyor::image_dtype_count> {};
template <>
struct Field<conveyor::Layout> : NamedEnumField<conveyor::Layout> {};
template <>
struct Field<conveyor::SixteenBit> : NamedEnumField<conveyor::SixteenBit> {};
template <>
struct Field<conveyor::OnError> : NamedEnumField<conveyor::OnError> {};
template <>
struct Field<conveyor::JpegDecode> : NamedEnumField<conveyor::JpegDecode> {};
template <>
struct Field<conveyor::ChromaUpsampling> : NamedEnumField<conveyor::ChromaUpsampling> {};

/// How a Loader samples its dataset, beside its pipeline's options: `distributed` "" (no), "env"
/// (rank and world size from the launcher's variables) or "explicit" (`rank`, `world_size`).
struct LoaderSampling {
  bool shuffle = false;
  std::string distributed{};
  std::optional<std::uint64_t> rank{};
  std::optional<std::uint64_t> world_size{};
  std::uint64_t shard_window = 0;

  static constexpr auto options() {
    using O = LoaderSampling;
    return std::tuple{conveyor::option("shuffle", &O::shuffle), conveyor::option("distributed", &O::distributed),
                      conveyor::option("rank", &O::rank), conveyor::option("world_size", &O::world_size),
                      conveyor::option("shard_window", &O::shard_window)};
  }
};

/// Keyword arguments read as declared options: `read` each aggregate they set (an option that is
/// itself an aggregate of declared options is read from the same keywords), then `finish`.
class OptionReader {
 public:
  OptionReader(const char* who, nb::dict given) : who_(who), given_(std::move(given)) {}

  template <class T>
    requires conveyor::DeclaredOptions<T>
  T& read(T& t) {
    conveyor::for_each_option(t, [&](const char* name, auto& field) {
      using Type = std::remove_cvref_t<decltype(field)>;
      if constexpr (conveyor::DeclaredOptions<Type>) {
        read(field);
      } else {
        known_.push_back(name);
        if (given_.contains(name)) field = Field<Type>::from({who_, name}, given_[name]);
      }
    });
    return t;
  }

  /// @throws TypeError for a keyword no aggregate read declares.
  void finish() const;

 private:
  const char* who_;
  nb::dict given_;
  std::vector<std::string> known_;
};

/// Appends `T`'s options to `out` as (name, annotation, default), those of an option that is an
/// aggregate of declared options in its place.
template <class T>
  requires conveyor::DeclaredOptions<T>
void describe(nb::list& out, const T& defaults = T{}) {
  conveyor::for_each_option(defaults, [&](const char* name, const auto& field) {
    using Type = std::remove_cvref_t<decltype(field)>;
    if constexpr (conveyor::DeclaredOptions<Type>) describe(out, field);
    else out.append(nb::make_tuple(name, std::string(Field<Type>::annotation), Field<Type>::value(field)));
  });
}

/// Adds to `out` each of `T`'s options that takes one of named choices, as name: (choices...), for
/// the Python classes' own checks and documentation.
template <class T>
  requires conveyor::DeclaredOptions<T>
void describe_choices(nb::dict& out, const T& defaults = T{}) {
  conveyor::for_each_option(defaults, [&](const char* name, const auto& field) {
    using Type = std::remove_cvref_t<decltype(field)>;
    if constexpr (conveyor::DeclaredOptions<Type>) {
      describe_choices(out, field);
    } else if constexpr (requires { Field<Type>::names(); }) {
      nb::list names;
      for (const char* n : Field<Type>::names()) names.append(nb::str(n));
      out[name] = nb::tuple(names);
    }
  });
}

}  // namespace conveyor_ext

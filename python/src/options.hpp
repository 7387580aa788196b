#pragma once
// Declared options (`options()`: ImageAugmentOptions, PipelineOptions, PreprocessorOptions) from
// keyword arguments: each read by its name with `Field<T>` (transform_fields.hpp; the types only
// options have are below), a keyword none declares refused. `describe` gives the same options to
// Python as (name, annotation, default), from which the package's tests compare its classes.

#include "transform_fields.hpp"

#include <conveyor/batch/batch_transform.hpp>
#include <conveyor/core/tensor.hpp>
#include <conveyor/io/decode_options.hpp>
#include <conveyor/ops/augment.hpp>
#include <conveyor/pipeline/options.hpp>
#include <conveyor/transforms/fields.hpp>

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

/// An enum whose values `Names` spells in its order, taken spelled exactly (as C++'s parsers take them).
template <class E, const auto& Names>
struct NamedEnum {
  static constexpr const char* annotation = "str";
  static E from(const Where& w, nb::handle v) { return static_cast<E>(exact_choice(w, v, Names)); }
  static nb::object value(E v) { return nb::str(Names[static_cast<std::size_t>(v)]); }
};

inline constexpr const char* dtype_names[] = {"u8", "f32", "f16", "bf16"};
inline constexpr const char* layout_names[] = {"nchw", "nhwc"};
inline constexpr const char* sixteen_bit_names[] = {"refuse", "high_byte"};
inline constexpr const char* on_error_names[] = {"raise", "skip"};
inline constexpr const char* decode_names[] = {"cpu", "gpu", "auto"};
inline constexpr const char* upsampling_names[] = {"interpolated", "replicated"};

template <>
struct Field<conveyor::DType> : NamedEnum<conveyor::DType, dtype_names> {};
template <>
struct Field<conveyor::Layout> : NamedEnum<conveyor::Layout, layout_names> {};
template <>
struct Field<conveyor::SixteenBit> : NamedEnum<conveyor::SixteenBit, sixteen_bit_names> {};
template <>
struct Field<conveyor::OnError> : NamedEnum<conveyor::OnError, on_error_names> {};
template <>
struct Field<conveyor::JpegDecode> : NamedEnum<conveyor::JpegDecode, decode_names> {};
template <>
struct Field<conveyor::ChromaUpsampling> : NamedEnum<conveyor::ChromaUpsampling, upsampling_names> {};

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

}  // namespace conveyor_ext

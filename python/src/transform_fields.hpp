#pragma once
// A transform's fields from Python and back, one `Field<T>` per field type: `from` reads a
// Python value as torchvision takes that argument (a TypeError or ConfigError names the transform,
// the argument and the value), `value` is the field as Python holds it (the Python class's
// default), `annotation` its type in the package's stubs. pixel_transforms.cpp applies them to
// every field of every registered transform (conveyor/transforms/fields.hpp).

#include "pixel_transforms.hpp"

#include <conveyor/transforms/program.hpp>

#include <array>
#include <optional>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

namespace conveyor_ext {

/// The argument a value is for: "RandomPosterize", "bits".
struct Where {
  const char* transform;
  const char* field;
};

[[noreturn]] void type_error(const Where& w, const char* expected, nb::handle value);
[[noreturn]] void config_error(const Where& w, const std::string& what);

/// A number: ints and floats (and what has __float__), not bools or strings.
double real(const Where& w, nb::handle value);
/// A Python int from an int or what has __index__ (numpy's integers), not a bool or a float.
nb::object python_int(const Where& w, nb::handle value);
/// `python_int`'s value, which a C++ int holds.
int integer(const Where& w, nb::handle value);
/// True or False, or the ints 0 and 1.
bool flag(const Where& w, nb::handle value);
/// The items of a sequence (a list, a tuple, anything iterable but a string), or nothing when
/// `value` is not one.
std::optional<std::vector<nb::object>> items(nb::handle value);
/// One of `names`, from a string or an enum whose `.value` is one (torchvision's InterpolationMode,
/// AutoAugmentPolicy), in any case.
int choice(const Where& w, nb::handle value, std::span<const char* const> names);
/// A tuple of `values` in Python, or their one value when they are all equal (`fill=0`).
nb::object numbers(std::span<const double> values, bool collapse);

template <class T>
struct Field;

template <>
struct Field<double> {
  static constexpr const char* annotation = "float";
  static double from(const Where& w, nb::handle v) { return real(w, v); }
  static nb::object value(double v) { return nb::float_(v); }
};

/// A float32 option (ImageAugment's rescale): the number as float32 rounds it.
template <>
struct Field<float> {
  static constexpr const char* annotation = "float";
  static float from(const Where& w, nb::handle v) { return static_cast<float>(real(w, v)); }
  static nb::object value(float v) { return nb::float_(v); }
};

template <>
struct Field<int> {
  static constexpr const char* annotation = "int";
  static int from(const Where& w, nb::handle v) { return integer(w, v); }
  static nb::object value(int v) { return nb::int_(v); }
};

template <>
struct Field<bool> {
  static constexpr const char* annotation = "bool";
  static bool from(const Where& w, nb::handle v) { return flag(w, v); }
  static nb::object value(bool v) { return nb::bool_(v); }
};

/// None, or the value.
template <class T>
struct Field<std::optional<T>> {
  static inline const std::string annotation = std::string("Optional[") + Field<T>::annotation + "]";
  static std::optional<T> from(const Where& w, nb::handle v) {
    if (v.is_none()) return std::nullopt;
    return Field<T>::from(w, v);
  }
  static nb::object value(const std::optional<T>& v) { return v ? Field<T>::value(*v) : nb::none(); }
};

/// A (min, max) pair, or (x, y).
template <>
struct Field<std::array<double, 2>> {
  static constexpr const char* annotation = "Tuple[float, float]";
  static std::array<double, 2> from(const Where& w, nb::handle v);
  static nb::object value(const std::array<double, 2>& v) { return numbers(v, false); }
};

/// ColorJitter's: None, a number, or a (min, max) pair.
template <>
struct Field<conveyor::Jitter> {
  static constexpr const char* annotation = "Jitter";
  static conveyor::Jitter from(const Where& w, nb::handle v);
  static nb::object value(const conveyor::Jitter& v);
};

/// A number, or a sequence of one, two or four (degrees, shear, sigma; each transform checks the length it takes).
template <>
struct Field<conveyor::Numbers> {
  static constexpr const char* annotation = "Numbers";
  static conveyor::Numbers from(const Where& w, nb::handle v);
  static nb::object value(const conveyor::Numbers& v);
};

/// An int, or a sequence of one or two (width, height).
template <>
struct Field<conveyor::KernelSize> {
  static constexpr const char* annotation = "Union[int, Sequence[int]]";
  static conveyor::KernelSize from(const Where& w, nb::handle v);
  static nb::object value(const conveyor::KernelSize& v);
};

/// None, one number, or one per channel.
template <>
struct Field<conveyor::Fill> {
  static constexpr const char* annotation = "Fill";
  static conveyor::Fill from(const Where& w, nb::handle v);
  static nb::object value(const conveyor::Fill& v);
};

/// A number, one per channel, or "random".
template <>
struct Field<conveyor::ErasingValue> {
  static constexpr const char* annotation = "Union[float, Sequence[float], str]";
  static conveyor::ErasingValue from(const Where& w, nb::handle v);
  static nb::object value(const conveyor::ErasingValue& v);
};

/// Weights (RandomChoice's `p`): None for none.
template <>
struct Field<std::vector<double>> {
  static constexpr const char* annotation = "Optional[Sequence[float]]";
  static std::vector<double> from(const Where& w, nb::handle v);
  static nb::object value(const std::vector<double>& v);
};

/// The transforms a container holds, as the package's classes make them (`_native()`).
template <>
struct Field<std::vector<conveyor::PixelTransform>> {
  static constexpr const char* annotation = "Sequence[PixelTransform]";
  static std::vector<conveyor::PixelTransform> from(const Where& w, nb::handle v);
  static nb::object value(const std::vector<conveyor::PixelTransform>&) { return nb::tuple(); }
};

/// An enum with names (`enum_names`, conveyor's or found beside the enum): its name in Python.
template <class E>
  requires std::is_enum_v<E>
struct Field<E> {
  static constexpr const char* annotation = "Any";  // the name, or torchvision's enum
  static E from(const Where& w, nb::handle v) { return static_cast<E>(choice(w, v, names())); }
  static nb::object value(E v) { return nb::str(names()[static_cast<std::size_t>(v)]); }
  static constexpr std::span<const char* const> names() {
    using conveyor::enum_names;
    return enum_names(E{});
  }
};

}  // namespace conveyor_ext

// The pixel transforms (conveyor/transforms/), made from Python by one generic factory that reads
// each transform's declared fields (transform_fields.hpp converts each type), and described to
// Python by the same declarations: `pixel_transform_schema()` gives every registered transform's
// name, summary and fields, from which the package makes its classes (conveyor/_pixel_transforms.py)
// and the build their stubs. And drawn_calls: what a transform drew for a sample as torchvision
// functional calls.

#include "pixel_transforms.hpp"
#include "transform_fields.hpp"
#include "transforms.hpp"

#include <conveyor/transforms/program.hpp>

#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <array>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

namespace conveyor_ext {

namespace {

std::string shown(nb::handle value) {
  return std::string(nb::repr(value).c_str()) + " (" + nb::cast<std::string>(value.type().attr("__name__")) + ")";
}

/// What `real` takes: not a bool or a string, and has __float__.
bool number_like(nb::handle value) {
  return !PyBool_Check(value.ptr()) && !PyUnicode_Check(value.ptr()) && !PyBytes_Check(value.ptr()) &&
         nb::hasattr(value.type(), "__float__");
}

std::string who(const Where& w) { return std::string(w.transform) + ": " + w.field; }

/// `values` read as numbers, when `value` is a sequence of `lengths` (each allowed length once).
std::optional<std::vector<double>> sequence_of(const Where& w, nb::handle value, std::initializer_list<std::size_t> lengths) {
  auto seq = items(value);
  if (!seq) return std::nullopt;
  bool fits = false;
  for (const std::size_t n : lengths) fits = fits || seq->size() == n;
  if (!fits) return std::nullopt;
  std::vector<double> out;
  for (const nb::object& x : *seq) out.push_back(real(w, x));
  return out;
}

/// A number, or a sequence of one or three (one per channel), as `T` takes them; a TypeError says
/// `expected` for anything else.
template <class T>
T per_channel(const Where& w, nb::handle v, const char* expected) {
  if (number_like(v)) return T(real(w, v));
  if (!items(v)) type_error(w, expected, v);
  const auto values = sequence_of(w, v, {1, 3});
  if (!values) config_error(w, "needs one number or one per channel (3), got " + std::string(nb::repr(v).c_str()));
  if (values->size() == 1) return T((*values)[0]);
  return T((*values)[0], (*values)[1], (*values)[2]);
}

}  // namespace

void type_error(const Where& w, const char* expected, nb::handle value) {
  throw nb::type_error((who(w) + " must be " + expected + ", got " + shown(value)).c_str());
}

void config_error(const Where& w, const std::string& what) { throw conveyor::ConfigError(who(w) + " " + what); }

double real(const Where& w, nb::handle value) {
  if (!number_like(value)) type_error(w, "a number", value);
  const double v = PyFloat_AsDouble(value.ptr());
  if (v == -1.0 && PyErr_Occurred()) {
    PyErr_Clear();
    type_error(w, "a number", value);
  }
  return v;
}

nb::object python_int(const Where& w, nb::handle value) {
  if (PyBool_Check(value.ptr())) type_error(w, "an int", value);
  PyObject* index = PyNumber_Index(value.ptr());
  if (!index) {
    PyErr_Clear();
    type_error(w, "an int", value);
  }
  return nb::steal(index);
}

int integer(const Where& w, nb::handle value) {
  const nb::object number = python_int(w, value);
  int overflow = 0;
  const long long v = PyLong_AsLongLongAndOverflow(number.ptr(), &overflow);
  constexpr long long lowest = INT32_MIN, highest = INT32_MAX;
  if (overflow < 0 || (!overflow && v < lowest))
    config_error(w, "must be >= " + std::to_string(lowest) + ", got " + nb::str(number).c_str());
  if (overflow > 0 || v > highest)
    config_error(w, "must be <= " + std::to_string(highest) + ", got " + nb::str(number).c_str());
  return static_cast<int>(v);
}

bool flag(const Where& w, nb::handle value) {
  if (PyBool_Check(value.ptr())) return value.ptr() == Py_True;
  PyObject* index = PyNumber_Index(value.ptr());
  if (!index) PyErr_Clear();
  const nb::object number = nb::steal(index);
  if (index) {
    const long long v = PyLong_AsLongLong(number.ptr());
    if (v == -1 && PyErr_Occurred()) PyErr_Clear();
    else if (v == 0 || v == 1) return v == 1;
  }
  type_error(w, "True or False", value);
}

std::optional<std::vector<nb::object>> items(nb::handle value) {
  if (PyUnicode_Check(value.ptr()) || PyBytes_Check(value.ptr())) return std::nullopt;
  PyObject* iterator = PyObject_GetIter(value.ptr());
  if (!iterator) {
    PyErr_Clear();
    return std::nullopt;
  }
  const nb::object it = nb::steal(iterator);
  std::vector<nb::object> out;
  while (PyObject* item = PyIter_Next(it.ptr())) out.push_back(nb::steal(item));
  if (PyErr_Occurred()) throw nb::python_error();
  return out;
}

int choice(const Where& w, nb::handle value, std::span<const char* const> names) {
  nb::object text = nb::borrow(value);
  if (!nb::isinstance<nb::str>(text) && nb::hasattr(value, "value")) text = value.attr("value");  // an enum
  std::string listed;
  for (const char* n : names) listed += (listed.empty() ? "'" : ", '") + std::string(n) + "'";
  if (!nb::isinstance<nb::str>(text)) config_error(w, "must be one of " + listed + ", got " + nb::repr(value).c_str());
  std::string name = nb::cast<std::string>(text);
  for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  for (std::size_t k = 0; k < names.size(); ++k)
    if (name == names[k]) return static_cast<int>(k);
  config_error(w, "must be one of " + listed + ", got '" + name + "'");
}

nb::object numbers(std::span<const double> values, bool collapse) {
  bool equal = collapse;
  for (const double v : values) equal = equal && v == values[0];
  if (equal) return nb::float_(values[0]);
  nb::list out;
  for (const double v : values) out.append(nb::float_(v));
  return nb::tuple(out);
}

std::array<double, 2> Field<std::array<double, 2>>::from(const Where& w, nb::handle v) {
  const auto pair = sequence_of(w, v, {2});
  if (!pair) type_error(w, "a pair of numbers", v);
  return {(*pair)[0], (*pair)[1]};
}

conveyor::Jitter Field<conveyor::Jitter>::from(const Where& w, nb::handle v) {
  if (v.is_none()) return {};
  if (number_like(v)) return {real(w, v)};
  const auto pair = sequence_of(w, v, {2});
  if (!pair) type_error(w, "None, a number or a (min, max) pair", v);
  return {(*pair)[0], (*pair)[1]};
}

nb::object Field<conveyor::Jitter>::value(const conveyor::Jitter& v) {
  if (v.count() == 0) return nb::none();
  const std::array<double, 2> values = v.values();
  return v.count() == 1 ? nb::float_(values[0]) : numbers(values, false);
}

conveyor::Numbers Field<conveyor::Numbers>::from(const Where& w, nb::handle v) {
  if (number_like(v)) return {real(w, v)};
  const auto n = sequence_of(w, v, {1, 2, 4});
  if (!n) type_error(w, "a number or a sequence of 2 (sigma: or 1; shear: or 4)", v);
  if (n->size() == 1) return conveyor::Numbers::listed((*n)[0]);
  if (n->size() == 2) return {(*n)[0], (*n)[1]};
  return {(*n)[0], (*n)[1], (*n)[2], (*n)[3]};
}

nb::object Field<conveyor::Numbers>::value(const conveyor::Numbers& v) {
  if (!v.is_sequence()) return nb::float_(v[0]);
  std::vector<double> values;
  for (int k = 0; k < v.size(); ++k) values.push_back(v[k]);
  return numbers(values, false);
}

conveyor::KernelSize Field<conveyor::KernelSize>::from(const Where& w, nb::handle v) {
  auto seq = items(v);
  if (!seq) return {integer(w, v)};
  if (seq->size() == 1) return {integer(w, (*seq)[0])};
  if (seq->size() != 2) config_error(w, "should be an int or a pair of ints, got " + std::string(nb::repr(v).c_str()));
  return {integer(w, (*seq)[0]), integer(w, (*seq)[1])};
}

nb::object Field<conveyor::KernelSize>::value(const conveyor::KernelSize& v) {
  if (v.width == v.height) return nb::int_(v.width);
  return nb::make_tuple(v.width, v.height);
}

conveyor::Fill Field<conveyor::Fill>::from(const Where& w, nb::handle v) {
  if (v.is_none()) return conveyor::Fill::none();
  return per_channel<conveyor::Fill>(w, v, "None, a number or a sequence of numbers");
}

nb::object Field<conveyor::Fill>::value(const conveyor::Fill& v) {
  if (!v.values()) return nb::none();
  return numbers(*v.values(), true);
}

conveyor::ErasingValue Field<conveyor::ErasingValue>::from(const Where& w, nb::handle v) {
  if (nb::isinstance<nb::str>(v)) {
    if (nb::cast<std::string>(v) != "random")
      config_error(w, "given as a string must be 'random', got " + std::string(nb::repr(v).c_str()));
    return conveyor::ErasingValue::random();
  }
  return per_channel<conveyor::ErasingValue>(w, v, "a number, a sequence of numbers or 'random'");
}

nb::object Field<conveyor::ErasingValue>::value(const conveyor::ErasingValue& v) {
  if (v.is_random()) return nb::str("random");
  return numbers(v.values(), true);
}

std::vector<double> Field<std::vector<double>>::from(const Where& w, nb::handle v) {
  if (v.is_none()) return {};
  auto seq = items(v);
  if (!seq) type_error(w, "None or a sequence of numbers", v);
  std::vector<double> out;
  for (const nb::object& x : *seq) out.push_back(real(w, x));
  return out;
}

nb::object Field<std::vector<double>>::value(const std::vector<double>& v) {
  if (v.empty()) return nb::none();
  return numbers(v, false);
}

std::vector<conveyor::PixelTransform> Field<std::vector<conveyor::PixelTransform>>::from(const Where& w, nb::handle v) {
  auto seq = items(v);
  if (!seq) type_error(w, "a sequence of pixel transforms", v);
  std::vector<conveyor::PixelTransform> out;
  for (const nb::object& x : *seq) {
    PixelTransform* t = nullptr;
    if (!nb::try_cast(x, t) || !t) type_error(w, "a sequence of pixel transforms", x);
    out.push_back(t->held);
  }
  return out;
}

namespace {

/// `T` from Python's arguments by field name, checked as torchvision checks its own in its constructor.
template <class T>
PixelTransform make(const nb::dict& arguments) {
  T t{};
  std::size_t used = 0;
  conveyor::for_each_field(t, [&](const conveyor::FieldName& f, auto& field) {
    using Type = std::remove_cvref_t<decltype(field)>;
    if (arguments.contains(f.name)) {
      field = Field<Type>::from({T::name, f.name}, arguments[f.name]);
      ++used;
    } else if (f.required) {
      throw nb::type_error((std::string(T::name) + ": missing the required argument '" + f.name + "'").c_str());
    }
  });
  if (used != arguments.size())
    for (const auto& item : arguments) {
      bool known = false;
      for (const conveyor::FieldName& f : T::fields) known = known || nb::cast<std::string>(item.first) == f.name;
      if (!known)
        throw nb::type_error((std::string(T::name) + ": no argument " + nb::repr(item.first).c_str()).c_str());
    }
  t.validate();
  return {std::move(t)};
}

/// A required field's type in Python: what its empty optional holds.
template <class Type>
std::string required_annotation() {
  return Field<Type>::annotation;
}
template <class Type>
  requires std::is_same_v<Type, std::optional<typename Type::value_type>>
std::string required_annotation() {
  return Field<typename Type::value_type>::annotation;
}

/// `T`'s entry of the schema: (name, summary, [(field, annotation, required, default)], runs on PIL images).
template <class T>
nb::tuple schema_entry() {
  nb::list fields;
  const T defaults{};
  conveyor::for_each_field(defaults, [&](const conveyor::FieldName& f, const auto& field) {
    using Type = std::remove_cvref_t<decltype(field)>;
    const std::string annotation = f.required ? required_annotation<Type>() : std::string(Field<Type>::annotation);
    fields.append(nb::make_tuple(f.name, annotation, f.required, f.required ? nb::none() : Field<Type>::value(field)));
  });
  return nb::make_tuple(T::name, T::summary, fields, conveyor::runs_on_pil<T>);
}

template <class... Ts>
nb::list schema(conveyor::TransformList<Ts...>) {
  nb::list out;
  (out.append(schema_entry<Ts>()), ...);
  return out;
}

template <class... Ts>
PixelTransform make_named(conveyor::TransformList<Ts...>, const std::string& name, const nb::dict& arguments) {
  std::optional<PixelTransform> out;
  (void)((name == Ts::name ? (out = make<Ts>(arguments), true) : false) || ...);
  if (!out) throw conveyor::ConfigError("no pixel transform named '" + name + "'");
  return std::move(*out);
}

/// A drawn argument as Python holds it: int, float, a tuple of them, str, bool or None.
nb::object python_value(const conveyor::DrawnArg::Value& v) {
  return std::visit(
      [](const auto& x) -> nb::object {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, std::monostate>) {
          return nb::none();
        } else if constexpr (std::is_same_v<T, std::vector<double>> || std::is_same_v<T, std::vector<std::int64_t>>) {
          nb::list items;
          for (const auto& e : x) items.append(nb::cast(e));
          return nb::tuple(items);
        } else {
          return nb::cast(x);
        }
      },
      v);
}

using Kwargs = nb::typed<nb::dict, std::string, nb::object>;

std::vector<std::pair<std::string, Kwargs>> drawn_calls(const Transform& t, std::uint64_t seed, std::uint64_t epoch,
                                                          std::uint64_t index, int width, int height) {
  if (!t.augment) throw conveyor::ConfigError("drawn_calls: the transform is not an ImageAugment");
  if (width <= 0 || height <= 0)
    throw conveyor::ConfigError("drawn_calls: the image size must be positive, got " + std::to_string(width) + " x " +
                                std::to_string(height));
  std::vector<std::pair<std::string, Kwargs>> out;
  for (const conveyor::DrawnCall& call : t.augment->drawn_calls(seed, epoch, index, width, height)) {
    nb::dict kwargs;
    for (const conveyor::DrawnArg& a : call.args) kwargs[a.name.c_str()] = python_value(a.value);
    out.emplace_back(call.function, Kwargs(std::move(kwargs)));
  }
  return out;
}

}  // namespace

void bind_pixel_transforms(nb::module_& m) {
  using namespace nb::literals;
  nb::class_<PixelTransform>(m, "PixelTransform")
      .def_prop_ro("name", [](const PixelTransform& t) { return std::string(conveyor::transform_name(t.held)); });
  m.def("pixel_transform_schema", [] { return schema(conveyor::PixelTransforms{}); },
        "Every registered pixel transform as (name, summary, fields), each field (name, annotation, required, "
        "default), in the registry's and torchvision's orders.");
  m.def(
      "make_pixel_transform",
      [](const std::string& name, const nb::dict& arguments) {
        return make_named(conveyor::PixelTransforms{}, name, arguments);
      },
      "name"_a, "arguments"_a, "The pixel transform `name` with `arguments` by field name, checked as torchvision checks its own.");
  m.def("drawn_calls", &drawn_calls, "transform"_a, "seed"_a, "epoch"_a, "index"_a, "width"_a, "height"_a,
        "What an ImageAugment draws for sample `index` of `epoch` under `seed` from an image of `width` x `height` "
        "(after Exif orientation): the torchvision.transforms.v2.functional calls that reproduce it, in order, as "
        "(name, kwargs) pairs.");
}

}  // namespace conveyor_ext

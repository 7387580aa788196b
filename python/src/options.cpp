// The option types of options.hpp from Python, and the refusal of an option nothing declares.

#include "options.hpp"

#include "batch.hpp"

#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace conveyor_ext {

namespace {

std::string shown(nb::handle value) { return nb::repr(value).c_str(); }

/// Ints from `value`, an int or a sequence of one of `lengths` of them; nothing for another length.
std::optional<std::vector<int>> ints(const Where& w, nb::handle value, std::initializer_list<std::size_t> lengths) {
  const auto seq = items(value);
  if (!seq) return std::vector<int>{integer(w, value)};
  bool fits = false;
  for (const std::size_t n : lengths) fits = fits || seq->size() == n;
  if (!fits) return std::nullopt;
  std::vector<int> out;
  for (const nb::object& x : *seq) out.push_back(integer(w, x));
  return out;
}

}  // namespace

std::uint64_t unsigned_integer(const Where& w, nb::handle value, std::uint64_t highest) {
  const nb::object number = python_int(w, value);
  if (PyObject_RichCompareBool(number.ptr(), nb::int_(0).ptr(), Py_LT) == 1)
    config_error(w, "must be >= 0, got " + shown(number));
  const unsigned long long v = PyLong_AsUnsignedLongLong(number.ptr());
  if ((v == static_cast<unsigned long long>(-1) && PyErr_Occurred()) || v > highest) {
    PyErr_Clear();
    config_error(w, "must be <= " + std::to_string(highest) + ", got " + shown(number));
  }
  return v;
}

std::size_t exact_choice(const Where& w, nb::handle value, std::span<const char* const> names) {
  if (!nb::isinstance<nb::str>(value)) type_error(w, "a str", value);
  const std::string name = nb::cast<std::string>(value);
  for (std::size_t k = 0; k < names.size(); ++k)
    if (name == names[k]) return k;
  config_error(w, "must be " + conveyor::listed_names(names) + ", got '" + name + "'");
}

conveyor::Size Field<conveyor::Size>::from(const Where& w, nb::handle v) {
  const auto n = ints(w, v, {1, 2});
  if (!n) config_error(w, "must be an int or (height, width), got " + shown(v));
  if (n->size() == 1) return {(*n)[0]};
  return {(*n)[0], (*n)[1]};
}

nb::object Field<conveyor::Size>::value(const conveyor::Size& v) {
  if (!v.pair) return nb::int_(v.height);
  return nb::make_tuple(v.height, v.width);
}

std::array<int, 4> Field<std::array<int, 4>>::from(const Where& w, nb::handle v) {
  const auto n = ints(w, v, {1, 2, 4});
  if (!n) config_error(w, "must be an int or a sequence of 1, 2 or 4 ints, got " + shown(v));
  if (n->size() == 1) return {(*n)[0], (*n)[0], (*n)[0], (*n)[0]};
  if (n->size() == 2) return {(*n)[0], (*n)[1], (*n)[0], (*n)[1]};
  return {(*n)[0], (*n)[1], (*n)[2], (*n)[3]};
}

nb::object Field<std::array<int, 4>>::value(const std::array<int, 4>& v) {
  if (v[0] == v[1] && v[1] == v[2] && v[2] == v[3]) return nb::int_(v[0]);
  return nb::make_tuple(v[0], v[1], v[2], v[3]);
}

std::array<float, 3> Field<std::array<float, 3>>::from(const Where& w, nb::handle v) {
  const auto seq = items(v);
  if (!seq || seq->size() != 3) type_error(w, "a sequence of 3 numbers", v);
  return {static_cast<float>(real(w, (*seq)[0])), static_cast<float>(real(w, (*seq)[1])),
          static_cast<float>(real(w, (*seq)[2]))};
}

nb::object Field<std::array<float, 3>>::value(const std::array<float, 3>& v) {
  return nb::make_tuple(double(v[0]), double(v[1]), double(v[2]));
}

conveyor::BatchTransform Field<conveyor::BatchTransform>::from(const Where& w, nb::handle v) {
  using Ops = std::vector<std::pair<std::string, std::vector<double>>>;
  const auto pair = items(v);
  Ops ops;
  std::vector<double> p;
  if (!pair || pair->size() != 2 || !nb::try_cast((*pair)[0], ops) || !nb::try_cast((*pair)[1], p))
    type_error(w, "None or (ops, p) as conveyor's batch_ops gives them", v);
  return {batch_ops(ops), std::move(p)};
}

void OptionReader::finish() const {
  for (const auto& item : given_) {
    const std::string name = nb::cast<std::string>(item.first);
    bool declared = false;
    for (const std::string& k : known_) declared = declared || k == name;
    if (!declared) throw nb::type_error((std::string(who_) + ": no option '" + name + "'").c_str());
  }
}

}  // namespace conveyor_ext

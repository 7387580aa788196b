#pragma once
// Text between Python and C++ as os.fsencode and os.fsdecode carry paths: C++ gets the bytes the
// OS uses and Python gets a str that round-trips (bytes that are not UTF-8 as lone surrogates),
// so file names in any encoding work both ways; messages for people escape such bytes instead.

#include "bindings.hpp"

#include <string>
#include <string_view>

namespace conveyor_ext {

/// A path as the package's Python code passes it: os.fsencode's bytes.
inline std::string fs_path(const nb::bytes& path) { return {path.c_str(), path.size()}; }

/// A path or file name from the OS, as os.fsdecode gives it.
inline nb::str fs_str(std::string_view s) {
  PyObject* o = PyUnicode_DecodeFSDefaultAndSize(s.data(), static_cast<Py_ssize_t>(s.size()));
  if (!o) throw nb::python_error();
  return nb::steal<nb::str>(o);
}

/// A message, which may quote such a name: bytes that are not UTF-8 become \xNN escapes, so it
/// prints anywhere.
inline nb::str message_str(std::string_view s) {
  PyObject* o = PyUnicode_DecodeUTF8(s.data(), static_cast<Py_ssize_t>(s.size()), "backslashreplace");
  if (!o) throw nb::python_error();
  return nb::steal<nb::str>(o);
}

}  // namespace conveyor_ext

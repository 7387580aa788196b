// conveyor's exceptions as Python classes: each C++ type becomes one that also derives from the
// matching built-in (ValueError, OSError, TimeoutError), with the C++ fields as attributes and
// the source location as `.location` rather than in the message.

#include "bindings.hpp"
#include "paths.hpp"

#include <conveyor/core/error.hpp>
#include <conveyor/serve/preprocessor.hpp>
#if CONVEYOR_HAS_CUDA_RUNTIME()
#include <conveyor/cuda/error.hpp>
#endif

#include <nanobind/stl/string.h>

#include <exception>
#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>

namespace conveyor_ext {
namespace {

PyObject* error_type = nullptr;         // conveyor.Error(RuntimeError)
PyObject* config_error_type = nullptr;  // (Error, ValueError)
PyObject* io_error_type = nullptr;      // (Error, OSError)
PyObject* decode_error_type = nullptr;  // (Error, ValueError)
PyObject* sample_error_type = nullptr;  // (Error): index, path, reason
PyObject* cuda_error_type = nullptr;    // (Error)
PyObject* overloaded_type = nullptr;    // (Error)
PyObject* deadline_type = nullptr;      // (Error, TimeoutError)

/// A new exception type of module `m`: its `__module__` is the module's own name, so stubgen writes
/// the class into the stubs (the package shows it as conveyor.X).
PyObject* new_exception(nb::module_& m, const char* name, PyObject* bases, const char* doc) {
  const std::string qualified = nb::cast<std::string>(m.attr("__name__")) + "." + name;
  PyObject* type = PyErr_NewExceptionWithDoc(qualified.c_str(), doc, bases, nullptr);
  if (!type) throw nb::python_error();
  m.attr(name) = nb::handle(type);
  return type;
}

/// Raises `type(message)` with the given attributes set on the instance. The message is what the
/// C++ exception says without its "file.hpp:123: " prefix, which goes to `.location` instead.
void raise(PyObject* type, std::string_view what, std::initializer_list<std::pair<const char*, nb::object>> attrs = {},
           std::string_view location = {}) {
  const auto [where, message] = conveyor::detail::split_location(what);
  if (location.empty()) location = where;
  nb::object exc = nb::steal(PyObject_CallOneArg(type, message_str(message).ptr()));
  if (!exc.is_valid()) return;  // the call set an error already
  nb::setattr(exc, "location", location.empty() ? nb::none() : nb::object(message_str(location)));
  for (const auto& [key, value] : attrs) nb::setattr(exc, key, value);
  PyErr_SetObject(type, exc.ptr());
}

/// Where the exception nested in `e` (a SampleError's cause) was raised, if it says.
std::string nested_location(const std::exception& e) {
  try {
    std::rethrow_if_nested(e);
  } catch (const std::exception& cause) {
    return std::string(conveyor::detail::split_location(cause.what()).first);
  } catch (...) {
  }
  return {};
}

void translate(const std::exception_ptr& p, void*) {
  try {
    std::rethrow_exception(p);
  } catch (const conveyor::SampleError& e) {
    // The cause's location may lead its reason (a ConfigError's): out of the message too.
    const std::string_view reason = conveyor::detail::split_location(e.reason()).second;
    raise(sample_error_type, conveyor::SampleError(e.index(), e.path(), std::string(reason)).what(),
          {{"index", nb::int_(e.index())}, {"path", fs_str(e.path())}, {"reason", message_str(reason)}},
          nested_location(e));
  } catch (const conveyor::ConfigError& e) {
    raise(config_error_type, e.what());
  } catch (const conveyor::IoError& e) {
    raise(io_error_type, e.what(), {{"path", fs_str(e.path())}, {"reason", message_str(e.reason())}});
  } catch (const conveyor::DecodeError& e) {
    raise(decode_error_type, e.what(), {{"reason", message_str(e.reason())}});
#if CONVEYOR_HAS_CUDA_RUNTIME()
  } catch (const conveyor::CudaError& e) {
    raise(cuda_error_type, e.what(), {{"call", message_str(e.call())}});
#endif
  } catch (const conveyor::Overloaded& e) {
    raise(overloaded_type, e.what());
  } catch (const conveyor::DeadlineExceeded& e) {
    raise(deadline_type, e.what());
  } catch (const conveyor::Error& e) {
    raise(error_type, e.what());
  }
}

PyObject* bases(PyObject* first, PyObject* second) { return nb::make_tuple(nb::handle(first), nb::handle(second)).release().ptr(); }

}  // namespace

void bind_errors(nb::module_& m) {
  error_type = new_exception(m, "Error", PyExc_RuntimeError,
                             "Base of conveyor's errors; .location names the C++ source line that raised it, if any.");
  config_error_type = new_exception(m, "ConfigError", bases(error_type, PyExc_ValueError),
                                    "An invalid option or argument, named with its value.");
  io_error_type = new_exception(m, "IoError", bases(error_type, PyExc_OSError),
                                "A file or folder that cannot be read; .path names it.");
  decode_error_type = new_exception(m, "DecodeError", bases(error_type, PyExc_ValueError),
                                    "Bytes that cannot be decoded; .reason says why.");
  sample_error_type = new_exception(m, "SampleError", error_type,
                                    "A sample failed under on_error='raise': .index, .path and .reason name it.");
  cuda_error_type = new_exception(m, "CudaError", error_type, "A CUDA call failed; .call names it.");
  overloaded_type = new_exception(m, "Overloaded", error_type,
                                  "A request refused: max_waiting requests already wait for a lane.");
  deadline_type = new_exception(m, "DeadlineExceeded", bases(error_type, PyExc_TimeoutError),
                                "A request not done within its timeout (refused or cancelled).");
  nb::register_exception_translator(translate);
}

}  // namespace conveyor_ext

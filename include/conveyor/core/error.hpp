#pragma once
/// @file
/// The exception hierarchy. Every message names where it was raised, what failed and the input.
///
///   Error (std::runtime_error)
///   ├── ConfigError   an argument or option is invalid
///   ├── IoError       a file could not be listed or read
///   ├── DecodeError   encoded bytes are not an image conveyor can decode
///   ├── SampleError   one dataset sample failed inside a pipeline (nests the cause)
///   └── CudaError     a CUDA runtime call failed (cuda/error.hpp)

#include <conveyor/config.hpp>

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>

namespace conveyor {
inline namespace v0 {

/// Where an exception was raised: std::source_location's job, done with the builtins GCC, Clang
/// and nvcc share, since Clang before 15 cannot compile libstdc++'s <source_location>.
struct SourceLocation {
  const char* file = "";
  unsigned line = 0;
  /// The caller's location when used as a default argument.
  [[nodiscard]] static constexpr SourceLocation current(const char* file = __builtin_FILE(),
                                                       unsigned line = __builtin_LINE()) noexcept {
    return {file, line};
  }
};

namespace detail {

/// "file.hpp:123: " with the directories stripped: messages stay short and machine-independent.
inline std::string location_prefix(const SourceLocation& where) {
  std::string_view file = where.file;
  if (auto slash = file.find_last_of("/\\"); slash != std::string_view::npos) file.remove_prefix(slash + 1);
  std::string out(file);
  out += ':';
  out += std::to_string(where.line);
  out += ": ";
  return out;
}

/// `location_prefix`'s inverse: a message's leading "file.hpp:123: " (a C++ or CUDA source) split
/// off, as (location without the ": ", the rest); an empty location when it does not start so.
/// For bindings that show the message and keep the location apart.
inline std::pair<std::string_view, std::string_view> split_location(std::string_view what) noexcept {
  const std::size_t colon = what.find(':');
  if (colon == 0 || colon == std::string_view::npos) return {{}, what};
  const std::string_view file = what.substr(0, colon);
  const bool source = file.find_first_of(" /\\[") == std::string_view::npos &&
                      (file.ends_with(".hpp") || file.ends_with(".cuh") || file.ends_with(".h") ||
                       file.ends_with(".cpp") || file.ends_with(".cu"));
  if (!source) return {{}, what};
  std::size_t end = colon + 1;
  while (end < what.size() && what[end] >= '0' && what[end] <= '9') ++end;
  if (end == colon + 1 || what.substr(end, 2) != ": ") return {{}, what};
  return {what.substr(0, end), what.substr(end + 2)};
}

}  // namespace detail

/// Base of every exception conveyor throws.
class Error : public std::runtime_error {
 public:
  [[nodiscard]] explicit Error(const std::string& what) : std::runtime_error(what) {}
};

/// An invalid argument or option: names the argument and the value.
class ConfigError : public Error {
 public:
  [[nodiscard]] explicit ConfigError(std::string_view what,
                                     SourceLocation where = SourceLocation::current())
      : Error(detail::location_prefix(where) + std::string(what)) {}
};

/// A file or folder that could not be listed, opened or read.
class IoError : public Error {
 public:
  [[nodiscard]] IoError(std::string_view what, std::string path,
                        SourceLocation where = SourceLocation::current())
      : Error(detail::location_prefix(where) + std::string(what) + " [" + path + "]"),
        path_(std::move(path)), reason_(what) {}
  /// The file or folder concerned.
  [[nodiscard]] const std::string& path() const noexcept { return path_; }
  /// What failed, without the location and the path.
  [[nodiscard]] const std::string& reason() const noexcept { return reason_; }

 private:
  std::string path_;
  std::string reason_;
};

/// Encoded bytes that are not an image conveyor can decode (corrupt, truncated, unsupported, too large).
class DecodeError : public Error {
 public:
  [[nodiscard]] explicit DecodeError(std::string_view reason,
                                     SourceLocation where = SourceLocation::current())
      : Error(detail::location_prefix(where) + std::string(reason)), reason_(reason) {}
  /// The decoder's message alone, without the location.
  [[nodiscard]] const std::string& reason() const noexcept { return reason_; }

 private:
  std::string reason_;
};

/// One sample of a dataset failed while a pipeline prepared it. The original exception is nested
/// (`std::rethrow_if_nested`), so callers can still catch `DecodeError` or `IoError` below it.
class SampleError : public Error {
 public:
  [[nodiscard]] SampleError(std::uint64_t index, std::string path, std::string reason)
      : Error("sample " + std::to_string(index) + " [" + path + "]: " + reason),
        index_(index), path_(std::move(path)), reason_(std::move(reason)) {}
  /// The dataset index of the failed sample.
  [[nodiscard]] std::uint64_t index() const noexcept { return index_; }
  /// The dataset's name for the sample (a path for files).
  [[nodiscard]] const std::string& path() const noexcept { return path_; }
  /// What went wrong, as the reading or decoding step said it.
  [[nodiscard]] const std::string& reason() const noexcept { return reason_; }

 private:
  std::uint64_t index_;
  std::string path_;
  std::string reason_;
};

}  // namespace v0
}  // namespace conveyor

/// Throws `conveyor::ConfigError` naming the failed condition when `cond` is false.
#define CONVEYOR_EXPECTS(cond, msg)                                                              \
  do {                                                                                           \
    if (!(cond)) throw ::conveyor::ConfigError(std::string(msg) + " (expected: " #cond ")");   \
  } while (0)

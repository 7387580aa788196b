#pragma once
/// @file
/// Reading whole files into a reusable buffer with POSIX calls: no stream objects, no allocation
/// once the buffer is large enough.

#include <conveyor/config.hpp>
#include <conveyor/core/bytes.hpp>
#include <conveyor/core/error.hpp>

#include <cerrno>
#include <cstring>
#include <string>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace conveyor {
inline namespace v0 {

namespace detail {

/// Closes a file descriptor on scope exit.
class FdGuard {
 public:
  explicit FdGuard(int fd) noexcept : fd_(fd) {}
  FdGuard(const FdGuard&) = delete;
  FdGuard& operator=(const FdGuard&) = delete;
  ~FdGuard() {
    if (fd_ >= 0) ::close(fd_);
  }

 private:
  int fd_;
};

[[noreturn]] inline void throw_errno(const char* what, const char* path, int err) {
  throw IoError(std::string(what) + ": " + std::strerror(err), path);
}

}  // namespace detail

/// Replaces `out` with the bytes of the file at `path` (a NUL-terminated path).
/// @throws IoError naming the path and the system's reason when the file cannot be opened or read,
///         or is not a regular file.
inline void read_file(const char* path, ByteBuffer& out) {
  const int fd = ::open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) detail::throw_errno("cannot open file", path, errno);
  detail::FdGuard guard(fd);
  struct stat st {};
  if (::fstat(fd, &st) != 0) detail::throw_errno("cannot stat file", path, errno);
  if (!S_ISREG(st.st_mode)) throw IoError("not a regular file", path);
  // One read of the size fstat reported; a file truncated meanwhile yields what is left.
  out.resize(static_cast<std::size_t>(st.st_size));
  std::size_t done = 0;
  while (done < out.size()) {
    const ssize_t n = ::read(fd, out.data() + done, out.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      detail::throw_errno("cannot read file", path, errno);
    }
    if (n == 0) break;
    done += static_cast<std::size_t>(n);
  }
  out.resize(done);
}

/// Overload for `std::string` paths.
inline void read_file(const std::string& path, ByteBuffer& out) { read_file(path.c_str(), out); }

}  // namespace v0
}  // namespace conveyor

#include "core/file_lock.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <system_error>
#include <utility>

#include "core/check.hpp"
#include "core/fs.hpp"

namespace seqbench::core {
namespace {

std::string describe(int err) { return std::error_code(err, std::generic_category()).message(); }

}  // namespace

int FileLock::acquire(const std::string& path, Mode mode, bool blocking) {
  // A shared lock needs only to read; an exclusive one may write its note.
  const int access = mode == Mode::kShared ? O_RDONLY : O_RDWR;
  // Never through a symbolic link: the note would overwrite the link's target.
  const int fd = open_nofollow(path, access | O_CREAT);
  if (fd < 0)
    throw Error(fmt::format("cannot open lock file '{}': {}", path, describe(errno)));
  const int op = (mode == Mode::kShared ? LOCK_SH : LOCK_EX) | (blocking ? 0 : LOCK_NB);
  int rc;
  do {
    rc = ::flock(fd, op);  // a signal (Ctrl-C's handler) interrupts the wait: wait again
  } while (rc != 0 && errno == EINTR);
  if (rc == 0) return fd;
  const int err = errno;
  ::close(fd);
  if (!blocking && err == EWOULDBLOCK) return -1;
  throw Error(fmt::format("cannot lock '{}': {}", path, describe(err)));
}

FileLock::FileLock(const std::string& path, Mode mode)
    : path_(path), mode_(mode), fd_(acquire(path, mode, true)) {}

std::optional<FileLock> FileLock::try_lock(const std::string& path, Mode mode) {
  const int fd = acquire(path, mode, false);
  if (fd < 0) return std::nullopt;
  return FileLock(path, mode, fd);
}

FileLock::~FileLock() {
  if (fd_ >= 0) ::close(fd_);  // closing the last descriptor releases the lock
}

FileLock::FileLock(FileLock&& o) noexcept
    : path_(std::move(o.path_)), mode_(o.mode_), fd_(std::exchange(o.fd_, -1)) {}

FileLock& FileLock::operator=(FileLock&& o) noexcept {
  if (this != &o) {
    if (fd_ >= 0) ::close(fd_);
    path_ = std::move(o.path_);
    mode_ = o.mode_;
    fd_ = std::exchange(o.fd_, -1);
  }
  return *this;
}

void FileLock::write_note(std::string_view text) {
  if (fd_ < 0 || mode_ != Mode::kExclusive) return;
  if (::ftruncate(fd_, 0) == 0) {
    const ssize_t written = ::pwrite(fd_, text.data(), text.size(), 0);
    (void)written;  // a note is a courtesy: the lock holds without it
  }
}

std::string FileLock::read_note(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return {};
  char buf[64] = {};
  const ssize_t n = ::pread(fd, buf, sizeof buf, 0);
  ::close(fd);
  return n > 0 ? std::string(buf, size_t(n)) : std::string();
}

}  // namespace seqbench::core

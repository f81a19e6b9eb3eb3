#include "core/input_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <system_error>

#include "core/check.hpp"
#include "core/fs.hpp"

namespace seqbench::core {

namespace {

std::string describe(int err) { return std::error_code(err, std::generic_category()).message(); }

const char* kind_of(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO (named pipe)";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

std::string size_text(uint64_t bytes) {
  if (bytes >= kGiB) return fmt::format("{:.1f} GiB", double(bytes) / double(kGiB));
  if (bytes >= kMiB) return fmt::format("{:.1f} MiB", double(bytes) / double(kMiB));
  return fmt::format("{} bytes", bytes);
}

}  // namespace

int open_input(const std::string& path, uint64_t max_bytes, uint64_t* size, bool follow_links) {
  int fd = -1;
  const int flags = O_RDONLY | O_NONBLOCK;
  if (follow_links) {
    do fd = ::open(path.c_str(), flags | O_CLOEXEC);
    while (fd < 0 && errno == EINTR);
  } else {
    fd = open_nofollow(path, flags);
  }
  if (fd < 0) throw Error(fmt::format("cannot read '{}': {}", path, describe(errno)));
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    const int err = errno;
    ::close(fd);
    throw Error(fmt::format("cannot read '{}': {}", path, describe(err)));
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    throw Error(fmt::format("cannot read '{}': it is {}, and seqbench reads only regular files",
                            path, kind_of(st.st_mode)));
  }
  const uint64_t bytes = st.st_size > 0 ? uint64_t(st.st_size) : 0;
  if (bytes > max_bytes) {
    ::close(fd);
    throw Error(fmt::format("cannot read '{}': it is {}, above the limit of {} for such a file "
                            "(docs/reliability.md, \"Bounded reads\")",
                            path, size_text(bytes), size_text(max_bytes)));
  }
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  if (size) *size = bytes;
  return fd;
}

std::string read_input(const std::string& path, uint64_t max_bytes, bool follow_links) {
  uint64_t size = 0;
  const int fd = open_input(path, max_bytes, &size, follow_links);
  std::string out;
  out.reserve(size_t(size));
  char buf[1 << 16];
  for (;;) {
    const ssize_t r = ::read(fd, buf, sizeof buf);
    if (r < 0) {
      if (errno == EINTR) continue;
      const int err = errno;
      ::close(fd);
      throw Error(fmt::format("cannot read '{}': {}", path, describe(err)));
    }
    if (r == 0) break;
    out.append(buf, size_t(r));
    if (out.size() > max_bytes) {  // it grew while being read
      ::close(fd);
      throw Error(fmt::format("cannot read '{}': it grew above the limit of {} while being read",
                              path, size_text(max_bytes)));
    }
  }
  ::close(fd);
  return out;
}

}  // namespace seqbench::core

#include "core/fs.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <limits>
#include <system_error>
#include <utility>

#include "core/check.hpp"
#include "core/input_file.hpp"

namespace seqbench::core {
namespace {

// A write beyond the file-size limit (ulimit -f) would kill the process with SIGXFSZ,
// leaving its temporary file behind; ignored, the write fails with EFBIG instead and is
// handled like a full disk (the previous file kept, the temporary removed, a "--resume"
// hint). Set when this library is loaded, before main.
[[maybe_unused]] const bool kIgnoreSigxfsz = [] {
  ::signal(SIGXFSZ, SIG_IGN);
  return true;
}();

// strerror text, thread-safe, with the common causes spelled out for users. What to do
// after making room is the caller's to say (OutOfSpace::then).
std::string describe(int err) {
  std::string msg = std::error_code(err, std::generic_category()).message();
  if (err == ENOSPC) return "disk full (" + msg + "; hint: free some space)";
  if (err == EDQUOT) return "disk quota exceeded (" + msg + "; hint: free some space)";
  if (err == EFBIG)
    return "file size limit reached (" + msg + "; ulimit -f; hint: raise the limit or free some "
           "space)";
  if (err == EACCES || err == EPERM) return msg + " (hint: check the permissions)";
  return msg;
}

[[noreturn]] void throw_io(const char* verb, const std::string& path, int err,
                           const char* hint = nullptr) {
  std::string msg = fmt::format("cannot {} '{}': {}", verb, path, describe(err));
  if (hint && err == ENOENT) msg += fmt::format(" (hint: {})", hint);
  if (err == ENOSPC || err == EDQUOT || err == EFBIG) throw OutOfSpace(msg);
  throw Error(msg);
}

// Writes everything or returns the errno of the failure (EIO for a write that makes no
// progress, which the kernel should never do for a regular file).
int write_all(int fd, const char* p, size_t n) {
  while (n > 0) {
    ssize_t w = ::write(fd, p, n);
    if (w < 0) {
      if (errno == EINTR) continue;
      return errno;
    }
    if (w == 0) return EIO;
    p += w;
    n -= static_cast<size_t>(w);
  }
  return 0;
}

std::string parent_dir(const std::string& path) {
  auto parent = std::filesystem::path(path).parent_path();
  return parent.empty() ? std::string(".") : parent.string();
}

int fsync_dir(const std::string& dir) {
  int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd < 0) return errno;
  int err = 0;
  // Some file systems cannot fsync a directory; the rename itself has still happened.
  if (::fsync(dfd) != 0 && errno != EINVAL && errno != ENOTSUP) err = errno;
  ::close(dfd);
  return err;
}

bool is_symlink(const std::string& path) {
  struct stat st {};
  return ::lstat(path.c_str(), &st) == 0 && S_ISLNK(st.st_mode);
}

// Writes parts to a fresh temp file next to path, fsynced and closed. Returns the temp
// path; on failure removes the temp and throws naming `path`. A path that is a symbolic
// link is refused before anything is written.
std::string write_temp(const std::string& path, const std::vector<std::string_view>& parts) {
  refuse_symlink(path);
  const std::string tmp = fmt::format("{}.tmp.{}", path, ::getpid());
  // O_EXCL: the temp is always a new file, never something (a link) planted under its
  // name. One of that name can only be left by a dead process that had this pid (this
  // one removes its own on every failure): remove it and try once more.
  const int flags = O_WRONLY | O_CREAT | O_EXCL;
  int fd = open_nofollow(tmp, flags);
  if (fd < 0 && errno == EEXIST && ::unlink(tmp.c_str()) == 0) fd = open_nofollow(tmp, flags);
  if (fd < 0) throw_io("write", path, errno, "does the directory exist? create it first");
  struct stat st {};
  // Keep the permission bits of the file being replaced (best effort).
  if (::lstat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode)) ::fchmod(fd, st.st_mode & 07777);
  int err = 0;
  for (std::string_view part : parts) {
    if ((err = write_all(fd, part.data(), part.size())) != 0) break;
  }
  if (err == 0 && ::fsync(fd) != 0) err = errno;
  if (::close(fd) != 0 && err == 0) err = errno;
  if (err != 0) {
    ::unlink(tmp.c_str());
    throw_io("write", path, err);
  }
  return tmp;
}

}  // namespace

void write_file_atomic(const std::string& path, std::string_view bytes) {
  write_file_atomic(path, std::vector<std::string_view>{bytes});
}

void write_file_atomic(const std::string& path, const std::vector<std::string_view>& parts) {
  const std::string tmp = write_temp(path, parts);
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    int err = errno;
    ::unlink(tmp.c_str());
    throw_io("write", path, err);
  }
  if (int err = fsync_dir(parent_dir(path)); err != 0) throw_io("sync the directory of", path, err);
}

void write_file_atomic_keep_previous(const std::string& path,
                                     const std::vector<std::string_view>& parts,
                                     const std::string& previous) {
  refuse_symlink(previous);
  const std::string tmp = write_temp(path, parts);
  const auto fail = [&](const char* verb, const std::string& at, int err) {
    ::unlink(tmp.c_str());
    throw_io(verb, at, err);
  };
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) {  // no file yet: nothing to keep
    if (::rename(tmp.c_str(), path.c_str()) != 0) fail("write", path, errno);
  } else if (::renameat2(AT_FDCWD, tmp.c_str(), AT_FDCWD, path.c_str(), RENAME_EXCHANGE) == 0) {
    // path now holds the new file and tmp the old one, which becomes `previous`.
    if (::rename(tmp.c_str(), previous.c_str()) != 0)
      fail("keep the previous file as", previous, errno);
  } else if (errno == EINVAL || errno == ENOSYS || errno == ENOTSUP) {
    // No atomic exchange on this file system: two renames.
    if (::rename(path.c_str(), previous.c_str()) != 0)
      fail("keep the previous file as", previous, errno);
    if (::rename(tmp.c_str(), path.c_str()) != 0) fail("write", path, errno);
  } else {
    fail("write", path, errno);
  }
  if (int err = fsync_dir(parent_dir(path)); err != 0) throw_io("sync the directory of", path, err);
}

void rename_file(const std::string& from, const std::string& to) {
  if (::rename(from.c_str(), to.c_str()) != 0)
    throw_io(fmt::format("rename '{}' to", from).c_str(), to, errno);
  if (int err = fsync_dir(parent_dir(to)); err != 0) throw_io("sync the directory of", to, err);
}

bool create_file_exclusive(const std::string& path, std::string_view bytes) {
  const std::string tmp = write_temp(path, {bytes});
  // link() fails with EEXIST instead of replacing, so whoever links first wins and
  // nobody ever sees the file without its content.
  int rc = ::link(tmp.c_str(), path.c_str());
  int err = rc == 0 ? 0 : errno;
  ::unlink(tmp.c_str());
  if (err == EEXIST) return false;
  if (err != 0) throw_io("create", path, err);
  if (int e = fsync_dir(parent_dir(path)); e != 0) throw_io("sync the directory of", path, e);
  return true;
}

std::string read_file(const std::string& path, Links links) {
  return read_input(path, kMaxDataFile, links == Links::kFollow);
}

void make_dirs(const std::string& path) {
  if (path.empty()) return;
  std::error_code ec;
  std::filesystem::create_directories(path, ec);
  if (ec) throw Error(fmt::format("cannot create directory '{}': {}", path, describe(ec.value())));
  if (!std::filesystem::is_directory(path, ec))
    throw Error(fmt::format("cannot create directory '{}': a file with that name exists", path));
}

void make_real_dir(const std::string& given) {
  // A trailing '/' would make the kernel follow a link in the last component.
  std::string path = given;
  while (path.size() > 1 && path.back() == '/') path.pop_back();
  if (::mkdir(path.c_str(), 0755) != 0 && errno != EEXIST)
    throw Error(fmt::format("cannot create directory '{}': {}", path, describe(errno)));
  const int fd = open_nofollow(path, O_RDONLY | O_DIRECTORY);
  if (fd < 0) {
    if (errno == ENOTDIR)
      throw Error(fmt::format("cannot create directory '{}': a file with that name exists", path));
    throw Error(fmt::format("cannot open directory '{}': {}", path, describe(errno)));
  }
  ::close(fd);
}

void throw_symlink(const std::string& path) {
  throw Error(fmt::format(
      "'{}' is a symbolic link, and seqbench never writes through one (hint: remove the link; "
      "results are written only to real files and directories)",
      path));
}

void refuse_symlink(const std::string& path) {
  if (is_symlink(path)) throw_symlink(path);
}

int open_nofollow(const std::string& path, int flags, mode_t mode) {
  int fd;
  do {
    fd = ::open(path.c_str(), flags | O_NOFOLLOW | O_CLOEXEC, mode);
  } while (fd < 0 && errno == EINTR);
  // ELOOP: the last component is a link (or a chain of links above it is too long).
  if (fd < 0 && (errno == ELOOP || errno == ENOTDIR)) {
    const int err = errno;
    if (is_symlink(path)) throw_symlink(path);
    errno = err;
  }
  return fd;
}

std::vector<std::string> remove_stale_temps(const std::string& dir) {
  std::vector<std::string> removed;
  const int dfd = open_nofollow(dir, O_RDONLY | O_DIRECTORY);
  if (dfd < 0) return removed;
  DIR* d = ::fdopendir(dfd);
  if (!d) {
    ::close(dfd);
    return removed;
  }
  const pid_t self = ::getpid();
  while (const dirent* e = ::readdir(d)) {
    const std::string_view name = e->d_name;
    // "<name>.tmp.<pid>": a non-empty name, then ".tmp.", then only digits.
    const size_t at = name.rfind(".tmp.");
    if (at == std::string_view::npos || at == 0) continue;
    const std::string_view digits = name.substr(at + 5);
    long long pid = 0;
    const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), pid);
    if (digits.empty() || ec != std::errc() || end != digits.data() + digits.size() || pid <= 0)
      continue;
    struct stat st {};
    if (::fstatat(dfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(st.st_mode)) continue;
    // Alive (kill succeeds, or the process belongs to another user): its write may be in
    // progress. A pid too large for pid_t cannot be a live process.
    const bool fits = pid <= static_cast<long long>(std::numeric_limits<pid_t>::max());
    if (fits && pid != self && (::kill(static_cast<pid_t>(pid), 0) == 0 || errno != ESRCH))
      continue;
    if (::unlinkat(dfd, e->d_name, 0) == 0) removed.emplace_back(name);
  }
  ::closedir(d);  // closes dfd
  return removed;
}

std::string OutOfSpace::then(const std::string& next) const {
  std::string msg = what();
  msg.insert(msg.size() - 1, ", then " + next);  // inside the hint's parentheses
  return msg;
}

int stdout_checked(int code, const std::string& command) {
  if (std::fflush(stdout) == 0 && !std::ferror(stdout)) return code;
  fmt::print(stderr, "seqbench {}: error: cannot write to standard output: {}\n", command,
             std::strerror(errno ? errno : EIO));
  return code == 0 ? kExitError : code;
}

bool file_exists(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0;
}

AppendFile::AppendFile(const std::string& path) : path_(path) {
  fd_ = open_nofollow(path, O_WRONLY | O_APPEND | O_CREAT);
  if (fd_ < 0) throw_io("open for appending", path, errno, "does the directory exist?");
}

AppendFile::~AppendFile() {
  if (fd_ >= 0) ::close(fd_);
}

AppendFile::AppendFile(AppendFile&& o) noexcept
    : path_(std::move(o.path_)), fd_(std::exchange(o.fd_, -1)) {}

AppendFile& AppendFile::operator=(AppendFile&& o) noexcept {
  if (this != &o) {
    if (fd_ >= 0) ::close(fd_);
    path_ = std::move(o.path_);
    fd_ = std::exchange(o.fd_, -1);
  }
  return *this;
}

void AppendFile::write(std::string_view bytes) {
  SB_CHECK(fd_ >= 0, "write to a moved-from AppendFile");
  struct stat st {};
  const bool regular = ::fstat(fd_, &st) == 0 && S_ISREG(st.st_mode);
  const off_t before = st.st_size;
  int err = write_all(fd_, bytes.data(), bytes.size());
  if (err == 0) return;
  // Drop the partial record so readers never see half a row. Best effort: skipped if
  // another process appended meanwhile (the size is not what we left).
  struct stat now {};
  if (regular && ::fstat(fd_, &now) == 0 && now.st_size > before &&
      now.st_size < before + static_cast<off_t>(bytes.size())) {
    [[maybe_unused]] int rc = ::ftruncate(fd_, before);
  }
  throw_io("append to", path_, err);
}

void AppendFile::flush_sync() {
  SB_CHECK(fd_ >= 0, "flush of a moved-from AppendFile");
  // EINVAL: not a file that can be synced (a pipe, /dev/stderr); nothing is lost there.
  if (::fsync(fd_) != 0 && errno != EINVAL) throw_io("sync", path_, errno);
}

}  // namespace seqbench::core

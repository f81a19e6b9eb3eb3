// An advisory lock on a file (flock(2)), held from construction to destruction: the one
// way seqbench keeps two processes apart (a run directory's .lock, runs.csv.lock, a
// sweep's look at whether a run is live). flock locks belong to the open file, so two
// FileLocks on one path conflict even inside one process, and the kernel drops the lock
// when the process dies, however it dies: a stale lock file is harmless.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>

namespace seqbench::core {

class FileLock {
 public:
  enum class Mode { kExclusive, kShared };

  // Opens path (created 0644 when missing; O_NOFOLLOW, so a symbolic link there is refused
  // naming it) and waits until the lock is granted. Throws core::Error naming the path
  // when the file cannot be opened or locked.
  explicit FileLock(const std::string& path, Mode mode = Mode::kExclusive);
  // The lock if it is free now, else nullopt (another holder conflicts); never waits.
  // Throws like the constructor for any other failure.
  static std::optional<FileLock> try_lock(const std::string& path, Mode mode = Mode::kExclusive);

  ~FileLock();
  FileLock(FileLock&& o) noexcept;
  FileLock& operator=(FileLock&& o) noexcept;
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;

  // Replaces the lock file's content with text, best effort: a note for whoever finds the
  // lock taken (the run lock records its holder's pid). Exclusive locks only.
  void write_note(std::string_view text);
  // The note of a lock file ("" when it has none or cannot be read).
  static std::string read_note(const std::string& path);

  const std::string& path() const { return path_; }
  Mode mode() const { return mode_; }

 private:
  FileLock(std::string path, Mode mode, int fd) : path_(std::move(path)), mode_(mode), fd_(fd) {}
  // The locked descriptor, or -1 when blocking is false and the lock is taken.
  static int acquire(const std::string& path, Mode mode, bool blocking);

  std::string path_;
  Mode mode_;
  int fd_ = -1;
};

}  // namespace seqbench::core

// Small file-system layer for everything a run writes (results, checkpoints, logs).
// The rule it enforces: a crash, a full disk or Ctrl-C never leaves a half-written file
// where a complete one used to be. Whole files are replaced atomically
// (write_file_atomic); growing files (CSV rows, log lines) are appended one record per
// write(2) and fsynced by the caller at record boundaries (AppendFile).
// Nothing here writes through a symbolic link: every file opened for writing is opened
// with O_NOFOLLOW, a temporary file is created with O_EXCL, and a path that is a link is
// refused with an error naming it (reading a file, e.g. a config or a data set, still
// follows links).
// Every error is a core::Error whose one-line message names the path and strerror.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/check.hpp"

namespace seqbench::core {

// A write that failed for want of room: a full disk (ENOSPC), a quota (EDQUOT) or the
// file-size limit (EFBIG: `ulimit -f`, whose signal is ignored). Its message ends with a
// hint to make room, in parentheses; a caller that knows what comes after that adds it.
class OutOfSpace : public Error {
 public:
  using Error::Error;
  // The message with ", then <next>" added to its hint: the training flow says whether
  // the run continues with --resume or starts again (it has no checkpoint yet).
  std::string then(const std::string& next) const;
};

// Writes the whole file atomically: write "<path>.tmp.<pid>" (created with O_EXCL and
// O_NOFOLLOW; a leftover of that name, which only a dead process with this pid can have
// left, is removed first), fsync, rename over path, fsync the directory. On any failure
// (ENOSPC is reported as "disk full", EACCES, ...) throws naming the path; the old file,
// if any, is left intact and the temp is removed. An existing file's permission bits are
// kept. A path that is a symbolic link is refused (refuse_symlink), not replaced.
void write_file_atomic(const std::string& path, std::string_view bytes);
// Same, with the content given as consecutive pieces (written back to back), so large
// payloads such as checkpoint arrays need not be copied into one buffer first.
void write_file_atomic(const std::string& path, const std::vector<std::string_view>& parts);
// Same, and the file that path held before (if any) becomes `previous`, by renames only:
// the two stay separate files (never two names of one), so damage to the new file cannot
// reach the previous one. Where the file system can exchange two names atomically
// (renameat2 RENAME_EXCHANGE) path names a complete file at every moment: a crash in
// between leaves the new file at path and the old one in "<path>.tmp.<pid>" (removed by
// remove_stale_temps); elsewhere path is missing for the instant between two renames.
void write_file_atomic_keep_previous(const std::string& path,
                                     const std::vector<std::string_view>& parts,
                                     const std::string& previous);

// Creates path with the given content only if nothing exists there yet, atomically
// (temp file + link), so concurrent runs racing to create e.g. runs.csv never see it
// without its header. Returns false if path already existed (nothing written).
bool create_file_exclusive(const std::string& path, std::string_view bytes);

// Renames `from` to `to` (replacing what `to` was, atomically) and fsyncs the directory.
// Throws core::Error naming both paths.
void rename_file(const std::string& from, const std::string& to);

// Whole file as bytes. Throws "cannot read '<path>': <strerror>". With Links::kRefuse a
// path that is a symbolic link is refused (for files seqbench reads back to rewrite).
enum class Links { kFollow, kRefuse };
std::string read_file(const std::string& path, Links links = Links::kFollow);

// mkdir -p. An empty path is a no-op; an existing directory is fine; an existing
// non-directory (or any other failure) throws naming the path. Follows symbolic links
// (for a root the user names, such as --out).
void make_dirs(const std::string& path);
// Creates the one directory path (its parent must exist) unless it is there already, and
// checks that what is there is a real directory: a symbolic link (to a directory or not)
// or a file is refused naming it. For the directories seqbench owns below a root.
void make_real_dir(const std::string& path);

// Throws core::Error naming path when path itself is a symbolic link ("it is a symbolic
// link, and seqbench never writes through one"). Nothing there, or anything else, is fine.
void refuse_symlink(const std::string& path);
// The same error, for a caller that found the link itself (e.g. an O_NOFOLLOW open).
[[noreturn]] void throw_symlink(const std::string& path);
// open(2) with O_NOFOLLOW | O_CLOEXEC added and EINTR retried. A path that is a symbolic
// link throws throw_symlink's error; any other failure returns -1 with errno set.
int open_nofollow(const std::string& path, int flags, mode_t mode = 0644);

// Removes, from dir itself (not below it), the temporary files that write_file_atomic
// leaves when its process is killed mid-write: regular files named "<name>.tmp.<pid>"
// whose pid is not a live process, or is this process's own (call it before this process
// writes into dir: a file with its pid is then from an earlier process that had the
// same pid). Nothing else is touched. Returns the names removed.
std::vector<std::string> remove_stale_temps(const std::string& dir);

// True if something (file, directory, ...) exists at path.
bool file_exists(const std::string& path);

// What a command printed must have reached its reader: a full disk or a closed pipe behind
// stdout (`--dump-config > /dev/full`) is an error, not a silent exit 0. Flushes stdout and
// returns `code`; when that or an earlier write to stdout failed, prints "seqbench
// <command>: error: cannot write to standard output: ..." and returns `code`, or 1 for 0.
// Every binary's main() returns through it.
int stdout_checked(int code, const std::string& command);

// Append-only file for logs and CSV rows. write() hands the bytes to the kernel in one
// go (no user-space buffer), so a process crash loses nothing already written; a failed
// write (e.g. disk full) throws and trims the partial record so the file stays a
// sequence of whole records. flush_sync() fsyncs, so a power loss loses at most the
// records written since the last call. The file is opened with O_NOFOLLOW: a symbolic
// link at path is refused naming it. Move-only.
class AppendFile {
 public:
  explicit AppendFile(const std::string& path);  // creates the file if missing (0644)
  ~AppendFile();
  AppendFile(AppendFile&& o) noexcept;
  AppendFile& operator=(AppendFile&& o) noexcept;
  AppendFile(const AppendFile&) = delete;
  AppendFile& operator=(const AppendFile&) = delete;

  void write(std::string_view bytes);
  void flush_sync();
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  int fd_ = -1;
};

}  // namespace seqbench::core

// Small file-system layer for everything a run writes (results, checkpoints, logs).
// The rule it enforces: a crash, a full disk or Ctrl-C never leaves a half-written file
// where a complete one used to be. Whole files are replaced atomically
// (write_file_atomic); growing files (CSV rows, log lines) are appended one record per
// write(2) and fsynced by the caller at record boundaries (AppendFile).
// Every error is a core::Error whose one-line message names the path and strerror.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace seqbench::core {

// Writes the whole file atomically: write "<path>.tmp.<pid>", fsync, rename over path,
// fsync the directory. On any failure (ENOSPC is reported as "disk full", EACCES, ...)
// throws naming the path; the old file, if any, is left intact and the temp is removed.
// An existing file's permission bits are kept.
void write_file_atomic(const std::string& path, std::string_view bytes);
// Same, with the content given as consecutive pieces (written back to back), so large
// payloads such as checkpoint arrays need not be copied into one buffer first.
void write_file_atomic(const std::string& path, const std::vector<std::string_view>& parts);

// Creates path with the given content only if nothing exists there yet, atomically
// (temp file + link), so concurrent runs racing to create e.g. runs.csv never see it
// without its header. Returns false if path already existed (nothing written).
bool create_file_exclusive(const std::string& path, std::string_view bytes);

// Makes `to` a second name of the file at `from` (a hard link, so no data is copied and no
// space is needed), replacing whatever `to` was atomically; falls back to a copy where the
// file system has no hard links. Throws core::Error naming both paths.
void link_replace(const std::string& from, const std::string& to);

// Whole file as bytes. Throws "cannot read '<path>': <strerror>".
std::string read_file(const std::string& path);

// mkdir -p. An empty path is a no-op; an existing directory is fine; an existing
// non-directory (or any other failure) throws naming the path.
void make_dirs(const std::string& path);

// True if something (file, directory, ...) exists at path.
bool file_exists(const std::string& path);

// Append-only file for logs and CSV rows. write() hands the bytes to the kernel in one
// go (no user-space buffer), so a process crash loses nothing already written; a failed
// write (e.g. disk full) throws and trims the partial record so the file stays a
// sequence of whole records. flush_sync() fsyncs, so a power loss loses at most the
// records written since the last call. Move-only.
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

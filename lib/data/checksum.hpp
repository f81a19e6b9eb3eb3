// Which data made a run: the sha256 of every data file a loader reads, checked against
// the SHA256SUMS that tools/fetch_data writes beside the files (sha256sum's format), and
// one checksum for the whole set that each run records in summary.json and runs.csv.
//
// A file is hashed once: its digest is remembered in "<dir>/.sha256-cache" together
// with its size and modification time, and hashed again only when either changes. The
// comparison with SHA256SUMS happens on every load (it costs nothing), so an edited
// SHA256SUMS or a replaced file is always noticed. The cache is best effort: a read-only
// data directory just means hashing on every load.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace seqbench::data {

// Incremental sha256 (OpenSSL) for data given in pieces.
class Sha256 {
 public:
  Sha256();
  ~Sha256();
  Sha256(const Sha256&) = delete;
  Sha256& operator=(const Sha256&) = delete;
  void update(std::string_view bytes);
  std::string hex();  // lower-case; call once, at the end

 private:
  void* ctx_;
};

// Lower-case hex sha256 (OpenSSL). sha256_file throws core::Error naming the path.
std::string sha256_hex(std::string_view bytes);
std::string sha256_file(const std::string& path);

struct DataDigest {
  // (file name without its directory, sha256), in the order the loader read them.
  std::vector<std::pair<std::string, std::string>> files;
  // True when every file matched a recorded checksum; false when any file had none
  // (no SHA256SUMS, or SHA256SUMS does not list it). A mismatch is an error, not false.
  bool verified = true;

  // The set's checksum: sha256 of the `sha256sum`-style listing ("<sha256>  <name>\n"
  // per file, sorted by name), so the same files give the same value wherever they live.
  // Empty when no file was read.
  std::string sha256() const;
  // Appends another part of the same data set (e.g. the validation files).
  void merge(const DataDigest& other);
};

// Hashes (or recalls) each file and checks it against its directory's SHA256SUMS.
// Files that do not exist are skipped (the loader reports them with its own hint).
// Throws core::Error for a file that differs from its recorded checksum, naming the
// file, both digests and what to do.
DataDigest check_files(const std::vector<std::string>& paths);

}  // namespace seqbench::data

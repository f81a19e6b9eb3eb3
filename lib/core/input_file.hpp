// Opening the files seqbench reads as input, with bounds: a regular file only (a FIFO, a
// device such as /dev/zero, a socket or a directory is refused at once, before anything
// is read or waited for), and no larger than a cap per kind of file. The caps are in
// docs/reliability.md, "Bounded reads".
#pragma once

#include <cstdint>
#include <string>

namespace seqbench::core {

inline constexpr uint64_t kMiB = uint64_t(1) << 20;
inline constexpr uint64_t kGiB = uint64_t(1) << 30;
// Configs, sweep files, SHA256SUMS, a run's config.yaml and summary.json, lock notes.
inline constexpr uint64_t kMaxTextFile = 16 * kMiB;
// runs.csv, metrics.csv, gradnorm.csv and the logs a sweep reads back.
inline constexpr uint64_t kMaxTableFile = 1 * kGiB;
// Data sets (IDX, npy/npz, text corpora) and anything else read whole.
inline constexpr uint64_t kMaxDataFile = 16 * kGiB;
// Checkpoints (read piece by piece; every array is also checked against the header).
inline constexpr uint64_t kMaxCheckpointFile = 1024 * kGiB;

// Opens path for reading (O_NONBLOCK for the open, so a FIFO without a writer cannot make
// it wait, then cleared) and checks with fstat that it is a regular file of at most
// max_bytes. Throws core::Error naming the path and what it is instead ("a FIFO", "a
// character device", "a directory", "N bytes, above the limit of M"). With
// follow_links false a symbolic link is refused too (O_NOFOLLOW). Returns the descriptor
// (O_CLOEXEC) and its size in *size.
int open_input(const std::string& path, uint64_t max_bytes, uint64_t* size, bool follow_links = true);

// The whole file, opened by open_input; at most max_bytes are read even if it grows.
std::string read_input(const std::string& path, uint64_t max_bytes, bool follow_links = true);

}  // namespace seqbench::core

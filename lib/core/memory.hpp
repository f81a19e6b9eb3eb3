// Memory sizes for people and for the machine: "1.5 GiB" both ways, and how much memory
// this machine has available for a run (the default limit of --max-memory).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace seqbench::core {

// The largest size parse_size accepts (1 EiB): any estimate below it keeps every buffer's
// element count far from int64 overflow.
inline constexpr uint64_t kMaxMemorySize = uint64_t(1) << 60;

// "4G", "512M", "1.5GiB", "100k", "2 TB", "123456" (bytes) -> bytes. Suffixes k, M, G, T,
// P, E with or without "B" / "iB", any case, are powers of 1024 (as free(1) and Slurm's
// --mem read them); a bare "B" or no suffix is bytes. nullopt for anything else, for 0,
// and above kMaxMemorySize.
std::optional<uint64_t> parse_size(const std::string& text);

// 1536 -> "1.5 KiB", 3 -> "3 B": three significant digits, binary units.
std::string format_bytes(uint64_t bytes);

struct AvailableMemory {
  uint64_t bytes = 0;
  std::string source;  // "MemAvailable in /proc/meminfo" or "physical memory"
};
// MemAvailable from /proc/meminfo; where that cannot be read, the physical memory
// (sysconf). 0 bytes when neither is known.
AvailableMemory available_memory();

}  // namespace seqbench::core

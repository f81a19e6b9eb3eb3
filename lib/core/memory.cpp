#include "core/memory.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <cctype>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <sstream>

namespace seqbench::core {

std::optional<uint64_t> parse_size(const std::string& text) {
  size_t i = 0;
  while (i < text.size() && std::isspace(static_cast<unsigned char>(text[i]))) ++i;
  const size_t num_start = i;
  while (i < text.size() && (std::isdigit(static_cast<unsigned char>(text[i])) || text[i] == '.'))
    ++i;
  if (i == num_start) return std::nullopt;
  const std::string number = text.substr(num_start, i - num_start);
  if (number.find('.') != number.rfind('.') || number == ".") return std::nullopt;
  while (i < text.size() && std::isspace(static_cast<unsigned char>(text[i]))) ++i;
  std::string unit;
  for (; i < text.size(); ++i) {
    if (std::isspace(static_cast<unsigned char>(text[i]))) break;
    unit += char(std::tolower(static_cast<unsigned char>(text[i])));
  }
  while (i < text.size() && std::isspace(static_cast<unsigned char>(text[i]))) ++i;
  if (i != text.size()) return std::nullopt;
  int power = 0;
  if (!unit.empty() && unit != "b") {
    const std::string prefixes = "kmgtpe";
    const size_t p = prefixes.find(unit[0]);
    if (p == std::string::npos) return std::nullopt;
    const std::string rest = unit.substr(1);
    if (!rest.empty() && rest != "b" && rest != "ib") return std::nullopt;
    power = int(p) + 1;
  }
  const double value = std::strtod(number.c_str(), nullptr) * std::pow(1024.0, power);
  if (!std::isfinite(value) || value < 1 || value > double(kMaxMemorySize)) return std::nullopt;
  return uint64_t(std::llround(value));
}

std::string format_bytes(uint64_t bytes) {
  static const char* const kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  double v = double(bytes);
  int u = 0;
  while (v >= 1024 && u < 6) {
    v /= 1024;
    ++u;
  }
  if (u == 0) return fmt::format("{} B", bytes);
  return fmt::format("{:.{}f} {}", v, v < 10 ? 2 : v < 100 ? 1 : 0, kUnits[u]);
}

AvailableMemory available_memory() {
  std::ifstream f("/proc/meminfo");
  std::string line;
  while (std::getline(f, line)) {
    std::istringstream in(line);
    std::string key, unit;
    uint64_t kib = 0;
    if (in >> key >> kib >> unit && key == "MemAvailable:" && unit == "kB")
      return {kib * 1024, "MemAvailable in /proc/meminfo"};
  }
  const long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGE_SIZE);
  if (pages > 0 && page > 0) return {uint64_t(pages) * uint64_t(page), "physical memory"};
  return {0, "unknown"};
}

}  // namespace seqbench::core

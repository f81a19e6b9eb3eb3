#include "report/paper_sources.hpp"

#include <fmt/format.h>

#include <filesystem>

#include "report/compare.hpp"

namespace seqbench::report {

namespace fs = std::filesystem;

namespace {

std::string base_name(std::string dir) {
  while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
  return fs::path(dir).filename().string();
}

}  // namespace

std::optional<std::string> sweep_size(const std::string& dir, const std::string& sweep) {
  const std::string b = base_name(dir);
  if (b == sweep + "_small") return std::string("small");
  if (b == sweep + "_paper") return std::string("paper");
  if (b == sweep) return b;
  return std::nullopt;
}

std::vector<PaperSource> paper_sources(const PaperSpec& paper, const std::string& sweep,
                                       const PaperReportOptions& opts) {
  std::vector<PaperSource> out;
  if (opts.sweep_dirs.empty()) {
    for (const char* size : {"paper", "small"}) {
      const std::string dir =
          fmt::format("{}/papers/{}/{}_{}", opts.results_root, paper.name, sweep, size);
      if (fs::is_directory(dir)) out.push_back({dir, size});
    }
    return out;
  }
  for (const auto& dir : opts.sweep_dirs)
    if (auto size = sweep_size(dir, sweep)) out.push_back({dir, *size});
  return out;
}

std::string expand_dir(std::string text, const std::string& dir) {
  const size_t at = text.find("{dir}");
  if (at != std::string::npos) text.replace(at, 5, dir);
  return text;
}

}  // namespace seqbench::report

#include "report/run_id.hpp"

#include <algorithm>
#include <cctype>

#include <sys/stat.h>

#include <cerrno>
#include <filesystem>
#include <system_error>

#include "core/check.hpp"
#include "core/fs.hpp"

namespace seqbench::report {

std::string make_run_id(const std::string& results_dir, const std::string& prefix, uint64_t seed) {
  std::time_t now = std::time(nullptr);
  std::tm local{};
  localtime_r(&now, &local);
  return make_run_id(results_dir, prefix, seed, local);
}

void check_run_id(const std::string& id, const std::string& what) {
  // Letters, digits and "-_.", plus '+' (sweep ids keep it from values such as 1e+05).
  const bool name_chars = std::all_of(id.begin(), id.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.' ||
           c == '+';
  });
  if (id.empty() || id.size() > 128 || id[0] == '.' || !name_chars)
    throw core::UsageError(fmt::format(
        "{}: '{}' cannot name a run directory (it must be one name inside the results root: "
        "1 to 128 letters, digits and '-_.+', not starting with '.')",
        what, id));
}

std::string make_run_id(const std::string& results_dir, const std::string& prefix, uint64_t seed,
                        const std::tm& when) {
  check_run_id(prefix, "run id prefix (output.label or the model name)");
  // The root above may be a link the user made; the experiment's directory itself must be
  // a real directory, or the run would be written outside the root.
  if (!results_dir.empty()) {
    core::make_dirs(std::filesystem::path(results_dir).parent_path().string());
    core::make_real_dir(results_dir);
  }
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", &when);
  const std::string base = fmt::format("{}-{}-s{}", prefix, stamp, seed);
  for (int k = 1; k < 100000; ++k) {
    std::string id = k == 1 ? base : fmt::format("{}-{}", base, k);
    std::string dir = results_dir.empty() ? id : results_dir + "/" + id;
    if (::mkdir(dir.c_str(), 0755) == 0) return id;
    if (errno != EEXIST)
      throw core::Error(fmt::format("cannot create run directory '{}': {}", dir,
                                    std::error_code(errno, std::generic_category()).message()));
  }
  throw core::Error(
      fmt::format("{}: too many runs named '{}' (hint: clean up old runs)", results_dir, base));
}

namespace {
// The "-YYYYmmdd-HHMMSS-s<seed>[-k]" tail of a made id: where it starts, or npos.
size_t stamp_at(std::string_view id) {
  const auto digits = [&](size_t from, size_t n) {
    if (from + n > id.size()) return false;
    for (size_t i = from; i < from + n; ++i)
      if (!std::isdigit(static_cast<unsigned char>(id[i]))) return false;
    return true;
  };
  for (size_t at = id.find('-'); at != std::string_view::npos; at = id.find('-', at + 1)) {
    // -YYYYmmdd-HHMMSS-s
    if (!digits(at + 1, 8) || id.substr(at + 9, 1) != "-" || !digits(at + 10, 6) ||
        id.substr(at + 16, 2) != "-s")
      continue;
    size_t i = at + 18, n = 0;
    while (i < id.size() && std::isdigit(static_cast<unsigned char>(id[i]))) ++i, ++n;
    if (n == 0) continue;
    if (i < id.size()) {  // "-k", the suffix of a second run in the same second
      if (id[i] != '-' || i + 1 == id.size()) continue;
      bool all = true;
      for (size_t j = i + 1; j < id.size(); ++j) all &= std::isdigit(static_cast<unsigned char>(id[j])) != 0;
      if (!all) continue;
    }
    return at;
  }
  return std::string_view::npos;
}
}  // namespace

std::string run_id_prefix(std::string_view id) {
  const size_t at = stamp_at(id);
  return at == std::string_view::npos || at == 0 ? std::string() : std::string(id.substr(0, at));
}

std::string newest_run_id(const std::string& results_dir, const std::string& prefix) {
  std::error_code ec;
  std::string best, best_key;
  for (const auto& e : std::filesystem::directory_iterator(results_dir, ec)) {
    const std::string id = e.path().filename().string();
    const std::string p = run_id_prefix(id);
    if (p.empty() || (!prefix.empty() && p != prefix)) continue;
    if (!core::file_exists(e.path().string() + "/config.yaml")) continue;
    // Date and time, then the seed and same-second suffix as they were written.
    const std::string key = id.substr(p.size() + 1, 15) + id.substr(p.size() + 16);
    if (best.empty() || key > best_key) {
      best = id;
      best_key = key;
    }
  }
  return best;
}

}  // namespace seqbench::report

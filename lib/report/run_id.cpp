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

}  // namespace seqbench::report

#include "report/run_id.hpp"

#include <sys/stat.h>

#include <cerrno>
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

std::string make_run_id(const std::string& results_dir, const std::string& prefix, uint64_t seed,
                        const std::tm& when) {
  if (prefix.empty() || prefix.find('/') != std::string::npos)
    throw core::UsageError(fmt::format(
        "run id prefix '{}' must be non-empty and contain no '/' (hint: use the model name)",
        prefix));
  core::make_dirs(results_dir);
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

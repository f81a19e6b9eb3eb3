#include "apps/wikitext103/analysis_output.hpp"

#include <fmt/format.h>

#include "core/fs.hpp"

namespace seqbench::apps {

std::string write_run_analysis(const std::string& run_dir, const std::string& out_dir, const std::string& stem,
                               const std::string& csv, const std::string& md) {
  const std::string out = out_dir.empty() ? run_dir + "/" + stem : out_dir;
  core::make_dirs(out);
  core::write_file_atomic(out + "/" + stem + ".csv", csv);
  core::write_file_atomic(out + "/" + stem + ".md", md);
  fmt::print("{}\nwrote {}/{}.{{csv,md}}\n", md, out, stem);
  return out;
}

}  // namespace seqbench::apps

// Where a paper report finds its runs (paper_report.hpp): the sweep directories of each
// table's or figure's sweep, and the config signature that groups runs differing only in
// their seed.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "report/compare.hpp"
#include "report/paper_report.hpp"

namespace seqbench::report {

// A sweep directory and the size of the sweep file that made it.
struct PaperSource {
  std::string dir, size;
};

// The size a directory stands for ("small", "paper", or the sweep's own name), if its
// name is that of one of `sweep`'s directories.
std::optional<std::string> sweep_size(const std::string& dir, const std::string& sweep);

// The directories of `sweep` to read: opts.sweep_dirs whose names match it, or when none
// were given, results_root/papers/<paper>/<sweep>_{paper,small} where they exist.
std::vector<PaperSource> paper_sources(const PaperSpec& paper, const std::string& sweep,
                                       const PaperReportOptions& opts);

// `text` with its first "{dir}" replaced by dir.
std::string expand_dir(std::string text, const std::string& dir);

}  // namespace seqbench::report

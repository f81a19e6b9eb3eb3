// Where the attention analyses of a trained run (`seqbench report attention jsd|swap`) put
// their tables: OUT (default RUN_DIR/<stem>)/<stem>.csv and <stem>.md, each written
// atomically, with the Markdown also printed.
#pragma once

#include <string>

namespace seqbench::apps {

// Returns the directory written to.
std::string write_run_analysis(const std::string& run_dir, const std::string& out_dir, const std::string& stem,
                               const std::string& csv, const std::string& md);

}  // namespace seqbench::apps

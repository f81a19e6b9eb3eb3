// `seqbench report paper NAME [SWEEP_DIR...]`, `seqbench report papers` and `seqbench report
// claims`: the paper reports (lib/report/paper_report.hpp) and the claims page
// (lib/report/claims.hpp) behind the report front door.
#pragma once

#include <CLI/CLI.hpp>

#include <string>
#include <vector>

namespace seqbench::apps {

struct PaperCommand {
  CLI::App* paper = nullptr;   // `report paper`
  CLI::App* papers = nullptr;  // `report papers`
  CLI::App* claims = nullptr;  // `report claims`
  std::string claims_dir = "configs/claims", root = ".", recheck, recheck_label = "other seeds";
  std::string name;
  std::vector<std::string> dirs;
  std::string out, results = "results", bench = "results/bench", format = "md";
  bool parsed() const { return paper->parsed() || papers->parsed() || claims->parsed(); }
};

// Adds the three subcommands to `report`; their options land in cmd.
void add_paper_commands(CLI::App& report, PaperCommand& cmd);
int paper_command(const PaperCommand& cmd);

}  // namespace seqbench::apps

#include "apps/minigrid/minigrid_report.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>

#include "core/check.hpp"
#include "core/fs.hpp"
#include "report/paper_spec.hpp"

namespace seqbench::apps {
report::CsvTable minigrid_table(const report::CsvTable& runs, double target) {
  report::CsvTable out;
  out.path = runs.path;
  out.columns = {"env",           "core",         "seed",        "frames",
                 fmt::format("frames to {:g}", target), "final return", "best return",
                 "paper",         "source",       "status"};
  const std::filesystem::path dir = std::filesystem::path(runs.path).parent_path();
  for (size_t r = 0; r < runs.rows.size(); ++r) {
    const auto& row = runs.rows[r];
    const auto cell = [&](const char* c) { return row[size_t(runs.col(c))]; };
    // The final and best returns are the run's own (its summary.json and runs.csv row:
    // the validations), so the table always agrees with them; the learning curve in
    // ppo.csv only says when the training episodes first reached the target. (Its last
    // row may predate the last updates: a PPO update that train.steps cuts short writes
    // no row.)
    const std::string final_ret = fmt::format("{:.3f}", runs.number(r, "final_metric"));
    const std::string best_ret = fmt::format("{:.3f}", runs.number(r, "best_metric"));
    std::string solved = "-";
    const std::string ppo = (dir / cell("run_id") / "ppo.csv").string();
    if (core::file_exists(ppo)) {
      const report::CsvTable p = report::read_csv(ppo);
      for (size_t i = 0; i < p.rows.size() && solved == "-"; ++i)
        if (p.number(i, "return_mean") >= target)
          solved = fmt::format("{:.0f}", p.number(i, "frames"));
    }
    // Kerg et al.'s number for this core and environment, if one is recorded
    // (configs/papers/kerg2020/numbers.yaml, table minigrid).
    const auto [paper, source] = report::paper_cells("kerg2020", "minigrid", cell("core"),
                                                     report::apply_key_transform("minigrid_env", cell("env")));
    out.rows.push_back({cell("env"), cell("core"), cell("seed"), cell("frames"), solved,
                        final_ret, best_ret, paper, source, cell("status")});
  }
  return out;
}

}  // namespace seqbench::apps

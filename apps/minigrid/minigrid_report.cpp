#include "apps/minigrid/minigrid_report.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>

#include "core/check.hpp"
#include "core/fs.hpp"

namespace seqbench::apps {
report::CsvTable minigrid_table(const report::CsvTable& runs, double target) {
  report::CsvTable out;
  out.path = runs.path;
  out.columns = {"env",           "core",         "seed",        "frames",
                 fmt::format("frames to {:g}", target), "final return", "best return",
                 "status"};
  const std::filesystem::path dir = std::filesystem::path(runs.path).parent_path();
  for (size_t r = 0; r < runs.rows.size(); ++r) {
    const auto& row = runs.rows[r];
    const auto cell = [&](const char* c) { return row[size_t(runs.col(c))]; };
    std::string solved = "-", final_ret = "-", best_ret = "-";
    const std::string ppo = (dir / cell("run_id") / "ppo.csv").string();
    if (core::file_exists(ppo)) {
      const report::CsvTable p = report::read_csv(ppo);
      double best = -1;
      for (size_t i = 0; i < p.rows.size(); ++i) {
        const double ret = p.number(i, "return_mean");
        if (solved == "-" && ret >= target)
          solved = fmt::format("{:.0f}", p.number(i, "frames"));
        best = std::max(best, ret);
      }
      if (!p.rows.empty()) {
        final_ret = fmt::format("{:.3f}", p.number(p.rows.size() - 1, "return_mean"));
        best_ret = fmt::format("{:.3f}", best);
      }
    }
    out.rows.push_back({cell("env"), cell("core"), cell("seed"), cell("frames"), solved,
                        final_ret, best_ret, cell("status")});
  }
  return out;
}

}  // namespace seqbench::apps

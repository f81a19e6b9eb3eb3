#include "apps/minigrid/minigrid_curve.hpp"

#include <fmt/format.h>

#include "core/fs.hpp"
#include "report/csv.hpp"
#include "report/gnuplot.hpp"

namespace seqbench::apps {

std::string write_learning_curve(const std::string& dir, const std::string& label,
                                 const std::string& env) {
  const std::string csv = dir + "/ppo.csv";
  if (!core::file_exists(csv)) return "no ppo.csv: no learning curve";
  const report::CsvTable t = report::read_csv(csv);
  const int fc = t.col("frames"), rc = t.col("return_mean");
  std::string dat = "# frames return_mean (mean return of the last episodes)\n";
  for (const auto& r : t.rows) dat += r[size_t(fc)] + " " + r[size_t(rc)] + "\n";
  report::GnuplotFigure fig;
  fig.stem = "learning_curve";
  fig.written_by = "seqbench minigrid";
  fig.settings = fmt::format(
      "set title {} noenhanced\n"
      "set xlabel 'frames'\n"
      "set ylabel 'mean return (last episodes)'\n"
      "set yrange [0:1]\n"
      "set format x '%.1s%c'\n"
      "unset key\n",  // one series, named in the title
      report::gp_quote(label + " on " + env));
  fig.plot = fmt::format("plot 'learning_curve.dat' using 1:2 with lines {} title {}\n",
                         report::series_style(0), report::gp_quote(label));
  fig.width = 800;
  fig.height = 500;
  fig.svg = false;
  const report::FigureFiles files = report::write_figure(dir, fig, dat);
  if (t.rows.empty()) return "learning curve: no PPO update finished yet, no PNG";
  const report::GnuplotStatus g = report::run_gnuplot(files.script);
  if (!g.drawn()) return fmt::format("learning curve: PNG skipped ({}); data and script in {}", g.message, dir);
  return fmt::format("learning curve: {}", files.png);
}

}  // namespace seqbench::apps

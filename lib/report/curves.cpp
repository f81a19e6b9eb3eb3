#include "report/curves.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <tuple>

#include "core/check.hpp"
#include "core/fs.hpp"
#include "report/compare.hpp"
#include "report/csv.hpp"
#include "report/gradnorm.hpp"
#include "report/paper_sources.hpp"
#include "report/run_configs.hpp"

namespace seqbench::report {
namespace {

namespace fs = std::filesystem;

// A cell as a number; NaN when it is empty or not one (a run that never validated).
double value_of(const std::string& cell) {
  char* end = nullptr;
  const double v = std::strtod(cell.c_str(), &end);
  return cell.empty() || *end != '\0' ? NAN : v;
}

// Loss spans decades on most tasks; a log axis when every value is positive and they do.
bool wants_log(const std::vector<BandPoint>& a, const std::vector<BandPoint>& b) {
  double lo = INFINITY, hi = 0;
  for (const auto* pts : {&a, &b})
    for (const auto& p : *pts) {
      if (!(p.lo > 0)) return false;
      lo = std::min(lo, p.lo);
      hi = std::max(hi, p.hi);
    }
  return hi > 10 * lo;
}

}  // namespace

RunCurves load_run_curves(const std::string& run_dir) {
  const std::string path = run_dir + "/metrics.csv";
  if (!core::file_exists(path))
    throw core::Error(fmt::format("{}: no such file (a run directory holds metrics.csv)", path));
  const CsvTable t = read_csv(path);
  const int step = t.col("step"), split = t.col("split"), loss = t.col("loss");
  if (t.columns.size() < 4 || loss != 2)
    throw core::Error(fmt::format("{}: not a metrics file (columns: step, split, loss, <metric>, ...)", path));
  RunCurves c;
  c.dir = run_dir;
  c.label = run_label(run_dir);
  c.metric = t.columns[3];
  for (const auto& row : t.rows) {
    const double x = value_of(row[size_t(step)]);
    const bool train = row[size_t(split)] == "train";
    if (!train && row[size_t(split)] != "valid") continue;
    (train ? c.train_loss : c.valid_loss).push_back({x, value_of(row[size_t(loss)])});
    (train ? c.train_metric : c.valid_metric).push_back({x, value_of(row[3])});
  }
  return c;
}

std::vector<CurveGroup> experiment_curve_groups(const std::string& exp_dir) {
  const CsvTable runs = read_csv(exp_dir + "/runs.csv");
  const RunConfigs configs = read_run_configs(runs);
  std::map<std::string, CurveGroup> by_config;
  std::map<std::string, size_t> first_row;  // per group, a runs.csv row of its config
  for (size_t r = 0; r < runs.rows.size(); ++r) {
    const std::string id = runs.rows[r][size_t(runs.col("run_id"))];
    const std::string run = exp_dir + "/" + id;
    if (!core::file_exists(run + "/metrics.csv")) continue;
    std::string label = runs.has("label") ? runs.rows[r][size_t(runs.col("label"))] : "";
    if (label.empty()) label = id;
    const std::string key = label + "\n" + config_signature(configs[r]);
    first_row.try_emplace(key, r);
    CurveGroup& g = by_config[key];
    g.label = label;
    g.seeds.push_back(load_run_curves(run));
  }
  std::vector<CurveGroup> out;
  std::vector<const std::map<std::string, std::string>*> cfgs;  // each group's config
  for (auto& [key, g] : by_config) {
    out.push_back(std::move(g));
    cfgs.push_back(&configs[first_row.at(key)]);
  }
  // Configs sharing a label (a sweep's grid: the same preset at several T) are named by
  // the keys that differ, as `compare` names them; unique_labels catches the rest.
  std::map<std::string, std::vector<size_t>> by_label;
  for (size_t i = 0; i < out.size(); ++i) by_label[out[i].label].push_back(i);
  std::vector<std::string> labels;
  for (const auto& g : out) labels.push_back(g.label);
  for (const auto& [label, members] : by_label) {
    if (members.size() < 2) continue;
    std::vector<const std::map<std::string, std::string>*> same;
    for (size_t i : members) same.push_back(cfgs[i]);
    const std::vector<std::string> tags = differing_config_tags(same);
    for (size_t j = 0; j < members.size(); ++j)
      if (!tags[j].empty()) labels[members[j]] += " [" + tags[j] + "]";
  }
  labels = unique_labels(labels);
  for (size_t i = 0; i < out.size(); ++i) out[i].label = labels[i];
  return out;
}

DrawnFigure draw_curves(const std::string& dir, const std::string& title,
                        const std::vector<CurveGroup>& groups, const std::string& gnuplot) {
  if (groups.empty()) throw core::Error(fmt::format("{}: no runs with a metrics.csv to draw", dir));
  Panels panels;
  panels.rows = int(groups.size());
  panels.cols = 2;
  GnuplotFigure fig;
  fig.stem = "curves";
  fig.written_by = "seqbench report curves";
  fig.width = 1200;
  fig.height = 90 + 320 * panels.rows;
  panels.title = 60.0 / fig.height;
  panels.key = 0.14;
  fig.settings = "set xlabel 'updates'\n";
  // At most about six labelled updates per panel (1, 2 or 5 times a power of ten apart):
  // gnuplot's own choice crowds "9000 10000" into each other in a half-width panel.
  double last = 0;
  for (const auto& g : groups)
    for (const auto& run : g.seeds)
      for (const Samples* s : {&run.train_loss, &run.valid_loss})
        for (const auto& p : *s) last = std::max(last, p.first);
  if (last > 0) {
    double step = std::pow(10.0, std::floor(std::log10(last / 6)));
    for (const double m : {1.0, 2.0, 5.0, 10.0})
      if (last / (step * m) <= 6) {
        step *= m;
        break;
      }
    fig.settings += fmt::format("set xtics {}\n", step);
  }
  std::string dat;
  int index = 0, k = 0;
  fig.plot = panels.begin(title);
  for (const auto& g : groups) {
    for (const bool loss : {true, false}) {
      std::vector<Samples> train, valid;
      for (const auto& s : g.seeds) {
        train.push_back(loss ? s.train_loss : s.train_metric);
        valid.push_back(loss ? s.valid_loss : s.valid_metric);
      }
      const std::string what = loss ? "loss" : g.seeds.front().metric;
      const std::vector<BandPoint> t = mean_band(train), v = mean_band(valid);
      std::string clauses;
      for (const auto& [points, series, name] :
           {std::tuple{&t, 0, "train"}, std::tuple{&v, 1, "validation"}}) {
        if (points->empty()) continue;
        dat += band_block(fmt::format("{}, {} {}", g.label, name, what), *points);
        clauses += (clauses.empty() ? "" : ", ") + band_plot("curves.dat", index++, series, "", *points);
      }
      fig.plot += panels.panel(k++);
      fig.plot += fmt::format("set title {}\nset ylabel {}\n", gp_quote(fmt::format("{}: {} ({})", g.label, what,
                                                                                   band_caption(t.empty() ? v : t))),
                              gp_quote(what));
      fig.plot += wants_log(t, v) ? log_axis("y") : "unset logscale y\nset format y '%g'\n";
      fig.plot += "plot " + (clauses.empty() ? std::string("NaN notitle") : clauses) + "\n";
    }
  }
  fig.plot += panels.end(fmt::format("NaN with linespoints {} title 'train', NaN with linespoints {} title 'validation'",
                                     series_style(0), series_style(1)));
  return draw_figure(dir, fig, dat, gnuplot);
}

std::vector<CurveTarget> curve_targets(const std::string& path) {
  if (!fs::is_directory(path))
    throw core::UsageError(fmt::format(
        "'{}': no such directory (hint: pass a run directory such as results/copy/<run-id>, or a sweep's)", path));
  if (core::file_exists(path + "/metrics.csv")) {
    RunCurves run = load_run_curves(path);
    const std::string title = fmt::format("{} ({})", run.label, fs::path(path).lexically_normal().filename().string());
    return {{path, title, {{run.label, {std::move(run)}}}}};
  }
  std::vector<std::string> exp_dirs;
  if (core::file_exists(path + "/runs.csv")) {
    exp_dirs.push_back(path);
  } else {
    for (const auto& e : fs::directory_iterator(path))
      if (e.is_directory() && core::file_exists(e.path().string() + "/runs.csv")) exp_dirs.push_back(e.path().string());
    std::sort(exp_dirs.begin(), exp_dirs.end());
  }
  if (exp_dirs.empty())
    throw core::UsageError(fmt::format(
        "'{}' holds no metrics.csv (a run), runs.csv (an experiment's runs) or experiment directories with "
        "runs.csv (a sweep)",
        path));
  std::vector<CurveTarget> out;
  for (const auto& d : exp_dirs) {
    std::vector<CurveGroup> groups = experiment_curve_groups(d);
    if (groups.empty())
      throw core::Error(fmt::format("{}/runs.csv: none of its runs has a metrics.csv yet", d));
    out.push_back({d, "Learning curves: " + d, std::move(groups)});
  }
  return out;
}

}  // namespace seqbench::report

#include "report/curves.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <tuple>
#include <utility>

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

// At most about `most` labelled updates per panel (1, 2 or 5 times a power of ten apart):
// gnuplot's own choice crowds "9000 10000" into each other in a narrow panel.
std::string update_tics(const std::vector<CurveGroup>& groups, int most) {
  double last = 0;
  for (const auto& g : groups)
    for (const auto& run : g.seeds)
      for (const Samples* s : {&run.train_loss, &run.valid_loss})
        for (const auto& p : *s) last = std::max(last, p.first);
  if (!(last > 0)) return "";
  double step = std::pow(10.0, std::floor(std::log10(last / most)));
  for (const double m : {1.0, 2.0, 5.0, 10.0})
    if (last / (step * m) <= most) {
      step *= m;
      break;
    }
  return fmt::format("set xtics {}\n", step);
}

// The grid of a curves figure: rows x cols panels of row_height pixels, the key in a strip
// at the right, at most `tics` labelled updates per panel.
std::pair<Panels, GnuplotFigure> curves_layout(const std::vector<CurveGroup>& groups, int rows, int cols,
                                               int width, int row_height, int tics) {
  Panels panels;
  panels.rows = rows;
  panels.cols = cols;
  GnuplotFigure fig;
  fig.stem = "curves";
  fig.written_by = "seqbench report curves";
  fig.width = width;
  fig.height = 90 + row_height * rows;
  panels.title = 60.0 / fig.height;
  panels.key = 0.14;
  fig.settings = "set xlabel 'updates'\n" + update_tics(groups, tics);
  return {panels, fig};
}

// A metrics.csv column as an axis reads it: "acc" is "accuracy", "bpc" "bits per
// character"; a name it does not know stays as it is.
std::string metric_label(const std::string& metric) {
  static const std::map<std::string, std::string> names{{"acc", "accuracy"},
                                                        {"bpc", "bits per character"},
                                                        {"bpd", "bits per dimension"},
                                                        {"ppl", "perplexity"},
                                                        {"mse", "mean squared error"}};
  const auto it = names.find(metric);
  return it == names.end() ? metric : it->second;
}

// Every seed's metric is an accuracy between 0 and 1: drawn on [0, 1], linear, so that a
// flat line near chance does not fill a panel and a climb from 0.001 is not a log axis.
bool accuracy_fraction(const CurveGroup& g) {
  for (const auto& run : g.seeds) {
    if (run.metric != "acc" && run.metric != "accuracy") return false;
    for (const Samples* m : {&run.train_metric, &run.valid_metric})
      for (const auto& p : *m)
        if (p.second < 0 || p.second > 1 + 1e-9) return false;  // a mean of 1.0 may round above it
  }
  return true;
}

// A panel title longer than `most` characters in a smaller font rather than past its panel;
// the others name the default font, since gnuplot keeps a title's font until told.
std::string title_font(const std::string& title, size_t most) {
  return title.size() > most ? " font ',8'" : " font ''";
}

// Above this many configs a sweep's curves take the compact form (curves.hpp).
constexpr size_t kRowsPerConfigMax = 12;

// The keys that split the groups sharing a run label, per label.
std::map<std::string, std::vector<std::string>> split_keys(const std::vector<CurveGroup>& groups) {
  std::map<std::string, std::vector<const std::map<std::string, std::string>*>> by_base;
  for (const auto& g : groups) by_base[g.base].push_back(&g.config);
  std::map<std::string, std::vector<std::string>> out;
  for (const auto& [base, cfgs] : by_base) out[base] = differing_config_keys(cfgs);
  return out;
}

// The compact form's line key: the learning rate where it varies, else the key with the
// most values; none when the groups are few or no key splits them.
std::optional<std::string> line_key(const std::vector<CurveGroup>& groups) {
  if (groups.size() <= kRowsPerConfigMax) return std::nullopt;
  std::map<std::string, std::set<std::string>> values;
  for (const auto& [base, keys] : split_keys(groups))
    for (const auto& k : keys)
      for (const auto& g : groups)
        if (g.base == base) values[k].insert(config_value(g.config, k));
  if (values.empty()) return std::nullopt;
  if (values.count("optim.lr")) return std::string("optim.lr");
  std::string best;
  size_t most = 0;
  for (const auto& [k, v] : values)
    if (v.size() > most) best = k, most = v.size();
  return best;
}

// Numbers in numeric order, then the rest as text.
bool value_less(const std::string& a, const std::string& b) {
  const double x = value_of(a), y = value_of(b);
  if (std::isnan(x) != std::isnan(y)) return !std::isnan(x);
  return std::isnan(x) ? a < b : x < y;
}

// Text order, but runs of digits compared as numbers ("width=64" before "width=128").
bool natural_less(const std::string& a, const std::string& b) {
  size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    if (std::isdigit(static_cast<unsigned char>(a[i])) && std::isdigit(static_cast<unsigned char>(b[j]))) {
      size_t i1 = i, j1 = j;
      while (i1 < a.size() && std::isdigit(static_cast<unsigned char>(a[i1]))) ++i1;
      while (j1 < b.size() && std::isdigit(static_cast<unsigned char>(b[j1]))) ++j1;
      const std::string x = a.substr(i, i1 - i), y = b.substr(j, j1 - j);
      if (x.size() != y.size()) return x.size() < y.size();  // no leading zeros in these keys
      if (x != y) return x < y;
      i = i1, j = j1;
    } else {
      if (a[i] != b[j]) return a[i] < b[j];
      ++i, ++j;
    }
  }
  return a.size() - i < b.size() - j;
}

// The validation curve of the task's metric where the runs validated, else training's.
std::vector<BandPoint> metric_band(const CurveGroup& g, bool& validation) {
  std::vector<Samples> valid, train;
  for (const auto& s : g.seeds) {
    valid.push_back(s.valid_metric);
    train.push_back(s.train_metric);
  }
  std::vector<BandPoint> v = mean_band(valid);
  validation = !v.empty();
  return validation ? v : mean_band(train);
}

// The compact form: a panel of the metric per setting of the keys other than `key`, a
// line per value of `key`, one key for the figure.
DrawnFigure draw_curves_by(const std::string& dir, const std::string& title,
                           const std::vector<CurveGroup>& groups, const std::string& key,
                           const std::string& gnuplot) {
  const auto keys = split_keys(groups);
  std::vector<std::string> lines;  // the values of `key`, in order
  std::vector<std::string> panel_names;
  std::map<std::string, std::vector<const CurveGroup*>> panel_groups;
  for (const auto& g : groups) {
    const std::string value = config_value(g.config, key);
    if (std::find(lines.begin(), lines.end(), value) == lines.end()) lines.push_back(value);
    std::string tags;
    for (const auto& k : keys.at(g.base))
      if (k != key)
        tags += fmt::format("{}{}={}", tags.empty() ? "" : ", ", k, config_value(g.config, k));
    const std::string name = tags.empty() ? g.base : g.base + " [" + tags + "]";
    if (!panel_groups.count(name)) panel_names.push_back(name);
    panel_groups[name].push_back(&g);
  }
  std::sort(lines.begin(), lines.end(), value_less);
  std::stable_sort(panel_names.begin(), panel_names.end(), natural_less);
  auto [panels, fig] = curves_layout(groups, int((panel_names.size() + 2) / 3), 3, 1500, 300, 4);
  std::string dat, metric;
  bool fraction = true;
  for (const auto& g : groups) fraction &= accuracy_fraction(g);
  int index = 0, k = 0;
  fig.plot = panels.begin(fmt::format("{}: one line per {}", title, key));
  for (const auto& name : panel_names) {
    std::string clauses;
    for (const CurveGroup* g : panel_groups.at(name)) {
      bool validation = true;
      const std::vector<BandPoint> pts = metric_band(*g, validation);
      metric = metric_label(g->seeds.front().metric);
      if (pts.empty()) continue;
      const std::string value = config_value(g->config, key);
      const int series = int(std::find(lines.begin(), lines.end(), value) - lines.begin());
      dat += band_block(fmt::format("{}, {}={}", name, key, value), pts);
      clauses += (clauses.empty() ? "" : ", ") + band_plot("curves.dat", index++, series, "", pts);
    }
    fig.plot += panels.panel(k++);
    fig.plot += fmt::format("set title {}{}\nset ylabel {}\nunset logscale y\nset format y '%g'\n", gp_quote(name),
                            title_font(name, 48), gp_quote(metric));
    fig.plot += fraction ? "set yrange [0:1]\n" : "set yrange [*:*]\n";
    fig.plot += "plot " + (clauses.empty() ? std::string("NaN notitle") : clauses) + "\n";
  }
  // The key names the key's last part ("lr" for optim.lr); the title names it in full.
  const std::string shown = key.substr(key.rfind('.') + 1);
  std::string entries;
  for (size_t i = 0; i < lines.size(); ++i)
    entries += fmt::format("{}NaN with linespoints {} title {}", i ? ", " : "", series_style(int(i)),
                           gp_quote(shown + " = " + lines[i]));
  fig.plot += panels.end(entries);
  return draw_figure(dir, fig, dat, gnuplot);
}

}  // namespace

void hold_after_target(std::vector<RunCurves>& seeds) {
  const auto series = [](RunCurves& r) {
    return std::array<Samples*, 4>{&r.train_loss, &r.valid_loss, &r.train_metric, &r.valid_metric};
  };
  for (size_t k = 0; k < 4; ++k) {
    std::set<double> xs;
    for (auto& s : seeds)
      for (const auto& p : *series(s)[k]) xs.insert(p.first);
    for (auto& s : seeds) {
      Samples& v = *series(s)[k];
      if (!s.stopped_at_target || v.empty()) continue;
      const auto [last_x, last_y] = v.back();
      for (auto it = xs.upper_bound(last_x); it != xs.end(); ++it) {
        v.push_back({*it, last_y});
        s.held = true;
      }
    }
  }
}

std::string curves_caption(const std::vector<CurveGroup>& groups) {
  bool held = false;
  for (const auto& g : groups)
    for (const auto& s : g.seeds) held |= s.held;
  const std::string hold = held ? "; a run that stopped at its target keeps its last value after it" : "";
  if (const auto key = line_key(groups)) {
    std::set<std::string> captions;
    bool validation = true, any_train = false;
    for (const auto& g : groups) {
      const std::vector<BandPoint> pts = metric_band(g, validation);
      any_train |= !validation;
      if (!pts.empty()) captions.insert(band_caption(pts));
    }
    std::string bands;
    for (const auto& c : captions) bands += (bands.empty() ? "" : "; ") + c;
    return fmt::format("one panel per setting, one line per {}: {} {} against updates ({}){}", *key,
                       any_train ? "the validation (else training)" : "the validation",
                       metric_label(groups.front().seeds.front().metric), bands, hold);
  }
  return "one row per config: loss and metric against updates, train and validation" + hold;
}

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
  const int to_target = runs.has("updates_to_target") ? runs.col("updates_to_target") : -1;
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
    g.base = label;
    g.seeds.push_back(load_run_curves(run));
    if (to_target >= 0) g.seeds.back().stopped_at_target = value_of(runs.rows[r][size_t(to_target)]) >= 0;
  }
  std::vector<CurveGroup> out;
  std::vector<const std::map<std::string, std::string>*> cfgs;  // each group's config
  for (auto& [key, g] : by_config) {
    hold_after_target(g.seeds);
    g.config = configs[first_row.at(key)];
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
  if (const auto key = line_key(groups)) return draw_curves_by(dir, title, groups, *key, gnuplot);
  auto [panels, fig] = curves_layout(groups, int(groups.size()), 2, 1200, 320, 6);
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
      const std::string what = loss ? "loss" : metric_label(g.seeds.front().metric);
      const std::vector<BandPoint> t = mean_band(train), v = mean_band(valid);
      std::string clauses;
      for (const auto& [points, series, name] :
           {std::tuple{&t, 0, "train"}, std::tuple{&v, 1, "validation"}}) {
        if (points->empty()) continue;
        dat += band_block(fmt::format("{}, {} {}", g.label, name, what), *points);
        clauses += (clauses.empty() ? "" : ", ") + band_plot("curves.dat", index++, series, "", *points);
      }
      fig.plot += panels.panel(k++);
      const std::string panel_title = fmt::format("{}: {} ({})", g.label, what, band_caption(t.empty() ? v : t));
      fig.plot += fmt::format("set title {}{}\nset ylabel {}\n", gp_quote(panel_title), title_font(panel_title, 64),
                              gp_quote(what));
      if (!loss && accuracy_fraction(g))
        fig.plot += "unset logscale y\nset format y '%g'\nset yrange [0:1]\n";
      else
        fig.plot += std::string(wants_log(t, v) ? log_axis("y") : "unset logscale y\nset format y '%g'\n") +
                    "set yrange [*:*]\n";
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
    const std::string label = run.label;
    return {{path, title, {{label, {std::move(run)}, "", {}}}}};
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

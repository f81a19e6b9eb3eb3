#include "report/paper_tables.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <tuple>

#include "core/fs.hpp"
#include "report/compare.hpp"
#include "report/csv.hpp"
#include "report/markdown.hpp"
#include "report/paper_sources.hpp"
#include "report/run_configs.hpp"

namespace seqbench::report {

namespace {

double parse_number(const std::string& s) {
  try {
    size_t used = 0;
    const double v = std::stod(s, &used);
    return used == s.size() ? v : NAN;
  } catch (const std::exception&) {
    return NAN;
  }
}

// Column values sort as numbers where both are numbers ("100" < "1000"), else as text.
bool column_less(const std::string& a, const std::string& b) {
  const double x = parse_number(a.substr(0, a.find("->"))), y = parse_number(b.substr(0, b.find("->")));
  if (!std::isnan(x) && !std::isnan(y) && x != y) return x < y;
  if (a.find("->") != std::string::npos && b.find("->") != std::string::npos) {
    const double u = parse_number(a.substr(a.find("->") + 2)), v = parse_number(b.substr(b.find("->") + 2));
    if (!std::isnan(u) && !std::isnan(v) && u != v) return u < v;
  }
  return a < b;
}

std::string fmt_minutes(double seconds) {
  if (!(seconds >= 0)) return "?";
  if (seconds < 90) return fmt::format("{:.0f} s", seconds);
  if (seconds < 5400) return fmt::format("{:.1f} min", seconds / 60);
  return fmt::format("{:.1f} h", seconds / 3600);
}

// The runs of one table cell that share a config.
struct Group {
  std::string size, row, column, sig;
  std::map<std::string, std::string> config;  // one run's, for naming differences
  std::vector<double> values;
  int missing = 0;
  std::vector<double> updates, seconds;
  std::set<std::string> data;
  // With a tuned key: the values and the runs without one, per value of that key.
  std::map<std::string, std::vector<double>> tuned;
  std::map<std::string, int> tuned_missing;
};

// Which of the paper's rows a run's row value belongs to: the spec's name for it, else
// the value itself.
std::pair<size_t, std::string> row_of(const TableSpec& t, const std::string& value) {
  for (size_t i = 0; i < t.rows.size(); ++i)
    if (t.rows[i].match == value) return {i, t.rows[i].name};
  return {t.rows.size(), value};
}

void read_runs(const TableSpec& t, const PaperSource& src, std::map<std::string, Group>& groups,
               std::vector<std::string>& order) {
  const std::string path = src.dir + "/" + t.experiment + "/runs.csv";
  const CsvTable runs = read_csv(path);
  const RunConfigs configs = read_run_configs(runs);
  const int c_id = runs.col("run_id");
  // runs.csv columns named by the spec must exist: col() throws naming the file and the
  // columns it has.
  const std::vector<bool> wanted = runs_matching(runs, configs, t.where);
  const int c_row = t.row_csv ? runs.col(t.row_key) : -1;
  const int c_column = t.column_csv ? runs.col(t.column_key) : -1;
  for (size_t r = 0; r < runs.rows.size(); ++r) {
    const auto& cfg = configs[r];
    if (!wanted[r]) continue;
    std::string row_value;
    if (t.row_csv) {
      row_value = runs.rows[r][size_t(c_row)];
    } else {
      const auto row_it = cfg.find(t.row_key);
      if (row_it == cfg.end()) continue;  // config.yaml gone, or another kind of run
      row_value = row_it->second;
    }
    const std::string row = row_of(t, apply_key_transform(t.row_as, row_value)).second;
    std::string column;
    if (t.column_csv) {
      column = apply_key_transform(t.column_as, runs.rows[r][size_t(c_column)]);
    } else if (!t.column_key.empty()) {
      const auto c = cfg.find(t.column_key);
      column = c == cfg.end() ? "?" : apply_key_transform(t.column_as, c->second);
    }
    // (column, value or NaN) pairs this run contributes.
    std::vector<std::pair<std::string, double>> values;
    if (t.metric_file.empty()) {
      const std::string cell = runs.rows[r][size_t(runs.col(t.metric_column))];
      values.push_back({column, cell.empty() ? NAN : runs.number(r, t.metric_column)});
    } else {
      const std::string file =
          src.dir + "/" + t.experiment + "/" + runs.rows[r][size_t(c_id)] + "/" + t.metric_file;
      if (!core::file_exists(file)) continue;
      const CsvTable f = read_csv(file);
      std::map<std::string, double> last;  // a repeated key keeps its latest row
      for (size_t i = 0; i < f.rows.size(); ++i)
        last[f.rows[i][size_t(f.col(t.metric_file_key))]] = f.number(i, t.metric_column);
      for (const auto& [k, v] : last) values.push_back({column + "->" + k, v});
    }
    for (const auto& [col, raw] : values) {
      double v = raw;
      if (t.transform == "exp2") v = std::exp2(v);
      v *= t.scale;
      const std::string sig = config_signature(cfg, t.tune_key);
      const std::string key = src.size + "\n" + row + "\n" + col + "\n" + sig;
      auto [it, fresh] = groups.try_emplace(key);
      Group& g = it->second;
      if (fresh) {
        g.size = src.size, g.row = row, g.column = col, g.sig = sig, g.config = cfg;
        if (!t.tune_key.empty()) g.config.erase(t.tune_key);
        order.push_back(key);
      }
      if (std::isfinite(v)) g.values.push_back(v);
      else ++g.missing;
      if (!t.tune_key.empty()) {
        const auto tv = cfg.find(t.tune_key);
        const std::string tuned = tv == cfg.end() ? "?" : tv->second;
        if (std::isfinite(v)) g.tuned[tuned].push_back(v);
        else ++g.tuned_missing[tuned];
      }
      if (runs.has("updates")) g.updates.push_back(runs.number(r, "updates"));
      if (runs.has("train_seconds") && !runs.rows[r][size_t(runs.col("train_seconds"))].empty())
        g.seconds.push_back(runs.number(r, "train_seconds"));
      g.data.insert(runs.has("data") ? runs.rows[r][size_t(runs.col("data"))] : "synthetic");
    }
  }
}

double mean_of(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x;
  return v.empty() ? 0 : s / double(v.size());
}

double sd_of(const std::vector<double>& v) {
  if (v.size() < 2) return 0;
  const double m = mean_of(v);
  double s = 0;
  for (double x : v) s += (x - m) * (x - m);
  return std::sqrt(s / double(v.size() - 1));
}

// A tuned line: the seeds at the value with the best mean become the line's numbers; the
// best single run and the window (the values whose mean reaches t.tune_window) go beside.
void apply_tuning(const TableSpec& t, const Group& g, PaperLine& line) {
  const std::string* best = nullptr;
  double best_mean = NAN, best_run = NAN;
  std::vector<std::string> in_window;
  std::vector<std::string> values;
  for (const auto& [value, runs] : g.tuned) values.push_back(value);
  for (const auto& [value, n] : g.tuned_missing)
    if (!g.tuned.count(value)) values.push_back(value);
  std::sort(values.begin(), values.end(), column_less);
  for (const auto& value : values) {
    const auto it = g.tuned.find(value);
    if (it == g.tuned.end()) continue;
    const double m = mean_of(it->second);
    if (!best || (t.higher_is_better ? m > best_mean : m < best_mean)) best = &it->first, best_mean = m;
    for (double v : it->second)
      if (std::isnan(best_run) || (t.higher_is_better ? v > best_run : v < best_run)) best_run = v;
    if (std::isfinite(t.tune_window) && (t.higher_is_better ? m >= t.tune_window : m <= t.tune_window))
      in_window.push_back(value);
  }
  const std::string name = t.tune_key.substr(t.tune_key.rfind('.') + 1);
  if (!best) {
    line.tuned_at = fmt::format("none of {} {} values has a number", values.size(), name);
    line.best_run = line.window = "—";
    return;
  }
  const auto& runs = g.tuned.at(*best);
  const auto missing = g.tuned_missing.find(*best);
  line.n = int(runs.size());
  line.n_missing = missing == g.tuned_missing.end() ? 0 : missing->second;
  line.mean = mean_of(runs);
  line.sd = sd_of(runs);
  line.ours = mean_sd(runs, t.decimals);
  line.tuned_at = fmt::format("{} (best of {})", *best, values.size());
  line.best_run = fmt::format("{:.{}f}", best_run, t.decimals);
  if (!std::isfinite(t.tune_window)) return;
  if (in_window.empty()) {
    line.window = fmt::format("none of {}", values.size());
  } else {
    // Contiguous in the sorted values, or listed where a gap splits it.
    const auto first = std::find(values.begin(), values.end(), in_window.front());
    const bool contiguous = std::equal(in_window.begin(), in_window.end(), first);
    line.window = contiguous && in_window.size() > 1
                      ? fmt::format("{} – {} ({} of {})", in_window.front(), in_window.back(), in_window.size(),
                                    values.size())
                      : fmt::format("{} ({} of {})", fmt::join(in_window, ", "), in_window.size(), values.size());
  }
}

std::string run_command(const PaperSpec& paper, const TableSpec& t) {
  std::string cmd = fmt::format("seqbench sweep configs/papers/{}/{}_small.yaml", paper.name, t.sweep);
  if (!t.make.empty()) cmd += "; then " + t.make;
  return cmd;
}

}  // namespace

void judge(PaperLine& line, const TableSpec& table, const PaperNumber* number, bool small,
           bool stand_in) {
  if (!number) {
    line.verdict = "—";
    line.reason = "no paper number recorded for this cell (numbers.yaml)";
    return;
  }
  if (line.n == 0) {
    line.verdict = "not";
    line.reason = "no run produced a number (diverged or never validated)";
    return;
  }
  const double gap = line.mean - number->value;
  const double allowed = table.tolerance + 2 * line.sd;
  const bool better = table.higher_is_better ? gap > 0 : gap < 0;
  std::string caveat;
  if (small) caveat = "small budget";
  if (stand_in) caveat += std::string(caveat.empty() ? "" : ", ") + "stand-in data: compare orderings, not values";
  const std::string unchecked = number->checked ? "" : "; the paper's number is unchecked";
  const int d = table.decimals;
  if (std::fabs(gap) <= allowed) {
    line.verdict = caveat.empty() ? "reproduced" : "partly";
    line.reason = fmt::format("within {:.{}f} of the paper (tolerance {} + 2 sd){}{}", std::fabs(gap), d,
                              table.tolerance, caveat.empty() ? "" : "; " + caveat, unchecked);
  } else if (better) {
    line.verdict = caveat.empty() ? "reproduced" : "partly";
    line.reason = fmt::format("better than the paper by {:.{}f}{}{}", std::fabs(gap), d,
                              caveat.empty() ? "" : "; " + caveat, unchecked);
  } else {
    line.verdict = "not";
    line.reason = fmt::format("{:.{}f} {} than the paper, beyond tolerance {} + 2 sd{}{}", std::fabs(gap), d,
                              table.higher_is_better ? "lower" : "higher", table.tolerance,
                              caveat.empty() ? "" : "; " + caveat, unchecked);
  }
}

PaperTable build_paper_table(const PaperSpec& paper, const TableSpec& t,
                             const PaperReportOptions& opts) {
  PaperTable table;
  table.spec = &t;
  table.run_command = expand_dir(run_command(paper, t),
                                 fmt::format("{}/papers/{}/{}_small", opts.results_root, paper.name, t.sweep));
  std::map<std::string, Group> groups;
  std::vector<std::string> order;
  for (const auto& src : paper_sources(paper, t.sweep, opts)) {
    if (!core::file_exists(src.dir + "/" + t.experiment + "/runs.csv")) continue;
    table.dirs.push_back(src.dir);
    read_runs(t, src, groups, order);
  }
  // Cells holding more than one config: name each by the keys where they differ.
  std::map<std::string, std::vector<const Group*>> cells;
  for (const auto& key : order) {
    const Group& g = groups[key];
    cells[g.size + "\n" + g.row + "\n" + g.column].push_back(&g);
  }
  std::set<std::tuple<std::string, std::string, std::string>> covered;  // (size, row, column)
  for (const auto& key : order) {
    const Group& g = groups[key];
    const auto& same = cells[g.size + "\n" + g.row + "\n" + g.column];
    PaperLine line;
    line.size = g.size;
    line.row = g.row;
    if (same.size() > 1) {
      std::vector<std::string> diff;
      for (const auto& [k, v] : g.config) {
        if (ignored_config_key(k)) continue;
        for (const Group* o : same) {
          const auto it = o->config.find(k);
          if (it == o->config.end() || it->second != v) {
            diff.push_back(k + "=" + v);
            break;
          }
        }
      }
      line.row += " [" + fmt::format("{}", fmt::join(diff, ", ")) + "]";
    }
    line.column = g.column;
    line.n = int(g.values.size());
    line.n_missing = g.missing;
    line.mean = mean_of(g.values);
    line.sd = sd_of(g.values);
    line.ours = g.values.empty() ? "—" : mean_sd(g.values, t.decimals);
    if (!t.tune_key.empty()) apply_tuning(t, g, line);
    line.data = fmt::format("{}", fmt::join(g.data, "; "));
    line.budget = fmt::format("{:.0f} updates, {} per run", mean_of(g.updates),
                              fmt_minutes(g.seconds.empty() ? NAN : mean_of(g.seconds)));
    const PaperNumber* number = find_paper_number(paper, t.id, g.row, g.column);
    line.paper = number ? number_cell(*number) : "—";
    line.source = number ? number_source(paper, *number) : "";
    bool stand_in = false;
    for (const auto& d : g.data) stand_in = stand_in || d.find("stand-in") != std::string::npos;
    judge(line, t, number, g.size == "small", stand_in);
    covered.insert({g.size, g.row, g.column});
    table.lines.push_back(line);
  }
  // The paper's numbers no run stands beside: shown, as not run.
  for (const auto& n : paper.numbers) {
    if (n.table != t.id) continue;
    bool any = false;
    for (const auto& [size, row, column] : covered) any = any || (row == n.row && column == n.column);
    if (any) continue;
    PaperLine line;
    line.size = "—";
    line.row = n.row;
    line.column = n.column;
    line.paper = number_cell(n);
    line.source = number_source(paper, n);
    line.ours = "—";
    line.data = line.budget = "—";
    if (!n.in_suite) {
      line.verdict = "—";
      line.reason = "not a model of seqbench" + (n.note.empty() ? "" : ": " + n.note);
    } else {
      line.verdict = "not run";
      line.reason = table.dirs.empty() ? "no runs: " + table.run_command
                                       : "the sweeps read have no runs for this cell";
    }
    table.lines.push_back(line);
  }
  auto row_index = [&](const std::string& row) {
    return row_of(t, row.substr(0, row.find(" ["))).first;
  };
  std::stable_sort(table.lines.begin(), table.lines.end(), [&](const PaperLine& a, const PaperLine& b) {
    const size_t ra = row_index(a.row), rb = row_index(b.row);
    if (ra != rb) return ra < rb;
    if (a.row != b.row) return a.row < b.row;
    if (a.column != b.column) return column_less(a.column, b.column);
    return a.size < b.size;
  });
  return table;
}

}  // namespace seqbench::report

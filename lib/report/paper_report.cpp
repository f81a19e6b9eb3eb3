#include "report/paper_report.hpp"

#include <fmt/format.h>
#include <openssl/evp.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <set>

#include "core/check.hpp"
#include "core/fs.hpp"
#include "report/compare.hpp"
#include "report/csv.hpp"
#include "report/markdown.hpp"
#include "report/plots.hpp"
#include "report/run_configs.hpp"

namespace seqbench::report {

namespace fs = std::filesystem;

namespace {

// A sweep directory and the size of the sweep file that made it.
struct Source {
  std::string dir, size;
};

std::string base_name(std::string dir) {
  while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
  return fs::path(dir).filename().string();
}

// The size a directory stands for, if its name is that of one of `sweep`'s directories.
std::optional<std::string> size_of(const std::string& dir, const std::string& sweep) {
  const std::string b = base_name(dir);
  if (b == sweep + "_small") return std::string("small");
  if (b == sweep + "_paper") return std::string("paper");
  if (b == sweep) return b;
  return std::nullopt;
}

std::vector<Source> sources(const PaperSpec& paper, const std::string& sweep,
                            const PaperReportOptions& opts) {
  std::vector<Source> out;
  if (opts.sweep_dirs.empty()) {
    for (const char* size : {"paper", "small"}) {
      const std::string dir =
          fmt::format("{}/papers/{}/{}_{}", opts.results_root, paper.name, sweep, size);
      if (fs::is_directory(dir)) out.push_back({dir, size});
    }
    return out;
  }
  for (const auto& dir : opts.sweep_dirs)
    if (auto size = size_of(dir, sweep)) out.push_back({dir, *size});
  return out;
}

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

std::string signature(const std::map<std::string, std::string>& cfg) {
  std::string sig;
  for (const auto& [k, v] : cfg)
    if (!ignored_config_key(k)) sig += k + "=" + v + "\n";
  return sig;
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
};

// Which of the paper's rows a run's row value belongs to: the spec's name for it, else
// the value itself.
std::pair<size_t, std::string> row_of(const TableSpec& t, const std::string& value) {
  for (size_t i = 0; i < t.rows.size(); ++i)
    if (t.rows[i].match == value) return {i, t.rows[i].name};
  return {t.rows.size(), value};
}

void read_runs(const TableSpec& t, const Source& src, std::map<std::string, Group>& groups,
               std::vector<std::string>& order) {
  const std::string path = src.dir + "/" + t.experiment + "/runs.csv";
  const CsvTable runs = read_csv(path);
  const RunConfigs configs = read_run_configs(runs);
  const int c_id = runs.col("run_id");
  for (size_t r = 0; r < runs.rows.size(); ++r) {
    const auto& cfg = configs[r];
    const auto row_it = cfg.find(t.row_key);
    if (row_it == cfg.end()) continue;  // config.yaml gone, or another kind of run
    const std::string row = row_of(t, apply_key_transform(t.row_as, row_it->second)).second;
    std::string column;
    if (!t.column_key.empty()) {
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
      const std::string sig = signature(cfg);
      const std::string key = src.size + "\n" + row + "\n" + col + "\n" + sig;
      auto [it, fresh] = groups.try_emplace(key);
      Group& g = it->second;
      if (fresh) {
        g = Group{src.size, row, col, sig, cfg, {}, 0, {}, {}, {}};
        order.push_back(key);
      }
      if (std::isfinite(v)) g.values.push_back(v);
      else ++g.missing;
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

std::string run_command(const PaperSpec& paper, const TableSpec& t) {
  std::string cmd = fmt::format("seqbench sweep configs/papers/{}/{}_small.yaml", paper.name, t.sweep);
  if (!t.make.empty()) cmd += "; then " + t.make;
  return cmd;
}

std::string expand_dir(std::string text, const std::string& dir) {
  const size_t at = text.find("{dir}");
  if (at != std::string::npos) text.replace(at, 5, dir);
  return text;
}

PaperTable build_table(const PaperSpec& paper, const TableSpec& t, const PaperReportOptions& opts) {
  PaperTable table;
  table.spec = &t;
  table.run_command = expand_dir(run_command(paper, t),
                                 fmt::format("{}/papers/{}/{}_small", opts.results_root, paper.name, t.sweep));
  std::map<std::string, Group> groups;
  std::vector<std::string> order;
  for (const auto& src : sources(paper, t.sweep, opts)) {
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

// --- figures --------------------------------------------------------------------------

// The run directories of <dir>/<experiment> holding `file`, one seed only (the lowest), so
// that a figure shows one curve per model rather than one per seed.
std::vector<std::string> figure_runs(const std::string& dir, const std::string& file) {
  const std::string runs_csv = dir + "/runs.csv";
  if (!core::file_exists(runs_csv)) return {};
  const CsvTable runs = read_csv(runs_csv);
  const RunConfigs configs = read_run_configs(runs);
  std::map<std::string, std::pair<long, std::string>> best;  // signature -> (seed, dir)
  for (size_t r = 0; r < runs.rows.size(); ++r) {
    const std::string run = dir + "/" + runs.rows[r][size_t(runs.col("run_id"))];
    if (!core::file_exists(run + "/" + file)) continue;
    auto seed_it = configs[r].find("train.seed");
    if (seed_it == configs[r].end()) seed_it = configs[r].find("seed");
    const long seed = seed_it == configs[r].end() ? 0 : std::atol(seed_it->second.c_str());
    const std::string sig = signature(configs[r]);
    auto it = best.find(sig);
    if (it == best.end() || seed < it->second.first) best[sig] = {seed, run};
  }
  std::vector<std::string> out;
  for (const auto& [sig, v] : best) out.push_back(v.second);
  std::sort(out.begin(), out.end());
  return out;
}

// Curves that share a label (one model at two T, say) are named by the config keys where
// their runs differ: "lstm T=200" rather than "lstm #2".
void name_apart(std::vector<GradnormRun>& runs, const std::vector<std::string>& dirs) {
  std::vector<std::map<std::string, std::string>> cfg;
  for (const auto& d : dirs) {
    const std::string path = d + "/config.yaml";
    cfg.push_back(core::file_exists(path) ? flat_config(core::read_file(path), path)
                                          : std::map<std::string, std::string>{});
  }
  std::vector<std::string> names(runs.size());
  for (size_t i = 0; i < runs.size(); ++i) {
    std::set<std::string> keys;
    for (size_t j = 0; j < runs.size(); ++j) {
      if (j == i || runs[j].label != runs[i].label) continue;
      for (const auto& [k, v] : cfg[i])
        if (!ignored_config_key(k) && (!cfg[j].count(k) || cfg[j].at(k) != v)) keys.insert(k);
    }
    names[i] = runs[i].label;
    for (const auto& k : keys) {
      const size_t dot = k.rfind('.');
      names[i] += fmt::format(" {}={}", dot == std::string::npos ? k : k.substr(dot + 1), cfg[i].at(k));
    }
  }
  for (size_t i = 0; i < runs.size(); ++i) runs[i].label = names[i];
}

void collect_pictures(PaperFigure& fig, const std::vector<std::string>& files) {
  for (const auto& f : files) {
    if (f.size() > 4 && f.compare(f.size() - 4, 4, ".png") == 0) fig.pngs.push_back(f);
    if (f.size() > 4 && f.compare(f.size() - 4, 4, ".svg") == 0) fig.svgs.push_back(f);
  }
}

// Writes <stem>.dat and <stem>.gp into dir and renders <stem>.png and .svg.
void render(PaperFigure& fig, const std::string& dir, const std::string& stem, const std::string& dat,
            const std::string& body, int width, int height, const std::string& gnuplot) {
  core::make_dirs(dir);
  core::write_file_atomic(dir + "/" + stem + ".dat", dat);
  const std::string script = dir + "/" + stem + ".gp";
  core::write_file_atomic(script, png_and_svg_script(stem, body, width, height));
  if (!find_program(gnuplot)) {
    fig.status = fmt::format("not drawn: '{}' not found (install gnuplot-nox); data and script in {}", gnuplot, dir);
    return;
  }
  const GnuplotResult r = run_gnuplot(script, gnuplot);
  if (!r.rendered) {
    fig.status = "not drawn: " + r.message;
    return;
  }
  fig.pngs.push_back(dir + "/" + stem + ".png");
  fig.svgs.push_back(dir + "/" + stem + ".svg");
}

// Memory against T: <dir>/copy/memory.csv rows (label, T, held_mb, peak_rss_mb).
bool memory_figure(PaperFigure& fig, const std::string& csv, const std::string& dir,
                   const std::string& gnuplot) {
  if (!core::file_exists(csv)) return false;
  const CsvTable t = read_csv(csv);
  std::map<std::string, std::map<double, std::pair<double, double>>> by_label;
  for (size_t r = 0; r < t.rows.size(); ++r)
    by_label[t.rows[r][size_t(t.col("label"))]][t.number(r, "T")] = {t.number(r, "held_mb"),
                                                                      t.number(r, "peak_rss_mb")};
  std::string dat, plot;
  int index = 0;
  for (const auto& [label, points] : by_label) {
    dat += "# " + label + ": T held_mb peak_rss_mb\n";
    for (const auto& [T, mb] : points) dat += fmt::format("{} {} {}\n", T, mb.first, mb.second);
    dat += "\n\n";
    plot += fmt::format("{}'memory.dat' index {} using 1:2 with linespoints title {}", index ? ", " : "",
                        index, gp_quote(label));
    ++index;
  }
  render(fig, dir, "memory", dat,
         "set title 'Memory held for backward against T (one training step)'\n"
         "set xlabel 'T'\nset ylabel 'MB held (activations, attention buffers)'\n"
         "set logscale y\nset grid\nset key top left\nplot " + plot,
         900, 560, gnuplot);
  fig.files.push_back(csv);
  return true;
}

// Gradient gap against k: truncation.csv (k, gap, bound_k_lambda_k) of each stability run.
bool truncation_figure(PaperFigure& fig, const std::string& exp_dir, const std::string& dir,
                       const std::string& gnuplot) {
  const std::vector<std::string> runs = figure_runs(exp_dir, "truncation.csv");
  if (runs.empty()) return false;
  std::string dat, plot;
  int index = 0;
  for (const auto& run : runs) {
    const CsvTable t = read_csv(run + "/truncation.csv");
    std::string label = run_label(run);
    const std::string cfg_path = run + "/config.yaml";
    if (core::file_exists(cfg_path)) {
      const auto cfg = flat_config(core::read_file(cfg_path), cfg_path);
      for (const char* key : {"lambda", "analysis.lambda", "truncation.lambda"})
        if (cfg.count(key)) label = "λ = " + cfg.at(key);
    }
    dat += "# " + label + ": k gap bound\n";
    for (size_t r = 0; r < t.rows.size(); ++r) {
      const double gap = t.number(r, "gap");
      if (gap > 0) dat += fmt::format("{} {} {}\n", t.number(r, "k"), gap, t.number(r, t.columns.back()));
    }
    dat += "\n\n";
    plot += fmt::format("{}'truncation.dat' index {} using 1:2 with linespoints title {}", index ? ", " : "",
                        index, gp_quote(label));
    ++index;
  }
  render(fig, dir, "truncation", dat,
         "set title 'Gradient gap between the recurrent and the k-truncated model'\n"
         "set xlabel 'k'\nset ylabel '‖∇_w p_T − ∇_w p_T^k‖'\nset logscale y\nset grid\nplot " + plot,
         900, 560, gnuplot);
  return true;
}

// The attention-scaling figure of `make bench`, copied and drawn once more as SVG.
bool attention_figure(PaperFigure& fig, const std::string& bench_dir, const std::string& dir,
                      const std::string& gnuplot) {
  const std::string gp = bench_dir + "/attention_scaling.gp", dat = bench_dir + "/attention_scaling.dat";
  if (!core::file_exists(gp) || !core::file_exists(dat)) return false;
  // Its script starts with its terminal and output lines; the rest is the plot.
  std::string body = core::read_file(gp);
  for (int i = 0; i < 2 && body.find('\n') != std::string::npos; ++i)
    if (body.rfind("set terminal", 0) == 0 || body.rfind("set output", 0) == 0)
      body = body.substr(body.find('\n') + 1);
  render(fig, dir, "attention_scaling", core::read_file(dat), body, 1400, 560, gnuplot);
  return true;
}

PaperFigure build_figure(const PaperSpec& paper, const FigureSpec& f, const PaperReportOptions& opts) {
  PaperFigure fig;
  fig.spec = &f;
  const std::string dir = (opts.out_dir.empty() ? std::string(".") : opts.out_dir) + "/figures/" + f.id;
  const std::string make =
      f.sweep.empty() ? "" : fmt::format("seqbench sweep configs/papers/{}/{}_small.yaml", paper.name, f.sweep);
  if (f.kind == "attention_scaling") {
    if (!attention_figure(fig, opts.bench_dir, dir, opts.gnuplot))
      fig.status = fmt::format("not run: no {}/attention_scaling.gp (make it with `make bench`)", opts.bench_dir);
    return fig;
  }
  const std::vector<Source> srcs = sources(paper, f.sweep, opts);
  for (const auto& src : srcs) {
    const std::string exp_dir = src.dir + "/" + f.experiment;
    const std::string sub = srcs.size() > 1 ? dir + "/" + src.size : dir;
    if (f.kind == "memory") {
      memory_figure(fig, exp_dir + "/memory.csv", sub, opts.gnuplot);
    } else if (f.kind == "truncation") {
      truncation_figure(fig, exp_dir, sub, opts.gnuplot);
    } else {
      GradnormReportOptions g;
      if (f.kind == "input_gradnorm") g.source = GradnormSource::input_gradients();
      g.source.heat_maps = f.kind == "gradnorm_heatmap";
      const std::vector<std::string> run_dirs = figure_runs(exp_dir, g.source.file);
      if (!run_dirs.empty()) {
        std::vector<GradnormRun> runs;
        for (const auto& r : run_dirs) runs.push_back(load_gradnorm_run(r, g.source));
        name_apart(runs, run_dirs);
        g.out_dir = sub;
        g.gnuplot = opts.gnuplot;
        const GradnormReport result = write_gradnorm_report(std::move(runs), g);
        fig.files.insert(fig.files.end(), result.files.begin(), result.files.end());
        if (!result.rendered) fig.status = result.skipped;
        // The heat-map figure shows heat maps only; the distance figure only its curves.
        for (const auto& file : result.files) {
          const bool heat = file.find("_heatmap_") != std::string::npos;
          if (heat == (f.kind == "gradnorm_heatmap")) collect_pictures(fig, {file});
        }
      }
    }
  }
  if (fig.pngs.empty() && fig.status.empty())
    fig.status = "not run: no run data for it yet; make it with " +
                 (f.make.empty() ? make
                                 : make + "; then " +
                                       expand_dir(f.make, fmt::format("{}/papers/{}/{}_small", opts.results_root,
                                                                      paper.name, f.sweep)));
  return fig;
}

// --- rendering --------------------------------------------------------------------------

std::vector<std::string> header(const TableSpec& t) {
  std::vector<std::string> h{"size", "model"};
  if (!t.column_key.empty()) h.push_back(t.column_name.empty() ? t.column_key : t.column_name);
  for (const char* c : {"paper", "paper source"}) h.push_back(c);
  h.push_back("ours, " + t.unit);
  for (const char* c : {"n", "data", "budget", "verdict", "why"}) h.push_back(c);
  return h;
}

std::vector<std::string> cells(const TableSpec& t, const PaperLine& l) {
  std::vector<std::string> c{l.size, l.row};
  if (!t.column_key.empty()) c.push_back(l.column);
  std::string n = std::to_string(l.n);
  if (l.n_missing) n += fmt::format(" (+{} without a number)", l.n_missing);
  for (const std::string& s : {l.paper, l.source, l.ours, n, l.data, l.budget, l.verdict, l.reason})
    c.push_back(s);
  return c;
}

std::string latex_escape(const std::string& s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    const char ch = s[i];
    switch (ch) {
      case '&': case '%': case '$': case '#': case '_': case '{': case '}':
        out += '\\';
        out += ch;
        break;
      case '~': out += "\\textasciitilde{}"; break;
      case '^': out += "\\textasciicircum{}"; break;
      case '\\': out += "\\textbackslash{}"; break;
      case '<': out += "\\textless{}"; break;
      case '>': out += "\\textgreater{}"; break;
      default: out += ch;
    }
  }
  // A few UTF-8 symbols the tables use, in plain LaTeX.
  for (const auto& [from, to] : std::vector<std::pair<std::string, std::string>>{
           {"±", "$\\pm$"}, {"—", "---"}, {"λ", "$\\lambda$"}, {"→", "$\\to$"}, {"≈", "$\\approx$"}}) {
    for (size_t at = out.find(from); at != std::string::npos; at = out.find(from, at + to.size()))
      out.replace(at, from.size(), to);
  }
  return out;
}

std::string html_escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '&': out += "&amp;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string base64(const std::string& bytes) {
  std::string out(4 * ((bytes.size() + 2) / 3) + 1, '\0');
  const int n = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                                reinterpret_cast<const unsigned char*>(bytes.data()), int(bytes.size()));
  out.resize(size_t(n));
  return out;
}

std::string relative(const std::string& path, const std::string& base) {
  std::error_code ec;
  const fs::path rel = fs::relative(path, base.empty() ? "." : base, ec);
  return ec ? path : rel.string();
}

std::string heading(const PaperSpec& p) {
  return p.cite.empty() ? p.name : fmt::format("{}: {}", p.cite, p.title);
}

std::string intro(const PaperSpec& p) {
  return fmt::format(
      "Paper numbers were read from arXiv {}; a number marked (unchecked) could not be found in "
      "the paper's text and is not a fact. Ours: mean ± sd over n seeds. Verdict: reproduced "
      "(within the table's tolerance + 2 sd of the paper, real data, paper budget), partly "
      "(within it, or better, on a small budget or a stand-in corpus), not, or not run.",
      p.arxiv.empty() ? "(not recorded)" : p.arxiv);
}

int count_verdict(const PaperReport& r, const std::string& verdict) {
  int n = 0;
  for (const auto& t : r.tables)
    for (const auto& l : t.lines) n += l.verdict == verdict;
  return n;
}

// Numbers of the paper whose table is not one of the report's: shown for context.
std::vector<const PaperNumber*> context_numbers(const PaperReport& r) {
  std::set<std::string> ids;
  for (const auto& t : r.tables) ids.insert(t.spec->id);
  std::vector<const PaperNumber*> out;
  for (const auto& n : r.spec->numbers)
    if (!ids.count(n.table)) out.push_back(&n);
  return out;
}

const char* kStyle =
    "body{font-family:sans-serif;max-width:1200px;margin:2em auto;padding:0 1em;color:#222}"
    "table{border-collapse:collapse;margin:1em 0;font-size:.9em}"
    "th,td{border:1px solid #ccc;padding:.25em .5em;text-align:left;vertical-align:top}"
    "th{background:#f2f2f2}td.num{text-align:right;white-space:nowrap}"
    ".reproduced{background:#e3f4e3}.partly{background:#fdf5dc}.not{background:#fbe3e3}"
    "figure{margin:1em 0}figure img{max-width:100%;border:1px solid #ddd}code{background:#f4f4f4}";

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

PaperReport build_paper_report(const PaperSpec& paper, const PaperReportOptions& opts) {
  for (const auto& dir : opts.sweep_dirs) {
    bool used = false;
    std::set<std::string> sweeps;
    for (const auto& t : paper.tables) {
      used = used || size_of(dir, t.sweep).has_value();
      sweeps.insert(t.sweep);
    }
    for (const auto& f : paper.figures) {
      used = used || (!f.sweep.empty() && size_of(dir, f.sweep).has_value());
      if (!f.sweep.empty()) sweeps.insert(f.sweep);
    }
    if (!fs::is_directory(dir)) throw core::UsageError(fmt::format("{}: no such directory", dir));
    if (!used)
      throw core::UsageError(fmt::format(
          "{}: its name matches no sweep of {} (a directory is named <sweep>_small or <sweep>_paper; "
          "sweeps: {})",
          dir, paper.name, fmt::join(sweeps, ", ")));
  }
  PaperReport report;
  report.spec = &paper;
  report.out_dir = opts.out_dir.empty() ? "." : opts.out_dir;
  for (const auto& t : paper.tables) report.tables.push_back(build_table(paper, t, opts));
  for (const auto& f : paper.figures) report.figures.push_back(build_figure(paper, f, opts));
  return report;
}

std::string paper_markdown(const PaperReport& r) {
  const PaperSpec& p = *r.spec;
  std::string out = fmt::format("# {}\n\n{}\n", heading(p), intro(p));
  for (const auto& t : r.tables) {
    out += fmt::format("\n## {}\n\n", t.spec->title);
    out += fmt::format("Sweep: `configs/papers/{}/{}_{{small,paper}}.yaml` ({}). ", p.name, t.spec->sweep,
                       t.spec->experiment);
    out += t.dirs.empty() ? "No runs found.\n\n"
                          : fmt::format("Runs read from {}.\n\n", fmt::join(t.dirs, ", "));
    std::vector<std::vector<std::string>> rows;
    for (const auto& l : t.lines) rows.push_back(cells(*t.spec, l));
    if (!rows.empty()) out += markdown_table(header(*t.spec), rows);
    if (t.dirs.empty()) out += fmt::format("\nNot run. Make the runs with: `{}`\n", t.run_command);
    else if (t.lines.empty()) out += fmt::format("No run has a result for this table yet. Make them with: `{}`\n", t.run_command);
  }
  const auto context = context_numbers(r);
  if (!context.empty()) {
    out += "\n## The paper's other numbers (not reproduced here)\n\n";
    std::vector<std::vector<std::string>> rows;
    for (const PaperNumber* n : context)
      rows.push_back({n->table, n->row, n->column, number_cell(*n), n->unit, number_source(p, *n),
                      n->note.substr(0, n->note.find(". ") == std::string::npos ? n->note.size()
                                                                                 : n->note.find(". ") + 1)});
    out += markdown_table({"table", "what", "column", "paper", "unit", "source", "note"}, rows);
  }
  if (!r.figures.empty()) out += "\n## Figures\n\n";
  for (const auto& f : r.figures) {
    out += fmt::format("- {}: ", f.spec->title);
    std::vector<std::string> shown;
    for (size_t i = 0; i < f.pngs.size(); ++i)
      shown.push_back(relative(f.pngs[i], r.out_dir) +
                      (i < f.svgs.size() ? " (" + relative(f.svgs[i], r.out_dir) + ")" : ""));
    out += shown.empty() ? f.status : fmt::format("{}", fmt::join(shown, ", "));
    out += "\n";
  }
  return out;
}

std::string paper_csv(const PaperReport& r) {
  std::string out = csv_line({"paper", "table", "sweep", "size", "model", "column", "column_value", "paper_number",
                              "paper_source", "unit", "ours_mean", "ours_sd", "n", "n_without_number", "data",
                              "budget", "verdict", "reason"});
  for (const auto& t : r.tables)
    for (const auto& l : t.lines)
      out += csv_line({r.spec->name, t.spec->id, t.spec->sweep, l.size, l.row,
                       t.spec->column_key.empty() ? "" : t.spec->column_name, l.column, l.paper, l.source,
                       t.spec->unit, l.n ? fmt::format("{}", l.mean) : "", l.n ? fmt::format("{}", l.sd) : "",
                       std::to_string(l.n), std::to_string(l.n_missing), l.data, l.budget, l.verdict, l.reason});
  return out;
}

std::string paper_latex(const PaperReport& r) {
  const PaperSpec& p = *r.spec;
  std::string out = fmt::format("% {} -- written by `seqbench report paper {}`.\n% {}\n", heading(p), p.name,
                                intro(p));
  for (const auto& t : r.tables) {
    const auto h = header(*t.spec);
    out += fmt::format("\n\\begin{{table}}[ht]\n\\centering\\small\n\\caption{{{}}}\n", latex_escape(t.spec->title));
    out += "\\begin{tabular}{" + std::string(h.size(), 'l') + "}\n\\hline\n";
    std::vector<std::string> hh;
    for (const auto& c : h) hh.push_back(latex_escape(c));
    out += fmt::format("{} \\\\\n\\hline\n", fmt::join(hh, " & "));
    for (const auto& l : t.lines) {
      std::vector<std::string> cc;
      for (const auto& c : cells(*t.spec, l)) cc.push_back(latex_escape(c));
      out += fmt::format("{} \\\\\n", fmt::join(cc, " & "));
    }
    if (t.lines.empty()) out += fmt::format("\\multicolumn{{{}}}{{l}}{{not run}} \\\\\n", h.size());
    out += "\\hline\n\\end{tabular}\n\\end{table}\n";
  }
  return out;
}

std::string paper_html(const PaperReport& r) {
  const PaperSpec& p = *r.spec;
  std::string out = fmt::format(
      "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>{}</title>"
      "<style>{}</style></head>\n<body>\n<p><a href=\"../index.html\">All papers</a></p>\n<h1>{}</h1>\n<p>{}</p>\n",
      html_escape(p.name), kStyle, html_escape(heading(p)), html_escape(intro(p)));
  for (const auto& t : r.tables) {
    out += fmt::format("<h2>{}</h2>\n<p>Sweep <code>configs/papers/{}/{}_{{small,paper}}.yaml</code>. {}</p>\n",
                       html_escape(t.spec->title), p.name, t.spec->sweep,
                       t.dirs.empty() ? "Not run. Make the runs with <code>" + html_escape(t.run_command) + "</code>."
                                      : html_escape(fmt::format("Runs read from {}.", fmt::join(t.dirs, ", "))));
    if (t.lines.empty()) {
      if (!t.dirs.empty())
        out += "<p>No run has a result for this table yet. Make them with <code>" + html_escape(t.run_command) +
               "</code>.</p>\n";
      continue;
    }
    out += "<table>\n<tr>";
    for (const auto& h : header(*t.spec)) out += "<th>" + html_escape(h) + "</th>";
    out += "</tr>\n";
    for (const auto& l : t.lines) {
      const std::string cls = l.verdict == "not run" ? "" : l.verdict;
      out += cls.empty() || cls == "—" ? "<tr>" : "<tr class=\"" + cls + "\">";
      for (const auto& c : cells(*t.spec, l))
        out += (is_numeric_cell(c) ? "<td class=\"num\">" : "<td>") + html_escape(c) + "</td>";
      out += "</tr>\n";
    }
    out += "</table>\n";
  }
  const auto context = context_numbers(r);
  if (!context.empty()) {
    out += "<h2>The paper's other numbers (not reproduced here)</h2>\n<table>\n<tr><th>table</th><th>what</th>"
           "<th>column</th><th>paper</th><th>unit</th><th>source</th><th>note</th></tr>\n";
    for (const PaperNumber* n : context)
      out += fmt::format("<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>\n",
                         html_escape(n->table), html_escape(n->row), html_escape(n->column),
                         html_escape(number_cell(*n)), html_escape(n->unit), html_escape(number_source(p, *n)),
                         html_escape(n->note));
    out += "</table>\n";
  }
  out += "<h2>Figures</h2>\n";
  for (const auto& f : r.figures) {
    out += "<figure>\n<figcaption><b>" + html_escape(f.spec->title) + "</b>";
    if (!f.status.empty()) out += ": " + html_escape(f.status);
    out += "</figcaption>\n";
    for (size_t i = 0; i < f.pngs.size(); ++i) {
      out += fmt::format("<img alt=\"{}\" src=\"data:image/png;base64,{}\">\n", html_escape(f.spec->title),
                         base64(core::read_file(f.pngs[i])));
      if (i < f.svgs.size())
        out += fmt::format("<p><a href=\"{}\">SVG</a></p>\n", html_escape(relative(f.svgs[i], r.out_dir)));
    }
    out += "</figure>\n";
  }
  return out + "</body></html>\n";
}

std::string papers_index_html(const std::vector<PaperReport>& reports) {
  std::string out = fmt::format(
      "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>seqbench: paper reports</title>"
      "<style>{}</style></head>\n<body>\n<h1>seqbench: the five papers</h1>\n"
      "<p>One page per paper: our numbers beside the paper's, with verdicts and figures. Written by "
      "<code>seqbench report papers</code>.</p>\n<table>\n<tr><th>paper</th><th>tables</th><th>reproduced</th>"
      "<th>partly</th><th>not</th><th>not run</th><th>figures drawn</th></tr>\n",
      kStyle);
  for (const auto& r : reports) {
    int drawn = 0;
    for (const auto& f : r.figures) drawn += !f.pngs.empty();
    out += fmt::format(
        "<tr><td><a href=\"{0}/index.html\">{1}</a></td><td class=\"num\">{2}</td><td class=\"num\">{3}</td>"
        "<td class=\"num\">{4}</td><td class=\"num\">{5}</td><td class=\"num\">{6}</td><td class=\"num\">{7} of "
        "{8}</td></tr>\n",
        r.spec->name, html_escape(heading(*r.spec)), r.tables.size(), count_verdict(r, "reproduced"),
        count_verdict(r, "partly"), count_verdict(r, "not"), count_verdict(r, "not run"), drawn, r.figures.size());
  }
  return out + "</table>\n</body></html>\n";
}

std::vector<std::string> write_paper_report(const PaperReport& report, const std::string& out_dir) {
  core::make_dirs(out_dir);
  std::vector<std::string> written;
  for (const auto& [name, text] : std::vector<std::pair<std::string, std::string>>{
           {"report.md", paper_markdown(report)},
           {"report.csv", paper_csv(report)},
           {"report.tex", paper_latex(report)},
           {"index.html", paper_html(report)}}) {
    core::write_file_atomic(out_dir + "/" + name, text);
    written.push_back(out_dir + "/" + name);
  }
  return written;
}

}  // namespace seqbench::report

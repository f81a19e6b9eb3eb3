#include "report/paper_figures.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <map>
#include <set>
#include <sstream>
#include <utility>

#include "core/fs.hpp"
#include "report/compare.hpp"
#include "report/csv.hpp"
#include "report/gnuplot.hpp"
#include "report/paper_sources.hpp"
#include "report/plots.hpp"
#include "report/run_configs.hpp"

namespace seqbench::report {

namespace {

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
    const std::string sig = config_signature(configs[r]);
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

// Writes <stem>.dat and <stem>.gp into dir and draws <stem>.png and .svg.
void render(PaperFigure& fig, const std::string& dir, const std::string& stem, const std::string& dat,
            const std::string& settings, const std::string& plot, int width, int height,
            const std::string& gnuplot) {
  GnuplotFigure g;
  g.stem = stem;
  g.written_by = "seqbench report paper";
  g.settings = settings;
  g.plot = plot;
  g.width = width;
  g.height = height;
  const DrawnFigure drawn = draw_figure(dir, g, dat, gnuplot);
  if (drawn.status.kind == GnuplotStatus::Kind::kNotFound) {
    fig.status = fmt::format("not drawn: '{}' not found (install gnuplot-nox); data and script in {}", gnuplot, dir);
    return;
  }
  if (!drawn.status.drawn()) {
    fig.status = "not drawn: " + drawn.status.message;
    return;
  }
  fig.pngs.push_back(drawn.files.png);
  fig.svgs.push_back(drawn.files.svg);
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
         "set logscale y\nset grid\nset key top left\n",
         "plot " + plot, 900, 560, gnuplot);
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
         "set xlabel 'k'\nset ylabel '‖∇_w p_T − ∇_w p_T^k‖'\nset logscale y\nset grid\n",
         "plot " + plot, 900, 560, gnuplot);
  return true;
}

// The attention-scaling figure of `make bench`, copied and drawn once more as SVG.
bool attention_figure(PaperFigure& fig, const std::string& bench_dir, const std::string& dir,
                      const std::string& gnuplot) {
  const std::string gp = bench_dir + "/attention_scaling.gp", dat = bench_dir + "/attention_scaling.dat";
  if (!core::file_exists(gp) || !core::file_exists(dat)) return false;
  // Its script starts with its terminal and output lines; the rest (a multiplot) draws,
  // once per picture.
  std::string body = core::read_file(gp);
  for (int i = 0; i < 2 && body.find('\n') != std::string::npos; ++i)
    if (body.rfind("set terminal", 0) == 0 || body.rfind("set output", 0) == 0)
      body = body.substr(body.find('\n') + 1);
  render(fig, dir, "attention_scaling", core::read_file(dat), "", body, 1400, 560, gnuplot);
  return true;
}

// --- accuracy against state size (Zoology's Figure 2, on state bytes) ----------------

// One point of the figure: a model at one task setting and width (ours: the mean over
// seeds of the best config; published: a number of numbers.yaml).
struct StatePoint {
  std::map<std::string, std::string> setting;  // runs.csv identity: task, model, T, vocab, pairs, width
  double state_bytes = NAN;
  double accuracy = NAN, sd = 0;  // %
  int n = 0, n_missing = 0, configs = 0;
  std::string run_id, source;
};

const char* const kStateKeys[] = {"task", "model", "T", "vocab", "pairs", "width"};

double mean_of(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x;
  return v.empty() ? NAN : s / double(v.size());
}

double sd_of(const std::vector<double>& v) {
  if (v.size() < 2) return 0;
  const double m = mean_of(v);
  double s = 0;
  for (double x : v) s += (x - m) * (x - m);
  return std::sqrt(s / double(v.size() - 1));
}

bool less_number_or_text(const std::string& a, const std::string& b) {
  char* ea = nullptr;
  char* eb = nullptr;
  const double x = std::strtod(a.c_str(), &ea), y = std::strtod(b.c_str(), &eb);
  if (!a.empty() && !b.empty() && *ea == '\0' && *eb == '\0' && x != y) return x < y;
  return a < b;
}

// Our points: runs grouped by identity and config (all but the seed), averaged over seeds;
// of several configs at one identity (a learning-rate grid) the best mean is kept, as
// Zoology's Figure 2 keeps the best of its learning rates.
std::vector<StatePoint> our_state_points(const CsvTable& runs) {
  for (const char* c : {"run_id", "model", "T", "width", "state_bytes", "final_metric"}) (void)runs.col(c);
  const RunConfigs configs = read_run_configs(runs);
  struct Group {
    StatePoint p;
    std::vector<double> values;
  };
  std::map<std::string, std::map<std::string, Group>> by_identity;  // identity -> signature -> group
  for (size_t r = 0; r < runs.rows.size(); ++r) {
    std::map<std::string, std::string> setting;
    std::string identity;
    for (const char* k : kStateKeys) {
      setting[k] = runs.has(k) ? runs.rows[r][size_t(runs.col(k))] : "";
      identity += setting[k] + "\n";
    }
    Group& g = by_identity[identity][config_signature(configs[r])];
    if (g.p.run_id.empty()) {
      g.p.setting = setting;
      g.p.run_id = runs.rows[r][size_t(runs.col("run_id"))];
      g.p.state_bytes = runs.number(r, "state_bytes");
      g.p.source = "ours";
    }
    const std::string cell = runs.rows[r][size_t(runs.col("final_metric"))];
    const double v = cell.empty() ? NAN : runs.number(r, "final_metric");
    if (std::isfinite(v)) g.values.push_back(100 * v);
    else ++g.p.n_missing;
  }
  std::vector<StatePoint> out;
  for (auto& [identity, groups] : by_identity) {
    const Group* best = nullptr;
    int missing = 0;
    for (auto& [sig, g] : groups) {
      g.p.n = int(g.values.size());
      g.p.accuracy = mean_of(g.values);
      g.p.sd = sd_of(g.values);
      missing += g.p.n_missing;
      if (!best || (std::isfinite(g.p.accuracy) && !(best->p.accuracy >= g.p.accuracy))) best = &g;
    }
    StatePoint p = best->p;
    p.configs = int(groups.size());
    p.n_missing = missing;
    out.push_back(p);
  }
  return out;
}

// "T=256, width=128, vocab=8192" -> {T: 256, width: 128, vocab: 8192}.
std::map<std::string, std::string> parse_setting(const std::string& text) {
  std::map<std::string, std::string> out;
  std::stringstream in(text);
  std::string part;
  while (std::getline(in, part, ',')) {
    const auto trim = [](std::string x) {
      x.erase(0, x.find_first_not_of(" \t"));
      x.erase(x.find_last_not_of(" \t") + 1);
      return x;
    };
    const size_t eq = part.find('=');
    if (eq != std::string::npos) out[trim(part.substr(0, eq))] = trim(part.substr(eq + 1));
  }
  return out;
}

// The paper's numbers for figure `id` (numbers.yaml: table = the figure id, row = the
// model as runs.csv names it, column = the setting as "T=256, width=128, vocab=8192"),
// each placed at the state size of our first point (in the CSV's order) of the same model
// and setting; a number with no such point keeps no x (listed in the CSV, not drawn).
// The setting's keys are the identity columns (task, T, vocab, pairs, width).
std::vector<StatePoint> published_state_points(const PaperSpec& paper, const std::string& id,
                                               const std::vector<StatePoint>& ours) {
  std::vector<StatePoint> out;
  for (const auto& n : paper.numbers) {
    if (n.table != id) continue;
    StatePoint p;
    p.setting = parse_setting(n.column);
    p.setting["model"] = n.row;
    p.accuracy = n.value;
    p.source = "published: " + number_source(paper, n);
    for (const auto& o : ours) {
      bool match = true;
      for (const auto& [k, v] : p.setting) {
        const auto it = o.setting.find(k);
        match = match && it != o.setting.end() && it->second == v;
      }
      if (match) {
        const std::map<std::string, std::string> given = p.setting;
        p.setting = o.setting;  // the matching run's full identity
        for (const auto& [k, v] : given) p.setting[k] = v;
        p.state_bytes = o.state_bytes;
        break;
      }
    }
    out.push_back(p);
  }
  return out;
}

// A CSV cell: rounded to 1e-6 (so 100 x 0.998 reads 99.8), empty when there is no value.
std::string fmt_cell(double v) { return std::isfinite(v) ? fmt::format("{}", std::round(v * 1e6) / 1e6) : ""; }

// x = state bytes (log), y = accuracy (%); one panel per task and T, one series per model
// (its points: the widths), the paper's numbers as large open black circles. Also writes
// accuracy_vs_state.csv with every point, ours and published.
bool accuracy_state_figure(PaperFigure& fig, const PaperSpec& paper, const FigureSpec& f,
                           const std::string& exp_dir, const std::string& dir, const std::string& gnuplot) {
  const std::string runs_csv = exp_dir + "/runs.csv";
  if (!core::file_exists(runs_csv)) return false;
  const CsvTable runs = read_csv(runs_csv);
  std::vector<StatePoint> ours = our_state_points(runs);
  if (ours.empty()) return false;
  const auto setting_less = [](const StatePoint& a, const StatePoint& b) {
    for (const char* k : {"task", "T", "model", "vocab", "pairs", "width"}) {
      const std::string& x = a.setting.at(k);
      const std::string& y = b.setting.at(k);
      if (x != y) return less_number_or_text(x, y);
    }
    return false;
  };
  std::sort(ours.begin(), ours.end(), setting_less);
  const std::vector<StatePoint> published = published_state_points(paper, f.id, ours);

  std::string csv = csv_line({"source", "task", "model", "T", "vocab", "pairs", "width", "state_bytes",
                              "accuracy_pct", "sd", "n", "n_without_number", "configs", "run_id"});
  for (const std::vector<StatePoint>* points : {&std::as_const(ours), &published})
    for (const auto& p : *points) {
      const auto at = [&](const char* k) {
        const auto it = p.setting.find(k);
        return it == p.setting.end() ? std::string() : it->second;
      };
      const bool mine = p.source == "ours";
      csv += csv_line({p.source, at("task"), at("model"), at("T"), at("vocab"), at("pairs"), at("width"),
                       fmt_cell(p.state_bytes), fmt_cell(p.accuracy), mine ? fmt_cell(p.sd) : "",
                       mine ? std::to_string(p.n) : "", mine ? std::to_string(p.n_missing) : "",
                       mine ? std::to_string(p.configs) : "", p.run_id});
    }
  core::make_dirs(dir);
  const std::string csv_path = dir + "/accuracy_vs_state.csv";
  core::write_file_atomic(csv_path, csv);
  fig.files.push_back(csv_path);
  fig.files.push_back(runs_csv);

  // A panel: one task, T, vocab and pairs (a grid over pairs at one T gets a panel each),
  // in the CSV's order; a model keeps its colour and point type in every panel.
  std::vector<std::map<std::string, std::string>> panels;
  std::vector<std::string> models;
  const auto panel_of = [](const StatePoint& p) {
    std::map<std::string, std::string> key;
    for (const char* k : {"task", "T", "vocab", "pairs"}) key[k] = p.setting.count(k) ? p.setting.at(k) : "";
    return key;
  };
  for (const auto& p : ours) {
    const auto key = panel_of(p);
    if (std::find(panels.begin(), panels.end(), key) == panels.end()) panels.push_back(key);
    if (std::find(models.begin(), models.end(), p.setting.at("model")) == models.end())
      models.push_back(p.setting.at("model"));
  }
  std::sort(models.begin(), models.end());
  std::set<std::string> tasks;
  for (const auto& panel : panels) tasks.insert(panel.at("task"));
  std::string dat, plot;
  int index = 0, drawn_published = 0, unplaced = 0;
  const int cols = int(std::min<size_t>(panels.size(), 3));
  const int rows = int((panels.size() + size_t(cols) - 1) / size_t(cols));
  plot += fmt::format("set multiplot layout {},{} title {} noenhanced\n", rows, cols,
                      gp_quote(f.title.empty() ? "Accuracy against state size" : f.title));
  for (const auto& panel : panels) {
    const std::string &task = panel.at("task"), &T = panel.at("T");
    std::string panel_plot;
    for (size_t m = 0; m < models.size(); ++m) {
      std::vector<const StatePoint*> pts;
      for (const auto& p : ours)
        if (panel_of(p) == panel && p.setting.at("model") == models[m] && std::isfinite(p.accuracy) &&
            p.state_bytes > 0)
          pts.push_back(&p);
      if (pts.empty()) continue;
      std::stable_sort(pts.begin(), pts.end(),
                       [](const StatePoint* a, const StatePoint* b) { return a->state_bytes < b->state_bytes; });
      dat += fmt::format("# {} T={} {}: state_bytes accuracy_pct width\n", task, T, models[m]);
      for (const StatePoint* p : pts)
        dat += fmt::format("{} {} {}\n", p->state_bytes, fmt_cell(p->accuracy), p->setting.at("width"));
      dat += "\n\n";
      panel_plot += fmt::format("{}'accuracy_vs_state.dat' index {} using 1:2 with linespoints lc {} pt {} ps 1.3 "
                                "lw 1.5 title {} noenhanced",
                                panel_plot.empty() ? "" : ", ", index, m + 1, int(m % 13) + 1,
                                gp_quote(models[m]));
      ++index;
    }
    std::vector<const StatePoint*> pub;
    for (const auto& p : published)
      if (std::isfinite(p.state_bytes) && panel_of(p) == panel) pub.push_back(&p);
    if (!pub.empty()) {
      dat += fmt::format("# {} T={} published: state_bytes accuracy_pct\n", task, T);
      for (const StatePoint* p : pub) dat += fmt::format("{} {}\n", p->state_bytes, fmt_cell(p->accuracy));
      dat += "\n\n";
      panel_plot += fmt::format("{}'accuracy_vs_state.dat' index {} using 1:2 with points pt 6 ps 2.6 lw 2 "
                                "lc rgb 'black' title 'published'",
                                panel_plot.empty() ? "" : ", ", index);
      ++index;
      drawn_published += int(pub.size());
    }
    std::string title = (tasks.size() > 1 ? task + ", " : std::string()) + "T = " + T;
    // runs.csv's pairs: MQAR's key-value pairs, selective copying's tokens; induction has none.
    if (!panel.at("pairs").empty() && task != "induction")
      title += ", " + panel.at("pairs") + (task == "selective_copy" ? " tokens" : " pairs");
    if (!panel.at("vocab").empty()) title += ", vocab " + panel.at("vocab");
    if (panel_plot.empty()) {  // no run of this panel has a number yet: empty axes
      panel_plot = "NaN notitle";
      title += " (no results yet)";
    }
    plot += fmt::format("set title {} noenhanced\nplot {}\n", gp_quote(title), panel_plot);
  }
  plot += "unset multiplot";
  // One x range for every panel (whole decades around all points), so panels compare.
  double lo = INFINITY, hi = 0;
  for (const auto* points : {&std::as_const(ours), &published})
    for (const auto& p : *points)
      if (p.state_bytes > 0) lo = std::min(lo, p.state_bytes), hi = std::max(hi, p.state_bytes);
  if (!(hi > 0)) lo = 100, hi = 1e6;  // no point has a state size: empty axes of some range
  const std::string xrange = fmt::format("set xrange [{:g}:{:g}]\n", std::pow(10.0, std::floor(std::log10(lo))),
                                         std::pow(10.0, std::ceil(std::log10(hi) + 1e-9)));
  for (const auto& p : published) unplaced += !std::isfinite(p.state_bytes);
  render(fig, dir, "accuracy_vs_state", dat,
         "set logscale x\nset format x '%.0s%cB'\nset xlabel 'state carried from token to token (bytes)'\n"
         "set ylabel 'accuracy (%)'\nset yrange [0:105]\nset grid\nset key outside right top font ',9'\n" +
             xrange,
         plot, 640 * cols + 60, 460 * rows + 60, gnuplot);
  fig.note = published.empty()
                 ? fmt::format("no published numbers recorded for it (numbers.yaml, table {}); data: {}", f.id,
                               csv_path)
                 : fmt::format("{} published number(s) drawn as open black circles, {} without a run of their "
                               "setting (listed in {}, not drawn)",
                               drawn_published, unplaced, csv_path);
  return true;
}

}  // namespace

PaperFigure build_paper_figure(const PaperSpec& paper, const FigureSpec& f,
                               const PaperReportOptions& opts) {
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
  const std::vector<PaperSource> srcs = paper_sources(paper, f.sweep, opts);
  for (const auto& src : srcs) {
    const std::string exp_dir = src.dir + "/" + f.experiment;
    const std::string sub = srcs.size() > 1 ? dir + "/" + src.size : dir;
    if (f.kind == "memory") {
      memory_figure(fig, exp_dir + "/memory.csv", sub, opts.gnuplot);
    } else if (f.kind == "accuracy_vs_state") {
      accuracy_state_figure(fig, paper, f, exp_dir, sub, opts.gnuplot);
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

}  // namespace seqbench::report

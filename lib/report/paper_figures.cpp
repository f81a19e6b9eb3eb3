#include "report/paper_figures.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <set>
#include <sstream>
#include <utility>

#include "core/check.hpp"
#include "core/fs.hpp"
#include "report/bands.hpp"
#include "report/compare.hpp"
#include "report/curves.hpp"
#include "report/csv.hpp"
#include "report/gnuplot.hpp"
#include "report/paper_sources.hpp"
#include "report/plots.hpp"
#include "report/run_configs.hpp"

namespace seqbench::report {

namespace fs = std::filesystem;

namespace {

// The run directories of <dir>/<experiment> holding `file`, grouped by config (runs
// equal but for the seed), each group in ascending seed, the groups by their first run.
std::vector<std::vector<std::string>> run_groups(const std::string& dir, const std::string& file) {
  const std::string runs_csv = dir + "/runs.csv";
  if (!core::file_exists(runs_csv)) return {};
  const CsvTable runs = read_csv(runs_csv);
  const RunConfigs configs = read_run_configs(runs);
  std::map<std::string, std::map<std::pair<long, std::string>, std::string>> by_sig;  // sig -> (seed, id) -> dir
  for (size_t r = 0; r < runs.rows.size(); ++r) {
    const std::string id = runs.rows[r][size_t(runs.col("run_id"))];
    const std::string run = dir + "/" + id;
    if (!core::file_exists(run + "/" + file)) continue;
    auto seed_it = configs[r].find("train.seed");
    if (seed_it == configs[r].end()) seed_it = configs[r].find("seed");
    const long seed = seed_it == configs[r].end() ? 0 : std::atol(seed_it->second.c_str());
    by_sig[config_signature(configs[r])][{seed, id}] = run;
  }
  std::vector<std::vector<std::string>> out;
  for (const auto& [sig, seeds] : by_sig) {
    out.emplace_back();
    for (const auto& [key, run] : seeds) out.back().push_back(run);
  }
  std::sort(out.begin(), out.end());
  return out;
}

// One run per config, the lowest seed: a figure that cannot average its runs (a heat map).
std::vector<std::string> figure_runs(const std::string& dir, const std::string& file) {
  std::vector<std::string> out;
  for (const auto& g : run_groups(dir, file)) out.push_back(g.front());
  std::sort(out.begin(), out.end());
  return out;
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
    plot += fmt::format("{}'memory.dat' index {} using 1:2 with linespoints {} {} title {}", index ? ", " : "",
                        index, series_style(index), point_interval(points.size()), gp_quote(label));
    ++index;
  }
  render(fig, dir, "memory", dat,
         "set title 'Memory held for backward against T (one training step)'\n"
         "set xlabel 'T'\nset ylabel 'MB held (activations, attention buffers)'\n" +
             log_axis("y"),
         "plot " + plot, 900, 560, gnuplot);
  fig.files.push_back(csv);
  return true;
}

// The λ of a stability run, from its config.yaml ("" when it has none).
std::string lambda_of(const std::string& run) {
  const std::string path = run + "/config.yaml";
  if (!core::file_exists(path)) return "";
  const auto cfg = flat_config(core::read_file(path), path);
  for (const char* key : {"lambda", "analysis.lambda", "truncation.lambda"})
    if (cfg.count(key)) return cfg.at(key);
  return "";
}

// Miller & Hardt's Figure 1 from the stability runs, one series per λ with its seeds as
// mean ± band, on a log axis against k:
//   (a) truncation.csv (k, gap, bound_k_lambda_k): the gradient gap, with the bound
//       γ k λ^k of Lemma 2 beside each series (γ the smallest that puts it above every
//       mean), dotted in the series' colour;
//   (b) weight_gap.csv (k, step, gap): the weight gap after the last step.
bool stability_figure(PaperFigure& fig, const std::string& kind, const std::string& exp_dir,
                      const std::string& dir, const std::string& gnuplot) {
  const bool truncation = kind == "truncation";
  const std::string file = truncation ? "truncation.csv" : "weight_gap.csv";
  const std::vector<std::vector<std::string>> groups = run_groups(exp_dir, file);
  if (groups.empty()) return false;
  std::vector<std::string> labels;
  for (const auto& g : groups) {
    const std::string lambda = lambda_of(g.front());
    labels.push_back(lambda.empty() ? run_label(g.front()) : "λ = " + lambda);
  }
  labels = unique_labels(labels);
  std::string dat, plot, caption;
  int index = 0;
  for (size_t i = 0; i < groups.size(); ++i) {
    std::vector<Samples> seeds;
    std::map<double, double> bound;  // k -> k λ^k
    for (const auto& run : groups[i]) {
      const CsvTable t = read_csv(run + "/" + file);
      double last = -INFINITY;
      if (!truncation)
        for (size_t r = 0; r < t.rows.size(); ++r) last = std::max(last, t.number(r, "step"));
      Samples s;
      for (size_t r = 0; r < t.rows.size(); ++r) {
        if (!truncation && t.number(r, "step") != last) continue;
        const double gap = t.number(r, "gap");
        if (gap > 0) s.push_back({t.number(r, "k"), gap});  // a zero gap has no place on a log axis
        if (truncation) bound[t.number(r, "k")] = t.number(r, "bound_k_lambda_k");
      }
      seeds.push_back(s);
    }
    const std::vector<BandPoint> points = mean_band(seeds);
    if (points.empty()) continue;
    caption = band_caption(points);
    dat += band_block(labels[i], points);
    plot += (plot.empty() ? "" : ", ") +
            band_plot(kind + ".dat", index++, int(i), labels[i], points);
    // γ from the gaps above rounding noise (1e-12 of the largest): a gap that has hit
    // the floor of double precision is no longer bounded by anything that decays.
    double gamma = 0, floor = INFINITY, top = 0;
    for (const auto& p : points) top = std::max(top, p.mean);
    for (const auto& p : points) {
      if (p.mean < 1e-12 * top) continue;
      if (bound.count(p.x) && bound[p.x] > 0) gamma = std::max(gamma, p.mean / bound[p.x]);
      floor = std::min(floor, p.mean);
    }
    if (!(gamma > 0)) continue;
    dat += fmt::format("# {}: k, {:.3g} k λ^k (down to a tenth of the smallest gap)\n", labels[i], gamma);
    for (const auto& [k, b] : bound)
      if (gamma * b >= floor / 10) dat += fmt::format("{} {}\n", k, gamma * b);
    dat += "\n\n";
    plot += fmt::format(", '{}.dat' index {} using 1:2 with lines lc rgb '{}' dt (2,4) lw 1.5 title {}", kind,
                        index++, palette_colour(int(i)), gp_quote(fmt::format("γ k λ^k, {}", labels[i])));
  }
  if (plot.empty()) return false;
  const std::string settings =
      truncation ? "set title 'Gradient gap between the recurrent and the k-truncated model'\n"
                   "set xlabel 'truncation length k'\nset ylabel '‖∇_w p_T − ∇_w p_T^k‖'\n"
                 : "set title 'Weight gap after projected gradient descent, recurrent vs k-truncated'\n"
                   "set xlabel 'truncation length k'\nset ylabel '‖w_recurrent − w_truncated‖ (last step)'\n";
  render(fig, dir, kind, dat, settings + log_axis("y"), "plot " + plot, 960, 560, gnuplot);
  fig.note = caption + " per λ" + (truncation ? "; dotted: the bound γ k λ^k (Lemma 2), γ fitted above each mean" : "");
  return true;
}

// The attention-scaling figure of `make bench`, redrawn in the house style from its data
// (attention_scaling.dat: one block per implementation, "# impl: n ms mem_mb"), with the
// n^1.5 and n^2 guides through the implementations' mean time at the smallest n.
bool attention_figure_in(PaperFigure& fig, const std::string& bench_dir, const std::string& dir,
                         const std::string& gnuplot) {
  const std::string gp = bench_dir + "/attention_scaling.gp", dat_path = bench_dir + "/attention_scaling.dat";
  if (!core::file_exists(gp) || !core::file_exists(dat_path)) return false;
  const std::string dat = core::read_file(dat_path);
  std::vector<std::string> impls;
  double n0 = INFINITY, log_sum = 0;
  int at_n0 = 0;
  std::istringstream in(dat);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("# ", 0) == 0) {
      impls.push_back(line.substr(2, line.rfind(": ") - 2));  // "# torch:full: n ms mem_mb"
      continue;
    }
    double n = 0, ms = 0;
    if (std::sscanf(line.c_str(), "%lf %lf", &n, &ms) != 2 || !(ms > 0)) continue;
    if (n < n0) n0 = n, log_sum = 0, at_n0 = 0;
    if (n == n0) log_sum += std::log(ms), ++at_n0;
  }
  if (impls.empty()) return false;
  // The bench script's title line names the setting (threads, B, H, D, window).
  std::string title = "Causal attention, forward + backward";
  const std::string script = core::read_file(gp);
  const size_t t = script.find("title '", script.find("set multiplot"));
  if (t != std::string::npos) title = script.substr(t + 7, script.find('\'', t + 7) - t - 7);
  Panels grid;
  grid.cols = 2;
  grid.key = 0.17;
  std::string time_plot, mem_plot, key;
  for (size_t i = 0; i < impls.size(); ++i) {
    const std::string style = series_style(int(i));
    time_plot += fmt::format("'attention_scaling.dat' index {} using 1:2 with linespoints {} notitle, ", i, style);
    mem_plot += fmt::format(
        "'attention_scaling.dat' index {} using 1:($3 > 0 ? $3 : NaN) with linespoints {} notitle, ", i, style);
    key += fmt::format("NaN with linespoints {} title {}, ", style, gp_quote(impls[i]));
  }
  const double y0 = at_n0 > 0 ? std::exp(log_sum / at_n0) : 1;
  const std::string n15 = "with lines lc rgb '#555555' dt (2,3) lw 2", n2 = "with lines lc rgb '#555555' dt (8,4) lw 2";
  const std::string guides = fmt::format("{0} * (x / {1})**1.5 {2} notitle, {0} * (x / {1})**2 {3} notitle", y0,
                                         std::isfinite(n0) ? n0 : 1, n15, n2);
  const std::string plot =
      grid.begin(title) + grid.panel(0) + "set title 'time'\nset ylabel 'ms (median)'\nplot " + time_plot + guides +
      "\n" + grid.panel(1) + "set title 'memory (ours: held bytes; PyTorch: peak - base RSS)'\nset ylabel 'MB'\nplot " +
      mem_plot + "(x * x * 4 / 1048576) " + n2 + " notitle\n" +
      grid.end(key + "NaN " + n15 + " title 'n^1.5 guide', NaN " + n2 + " title 'n^2 guide, n×n floats'");
  render(fig, dir, "attention_scaling", dat, "set logscale x 2\nset logscale y\nset autoscale xfix\nset xlabel 'n'\n",
         plot, 1400, 560, gnuplot);
  fig.note = "grey: n^1.5 and n^2 through the implementations' mean time at the smallest n (time); n×n floats (memory)";
  return true;
}

// --- length extrapolation -------------------------------------------------------------

// Accuracy against the evaluation length, one panel per model (runs.csv `model`), one
// series per trained setting (width and trained T) with its seeds as a band: each run's
// final validation at its training length (runs.csv final_metric), then its transfer.csv
// rows (the latest per length), on a log-2 axis: each series starts at its training length.
bool extrapolation_figure(PaperFigure& fig, const std::string& title, const std::string& exp_dir,
                          const std::string& dir, const std::string& gnuplot) {
  const std::vector<std::vector<std::string>> groups = run_groups(exp_dir, "transfer.csv");
  if (groups.empty()) return false;
  const CsvTable runs = read_csv(exp_dir + "/runs.csv");
  for (const char* c : {"run_id", "model", "T", "width", "final_metric"}) (void)runs.col(c);
  std::map<std::string, size_t> row_of_id;
  for (size_t r = 0; r < runs.rows.size(); ++r) row_of_id[runs.rows[r][size_t(runs.col("run_id"))]] = r;
  const auto cell = [&](const std::string& run, const char* column) {
    const auto it = row_of_id.find(fs::path(run).filename().string());
    return it == row_of_id.end() ? std::string() : runs.rows[it->second][size_t(runs.col(column))];
  };
  std::vector<std::string> models, settings;  // in order of first appearance; a setting keeps its style
  struct Series {
    std::string model, setting;
    std::vector<BandPoint> points;
  };
  std::vector<Series> series;
  for (const auto& group : groups) {
    std::vector<Samples> seeds;
    for (const auto& run : group) {
      const CsvTable t = read_csv(run + "/transfer.csv");
      std::map<double, double> latest;  // eval_T -> acc, the last row of each length
      for (size_t r = 0; r < t.rows.size(); ++r) latest[t.number(r, "eval_T")] = 100 * t.number(r, "acc");
      const std::string trained = cell(run, "T"), final_metric = cell(run, "final_metric");
      if (!trained.empty() && !final_metric.empty())
        latest.emplace(std::stod(trained), 100 * std::stod(final_metric));
      Samples s(latest.begin(), latest.end());
      seeds.push_back(s);
    }
    Series sr{cell(group.front(), "model"), fmt::format("width {}, trained at T = {}", cell(group.front(), "width"),
                                                        cell(group.front(), "T")),
              mean_band(seeds)};
    if (sr.model.empty()) sr.model = run_label(group.front());
    if (sr.points.empty()) continue;
    if (std::find(models.begin(), models.end(), sr.model) == models.end()) models.push_back(sr.model);
    if (std::find(settings.begin(), settings.end(), sr.setting) == settings.end()) settings.push_back(sr.setting);
    series.push_back(std::move(sr));
  }
  if (series.empty()) return false;
  Panels grid;
  grid.cols = int(std::min<size_t>(models.size(), 3));
  grid.rows = int((models.size() + size_t(grid.cols) - 1) / size_t(grid.cols));
  const int key_px = key_width_px(settings);
  const int width = 520 * grid.cols + key_px, height = 400 * grid.rows + 60;
  grid.key = double(key_px) / width;
  grid.title = 50.0 / height;
  std::string dat, plot = grid.begin(title);
  std::string caption;
  int index = 0;
  for (size_t m = 0; m < models.size(); ++m) {
    std::string panel;
    for (const auto& sr : series) {
      if (sr.model != models[m]) continue;
      const int style = int(std::find(settings.begin(), settings.end(), sr.setting) - settings.begin());
      dat += band_block(sr.model + ", " + sr.setting, sr.points);
      panel += (panel.empty() ? "" : ", ") + band_plot("extrapolation.dat", index++, style, "", sr.points);
      caption = band_caption(sr.points);
    }
    plot += grid.panel(int(m)) + fmt::format("set title {}\nplot {}\n", gp_quote(models[m]), panel);
  }
  std::string key;
  for (size_t k = 0; k < settings.size(); ++k)
    key += fmt::format("{}NaN with linespoints {} title {}", k ? ", " : "", series_style(int(k)),
                       gp_quote(settings[k]));
  plot += grid.end(key);
  render(fig, dir, "extrapolation", dat,
         "set logscale x 2\nset format x '%g'\nset xlabel 'evaluation length (tokens)'\n"
         "set ylabel 'accuracy (%)'\nset yrange [0:105]\n",
         plot, width, height, gnuplot);
  fig.note = caption + "; each series starts at its training length";
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
// Zoology's Figure 2 keeps the best of its learning rates. Only the runs that pass `where`.
std::vector<StatePoint> our_state_points(const CsvTable& runs, const RunWhere& where) {
  for (const char* c : {"run_id", "model", "T", "width", "state_bytes", "final_metric"}) (void)runs.col(c);
  const RunConfigs configs = read_run_configs(runs);
  const std::vector<bool> wanted = runs_matching(runs, configs, where);
  struct Group {
    StatePoint p;
    std::vector<double> values;
  };
  std::map<std::string, std::map<std::string, Group>> by_identity;  // identity -> signature -> group
  for (size_t r = 0; r < runs.rows.size(); ++r) {
    if (!wanted[r]) continue;
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
  std::vector<StatePoint> ours = our_state_points(runs, f.where);
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
  Panels grid;
  grid.cols = int(std::min<size_t>(panels.size(), 3));
  grid.rows = int((panels.size() + size_t(grid.cols) - 1) / size_t(grid.cols));
  std::vector<std::string> key_titles = models;
  key_titles.push_back("published");
  const int key_px = key_width_px(key_titles);
  const int width = 600 * grid.cols + key_px, height = 440 * grid.rows + 60;
  grid.key = double(key_px) / width;
  grid.title = 50.0 / height;
  plot += grid.begin(f.title.empty() ? "Accuracy against state size" : f.title);
  int k = 0;
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
      panel_plot += fmt::format("{}'accuracy_vs_state.dat' index {} using 1:2 with linespoints {} ps 1.3 title {}",
                                panel_plot.empty() ? "" : ", ", index, series_style(int(m)), gp_quote(models[m]));
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
                                "lc rgb 'black' notitle",
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
    plot += grid.panel(k++) + fmt::format("set title {}\nplot {}\n", gp_quote(title), panel_plot);
  }
  std::string key;
  for (size_t m = 0; m < models.size(); ++m)
    key += fmt::format("{}NaN with linespoints {} ps 1.3 title {}", m ? ", " : "", series_style(int(m)),
                       gp_quote(models[m]));
  if (drawn_published > 0) key += ", NaN with points pt 6 ps 2.6 lw 2 lc rgb 'black' title 'published'";
  plot += grid.end(key.empty() ? "NaN notitle" : key);
  // One x range for every panel (log_axis_range around all points), so panels compare.
  double lo = INFINITY, hi = 0;
  for (const auto* points : {&std::as_const(ours), &published})
    for (const auto& p : *points)
      if (p.state_bytes > 0) lo = std::min(lo, p.state_bytes), hi = std::max(hi, p.state_bytes);
  if (!(hi > 0)) lo = 100, hi = 1e6;  // no point has a state size: empty axes of some range
  const auto [x0, x1] = log_axis_range(lo, hi);
  const std::string xrange = fmt::format("set xrange [{:g}:{:g}]\n", x0, x1);
  for (const auto& p : published) unplaced += !std::isfinite(p.state_bytes);
  render(fig, dir, "accuracy_vs_state", dat,
         "set logscale x\nset format x '%.0s%cB'\nset xlabel 'state carried from token to token (bytes)'\n"
         "set ylabel 'accuracy (%)'\nset yrange [0:105]\n" + xrange,
         plot, width, height, gnuplot);
  fig.note = published.empty()
                 ? fmt::format("no published numbers recorded for it (numbers.yaml, table {}); data: {}", f.id,
                               csv_path)
                 : fmt::format("{} published number(s) drawn as open black circles, {} without a run of their "
                               "setting (listed in {}, not drawn)",
                               drawn_published, unplaced, csv_path);
  return true;
}

}  // namespace

bool attention_scaling_figure(PaperFigure& fig, const std::string& bench_dir, const std::string& dir,
                              const std::string& gnuplot) {
  return attention_figure_in(fig, bench_dir, dir, gnuplot);
}

std::pair<double, double> log_axis_range(double lo, double hi) {
  return {std::pow(10.0, std::floor(std::log10(lo) - 0.1)),
          std::pow(10.0, std::ceil(std::log10(hi) + 0.1))};
}

PaperFigure build_paper_figure(const PaperSpec& paper, const FigureSpec& f,
                               const PaperReportOptions& opts) {
  PaperFigure fig;
  fig.spec = &f;
  const std::string dir = (opts.out_dir.empty() ? std::string(".") : opts.out_dir) + "/figures/" + f.id;
  const std::string make =
      f.sweep.empty() ? "" : fmt::format("seqbench sweep configs/papers/{}/{}_small.yaml", paper.name, f.sweep);
  if (f.kind == "attention_scaling") {
    if (!attention_figure_in(fig, opts.bench_dir, dir, opts.gnuplot))
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
    } else if (f.kind == "extrapolation") {
      extrapolation_figure(fig, f.title, exp_dir, sub, opts.gnuplot);
    } else if (f.kind == "truncation" || f.kind == "weight_gap") {
      stability_figure(fig, f.kind, exp_dir, sub, opts.gnuplot);
    } else {
      GradnormReportOptions g;
      if (f.kind == "input_gradnorm") g.source = GradnormSource::input_gradients();
      g.source.heat_maps = f.kind == "gradnorm_heatmap";
      // A heat map per config (its lowest seed); a distance curve per config with its seeds as a band.
      std::vector<std::string> run_dirs;
      if (g.source.heat_maps)
        run_dirs = figure_runs(exp_dir, g.source.file);
      else
        for (const auto& group : run_groups(exp_dir, g.source.file))
          run_dirs.insert(run_dirs.end(), group.begin(), group.end());
      if (!run_dirs.empty()) {
        std::vector<GradnormRun> runs;
        for (const auto& r : run_dirs) runs.push_back(load_gradnorm_run(r, g.source));
        g.out_dir = sub;
        g.gnuplot = opts.gnuplot;
        const GradnormReport result = write_gradnorm_report(std::move(runs), g);
        fig.files.insert(fig.files.end(), result.files.begin(), result.files.end());
        if (!result.rendered) fig.status = result.skipped;
        if (f.kind == "gradnorm_heatmap") fig.note = result.caption;
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

std::vector<PaperFigure> table_curve_figures(const PaperTable& table, const PaperReportOptions& opts,
                                             std::set<std::string>& drawn) {
  std::vector<PaperFigure> out;
  const TableSpec& t = *table.spec;
  for (const auto& sweep_dir : table.dirs) {
    if (!drawn.insert(sweep_dir + "/" + t.experiment).second) continue;  // another table's runs too
    const std::string size = sweep_size(sweep_dir, t.sweep).value_or(sweep_dir);
    PaperFigure fig;
    FigureSpec curves;
    curves.id = "curves_" + t.sweep;
    curves.kind = "curves";
    curves.title = fmt::format("Learning curves of the {} runs ({})", t.sweep, size);
    fig.own_spec = std::make_shared<FigureSpec>(std::move(curves));
    fig.spec = fig.own_spec.get();
    std::string dir = (opts.out_dir.empty() ? std::string(".") : opts.out_dir) + "/figures/" + fig.spec->id;
    if (table.dirs.size() > 1) dir += "/" + file_slug(size);
    try {
      const std::vector<CurveGroup> groups = experiment_curve_groups(sweep_dir + "/" + t.experiment);
      if (groups.empty()) continue;  // no run has a metrics.csv: nothing to draw
      const DrawnFigure d = draw_curves(dir, fig.spec->title, groups, opts.gnuplot);
      fig.files = {d.files.data, d.files.script};
      if (d.status.drawn()) {
        fig.pngs.push_back(d.files.png);
        fig.svgs.push_back(d.files.svg);
        fig.note = curves_caption(groups) + (t.curves_note.empty() ? "" : "; " + t.curves_note);
      } else {
        fig.status = fmt::format("not drawn: {}; data and script in {}", d.status.message, dir);
      }
    } catch (const core::Error& e) {  // a damaged metrics.csv costs the curves, not the report
      fig.status = fmt::format("not drawn: {}", e.what());
    }
    out.push_back(std::move(fig));
  }
  return out;
}

}  // namespace seqbench::report

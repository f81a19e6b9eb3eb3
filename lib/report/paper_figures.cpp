#include "report/paper_figures.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <set>

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

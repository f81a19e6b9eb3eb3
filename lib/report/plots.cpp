#include "report/plots.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <set>

#include "core/check.hpp"
#include "core/fs.hpp"
#include "report/bands.hpp"

namespace seqbench::report {
namespace {

// Doubles in data files: shortest round-trip form, NaN spelled the way gnuplot reads it.
std::string num(double v) { return std::isnan(v) ? "NaN" : fmt::format("{}", v); }

// A figure of this report: PNG 960x600, SVG 900x560, named after its PNG.
GnuplotFigure gradnorm_figure(const PlotFiles& files) {
  GnuplotFigure fig;
  fig.stem = files.png;
  const size_t dot = fig.stem.rfind('.');
  if (dot != std::string::npos) fig.stem.resize(dot);
  fig.written_by = "seqbench report gradnorm";
  fig.width = 960;
  fig.height = 600;
  fig.svg_width = 900;
  fig.svg_height = 560;
  return fig;
}

// The runs of one label (runs equal but for the seed) as one series: the mean of their
// nonzero norms per distance with a band (bands.hpp). Each run contributes the probe it
// was given (its last one by default), so runs that stopped at their target at different
// updates are still one series; step_lo..step_hi say which probes.
struct DistanceSeries {
  std::string label;
  int64_t step_lo = 0, step_hi = 0;
  int runs = 0, zeros = 0;
  std::vector<Samples> seeds;
  std::vector<BandPoint> band;
  std::string steps() const {
    return step_lo == step_hi ? fmt::format("step {}", step_lo) : fmt::format("steps {}-{}", step_lo, step_hi);
  }
};

std::vector<DistanceSeries> distance_series(const std::vector<DistanceCurve>& curves) {
  std::vector<DistanceSeries> out;
  for (const auto& c : curves) {
    auto it = std::find_if(out.begin(), out.end(), [&](const DistanceSeries& s) { return s.label == c.label; });
    if (it == out.end()) {
      it = out.insert(out.end(), DistanceSeries{});
      it->label = c.label;
      it->step_lo = it->step_hi = c.step;
    }
    it->step_lo = std::min(it->step_lo, c.step);
    it->step_hi = std::max(it->step_hi, c.step);
    ++it->runs;
    it->zeros += c.zeros;
    Samples s;
    for (size_t i = 0; i < c.norm.size(); ++i)
      if (c.norm[i] > 0) s.push_back({double(c.distance[i]), c.norm[i]});  // a zero has no place on a log axis
    it->seeds.push_back(std::move(s));
  }
  for (auto& s : out) s.band = mean_band(s.seeds);
  return out;
}

GnuplotFigure distance_figure(const std::vector<DistanceCurve>& curves, const PlotFiles& files,
                              const GradnormSource& source) {
  bool same_step = true;
  int64_t max_distance = 0, zeros = 0, zero_runs = 0;
  for (const auto& c : curves) {
    same_step &= c.step == curves.front().step;
    for (int64_t d : c.distance) max_distance = std::max(max_distance, d);
    zeros += c.zeros;
    zero_runs += c.zeros > 0;
  }
  const std::vector<DistanceSeries> series = distance_series(curves);
  std::string spread;  // what the bands show, when some label has several runs
  for (const auto& s : series)
    if (s.runs > 1) spread = "bands: runs sharing a label, " + band_caption(s.band);
  GnuplotFigure fig = gradnorm_figure(files);
  const std::string when = curves.empty() ? std::string("no runs")
                           : same_step    ? fmt::format("probe at training step {}", curves[0].step)
                                          : std::string("each run's last probe");
  std::string& out = fig.settings;
  out += fmt::format(
      "set title {} noenhanced\n"
      "set xlabel {}\n"
      "set ylabel {}\n"
      "{}"
      "set xrange [0:{}]\n",
      gp_quote(source.title + " (" + when + ")"), gp_quote(source.xlabel),
      gp_quote(source.symbol + "  (log scale)"), log_axis("y"), std::max<int64_t>(max_distance, 1));
  if (max_distance <= 12) out += "set xtics 1\n";  // whole distances on short sequences
  // Notes go in a strip below the x label (bmargin), one short line each.
  std::vector<std::string> notes;
  if (!spread.empty()) notes.push_back(spread);
  if (zeros > 0)
    notes.push_back(fmt::format("zero norms not drawn on the log axis: {} point{} of {} run{} (all in the .csv)",
                                zeros, zeros == 1 ? "" : "s", zero_runs, zero_runs == 1 ? "" : "s"));
  if (!notes.empty()) {
    out += fmt::format("set bmargin {}\n", 4 + 1.5 * double(notes.size()));
    for (size_t i = 0; i < notes.size(); ++i)
      out += fmt::format("set label {} at screen 0.01, screen {} font ',9' noenhanced\n", gp_quote(notes[i]),
                         num(0.02 + 0.03 * double(notes.size() - 1 - i)));
  }
  std::vector<std::string> clauses;
  int index = 0;
  for (const auto& s : series) {
    if (s.band.empty()) continue;  // no block in the .dat
    const std::string title = same_step ? s.label : fmt::format("{} ({})", s.label, s.steps());
    clauses.push_back(band_plot(files.data, index, index, title, s.band));
    ++index;
  }
  if (clauses.empty()) {
    // Nothing positive to draw: an empty, labelled frame rather than a gnuplot error.
    out +=
        "set yrange [1e-3:1]\nset label 'no nonzero gradient norms' at graph 0.5, graph 0.5 "
        "center\n";
    fig.plot = "plot NaN notitle\n";
    return fig;
  }
  fig.plot = "plot ";
  for (size_t i = 0; i < clauses.size(); ++i)
    fig.plot += clauses[i] + (i + 1 < clauses.size() ? ", \\\n     " : "\n");
  return fig;
}

GnuplotFigure heatmap_figure(const HeatMap& map, const PlotFiles& files, const ColourRange& range) {
  GnuplotFigure fig = gradnorm_figure(files);
  std::string& out = fig.settings;
  if (range.lo < range.hi) out += fmt::format("set cbrange [{}:{}]\n", num(range.lo), num(range.hi));
  const int64_t t_lo = map.ts.empty() ? 0 : map.ts.front();
  const int64_t t_hi = map.ts.empty() ? 0 : map.ts.back();
  const size_t rows = map.steps.size();
  double y_lo = 0, y_hi = 1;
  if (rows == 1) {
    y_lo = map.steps[0] - 0.5;
    y_hi = map.steps[0] + 0.5;
  } else if (rows > 1) {
    y_lo = map.steps.front() - (map.steps[1] - map.steps[0]) / 2.0;
    y_hi = map.steps.back() + (map.steps[rows - 1] - map.steps[rows - 2]) / 2.0;
  }
  out += fmt::format(
      "set title {} noenhanced\n"
      "set xlabel 'time step t'\n"
      "set ylabel 'training step (updates)'\n"
      "set cblabel 'log10 ‖∂L/∂h_t‖'\n"
      "set xrange [{}:{}]\n"
      "set yrange [{}:{}]\n"
      "set tics out nomirror\n"
      "# viridis: dark = small gradient norm, yellow = large\n"
      "set palette defined (0 '#440154', 1 '#472c7a', 2 '#3b518b', 3 '#2c718e', 4 '#21908d', "
      "5 '#27ad81', 6 '#5cc863', 7 '#aadc32', 8 '#fde725')\n"
      // A border in the cell's own colour hides the hairline seams anti-aliasing leaves.
      "set style fill solid 1.0 border\n",
      gp_quote(map.label + ": gradient norm over training"), t_lo - 0.5, t_hi + 0.5, num(y_lo),
      num(y_hi));
  // Whole time steps and probe steps only: gnuplot's automatic tics would put labels at
  // 0.5 on a short sequence or a single probe.
  if (t_hi - t_lo <= 12) out += "set xtics 1\n";
  if (rows == 1) out += fmt::format("set ytics ({})\n", map.steps[0]);
  if (map.zeros > 0 || map.missing > 0) {
    std::string note = "grey cells:";
    if (map.zeros > 0) note += fmt::format(" {} zero norms (truncated or underflowed)", map.zeros);
    if (map.missing > 0)
      note += fmt::format("{} {} missing from gradnorm.csv", map.zeros > 0 ? "," : "", map.missing);
    // NaN cells are not drawn; a grey backdrop tells them apart from the page.
    out += fmt::format(
        "set object 1 rectangle from graph 0, graph 0 to graph 1, graph 1 behind "
        "fillcolor rgb '#d0d0d0' fillstyle solid noborder\n"
        "set label {} at screen 0.01, screen 0.02 font ',9' noenhanced\n",
        gp_quote(note));
  }
  // A regular grid (consecutive time steps, probes at equal intervals, at least two of
  // each) is drawn `with image`: the SVG then holds one embedded bitmap, not a box per
  // cell (a pMNIST map of 6 x 784 cells: 36 KB against 1.3 MB). NaN pixels are left out.
  bool regular = map.ts.size() >= 2 && rows >= 2;
  for (size_t i = 1; regular && i < map.ts.size(); ++i) regular = map.ts[i] == map.ts[0] + int64_t(i);
  for (size_t i = 2; regular && i < rows; ++i)
    regular = map.steps[i] - map.steps[i - 1] == map.steps[1] - map.steps[0];
  if (regular) {
    fig.plot = fmt::format("plot {} using 1:2:3 with image notitle\n", gp_quote(files.data));
    return fig;
  }
  out +=
      "# Boxes rather than `with image`, which cannot draw a single probe or uneven spacing.\n"
      "# A NaN colour alone would still paint the box, so NaN cells get no y ($3 == $3 is\n"
      "# false for NaN) and are skipped.\n";
  fig.plot = fmt::format(
      "plot {} using 1:($3 == $3 ? $2 : NaN):($1-0.5):($1+0.5):4:5:3 with boxxyerror \\\n"
      "     lc palette notitle\n",
      gp_quote(files.data));
  return fig;
}

}  // namespace

std::string distance_csv(const std::vector<DistanceCurve>& curves) {
  std::string out = csv_line({"label", "step", "distance", "norm"});
  for (const auto& c : curves)
    for (size_t i = 0; i < c.distance.size(); ++i)
      out += csv_line({c.label, CsvWriter::cell(c.step), CsvWriter::cell(c.distance[i]),
                       CsvWriter::cell(c.norm[i])});
  return out;
}

std::string distance_dat(const std::vector<DistanceCurve>& curves,
                         const GradnormSource& source) {
  std::string out = fmt::format(
      "# {} against distance = (L-1) - t, one block per label (gnuplot: index 0, 1, ...)\n"
      "# columns: distance, the mean over the label's runs, its band (lo, hi), the runs (n)\n",
      source.symbol);
  int index = 0;
  for (const auto& s : distance_series(curves)) {
    std::string head = fmt::format("run '{}', probe at {}", s.label, s.steps());
    if (s.runs > 1) head += fmt::format(", {} runs", s.runs);
    if (s.zeros > 0)
      head += fmt::format(": {} zero norm{} dropped (log scale)", s.zeros, s.zeros == 1 ? "" : "s");
    if (s.band.empty()) {
      out += "# " + head + "; nothing left to plot, no block\n";
      continue;
    }
    out += fmt::format("# index {}\n", index++) + band_block(head, s.band);
  }
  return out;
}

std::string distance_script(const std::vector<DistanceCurve>& curves, const PlotFiles& files,
                            const GradnormSource& source) {
  return gnuplot_script(distance_figure(curves, files, source));
}

std::string heatmap_dat(const HeatMap& map) {
  std::string out = fmt::format(
      "# run '{}': log10 ||dL/dh_t|| per (time step t, training step)\n"
      "# columns: t step log10_norm step_lo step_hi (step_lo..step_hi: the cell's vertical "
      "extent, halfway to the neighbouring probes)\n",
      map.label);
  if (map.zeros > 0)
    out += fmt::format("# {} zero norm{} (log10 = -inf) written as NaN: blank cells\n", map.zeros,
                       map.zeros == 1 ? "" : "s");
  if (map.missing > 0)
    out += fmt::format("# {} cell{} missing from gradnorm.csv written as NaN: blank cells\n",
                       map.missing, map.missing == 1 ? "" : "s");
  const size_t rows = map.steps.size();
  for (size_t r = 0; r < rows; ++r) {
    // Cells reach halfway to the neighbouring probes, so unevenly spaced probes (a resumed
    // run, a final probe) still tile the plane without gaps or overlaps.
    const double step = static_cast<double>(map.steps[r]);
    const double below = r > 0      ? (step - map.steps[r - 1]) / 2
                         : rows > 1 ? (map.steps[1] - step) / 2
                                    : 0.5;
    const double above = r + 1 < rows ? (map.steps[r + 1] - step) / 2 : below;
    if (r > 0) out += "\n";
    for (size_t c = 0; c < map.ts.size(); ++c)
      out += fmt::format("{} {} {} {} {}\n", map.ts[c], map.steps[r], num(map.at(r, c)),
                         num(step - below), num(step + above));
  }
  return out;
}

std::string heatmap_script(const HeatMap& map, const PlotFiles& files, const ColourRange& range) {
  return gnuplot_script(heatmap_figure(map, files, range));
}

ColourRange shared_colour_range(const std::vector<HeatMap>& maps) {
  double lo = INFINITY, hi = -INFINITY;
  for (const auto& m : maps)
    for (double v : m.log10_norm)
      if (std::isfinite(v)) lo = std::min(lo, v), hi = std::max(hi, v);
  if (!(lo <= hi)) return {};
  ColourRange r{std::floor(lo) + 0.0, std::ceil(hi) + 0.0};  // + 0.0: no "-0"
  if (r.lo == r.hi) r.hi = r.lo + 1;
  return r;
}

std::string file_slug(const std::string& label) {
  std::string out;
  for (char ch : label) {
    const unsigned char c = static_cast<unsigned char>(ch);
    out += std::isalnum(c) || c == '-' || c == '_' || c == '.' ? static_cast<char>(std::tolower(c))
                                                               : '_';
  }
  if (out.empty() || out[0] == '.') out.insert(out.begin(), '_');  // no hidden files
  return out;
}

GradnormReport write_gradnorm_report(std::vector<GradnormRun> runs,
                                     const GradnormReportOptions& opts) {
  SB_CHECK(!runs.empty(),
           "no runs to plot (hint: pass run directories such as results/copy/<run-id>)");
  // Runs equal but for the seed share a label: one distance series (mean and band); a
  // heat map each, named apart.
  name_apart(runs);
  std::vector<DistanceCurve> curves;
  for (const auto& r : runs) curves.push_back(distance_curve(r, opts.step));
  std::vector<std::string> labels;
  for (const auto& r : runs) labels.push_back(r.label);
  labels = unique_labels(labels);
  std::vector<DistanceCurve> per_run = curves;  // the CSV: every run's curve, told apart
  for (size_t i = 0; i < runs.size(); ++i) runs[i].label = per_run[i].label = labels[i];

  const std::string dir = opts.out_dir.empty() ? "." : opts.out_dir;
  core::make_dirs(dir);
  GradnormReport report;
  // Every data file and script first, then the pictures: without gnuplot the data and
  // scripts are all there.
  std::vector<FigureFiles> figures;
  auto add = [&](const GnuplotFigure& fig, const std::string& data) {
    const FigureFiles files = write_figure(dir, fig, data);
    report.files.push_back(files.data);
    report.files.push_back(files.script);
    figures.push_back(files);
  };

  const std::string& prefix = opts.source.prefix;
  const PlotFiles dist{prefix + "_distance.dat", prefix + "_distance.png"};
  const std::string csv = dir + "/" + prefix + "_distance.csv";
  core::write_file_atomic(csv, distance_csv(per_run));
  report.files.push_back(csv);
  add(distance_figure(curves, dist, opts.source), distance_dat(curves, opts.source));

  // Heat maps are read side by side: one colour range for all, said in the caption.
  std::vector<HeatMap> maps;
  for (const auto& r : opts.source.heat_maps ? runs : std::vector<GradnormRun>{}) maps.push_back(heat_map(r));
  const ColourRange range = shared_colour_range(maps);
  if (maps.size() > 1 && range.lo < range.hi)
    report.caption = fmt::format("the {} heat maps share one colour range: log10 ‖∂L/∂h_t‖ from {} to {}",
                                 maps.size(), num(range.lo), num(range.hi));
  std::set<std::string> slugs;
  for (const auto& map : maps) {
    std::string slug = file_slug(map.label);
    for (int k = 2; !slugs.insert(slug).second; ++k) slug = fmt::format("{}-{}", file_slug(map.label), k);
    const std::string base = prefix + "_heatmap_" + slug;
    add(heatmap_figure(map, {base + ".dat", base + ".png"}, range), heatmap_dat(map));
  }

  if (!find_program(opts.gnuplot)) {
    report.skipped = fmt::format(
        "PNGs skipped: '{}' not found on PATH; data and .gp scripts are in {} (install "
        "gnuplot-nox, e.g. `make deps`, then run `gnuplot NAME.gp` there)",
        opts.gnuplot, dir);
    return report;
  }
  for (const auto& files : figures) {
    const GnuplotStatus status = run_gnuplot(files.script, opts.gnuplot);
    if (!status.drawn()) {
      report.skipped =
          fmt::format("PNGs skipped: {}; data and .gp scripts are in {}", status.message, dir);
      return report;
    }
    report.files.push_back(files.png);
    report.files.push_back(files.svg);
  }
  report.rendered = true;
  return report;
}

}  // namespace seqbench::report

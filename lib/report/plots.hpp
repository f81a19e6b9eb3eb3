// `seqbench report gradnorm`: gradient-norm figures from the runs' gradnorm.csv files.
//   (a) ||dL/dh_t|| against the distance to the scored output at one probe step, one
//       curve per run, log-scale norm (the figure of Kerg et al., "Untangling tradeoffs
//       between recurrence and self-attention");
//   (b) per run, a heat map of log10 ||dL/dh_t|| over (time step t, training step), as
//       in MomentumRNN's Figure 2.
// The data (.csv/.dat) and gnuplot scripts (.gp) are written next to the PNGs so a user
// can restyle a figure and rerun `gnuplot NAME.gp` in that directory.
//
// Layers: gradnorm_from_table / select_probe / distance_curve / heat_map and the *_dat /
// *_script functions are pure (tables in, text out); load_gradnorm_run reads a run
// directory; run_gnuplot runs the one external program; write_gradnorm_report ties them.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "report/csv.hpp"

namespace seqbench::report {

// One probe of one run: the gradnorm.csv rows sharing a step, ordered by t.
struct GradnormProbe {
  int64_t step = 0;               // updates done when the probe ran
  std::vector<int64_t> t;         // time step of h_t, ascending
  std::vector<int64_t> distance;  // (L_seq - 1) - t, same order as t
  std::vector<double> norm;       // ||dL/dh_t|| >= 0, same order as t
};

struct GradnormRun {
  std::string label;                  // curve title
  std::string source;                 // the gradnorm.csv path, for messages
  std::vector<GradnormProbe> probes;  // ascending step
};

// What the figures draw. The default is the training probes' ||dL/dh_t|| (gradnorm.csv);
// input_gradients() is ||dl/dx_t|| of a trained model's input-gradient probe
// (inputgrad.csv from `seqbench char_ptb --probe-input-grad`, Miller & Hardt's Figure 2),
// written in the same layout (step, t, distance, norm).
struct GradnormSource {
  std::string file = "gradnorm.csv";  // in each run directory
  std::string prefix = "gradnorm";    // of the output files
  std::string symbol = "‖∂L/∂h_t‖";   // in axis labels (UTF-8)
  std::string title = "Gradient norm against distance";
  std::string xlabel = "distance from h_t to the last scored output, (L-1) − t";
  std::string hint = "runs write it when train.gradnorm_every > 0";
  bool heat_maps = true;  // one per run, over training steps
  static GradnormSource input_gradients();
};

// Groups a gradnorm.csv table (columns step, t, distance, norm) by probe step. Throws
// core::Error naming table.path for a missing column, a cell that is not a number, a
// negative or NaN norm, or a table without rows.
GradnormRun gradnorm_from_table(const CsvTable& table, const std::string& label);

// The name a run's curve gets: config.yaml's output.label, else the `label` of the
// runs.csv row (in the parent directory) whose run_id is the directory's name, else
// the directory's name.
std::string run_label(const std::string& run_dir);

// Reads run_dir/<source.file> and labels it with run_label(). Throws naming the directory
// when there is no such file (with source.hint).
GradnormRun load_gradnorm_run(const std::string& run_dir, const GradnormSource& source = {});

// The probe at `step`, or the last one when step is empty. Throws naming the run's file
// and the steps it has when there is no probe at `step`.
const GradnormProbe& select_probe(const GradnormRun& run, std::optional<int64_t> step);

// One curve of figure (a), ordered by ascending distance. Zero norms (a truncated
// gradient, or one that underflowed) are kept here and in the CSV but cannot go on a
// log axis: distance_dat drops them and says how many.
struct DistanceCurve {
  std::string label;
  int64_t step = 0;
  std::vector<int64_t> distance;
  std::vector<double> norm;
  int zeros = 0;  // norms exactly 0
};

DistanceCurve distance_curve(const GradnormRun& run, std::optional<int64_t> step);

// The bare file names a script refers to: scripts run in their own directory, so the
// data and the PNG sit beside them.
struct PlotFiles {
  std::string data;  // e.g. "gradnorm_distance.dat"
  std::string png;   // e.g. "gradnorm_distance.png"
};

// gradnorm_distance.csv: label,step,distance,norm for every point, zeros included.
std::string distance_csv(const std::vector<DistanceCurve>& curves);
// gnuplot data: one block per curve (gnuplot `index i`), columns "distance norm", zero
// norms left out with a comment line giving their count.
std::string distance_dat(const std::vector<DistanceCurve>& curves,
                         const GradnormSource& source = {});
// The gnuplot script drawing every curve with at least one nonzero norm on a log axis.
std::string distance_script(const std::vector<DistanceCurve>& curves, const PlotFiles& files,
                            const GradnormSource& source = {});

// Figure (b) for one run: rows are probe steps (ascending), columns time steps t
// (ascending). NaN marks a cell with a zero norm (log10 is -inf) or no row in the file.
struct HeatMap {
  std::string label;
  std::vector<int64_t> steps;      // rows
  std::vector<int64_t> ts;         // columns
  std::vector<double> log10_norm;  // (steps.size(), ts.size()) row-major
  int zeros = 0;                   // cells whose norm was exactly 0
  int missing = 0;                 // cells with no row in gradnorm.csv
  double at(size_t row, size_t col) const { return log10_norm[row * ts.size() + col]; }
};

HeatMap heat_map(const GradnormRun& run);
// gnuplot data: lines "t step log10_norm", one block per probe step, NaN written as NaN.
std::string heatmap_dat(const HeatMap& map);
// gnuplot script: `with image`, x = t, y = training step (or the probe's row with the
// steps as tic labels when probes are not evenly spaced, which `with image` cannot draw).
std::string heatmap_script(const HeatMap& map, const PlotFiles& files);

// Lower-case letters, digits, '-', '_' and '.'; anything else becomes '_' (file names
// from labels).
std::string file_slug(const std::string& label);

// Labels made unique by appending " #2", " #3", ... to repeats, in order.
std::vector<std::string> unique_labels(const std::vector<std::string>& labels);

// Run directories from command-line paths: a directory holding `file` is a run; one
// that does not (an experiment's directory, e.g. results/copy) stands for its
// subdirectories that do, sorted by name. Other paths are passed through unchanged.
std::vector<std::string> expand_run_dirs(const std::vector<std::string>& paths,
                                         const std::string& file = "gradnorm.csv");

// A gnuplot string literal: single quotes take everything literally except '' for '.
std::string gp_quote(const std::string& s);
// Lines that draw the figure just plotted once more, as SVG into `svg` (a single plot,
// not a multiplot: it uses replot).
std::string svg_tail(const std::string& svg, int width, int height);
// A whole script that draws `body` (plot commands, multiplot allowed) twice: as
// <stem>.png and as <stem>.svg.
std::string png_and_svg_script(const std::string& stem, const std::string& body, int width,
                               int height);

// True if `program` (a name looked up on $PATH, or a path with a '/') is executable.
bool find_program(const std::string& program);

struct GnuplotResult {
  bool rendered = false;
  std::string message;  // why not, one line (empty when rendered)
};

// Runs `program script` with the script's directory as the working directory.
// A missing program gives rendered=false and a message; a script error (exit status
// != 0) throws core::Error with gnuplot's first error line.
GnuplotResult run_gnuplot(const std::string& script_path, const std::string& program = "gnuplot");

struct GradnormReportOptions {
  std::string out_dir;              // created if missing
  GradnormSource source;            // what is drawn (file names follow source.prefix)
  std::optional<int64_t> step;      // probe step of figure (a); empty: each run's last
  std::string gnuplot = "gnuplot";  // the program run_gnuplot uses
};

struct GradnormReport {
  std::vector<std::string> files;  // paths written (data, scripts, PNGs), in order
  bool rendered = false;           // PNGs drawn
  std::string skipped;             // one line saying why PNGs were skipped, else empty
};

// Writes gradnorm_distance.{csv,dat,gp,png} and gradnorm_heatmap_<slug>.{dat,gp,png}
// per run into opts.out_dir (data and scripts atomically), then renders the PNGs when
// opts.gnuplot is found; labels are made unique first.
GradnormReport write_gradnorm_report(std::vector<GradnormRun> runs,
                                     const GradnormReportOptions& opts);

}  // namespace seqbench::report

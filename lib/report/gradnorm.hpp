// The gradient-norm data of runs, as the figures of `seqbench report gradnorm` (plots.hpp)
// and the paper reports draw it: a run directory's gradnorm.csv (or inputgrad.csv) read
// and grouped by probe step, its label, one probe as a curve against distance, all
// probes as a heat map over (time step, training step).
//
// Everything here but run_label, load_gradnorm_run, name_apart and expand_run_dirs (which read run
// directories) is pure: tables in, values out.
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

// Labels made unique by appending " #2", " #3", ... to repeats, in order.
std::vector<std::string> unique_labels(const std::vector<std::string>& labels);

// Runs that share a label but not their config (one model at two T, say) get the config
// keys where they differ added to it: "lstm T=200", so that only runs equal but for the
// seed share a label (and a figure's series). Reads the config.yaml beside each run's
// source file; a run without one keeps its label.
void name_apart(std::vector<GradnormRun>& runs);

// Run directories from command-line paths: a directory holding `file` is a run; one
// that does not (an experiment's directory, e.g. results/copy) stands for its
// subdirectories that do, sorted by name. Other paths are passed through unchanged.
std::vector<std::string> expand_run_dirs(const std::vector<std::string>& paths,
                                         const std::string& file = "gradnorm.csv");

}  // namespace seqbench::report

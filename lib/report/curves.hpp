// Learning curves (`seqbench report curves`): the loss and the task's metric against
// updates, training and validation, from each run's metrics.csv (columns step, split,
// loss, <metric>, ...; split is "train" or "valid").
//   a run:   RUN/curves.{dat,gp,png,svg}, a loss panel and a metric panel;
//   a sweep: for each experiment directory (the one holding runs.csv), EXP/curves.*,
//            one row of those two panels per config (runs equal but for the seed), the
//            seeds drawn as mean ± band (bands.hpp); a sweep of more than 12 configs whose
//            configs differ in a key (the learning rate first, else the key with the most
//            values) instead gets one panel of the metric per setting of the other keys,
//            one line per value of that key (a 72-config grid would be 72 rows).
// Every figure goes through the shared gnuplot writer in the house style (gnuplot.hpp).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "report/bands.hpp"
#include "report/gnuplot.hpp"

namespace seqbench::report {

struct RunCurves {
  std::string dir, label;
  std::string metric;  // metrics.csv's fourth column: accuracy, bpc, ...
  Samples train_loss, valid_loss, train_metric, valid_metric;  // (update, value)
  bool stopped_at_target = false;  // it stopped on reaching train.target (runs.csv updates_to_target >= 0)
  bool held = false;               // hold_after_target extended it
};

// Seeds of one config: a seed that stopped on reaching its target keeps its last value at
// the later updates of the other seeds, in each of its four series, and is marked held.
// Without it the band after the stop averages only the seeds that had not yet converged,
// and the mean falls as the good seeds leave.
void hold_after_target(std::vector<RunCurves>& seeds);

// Reads RUN/metrics.csv. Throws core::Error naming the file when it is missing or is not
// a metrics file (no step, split and loss columns).
RunCurves load_run_curves(const std::string& run_dir);

// Runs equal but for the seed, under one name.
struct CurveGroup {
  std::string label;  // unique among the groups: the run label, with the differing keys
  std::vector<RunCurves> seeds;
  std::string base;                           // the run label alone ("" outside a sweep)
  std::map<std::string, std::string> config;  // its runs' config (run_configs.hpp)
};

// The groups of an experiment directory: its runs.csv's rows whose directory holds a
// metrics.csv, grouped by label and config (run_configs.hpp), sorted by label; each
// group's seeds through hold_after_target.
std::vector<CurveGroup> experiment_curve_groups(const std::string& exp_dir);

// Writes DIR/curves.{dat,gp} and draws curves.png and .svg: one row of panels (loss,
// metric) per group, or, for more than 12 groups that a key splits, the compact form (see
// the top). `title` heads the figure. A script gnuplot rejects throws.
DrawnFigure draw_curves(const std::string& dir, const std::string& title,
                        const std::vector<CurveGroup>& groups, const std::string& gnuplot = "gnuplot");
// What draw_curves draws for these groups, in a sentence for a caption.
std::string curves_caption(const std::vector<CurveGroup>& groups);

// What a path on the command line stands for: a run (it holds metrics.csv), an experiment
// directory (it holds runs.csv), or a sweep directory (its subdirectories hold runs.csv).
// Returns the figures' directories with their groups; a path that is none of these is a
// core::UsageError naming it.
struct CurveTarget {
  std::string dir, title;
  std::vector<CurveGroup> groups;
};
std::vector<CurveTarget> curve_targets(const std::string& path);

}  // namespace seqbench::report

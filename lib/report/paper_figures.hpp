// The figures of a paper report (paper_report.hpp): gradient norms and input gradients
// (plots.hpp, the lowest seed of every config), memory against T, Miller & Hardt's
// truncation and weight gaps (every seed: mean ± band), `make bench`'s attention scaling,
// Zoology's accuracy against state size and the learning curves of the tables' runs, each
// drawn by the shared gnuplot writer (gnuplot.hpp) into <out_dir>/figures/<figure id>/.
#pragma once

#include <set>
#include <string>
#include <utility>
#include <vector>

#include "report/paper_report.hpp"

namespace seqbench::report {

// One figure of `paper`: its pictures, or a status line saying why there are none and
// how to make them. A script gnuplot rejects throws core::Error.
PaperFigure build_paper_figure(const PaperSpec& paper, const FigureSpec& figure,
                               const PaperReportOptions& opts);

// `make bench`'s attention-scaling figure in the house style, from bench_dir's
// attention_scaling.dat and .gp (the bench's data and its title line), with the n^1.5 and
// n^2 guides, drawn into dir (attention_scaling.{dat,gp,png,svg}; dir may be bench_dir:
// drawing again reads back what it wrote). False when bench_dir has no such data;
// fig.status says why nothing was drawn when gnuplot is missing.
bool attention_scaling_figure(PaperFigure& fig, const std::string& bench_dir, const std::string& dir,
                              const std::string& gnuplot = "gnuplot");

// The x range of a log-scaled axis over values [lo, hi] (lo > 0): whole decades, with at
// least a tenth of a decade to spare on each side so no marker sits on the frame.
// (1024, 131072) -> (100, 1e6).
std::pair<double, double> log_axis_range(double lo, double hi);

// The learning curves of a table's runs (curves.hpp), one figure per sweep directory that
// has runs with metrics.csv, into <out_dir>/figures/curves_<sweep>[/<size>]; an
// experiment directory already in `drawn` (another table's runs) is left out and each
// one drawn is added to it.
std::vector<PaperFigure> table_curve_figures(const PaperTable& table, const PaperReportOptions& opts,
                                             std::set<std::string>& drawn);

}  // namespace seqbench::report

// The figures of a paper report (paper_report.hpp): gradient norms and input gradients
// (plots.hpp, the lowest seed of every config), memory against T, Miller & Hardt's
// truncation and weight gaps (every seed: mean ± band), `make bench`'s attention scaling,
// Zoology's accuracy against state size and the learning curves of the tables' runs, each
// drawn by the shared gnuplot writer (gnuplot.hpp) into <out_dir>/figures/<figure id>/.
#pragma once

#include <set>
#include <string>
#include <vector>

#include "report/paper_report.hpp"

namespace seqbench::report {

// One figure of `paper`: its pictures, or a status line saying why there are none and
// how to make them. A script gnuplot rejects throws core::Error.
PaperFigure build_paper_figure(const PaperSpec& paper, const FigureSpec& figure,
                               const PaperReportOptions& opts);

// The learning curves of a table's runs (curves.hpp), one figure per sweep directory that
// has runs with metrics.csv, into <out_dir>/figures/curves_<sweep>[/<size>]; an
// experiment directory already in `drawn` (another table's runs) is left out and each
// one drawn is added to it.
std::vector<PaperFigure> table_curve_figures(const PaperTable& table, const PaperReportOptions& opts,
                                             std::set<std::string>& drawn);

}  // namespace seqbench::report

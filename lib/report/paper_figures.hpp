// The figures of a paper report (paper_report.hpp): gradient norms and input gradients
// (plots.hpp), memory against T, the truncation gap and `make bench`'s attention scaling,
// each drawn from the lowest seed of every model in its sweep directories by the shared
// gnuplot writer (gnuplot.hpp) into <out_dir>/figures/<figure id>/.
#pragma once

#include "report/paper_report.hpp"

namespace seqbench::report {

// One figure of `paper`: its pictures, or a status line saying why there are none and
// how to make them. A script gnuplot rejects throws core::Error.
PaperFigure build_paper_figure(const PaperSpec& paper, const FigureSpec& figure,
                               const PaperReportOptions& opts);

}  // namespace seqbench::report

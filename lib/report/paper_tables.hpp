// The tables of a paper report (paper_report.hpp): each table's runs read from its sweep
// directories (runs.csv, each run's config.yaml and metric file), grouped by row, column
// and config with mean ± sd over seeds, judged against the paper's numbers.
#pragma once

#include "report/paper_report.hpp"

namespace seqbench::report {

// One table of `paper`, its lines in the paper's row order. Throws core::Error naming the
// file for a runs.csv or metric file it cannot read.
PaperTable build_paper_table(const PaperSpec& paper, const TableSpec& table,
                             const PaperReportOptions& opts);

}  // namespace seqbench::report

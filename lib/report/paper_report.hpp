// `seqbench report paper NAME [SWEEP_DIR...]` and `seqbench report papers`: every table
// and figure of a paper that seqbench covers (report::PaperSpec), our number beside the
// paper's, from the runs of the paper's sweeps (configs/papers/<paper>/*.yaml).
//
// Data flow: sweep directories -> <dir>/<experiment>/runs.csv + each run's config.yaml
// -> one line per (sweep size, row, column, config) with mean ± sd over seeds -> a verdict
// against the paper's number -> Markdown, CSV, LaTeX and a static HTML page (figures
// embedded), written to one directory. docs/report.md ("Paper reports") explains the
// columns and the verdict rule.
//
// Files: paper_sources.* find the sweep directories of a table or figure; paper_tables.*
// read the runs into table lines and judge them; paper_figures.* draw the figures through
// the shared gnuplot writer (gnuplot.hpp); paper_report.cpp builds the report from them
// and writes its formats.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "report/paper_spec.hpp"

namespace seqbench::report {

// One line of a paper table: a group of runs with equal configs but for the seed.
struct PaperLine {
  std::string size;    // "small" or "paper" (which sweep file made the runs), else the dir name
  std::string row;     // the paper's row name, plus " [key=value]" if configs differ
  std::string column;  // column value ("" for one number per row)
  std::string paper;   // the paper's number as printed ("—" when it has none)
  std::string source;  // where that number is in the paper, or "unchecked ..."
  std::string ours;    // "mean ± sd" (or one value), "—" when no run produced a number
  int n = 0;           // runs with a number
  int n_missing = 0;   // runs in the group without one (diverged, never validated)
  std::string data;    // the data used, as runs.csv names it (real, or the stand-in)
  std::string budget;  // "10000 updates, 3.2 min per run"
  std::string verdict; // reproduced | partly | not | not run | —
  std::string reason;  // one line
  double mean = 0, sd = 0;
  // Tables with a tuned key (TableSpec::tune_key), else empty:
  std::string tuned_at;  // the value whose seeds the line shows ("0.001 (best of 4)")
  std::string best_run;  // the best single run over every value and seed
  std::string window;    // the values whose mean reaches the window ("0.0001 – 0.001 (3 of 4)", "none of 4")
};

struct PaperTable {
  const TableSpec* spec = nullptr;
  std::vector<std::string> dirs;  // sweep directories whose runs were read
  std::vector<PaperLine> lines;   // the paper's row order, then column order
  std::string run_command;        // how to make the runs, shown when none were found
};

struct PaperFigure {
  const FigureSpec* spec = nullptr;
  std::shared_ptr<const FigureSpec> own_spec;  // holds *spec when the report made it (learning curves)
  std::vector<std::string> pngs, svgs;  // the rendered pictures (paths), in figures/
  std::vector<std::string> files;       // every file written or read for it
  std::string status;  // why there is no picture (one line, with the command to make it)
  std::string note;    // one line shown beside the pictures (e.g. the published points drawn)
};

struct PaperReport {
  const PaperSpec* spec = nullptr;
  std::string out_dir;  // where the figures went (links are relative to it)
  std::vector<PaperTable> tables;
  std::vector<PaperFigure> figures;
};

struct PaperReportOptions {
  // Sweep directories to read. Empty: results_root/papers/<paper>/<sweep>_{paper,small}
  // for every table. A directory given here serves the tables whose sweep its name
  // starts with (copy_table_small -> sweep copy_table).
  std::vector<std::string> sweep_dirs;
  std::string results_root = "results";
  std::string out_dir;  // where figures are written (figures/ inside it)
  std::string bench_dir = "results/bench";  // attention_scaling.png from `make bench`
  std::string gnuplot = "gnuplot";
};

// The verdict for one line (pure; PaperLine::verdict and ::reason). `small` = the runs
// used the small budget; `stand_in` = the data was a stand-in corpus.
void judge(PaperLine& line, const TableSpec& table, const PaperNumber* number, bool small,
           bool stand_in);

// Reads the runs and makes the figures; after the spec's figures come the learning curves
// (curves.hpp) of every table whose runs have metrics.csv, one figure per table and size. Throws core::Error naming the file for a runs.csv
// or run file it cannot read; a sweep directory that matches no table is a usage error.
PaperReport build_paper_report(const PaperSpec& paper, const PaperReportOptions& opts);

std::string paper_markdown(const PaperReport& report);
std::string paper_csv(const PaperReport& report);
std::string paper_latex(const PaperReport& report);
// One page: styles inline, the paper's PNG figures embedded as data: URIs (the learning
// curves the report adds are linked from figures/ beside it), no script.
// index_href, when not empty, is the link "All papers" at its top (the index of `report
// papers`, relative to the page); empty: no such link.
std::string paper_html(const PaperReport& report, const std::string& index_href = "");
// The index of `report papers`: one line per paper with its verdict counts and a link.
std::string papers_index_html(const std::vector<PaperReport>& reports);

// Writes report.md, report.csv, report.tex and index.html into out_dir (atomically) and
// returns their paths.
std::vector<std::string> write_paper_report(const PaperReport& report, const std::string& out_dir,
                                            const std::string& index_href = "");

}  // namespace seqbench::report

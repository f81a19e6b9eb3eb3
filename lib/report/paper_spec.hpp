// What a paper report covers: for each paper (configs/papers/), the tables and figures
// seqbench reproduces (configs/papers/<paper>/report.yaml) and the paper's own numbers
// with their place in the paper (configs/papers/<paper>/numbers.yaml). Both files are
// embedded into the binary at build time, so `seqbench report paper NAME` works from any
// directory. docs/report.md ("Paper reports") describes the two formats.
#pragma once

#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "report/run_configs.hpp"

namespace seqbench::report {

// One published number, as numbers.yaml records it.
struct PaperNumber {
  std::string table;   // a TableSpec id (or "context": shown, never compared)
  std::string row;     // a row name of that table
  std::string column;  // the column value ("" for a table with one number per row)
  double value = 0;    // in the paper's unit
  std::string unit;    // "accuracy (%)", "perplexity", ...
  std::string text;    // as the paper prints it
  // Where the number was checked: "Table 1, p. 7" (the paper), or a file in the authors'
  // repository, written "github:owner/repo@<commit> <path>, <where in it>".
  std::string source;
  // The arXiv id the number was read from when it is another paper's than the report's
  // (a companion paper's table, e.g. Mamba's beside Zoology); "" = PaperSpec::arxiv.
  std::string arxiv;
  bool checked = false;   // read in `source` (the paper's text or the authors' repository)
  bool in_suite = true;   // a model seqbench has
  std::string note;       // a remark for the reader; shown in reports
  // How the number was looked for and what was found (maintainers' provenance). Kept in
  // numbers.yaml only: no report, table or page ever shows it.
  std::string search;
};

// A row of a table: `name` (the paper's row, as numbers.yaml names it) stands for the
// runs whose row key reads `match` (equal to name unless "name=match" was written).
struct RowSpec {
  std::string name, match;
};

struct TableSpec {
  std::string id;          // numbers.yaml's `table`
  std::string title;
  std::string sweep;       // configs/papers/<paper>/<sweep>_{small,paper}.yaml
  std::string experiment;  // runs live in <sweep dir>/<experiment>/
  // Row and column: a key of the run's resolved config, optionally transformed
  // ("attention_kinds": "local:2,routing:2" -> "local+routing"; "minigrid_env":
  // "MiniGrid-DoorKey-5x5-v0" -> "DoorKey-5x5"); or, written {csv: NAME}, a column of
  // runs.csv (recall's `model` or `T`, which no single config key holds for every family).
  std::string row_key, row_as;
  bool row_csv = false;
  std::vector<RowSpec> rows;  // the paper's order; runs with other values follow
  std::string column_key, column_name, column_as;
  bool column_csv = false;
  // Only runs whose runs.csv columns, or else config keys, hold one of these values
  // (run_configs.hpp, RunWhere); empty = all runs.
  RunWhere where;
  // Our number: a runs.csv column, or a column of a CSV in each run directory
  // (metric_file), one value per metric_file_key (then column = "<column>-><key>").
  std::string metric_column, metric_file, metric_file_key;
  std::string transform;  // "" or "exp2" (bits per word -> perplexity)
  double scale = 1;       // e.g. 100 for a fraction shown in %
  std::string unit;
  int decimals = 2;
  bool higher_is_better = true;
  // |ours - paper| <= tolerance + 2 sd counts as matching the paper.
  double tolerance = 0;
  std::string make;  // how to make missing runs beyond the sweep ("{dir}" = the sweep dir)
  // What a reader of this table's learning curves should know (how train and validation
  // score, say); appended to their caption.
  std::string curves_note;
  // A tuned setting (`tune: {key: optim.lr, window: 90}`): runs that differ only in this
  // config key share one line, which shows the seeds at the value with the best mean, the
  // best single run (the statistic of a one-seed paper that keeps the best of its values),
  // and the window: the values whose mean reaches `window` (in the table's unit; NaN = no
  // window column).
  std::string tune_key;
  double tune_window = NAN;
};

// kind: gradnorm_distance, gradnorm_heatmap, input_gradnorm, memory, truncation,
// attention_scaling, accuracy_vs_state or extrapolation (docs/report.md, "Figures").
struct FigureSpec {
  std::string id, kind, title, sweep, experiment, make;
  RunWhere where;  // accuracy_vs_state only: which runs it draws (as a table's `where`)
};

struct PaperSpec {
  std::string name;   // kerg2020, ...
  std::string title;  // the paper's title
  std::string cite;   // "Kerg et al., NeurIPS 2020"
  std::string arxiv;  // the version the numbers were read from, "2006.09471v2"
  std::vector<TableSpec> tables;
  std::vector<FigureSpec> figures;
  std::vector<PaperNumber> numbers;
};

// Parses one paper's report.yaml and numbers.yaml (numbers_yaml may be empty). Throws
// core::Error naming `source` and the key for anything missing, unknown or malformed.
PaperSpec parse_paper_spec(const std::string& report_yaml, const std::string& numbers_yaml,
                           const std::string& source);

// The papers, from the files embedded at build time, in a fixed order.
const std::vector<PaperSpec>& paper_specs();
// One of them by name; a usage error listing the names (with a "did you mean") otherwise.
const PaperSpec& paper_spec(const std::string& name);

// The number the paper gives for (table, row, column), or nullptr.
const PaperNumber* find_paper_number(const PaperSpec& paper, const std::string& table,
                                     const std::string& row, const std::string& column);
// Where a number comes from, for a report's source column: "Table 1, arXiv 2006.09471v2",
// a repository source as written ("github:..."), or "unchecked; <where it is said to be>"
// for a number not checked against a source.
std::string number_source(const PaperSpec& paper, const PaperNumber& number);
// True for a source that names a file in a repository ("github:owner/repo@commit path").
bool is_repository_source(const std::string& source);

// How many of the paper's numbers are checked, out of all it records.
struct CheckedCount {
  int checked = 0, total = 0;
  int in_repository = 0;  // of the checked: against a file in the authors' repository
};
CheckedCount count_checked(const PaperSpec& paper);
// The sentence a report opens with, computed from numbers.yaml: how many of the paper's
// numbers are checked against a named source, and where ("3 of 14 paper numbers are
// checked against a named source (2 read in the published text, ...; 1 in a file of the
// authors' public repository); the others ..."; "None of the 7 paper numbers is checked
// ..."; "No paper numbers are recorded.").
std::string checked_statement(const PaperSpec& paper);
// The number as a report cell: the paper's text, with " (unchecked)" when not checked.
std::string number_cell(const PaperNumber& number);

// For the per-experiment reports: the paper's number for a run, looked up in paper
// `paper`'s table `table` by the run's row value (mapped through the table's rows, e.g.
// "local+routing" -> "routing") and column. Returns {number_cell, number_source}, or
// {"—", ""} when the paper has none.
std::pair<std::string, std::string> paper_cells(const std::string& paper, const std::string& table,
                                                const std::string& row_value, const std::string& column);

// Applies a row/column transform ("", "attention_kinds", "minigrid_env").
std::string apply_key_transform(const std::string& as, const std::string& value);

}  // namespace seqbench::report

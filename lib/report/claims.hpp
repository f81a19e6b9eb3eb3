// The papers' claims as data (configs/claims/<id>.yaml) and their verdicts, computed from
// finished runs: `seqbench report claims` (docs/claims.md describes the file format, the
// statistics and the verdict rule).
//
// A claim holds one or more tests. A test turns runs into samples (one number per run, or
// per group of rows of one CSV), compares one group with a threshold or two groups with
// each other, and decides with a 95 % bootstrap interval over the samples:
//   reproduced      the whole interval lies on the claimed side of the threshold
//   not reproduced  the whole interval lies on the other side
//   inconclusive    the interval straddles it, or there are fewer samples than min_n
// A claim is reproduced when all its tests are, not reproduced when any test is not, not
// run while a test has no samples yet, and inconclusive otherwise.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace seqbench::report {

// One number from a set of CSV rows (a run's runs.csv row, a file in its directory, or a
// group of rows of one table).
struct ClaimValue {
  std::string column;  // the column read (the y of a slope)
  // Rows used: every `where` cell equal (numerically when both sides are numbers) and
  // every `range` column within [lo, hi].
  std::vector<std::pair<std::string, std::string>> where;
  std::vector<std::pair<std::string, std::pair<double, double>>> range;
  // Non-empty: only the rows where this column has its largest value (e.g. "step": a run's
  // last gradient probe, whenever the run stopped).
  std::string last_of;
  bool log10 = false;   // take log10 of the column's values (a value <= 0 is an error)
  std::string slope_x;  // non-empty: the least-squares slope of column against slope_x
  bool log_x = false;   // ... against log10(slope_x)
  std::string reduce = "mean";  // without slope_x: mean, max, min or last of the rows
  std::shared_ptr<ClaimValue> minus;  // subtract another value of the same rows
};

// Which samples form a group: runs.csv (or table) cells that must be equal.
struct ClaimGroup {
  std::string name;
  std::vector<std::pair<std::string, std::string>> where;
};

struct ClaimCriterion {
  enum class Direction { Greater, Less, Within };
  Direction direction = Direction::Greater;
  double threshold = 0;     // greater / less
  double lo = 0, hi = 0;    // within
  int min_n = 3;            // samples per group below this: inconclusive
  bool deterministic = false;  // a measurement without noise (one sample; no interval)
};

struct ClaimTest {
  std::string name;
  // Samples: either one per run of `runs` (an experiment directory holding runs.csv, each
  // run in <runs>/<run_id>/; `file` names a CSV inside the run directory to read, empty =
  // the run's runs.csv row), or one per distinct `sample_by` value of the CSV `table`.
  std::string runs, file, table, sample_by;
  ClaimValue value;
  ClaimGroup a;
  std::optional<ClaimGroup> b;  // the effect is mean(a) - mean(b), or mean(a) without b
  bool relative = false;        // with b: (mean(a) - mean(b)) / mean(b)
  ClaimCriterion criterion;
  double scale = 1;             // display only
  std::string unit;
  int decimals = 3;
};

// A number of the paper the claim quotes: numbers.yaml of `paper` (table, row, column).
struct ClaimNumberRef {
  std::string table, row, column;
};

struct Claim {
  std::string id;      // K1, M3, ...
  std::string paper;   // kerg2020, ...
  std::string title;   // a short line
  std::string claim;   // the claim in our words
  std::string paper_says;  // what the paper reports for it, in words ("" = nothing numeric)
  std::vector<ClaimNumberRef> numbers;
  std::string budget;
  std::vector<std::string> commands;
  std::vector<ClaimTest> tests;
  std::vector<std::string> changes;  // criterion changes after results existed, and why
  std::string path;                  // where it was read from
};

// Parses one claim file; throws core::Error naming the file and key for anything
// missing, unknown or malformed.
Claim parse_claim(const std::string& yaml_text, const std::string& path);
// Every *.yaml of a directory, sorted by paper order (kerg2020, nguyen2020, miller2019,
// daras2020, roy2021) and then id.
std::vector<Claim> load_claims(const std::string& dir);

// NotRun: a test has no samples at all yet (its runs have not been made); the page says
// so instead of calling it inconclusive.
enum class Verdict { Reproduced, NotReproduced, Inconclusive, NotRun };
std::string verdict_name(Verdict v);

struct TestResult {
  const ClaimTest* test = nullptr;
  std::vector<double> a, b;          // the samples
  std::vector<std::string> a_ids, b_ids;
  double estimate = 0, lo = 0, hi = 0;  // the effect and its 95 % interval
  bool have = false;                 // an estimate exists
  Verdict verdict = Verdict::Inconclusive;
  std::string reason;                // one line
  std::vector<std::string> sources;  // the files read
};

struct ClaimResult {
  const Claim* claim = nullptr;
  std::vector<TestResult> tests;
  Verdict verdict = Verdict::Inconclusive;
  std::string reason;
  std::string paper_number;  // cell text: the quoted number(s) with "(unchecked)", or "—"
  std::string paper_source;
  std::string figure;        // PNG path relative to the output directory, "" = none
  // The same claim evaluated on runs made with other seeds (add_recheck); empty = none.
  struct Recheck {
    std::string label;  // e.g. "seeds 6-10"
    Verdict verdict = Verdict::NotRun;
    std::string reason;
  };
  std::optional<Recheck> recheck;
};

// The 95 % percentile bootstrap interval of mean(a) - mean(b) (b empty: of mean(a)), or
// of the relative difference; `resamples` draws from a fixed seed, so it is reproducible.
std::pair<double, double> bootstrap_interval(const std::vector<double>& a, const std::vector<double>& b,
                                             bool relative, int resamples = 10000, uint64_t seed = 1);

// The verdict of one test, from its samples (root: paths in the test are relative to it).
TestResult evaluate_test(const ClaimTest& test, const std::string& root);
ClaimResult evaluate_claim(const Claim& claim, const std::string& root);

// Evaluates every claim again on the runs under `root` (made with other seeds: tools/claims/run
// with SEEDS and ROOT) and records that verdict beside the first, labelled `label`. A claim
// with no runs there is left without a recheck.
void add_recheck(std::vector<ClaimResult>& results, const std::string& root, const std::string& label);

// The page: Markdown, CSV (one row per test) and a self-contained HTML page.
std::string claims_markdown(const std::vector<ClaimResult>& results);
// The short form for a README: the counts and one line per claim (id, claim, verdict).
std::string claims_summary_markdown(const std::vector<ClaimResult>& results);
std::string claims_csv(const std::vector<ClaimResult>& results);
std::string claims_html(const std::vector<ClaimResult>& results, const std::string& out_dir);

// Writes claims.md, summary.md, claims.csv, index.html and figures/<id>.{gp,png,svg} (a
// strip plot of each claim's samples) into out_dir; returns the paths written.
std::vector<std::string> write_claims_report(std::vector<ClaimResult>& results, const std::string& out_dir);

}  // namespace seqbench::report

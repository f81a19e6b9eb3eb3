// The claims page: claim files parse (and bad ones are refused, named), the bootstrap
// interval and the verdict rule decide as docs/claims.md says, samples come from runs.csv,
// per-run files and tables, and every committed claim file names runs the runner makes.
#include "report/claims.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "core/check.hpp"
#include "core/fs.hpp"
#include "test_util.hpp"

namespace seqbench::report {
namespace {

namespace fs = std::filesystem;
using testutil::message_of;
using testutil::TempDir;

void write(const std::string& path, const std::string& text) {
  fs::create_directories(fs::path(path).parent_path());
  std::ofstream(path) << text;
}

// A claim file around one test body (indented under `tests:`).
std::string claim_yaml(const std::string& test) {
  return "id: X1\npaper: kerg2020\ntitle: t\nclaim: c\nbudget: b\ntests:\n" + test;
}

// An experiment directory with runs of two labels: a's final_metric values, then b's.
void write_runs(const std::string& dir, const std::vector<double>& a, const std::vector<double>& b,
                const std::string& extra_rows = "") {
  std::string csv = "run_id,label,status,final_metric\n";
  for (size_t i = 0; i < a.size(); ++i) csv += fmt::format("a-s{},a,finished,{}\n", i + 1, a[i]);
  for (size_t i = 0; i < b.size(); ++i) csv += fmt::format("b-s{},b,target_reached,{}\n", i + 1, b[i]);
  write(dir + "/runs.csv", csv + extra_rows);
}

const char* kDiffTest = R"(  - name: a minus b
    runs: exp
    value: {column: final_metric}
    a: {name: A, where: {label: a}}
    b: {name: B, where: {label: b}}
    criterion: {direction: greater, threshold: 0.2, min_n: 3}
)";

TEST(Claims, BootstrapIntervalIsReproducibleAndCoversTheMean) {
  const std::vector<double> a{1, 2, 3, 4, 5}, b{0, 0.5, 1};
  const auto [lo, hi] = bootstrap_interval(a, b, false);
  EXPECT_EQ(bootstrap_interval(a, b, false), std::make_pair(lo, hi));  // fixed seed
  EXPECT_LT(lo, 2.5);
  EXPECT_GT(hi, 2.5);  // mean(a) - mean(b) = 2.5
  EXPECT_GT(lo, 0.5);  // a clear difference: the interval stays well away from 0
  const auto [clo, chi] = bootstrap_interval({2, 2, 2}, {1, 1}, false);
  EXPECT_DOUBLE_EQ(clo, 1);  // no spread, no width
  EXPECT_DOUBLE_EQ(chi, 1);
  const auto [rlo, rhi] = bootstrap_interval({3, 3}, {2, 2}, true);
  EXPECT_DOUBLE_EQ(rlo, 0.5);  // relative: (3 - 2) / 2
  EXPECT_DOUBLE_EQ(rhi, 0.5);
}

TEST(Claims, VerdictsFollowTheIntervalAndTheThreshold) {
  TempDir d;
  const Claim c = parse_claim(claim_yaml(kDiffTest), "x.yaml");
  write_runs(d / "exp", {0.9, 0.95, 1.0}, {0.1, 0.12, 0.15});
  TestResult r = evaluate_test(c.tests[0], d.path);
  EXPECT_EQ(r.verdict, Verdict::Reproduced) << r.reason;
  EXPECT_NEAR(r.estimate, 0.95 - 0.123333, 1e-5);
  EXPECT_GT(r.lo, 0.2);
  EXPECT_EQ(r.a_ids, (std::vector<std::string>{"a-s1", "a-s2", "a-s3"}));

  write_runs(d / "exp", {0.1, 0.12, 0.11}, {0.1, 0.12, 0.15});  // no effect: wholly below 0.2
  r = evaluate_test(c.tests[0], d.path);
  EXPECT_EQ(r.verdict, Verdict::NotReproduced) << r.reason;
  EXPECT_NE(r.reason.find("below"), std::string::npos) << r.reason;

  write_runs(d / "exp", {0.1, 0.9, 0.5}, {0.1, 0.12, 0.15});  // spread straddles 0.2
  r = evaluate_test(c.tests[0], d.path);
  EXPECT_EQ(r.verdict, Verdict::Inconclusive) << r.reason;
  EXPECT_NE(r.reason.find("straddles"), std::string::npos) << r.reason;

  write_runs(d / "exp", {0.9, 1.0}, {0.1, 0.12, 0.15});  // two seeds where three are needed
  r = evaluate_test(c.tests[0], d.path);
  EXPECT_EQ(r.verdict, Verdict::Inconclusive);
  EXPECT_NE(r.reason.find("fewer than the 3"), std::string::npos) << r.reason;
}

TEST(Claims, UnfinishedAndRerunRowsAreHandled) {
  TempDir d;
  const Claim c = parse_claim(claim_yaml(kDiffTest), "x.yaml");
  // a-s1 first failed (its row says diverged), then was rerun: its last row counts. a-s4 is
  // still running and is not a sample, but is counted as pending.
  write_runs(d / "exp", {0.9, 0.95, 1.0}, {0.1, 0.12, 0.15}, "a-s1,a,finished,0.5\na-s4,a,interrupted,0.3\n");
  const TestResult r = evaluate_test(c.tests[0], d.path);
  EXPECT_EQ(r.a, (std::vector<double>{0.5, 0.95, 1.0}));
  EXPECT_NE(r.reason.find("1 sample(s) not finished"), std::string::npos) << r.reason;
  // Nothing has run: no samples, inconclusive, no error.
  const TestResult none = evaluate_test(c.tests[0], d / "nowhere");
  EXPECT_EQ(none.verdict, Verdict::NotRun);
  EXPECT_FALSE(none.have);
}

TEST(Claims, ValuesFromRunFilesWithRangesLastProbeAndDifferences) {
  TempDir d;
  const Claim c = parse_claim(claim_yaml(R"(  - name: decay
    runs: exp
    file: gradnorm.csv
    value:
      column: norm
      log10: true
      last_of: step
      range: {t: [0, 1]}
      minus: {column: norm, log10: true, last_of: step, range: {t: [8, 9]}}
    a: {name: A, where: {label: a}}
    criterion: {direction: less, threshold: -1, min_n: 2}
)"),
                              "x.yaml");
  write_runs(d / "exp", {0, 0}, {});
  // Run 1 at its last probe (step 20): 1e-4 at t 0..1 and 1 at t 8..9 -> -4. The earlier
  // probe (step 10) must be ignored.
  write(d / "exp/a-s1/gradnorm.csv",
        "step,t,norm\n10,0,1\n10,9,1\n20,0,1e-4\n20,1,1e-4\n20,5,7\n20,8,1\n20,9,1\n");
  write(d / "exp/a-s2/gradnorm.csv", "step,t,norm\n5,0,0.01\n5,1,0.01\n5,8,1\n5,9,1\n");  // -> -2
  const TestResult r = evaluate_test(c.tests[0], d.path);
  ASSERT_EQ(r.a.size(), 2u) << r.reason;
  EXPECT_NEAR(r.a[0], -4, 1e-12);
  EXPECT_NEAR(r.a[1], -2, 1e-12);
  EXPECT_EQ(r.verdict, Verdict::Reproduced) << r.reason;
}

TEST(Claims, TableSamplesAndSlopes) {
  TempDir d;
  const Claim c = parse_claim(claim_yaml(R"(  - name: exponent
    table: t.csv
    sample_by: seed
    value: {column: ms, log10: true, slope: n, log_x: true, range: {n: [100, 10000]}}
    a: {name: A, where: {kind: r}}
    criterion: {direction: within, range: [1.4, 1.6], min_n: 2}
)"),
                              "x.yaml");
  // ms = n^1.5 for seed 1, 2 n^1.5 for seed 2 (same slope); a point outside the range and a
  // row of another kind do not count.
  std::string csv = "seed,kind,n,ms\n";
  for (int seed : {1, 2})
    for (double n : {100.0, 1000.0, 10000.0}) csv += fmt::format("{},r,{},{}\n", seed, n, seed * std::pow(n, 1.5));
  csv += "1,r,100000,1\n2,other,100,1e9\n";
  write(d / "t.csv", csv);
  const TestResult r = evaluate_test(c.tests[0], d.path);
  ASSERT_EQ(r.a.size(), 2u);
  EXPECT_NEAR(r.a[0], 1.5, 1e-9);
  EXPECT_NEAR(r.a[1], 1.5, 1e-9);
  EXPECT_EQ(r.verdict, Verdict::Reproduced) << r.reason;
  EXPECT_EQ(r.a_ids, (std::vector<std::string>{"1", "2"}));
}

TEST(Claims, AClaimIsNotReproducedWhenAnyTestFails) {
  TempDir d;
  const Claim c = parse_claim(claim_yaml(std::string(kDiffTest) + R"(  - name: a alone
    runs: exp
    value: {column: final_metric}
    a: {name: A, where: {label: a}}
    criterion: {direction: greater, threshold: 0.99, min_n: 3}
)"),
                              "x.yaml");
  write_runs(d / "exp", {0.9, 0.95, 0.93}, {0.1, 0.12, 0.15});
  const ClaimResult r = evaluate_claim(c, d.path);
  EXPECT_EQ(r.tests[0].verdict, Verdict::Reproduced);
  EXPECT_EQ(r.tests[1].verdict, Verdict::NotReproduced);
  EXPECT_EQ(r.verdict, Verdict::NotReproduced);
  EXPECT_NE(r.reason.find("a alone"), std::string::npos) << r.reason;  // names the failed test
}

TEST(Claims, BadClaimFilesAreRefusedNamingFileLineAndKey) {
  EXPECT_NE(message_of([] { parse_claim(claim_yaml(std::string(kDiffTest) + "    colour: red\n"), "x.yaml"); })
                .find("x.yaml:13: tests[0]: unknown key 'colour'"),
            std::string::npos)
      << message_of([] { parse_claim(claim_yaml(std::string(kDiffTest) + "    colour: red\n"), "x.yaml"); });
  EXPECT_NE(message_of([] { parse_claim("id: X\npaper: nobody2020\n", "y.yaml"); }).find("paper 'nobody2020'"),
            std::string::npos);
  EXPECT_NE(message_of([] { parse_claim(claim_yaml("  - name: n\n    runs: r\n    value: {column: c}\n    a: {name: A, where: {l: a}}\n    criterion: {direction: sideways, threshold: 0}\n"), "z.yaml"); })
                .find("'sideways' is not one of: greater, less, within"),
            std::string::npos);
  EXPECT_NE(message_of([] { parse_claim(claim_yaml("  - name: n\n    runs: r\n    table: t.csv\n    sample_by: s\n    value: {column: c}\n    a: {name: A, where: {l: a}}\n    criterion: {direction: less, threshold: 0}\n"), "z.yaml"); })
                .find("give 'runs'"),
            std::string::npos);
  EXPECT_NE(message_of([] { parse_claim("id: [", "w.yaml"); }).find("w.yaml:1: not valid YAML"), std::string::npos);
}

TEST(Claims, PageHoldsEveryClaimItsVerdictAndTheCriterion) {
  TempDir d;
  const Claim c = parse_claim(claim_yaml(kDiffTest), "x.yaml");
  write_runs(d / "exp", {0.9, 0.95, 1.0}, {0.1, 0.12, 0.15});
  std::vector<ClaimResult> results{evaluate_claim(c, d.path)};
  const auto files = write_claims_report(results, d / "out");
  EXPECT_EQ(files.size(), 4u);
  EXPECT_NE(core::read_file(d / "out/summary.md").find("| X1  | kerg2020 | t     | reproduced |"), std::string::npos)
      << core::read_file(d / "out/summary.md");
  const std::string md = core::read_file(d / "out/claims.md");
  EXPECT_NE(md.find("1 claims: 1 reproduced, 0 not reproduced, 0 inconclusive at this budget, 0 not run yet."),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("A − B &gt; 0.200"), std::string::npos) << md;  // Markdown cells escape HTML
  const std::string csv = core::read_file(d / "out/claims.csv");
  EXPECT_NE(csv.find("X1,kerg2020,t,reproduced,a minus b,A,3,"), std::string::npos) << csv;
  const std::string html = core::read_file(d / "out/index.html");
  EXPECT_NE(html.find("<span class=\"reproduced\">reproduced</span>"), std::string::npos);
}

TEST(Claims, ARerunWithOtherSeedsIsShownBesideTheFirstVerdictAndCountedAsSameOrOther) {
  TempDir d;
  const Claim c = parse_claim(claim_yaml(kDiffTest), "x.yaml");
  write_runs(d / "first/exp", {0.9, 0.95, 1.0}, {0.1, 0.12, 0.15});
  write_runs(d / "second/exp", {0.9, 0.2, 1.0}, {0.1, 0.12, 0.15});  // one run of A fails: the interval straddles
  std::vector<ClaimResult> results{evaluate_claim(c, d / "first")};
  add_recheck(results, d / "second", "seeds 4-6");
  ASSERT_TRUE(results[0].recheck.has_value());
  EXPECT_EQ(results[0].verdict, Verdict::Reproduced);
  EXPECT_EQ(results[0].recheck->verdict, Verdict::Inconclusive);
  EXPECT_EQ(results[0].recheck->label, "seeds 4-6");
  // A claim with no runs under the second root gets no recheck (and no "not run yet").
  std::vector<ClaimResult> none{evaluate_claim(c, d / "first")};
  add_recheck(none, d / "nowhere", "seeds 4-6");
  EXPECT_FALSE(none[0].recheck.has_value());
  EXPECT_EQ(claims_markdown(none).find("other seeds"), std::string::npos);

  const std::string md = claims_markdown(results);
  EXPECT_NE(md.find("Rerun with other seeds (seeds 4-6): 1 claim; the same verdict for 0 of them, another for X1 "
                    "(inconclusive at this budget)."),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("| verdict    | other seeds "), std::string::npos) << md;
  EXPECT_NE(md.find("- **With other seeds (seeds 4-6):** inconclusive at this budget."), std::string::npos) << md;
  EXPECT_NE(claims_summary_markdown(results).find("inconclusive at this budget |"), std::string::npos);
  EXPECT_NE(claims_csv(results).find(",seeds 4-6,inconclusive at this budget,"), std::string::npos);
  EXPECT_NE(claims_html(results, d / "out").find("<th>other seeds</th>"), std::string::npos);

  // The same runs under both roots: the same verdict, counted as such.
  add_recheck(results, d / "first", "seeds 1-3");
  EXPECT_NE(claims_markdown(results).find("1 claim; the same verdict for 1 of them (X1)."), std::string::npos);
}

TEST(Claims, EveryCommittedClaimParsesAndNamesWhatTheRunnerMakes) {
  const std::string root = SEQBENCH_SOURCE_DIR;
  const std::vector<Claim> claims = load_claims(root + "/configs/claims");
  std::set<std::string> ids;
  for (const auto& c : claims) ids.insert(c.id);
  EXPECT_EQ(ids, (std::set<std::string>{"K1", "K2", "K3", "K4", "M1", "M2", "M3", "S1", "S2", "S3", "Y1", "Y2",
                                        "R1", "R2", "R3"}));
  const std::string runner = core::read_file(root + "/tools/claims/run");
  for (const auto& c : claims)
    for (const auto& t : c.tests) {
      // A runs directory results/claims/<sweep>/<experiment>: the sweep file exists.
      const std::string path = t.runs.empty() ? t.table : t.runs;
      ASSERT_EQ(path.rfind("results/claims/", 0), 0u) << c.id << ": " << path;
      const std::string first = fs::path(path).lexically_relative("results/claims").begin()->string();
      EXPECT_TRUE(fs::exists(root + "/configs/claims/sweeps/" + first + ".yaml") ||
                  runner.find("step_" + first + "()") != std::string::npos)
          << c.id << ": nothing in configs/claims/sweeps/ or tools/claims/run makes " << path;
    }
}

}  // namespace
}  // namespace seqbench::report

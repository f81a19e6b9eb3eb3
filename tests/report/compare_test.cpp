#include "report/compare.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>

#include "core/check.hpp"
#include "core/fs.hpp"
#include "report/csv.hpp"
#include "report/run_configs.hpp"
#include "test_util.hpp"

using namespace seqbench;
using testutil::message_of;
using testutil::TempDir;

namespace {

const char* kHeader =
    "run_id,experiment,label,task,T,model,backend,hidden,params,batch,optimizer,lr,bptt,seed,"
    "threads,gemm,data,status,updates,metric,final_metric,best_metric,best_step,final_loss,"
    "updates_to_target,seconds_to_target,train_seconds,ms_per_update,peak_rss_mb,held_mb\n";

// One runs.csv row with the columns compare reads set and the rest plausible.
std::string run_row(const std::string& label, const std::string& model, int seed,
                    const std::string& metric, double final_metric, double best_metric, int updates,
                    int updates_to_target, double seconds_to_target, double ms, double rss,
                    const std::string& T = "100") {
  // Labels may hold commas: quote them the way CsvWriter does.
  return fmt::format(
      "{12},copy,{13},copy,{10},{1},ours,64,1000,32,adam,0.01,0,{2},2,onednn,synthetic,"
      "finished,{5},{3},{4},{11},{5},0.5,{6},{7},10,{8},{9},3\n",
      label, model, seed, metric, final_metric, updates, updates_to_target, seconds_to_target, ms,
      rss, T, best_metric, report::csv_escape(label + "-s" + std::to_string(seed)),
      report::csv_escape(label));
}

report::CsvTable table_of(const std::string& body) {
  return report::parse_csv(std::string(kHeader) + body, "results/copy/runs.csv");
}

}  // namespace

TEST(Compare, DirectionFollowsTheMetric) {
  EXPECT_TRUE(report::higher_is_better("acc"));
  EXPECT_TRUE(report::higher_is_better("Accuracy"));
  EXPECT_FALSE(report::higher_is_better("mse"));
  EXPECT_FALSE(report::higher_is_better("loss"));
  EXPECT_FALSE(report::higher_is_better("bpc"));
  EXPECT_FALSE(report::higher_is_better("ppl"));
}

TEST(Compare, GroupsByLabelAveragesAndCounts) {
  const auto table = report::compare_runs(
      table_of(run_row("lstm", "lstm", 1, "acc", 0.8, 0.9, 1000, 400, 4.0, 5.0, 50.0) +
               run_row("rnn", "rnn", 1, "acc", 0.3, 0.35, 1000, -1, -1, 2.0, 20.0) +
               run_row("lstm", "lstm", 2, "acc", 0.6, 0.7, 2000, 600, 8.0, 7.0, 70.0)));
  ASSERT_EQ(table.rows.size(), 2u);
  EXPECT_EQ(table.metric, "acc");
  const auto& lstm = table.rows[0];
  EXPECT_EQ(lstm.key, "lstm");
  EXPECT_EQ(lstm.n, 2);
  EXPECT_DOUBLE_EQ(lstm.final_metric, 0.7);
  EXPECT_DOUBLE_EQ(lstm.best_metric, 0.8);
  EXPECT_DOUBLE_EQ(lstm.updates, 1500);
  EXPECT_DOUBLE_EQ(lstm.ms_per_update, 6.0);
  EXPECT_DOUBLE_EQ(lstm.peak_rss_mb, 60.0);
  ASSERT_TRUE(lstm.updates_to_target.has_value());
  EXPECT_DOUBLE_EQ(*lstm.updates_to_target, 500);
  EXPECT_DOUBLE_EQ(*lstm.seconds_to_target, 6.0);
  // Identity columns the file has, in a fixed order; equal values are not repeated.
  EXPECT_EQ(table.identity_columns, (std::vector<std::string>{"model", "task", "T", "data"}));
  EXPECT_EQ(lstm.identity, (std::vector<std::string>{"lstm", "copy", "100", "synthetic"}));
  EXPECT_EQ(table.rows[1].key, "rnn");
  EXPECT_EQ(table.rows[1].n, 1);
  EXPECT_FALSE(table.rows[1].updates_to_target.has_value());
}

TEST(Compare, AccuracySortsHighestFirstMseLowestFirst) {
  const auto acc =
      report::compare_runs(table_of(run_row("a", "rnn", 1, "acc", 0.2, 0.2, 10, -1, -1, 1, 1) +
                                    run_row("b", "rnn", 1, "acc", 0.9, 0.9, 10, -1, -1, 1, 1) +
                                    run_row("c", "rnn", 1, "acc", 0.5, 0.5, 10, -1, -1, 1, 1)));
  ASSERT_EQ(acc.rows.size(), 3u);
  EXPECT_EQ(acc.rows[0].key, "b");
  EXPECT_EQ(acc.rows[1].key, "c");
  EXPECT_EQ(acc.rows[2].key, "a");

  const auto mse =
      report::compare_runs(table_of(run_row("a", "rnn", 1, "mse", 0.2, 0.2, 10, -1, -1, 1, 1) +
                                    run_row("b", "rnn", 1, "mse", 0.9, 0.9, 10, -1, -1, 1, 1) +
                                    run_row("c", "rnn", 1, "mse", 0.05, 0.05, 10, -1, -1, 1, 1)));
  ASSERT_EQ(mse.rows.size(), 3u);
  EXPECT_EQ(mse.rows[0].key, "c");
  EXPECT_EQ(mse.rows[1].key, "a");
  EXPECT_EQ(mse.rows[2].key, "b");
  EXPECT_EQ(report::compare_header(mse)[5], "n");
  EXPECT_EQ(report::compare_header(mse)[6], "final mse");
  EXPECT_EQ(report::compare_header(mse)[7], "best mse");
}

TEST(Compare, DivergedRunSortsLast) {
  const auto t = report::compare_runs(
      table_of(run_row("nan", "rnn", 1, "mse", std::nan(""), 0.3, 10, -1, -1, 1, 1) +
               run_row("ok", "rnn", 1, "mse", 0.9, 0.9, 10, -1, -1, 1, 1)));
  ASSERT_EQ(t.rows.size(), 2u);
  EXPECT_EQ(t.rows[0].key, "ok");
  EXPECT_TRUE(std::isnan(t.rows[1].final_metric));
}

TEST(Compare, TargetNeverReachedIsADashAndPartialHitsAreCounted) {
  const auto t = report::compare_runs(
      table_of(run_row("never", "rnn", 1, "acc", 0.2, 0.2, 10, -1, -1, 1, 1) +
               run_row("some", "lstm", 1, "acc", 0.9, 0.9, 10, 1200, 30, 1, 1) +
               run_row("some", "lstm", 2, "acc", 0.8, 0.8, 10, -1, -1, 1, 1)));
  const auto header = report::compare_header(t);
  const auto cells = report::compare_cells(t, /*exact=*/false);
  ASSERT_EQ(cells.size(), 2u);
  const auto col = [&](const std::string& name) {
    return std::find(header.begin(), header.end(), name) - header.begin();
  };
  EXPECT_EQ(cells[0][0], "some");
  EXPECT_EQ(cells[0][col("updates_to_target")], "1200 (1/2)");
  EXPECT_EQ(cells[0][col("seconds_to_target")], "30 (1/2)");
  EXPECT_EQ(cells[1][col("updates_to_target")], "—");
  EXPECT_EQ(cells[1][col("seconds_to_target")], "—");
  EXPECT_EQ(cells[0][col("final acc")], "0.85 (0.8–0.9)");  // n = 2: min–max
  EXPECT_EQ(cells[0][col("n")], "2");
}

TEST(Compare, MarkdownHasTheMetricInTheHeader) {
  const auto md = report::compare_markdown(report::compare_runs(
      table_of(run_row("lstm", "lstm", 1, "acc", 0.123456789, 0.2, 12345, -1, -1, 7.7203, 57.7))));
  EXPECT_NE(md.find("final acc"), std::string::npos) << md;
  EXPECT_NE(md.find("best acc"), std::string::npos) << md;
  EXPECT_NE(md.find("0.1235"), std::string::npos) << md;  // rounded for reading
  EXPECT_NE(md.find("12345"), std::string::npos) << md;   // counts without an exponent
  EXPECT_NE(md.find("—"), std::string::npos) << md;
  EXPECT_EQ(md.find("0.123456789"), std::string::npos) << md;
}

TEST(Compare, CsvOutputParsesBackWithExactMeans) {
  const auto t = report::compare_runs(
      table_of(run_row("lstm, big", "lstm", 1, "acc", 0.1, 0.2, 100, 50, 1.5, 3, 40) +
               run_row("lstm, big", "lstm", 2, "acc", 0.2, 0.3, 200, -1, -1, 4, 41) +
               run_row("gru", "gru", 1, "acc", 1.0 / 3.0, 0.4, 100, -1, -1, 4, 41)));
  const std::string csv = report::compare_csv(t);
  const report::CsvTable back = report::parse_csv(csv, "compare.csv");
  EXPECT_EQ(back.columns, report::compare_header(t, /*exact=*/true));
  ASSERT_EQ(back.rows.size(), 2u);
  // gru (1/3) beats the lstm mean (0.15) on accuracy.
  EXPECT_EQ(back.rows[0][back.col("label")], "gru");
  EXPECT_EQ(std::stod(back.rows[0][back.col("final acc")]), 1.0 / 3.0);
  // Numbers only: a target never reached is empty, an sd of one run nan.
  EXPECT_EQ(back.rows[0][back.col("updates_to_target")], "");
  EXPECT_EQ(back.rows[0][back.col("n_target")], "0");
  EXPECT_EQ(back.rows[0][back.col("final acc sd")], "nan");
  EXPECT_EQ(back.rows[1][back.col("label")], "lstm, big");  // the comma survived quoting
  EXPECT_EQ(std::stod(back.rows[1][back.col("final acc")]), (0.1 + 0.2) / 2);
  EXPECT_EQ(std::stod(back.rows[1][back.col("final acc min")]), 0.1);
  EXPECT_EQ(std::stod(back.rows[1][back.col("final acc max")]), 0.2);
  EXPECT_NEAR(std::stod(back.rows[1][back.col("final acc sd")]), std::sqrt(0.005), 1e-12);
  EXPECT_EQ(back.rows[1][back.col("n")], "2");
  EXPECT_EQ(back.rows[1][back.col("updates_to_target")], "50");
  EXPECT_EQ(back.rows[1][back.col("n_target")], "1");
  EXPECT_EQ(csv.find("—"), std::string::npos) << csv;
}

TEST(Compare, ThreeOrMoreRunsShowMeanPlusMinusSd) {
  const auto t = report::compare_runs(
      table_of(run_row("lstm", "lstm", 1, "acc", 0.5, 0.5, 10, -1, -1, 1, 1) +
               run_row("lstm", "lstm", 2, "acc", 0.7, 0.7, 10, -1, -1, 1, 1) +
               run_row("lstm", "lstm", 3, "acc", 0.9, 0.9, 10, -1, -1, 1, 1)));
  const auto cells = report::compare_cells(t, false);
  const auto header = report::compare_header(t);
  const auto col = std::find(header.begin(), header.end(), "final acc") - header.begin();
  EXPECT_EQ(cells[0][size_t(col)], "0.7 ± 0.2");
  // Values all equal (every run did 10 updates) carry no spread.
  const auto updates = std::find(header.begin(), header.end(), "updates") - header.begin();
  EXPECT_EQ(cells[0][size_t(updates)], "10");
  EXPECT_DOUBLE_EQ(t.rows[0].spread[report::kFinal].sd, 0.2);
  EXPECT_DOUBLE_EQ(t.rows[0].spread[report::kFinal].min, 0.5);
  EXPECT_EQ(t.rows[0].spread[report::kFinal].n, 3);
}

TEST(Compare, ByAConfigKeyGroupsOnTheRunsConfigs) {
  const auto runs = table_of(run_row("a", "lstm", 1, "acc", 0.2, 0.2, 10, -1, -1, 1, 1) +
                             run_row("b", "lstm", 1, "acc", 0.4, 0.4, 10, -1, -1, 1, 1) +
                             run_row("c", "lstm", 1, "acc", 0.9, 0.9, 10, -1, -1, 1, 1));
  const report::RunConfigs configs{{{"model.hidden", "8"}, {"train.seed", "1"}},
                                   {{"model.hidden", "8"}, {"train.seed", "2"}},
                                   {{"model.hidden", "64"}, {"train.seed", "1"}}};
  report::CompareOptions opts;
  opts.by = "model.hidden";
  opts.average_over_configs = true;
  const auto t = report::compare_runs(runs, opts, configs);
  ASSERT_EQ(t.rows.size(), 2u);
  EXPECT_EQ(report::compare_header(t)[0], "model.hidden");
  EXPECT_EQ(t.rows[0].key, "64");
  EXPECT_EQ(t.rows[1].key, "8");
  EXPECT_EQ(t.rows[1].n, 2);
  EXPECT_DOUBLE_EQ(t.rows[1].final_metric, 0.3);
  // Neither a column nor a key: the error lists the columns and the keys that vary.
  opts.by = "model.hiden";
  const std::string msg = message_of([&] { report::compare_runs(runs, opts, configs); });
  EXPECT_NE(msg.find("--by model.hiden"), std::string::npos) << msg;
  EXPECT_NE(msg.find("keys that vary: model.hidden)"), std::string::npos) << msg;  // not train.seed
  EXPECT_NE(msg.find("final_metric"), std::string::npos) << msg;
}

TEST(Compare, MixedMetricsGetAMetricColumnAndSortPerMetric) {
  const auto t =
      report::compare_runs(table_of(run_row("lstm", "lstm", 1, "mse", 0.5, 0.5, 10, -1, -1, 1, 1) +
                                    run_row("lstm", "lstm", 1, "acc", 0.6, 0.6, 10, -1, -1, 1, 1) +
                                    run_row("rnn", "rnn", 1, "mse", 0.1, 0.1, 10, -1, -1, 1, 1) +
                                    run_row("rnn", "rnn", 1, "acc", 0.9, 0.9, 10, -1, -1, 1, 1)));
  EXPECT_TRUE(t.metric.empty());
  ASSERT_EQ(t.rows.size(), 4u);  // one label with two metrics is never averaged together
  const auto header = report::compare_header(t);
  EXPECT_NE(std::find(header.begin(), header.end(), "metric"), header.end());
  EXPECT_EQ(t.rows[0].metric, "acc");
  EXPECT_EQ(t.rows[0].key, "rnn");
  EXPECT_EQ(t.rows[1].key, "lstm");
  EXPECT_EQ(t.rows[2].metric, "mse");
  EXPECT_EQ(t.rows[2].key, "rnn");
}

TEST(Compare, ByAnotherColumnJoinsDifferingIdentities) {
  report::CompareOptions opts;
  opts.by = "model";
  const auto t = report::compare_runs(
      table_of(run_row("a", "lstm", 1, "acc", 0.5, 0.5, 10, -1, -1, 1, 1, "100") +
               run_row("b", "lstm", 1, "acc", 0.7, 0.7, 10, -1, -1, 1, 1, "200")),
      opts);
  ASSERT_EQ(t.rows.size(), 1u);
  EXPECT_EQ(report::compare_header(t)[0], "model");
  EXPECT_EQ(t.identity_columns, (std::vector<std::string>{"task", "T", "data"}));
  EXPECT_EQ(t.rows[0].identity[1], "100/200");
  EXPECT_DOUBLE_EQ(t.rows[0].final_metric, 0.6);
}

TEST(Compare, ErrorsNameTheFile) {
  const std::string missing = message_of([] {
    report::compare_runs(report::parse_csv("label,metric\nx,acc\n", "results/copy/runs.csv"));
  });
  EXPECT_NE(missing.find("results/copy/runs.csv"), std::string::npos) << missing;
  EXPECT_NE(missing.find("final_metric"), std::string::npos) << missing;

  const std::string empty = message_of([] { report::compare_runs(table_of("")); });
  EXPECT_NE(empty.find("results/copy/runs.csv: no runs"), std::string::npos) << empty;

  const std::string bad = message_of([] {
    report::compare_runs(table_of(run_row("a", "rnn", 1, "acc", 0.5, 0.5, 10, -1, -1, 1, 1) +
                                  "x,copy,b,copy,1,rnn,ours,1,1,1,adam,1,0,1,1,onednn,synthetic,"
                                  "finished,10,acc,oops,0.1,1,1,-1,-1,1,1,1,1\n"));
  });
  EXPECT_NE(bad.find("results/copy/runs.csv:3"), std::string::npos) << bad;
  EXPECT_NE(bad.find("'oops'"), std::string::npos) << bad;

  TempDir dir;
  const std::string unreadable = message_of([&] { report::read_csv(dir / "nope.csv"); });
  EXPECT_NE(unreadable.find(dir / "nope.csv"), std::string::npos) << unreadable;
}

TEST(Compare, RunsWithTheSameLabelButOtherConfigsGetTheirOwnRows) {
  // The case that used to average a 20-update and a 4-update run into "4222.5 ± 4227.0".
  const auto runs =
      table_of(run_row("lstm", "lstm", 1, "acc", 0.8, 0.9, 20, -1, -1, 5.0, 50.0) +
               run_row("lstm", "lstm", 2, "acc", 0.6, 0.7, 20, -1, -1, 5.0, 50.0) +
               run_row("lstm", "lstm", 3, "acc", 0.2, 0.3, 4, -1, -1, 5.0, 50.0));
  const report::RunConfigs configs{
      {{"train.steps", "20"}, {"train.seed", "1"}, {"output.run_id", "a"}, {"model.hidden", "8"}},
      {{"train.steps", "20"}, {"train.seed", "2"}, {"output.run_id", "b"}, {"model.hidden", "8"}},
      {{"train.steps", "4"}, {"train.seed", "3"}, {"output.run_id", "c"}, {"model.hidden", "8"}}};
  auto table = report::compare_runs(runs, {}, configs);
  ASSERT_EQ(table.rows.size(), 2u);
  EXPECT_EQ(table.rows[0].key, "lstm [train.steps=20]");
  EXPECT_EQ(table.rows[0].n, 2);  // the seeds differ, nothing else: one row
  EXPECT_DOUBLE_EQ(table.rows[0].final_metric, 0.7);
  EXPECT_EQ(table.rows[1].key, "lstm [train.steps=4]");
  EXPECT_EQ(table.rows[1].n, 1);
  // The GEMM library is not a setting of its own: a sweep resumed after its default
  // changed keeps one row per config.
  report::RunConfigs gemm = configs;
  gemm[0]["train.gemm"] = "onednn";
  gemm[1]["train.gemm"] = "auto";
  gemm[2]["train.gemm"] = "auto";
  const auto by_gemm = report::compare_runs(runs, {}, gemm);
  ASSERT_EQ(by_gemm.rows.size(), 2u);
  EXPECT_EQ(by_gemm.rows[0].key, "lstm [train.steps=20]");
  EXPECT_EQ(by_gemm.rows[0].n, 2);
  // Asked for explicitly, the rows are averaged over the difference.
  report::CompareOptions all;
  all.average_over_configs = true;
  table = report::compare_runs(runs, all, configs);
  ASSERT_EQ(table.rows.size(), 1u);
  EXPECT_EQ(table.rows[0].n, 3);
}

TEST(Compare, RunConfigsAreReadFromEachRunsDirectory) {
  TempDir dir;
  core::make_dirs(dir / "lstm-s1");
  core::write_file_atomic(dir / "lstm-s1/config.yaml",
                          "train:\n  steps: 20\n  seed: 1\nmodel: {sizes: [1, 2]}\n");
  core::write_file_atomic(dir / "runs.csv",
                          std::string(kHeader) +
                              run_row("lstm", "lstm", 1, "acc", 0.8, 0.9, 20, -1, -1, 5.0, 50.0) +
                              run_row("gone", "lstm", 1, "acc", 0.8, 0.9, 20, -1, -1, 5.0, 50.0));
  const auto configs = report::read_run_configs(report::read_csv(dir / "runs.csv"));
  ASSERT_EQ(configs.size(), 2u);
  EXPECT_EQ(configs[0].at("train.steps"), "20");
  EXPECT_EQ(configs[0].at("model.sizes"), "[1, 2]");
  EXPECT_TRUE(configs[1].empty());
  EXPECT_TRUE(report::ignored_config_key("train.seed"));
  EXPECT_TRUE(report::ignored_config_key("output.dir"));
  EXPECT_FALSE(report::ignored_config_key("train.steps"));
}

TEST(Compare, HostileLabelsAreNeutralisedInMarkdownAndCsvAndNumbersStayNumbers) {
  const std::vector<std::string> labels{"<script>alert(1)</script>",
                                        "=cmd|' /C calc'!A0",
                                        "+SUM(1)",
                                        "@HYPERLINK(\"http://x\",\"y\")",
                                        "-2+3",
                                        "a|b",
                                        "two\nlines",
                                        "<img src=x onerror=alert(1)>"};
  // Written to runs.csv as a run writes it (CsvWriter), with numbers that are negative.
  TempDir dir;
  const std::string path = dir / "runs.csv";
  const report::CsvTable header = report::parse_csv(kHeader, path);
  {
    report::CsvWriter w(path, header.columns, report::CsvWriter::Mode::Append);
    for (size_t i = 0; i < labels.size(); ++i) {
      const report::CsvTable one =
          table_of(run_row("x", "lstm", 1, "mse", -0.5 - double(i), -1e-05, 10, -1, -1, 2.5, 40));
      std::vector<std::string> cells = one.rows[0];
      cells[size_t(one.col("label"))] = labels[i];
      cells[size_t(one.col("run_id"))] = fmt::format("r{}", i);
      w.row(cells);
    }
  }
  const std::string raw = core::read_file(path);
  for (const char* guarded : {"\"'=cmd|' /C calc'!A0\"", "\"'+SUM(1)\"",
                              "\"'@HYPERLINK(\"\"http://x\"\",\"\"y\"\")\"", "\"'-2+3\""})
    EXPECT_NE(raw.find(guarded), std::string::npos) << guarded << "\n" << raw;
  EXPECT_NE(raw.find(",-1,-1,"), std::string::npos) << raw;  // updates/seconds_to_target
  EXPECT_NE(raw.find(",-0.5,-1e-05,"), std::string::npos) << raw;

  const report::CsvTable runs = report::read_csv(path);  // reads back the labels as given
  for (size_t i = 0; i < labels.size(); ++i)
    EXPECT_EQ(runs.rows[i][size_t(runs.col("label"))], labels[i]);
  const report::CompareTable t = report::compare_runs(runs);
  ASSERT_EQ(t.rows.size(), labels.size());

  const std::string md = report::compare_markdown(t);
  EXPECT_EQ(md.find('<'), std::string::npos) << md;
  EXPECT_EQ(md.find('>'), std::string::npos) << md;
  EXPECT_NE(md.find("&lt;script&gt;alert(1)&lt;/script&gt;"), std::string::npos) << md;
  EXPECT_NE(md.find("&lt;img src=x onerror=alert(1)&gt;"), std::string::npos) << md;
  EXPECT_NE(md.find("| a\\|b "), std::string::npos) << md;
  EXPECT_NE(md.find("| two lines "), std::string::npos) << md;
  EXPECT_EQ(std::count(md.begin(), md.end(), '\n'), long(labels.size()) + 2) << md;
  EXPECT_NE(md.find(" -0.5 |"), std::string::npos) << md;

  const std::string csv = report::compare_csv(t);
  for (const char* guarded :
       {"\n\"'=cmd|' /C calc'!A0\",", "\n\"'+SUM(1)\",", "\n\"'-2+3\",", "\n\"'@HYPERLINK("})
    EXPECT_NE(csv.find(guarded), std::string::npos) << guarded << "\n" << csv;
  for (const char* start : {"\n=", "\n+", "\n@", "\n-2+3", ",=", ",+", ",@"})
    EXPECT_EQ(csv.find(start), std::string::npos) << start << "\n" << csv;
  const report::CsvTable back = report::parse_csv(csv, "compare.csv");
  ASSERT_EQ(back.rows.size(), labels.size());
  for (size_t r = 0; r < back.rows.size(); ++r) {
    const std::string& label = back.rows[r][size_t(back.col("label"))];
    EXPECT_NE(std::find(labels.begin(), labels.end(), label), labels.end()) << label;
    // The numbers are written as numbers: unquoted, with their sign.
    const double final_mse = back.number(r, "final mse");
    EXPECT_LE(final_mse, -0.5);
    EXPECT_NE(csv.find(fmt::format(",{},", report::CsvWriter::cell(final_mse))), std::string::npos)
        << csv;
    EXPECT_EQ(back.number(r, "best mse"), -1e-05);
  }
}

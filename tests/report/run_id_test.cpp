#include "report/run_id.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <vector>
#include <filesystem>
#include <fstream>

#include "core/check.hpp"

#include "test_util.hpp"

using namespace seqbench;

using testutil::TempDir;
using testutil::message_of;

TEST(RunId, FormatAndUniqueSuffix) {
  TempDir dir;
  const std::string results = dir.path + "/copy";  // created on demand
  std::tm when{};
  when.tm_year = 2024 - 1900;
  when.tm_mon = 0;
  when.tm_mday = 2;
  when.tm_hour = 3;
  when.tm_min = 4;
  when.tm_sec = 5;
  EXPECT_EQ(report::make_run_id(results, "lstm", 7, when), "lstm-20240102-030405-s7");
  EXPECT_EQ(report::make_run_id(results, "lstm", 7, when), "lstm-20240102-030405-s7-2");
  EXPECT_EQ(report::make_run_id(results, "lstm", 7, when), "lstm-20240102-030405-s7-3");
  EXPECT_EQ(report::make_run_id(results, "lstm", 8, when), "lstm-20240102-030405-s8");
  EXPECT_TRUE(std::filesystem::is_directory(results + "/lstm-20240102-030405-s7-2"));
}

TEST(RunId, NowIdsAreDistinctDirectories) {
  TempDir dir;
  std::string a = report::make_run_id(dir.path, "gru", 1);
  std::string b = report::make_run_id(dir.path, "gru", 1);
  EXPECT_NE(a, b);
  EXPECT_EQ(a.rfind("gru-", 0), 0u) << a;
  EXPECT_NE(a.find("-s1"), std::string::npos) << a;
  EXPECT_TRUE(std::filesystem::is_directory(dir.path + "/" + a));
  EXPECT_TRUE(std::filesystem::is_directory(dir.path + "/" + b));
  EXPECT_THROW(report::make_run_id(dir.path, "a/b", 1), core::UsageError);
}

TEST(RunId, IdsThatWouldLeaveTheResultsRootAreRefused) {
  for (const std::string& bad : std::vector<std::string>{"", ".", "..", "../x", "a/b", ".hidden",
                                                       "x\ny", "T=100", "a b", "a:b", "x\\y",
                                                       std::string(129, 'a')}) {
    const std::string msg = message_of([&] { report::check_run_id(bad, "--run-id"); });
    EXPECT_NE(msg.find("--run-id: '" + core::one_line(bad) + "' cannot name a run directory"),
              std::string::npos)
        << msg;
  }
  EXPECT_THROW(report::check_run_id("..", "x"), core::UsageError);
  for (const std::string& good :
       std::vector<std::string>{"lstm-s1", "nan", "a.b", "lr1e+05", "x_y", std::string(128, 'a')})
    EXPECT_NO_THROW(report::check_run_id(good, "--run-id")) << good;
}

TEST(RunId, PrefixOfAMadeIdAndNothingOfOthers) {
  EXPECT_EQ(report::run_id_prefix("lstm-20240102-030405-s7"), "lstm");
  EXPECT_EQ(report::run_id_prefix("rel-lstm-20240102-030405-s7-2"), "rel-lstm");
  EXPECT_EQ(report::run_id_prefix("local2-routing2-20240102-030405-s12"), "local2-routing2");
  for (const char* other : {"lstm_small-T5-s1", "done-one", "lstm-20240102-030405-s", "lstm-20240102-030405-s7-x",
                            "-20240102-030405-s7", "lstm-2024012-030405-s7"})
    EXPECT_EQ(report::run_id_prefix(other), "") << other;
}

TEST(RunId, NewestRunIsTheLatestTimeOfItsPrefixWithAConfig) {
  TempDir dir;
  for (const char* id : {"lstm-20240102-030405-s1", "lstm-20240301-000000-s1", "lstm-20240301-000000-s1-2",
                         "rnn-20250101-000000-s1", "lstm-20260101-000000-s1", "lstm_small-T5-s1"}) {
    std::filesystem::create_directories(dir / id);
    // The 2026 one has no config.yaml: not a run (a directory claimed, nothing written).
    if (std::string(id) != "lstm-20260101-000000-s1") std::ofstream(dir / id + "/config.yaml") << "x: 1\n";
  }
  EXPECT_EQ(report::newest_run_id(dir.path, "lstm"), "lstm-20240301-000000-s1-2");
  EXPECT_EQ(report::newest_run_id(dir.path, "rnn"), "rnn-20250101-000000-s1");
  EXPECT_EQ(report::newest_run_id(dir.path, ""), "rnn-20250101-000000-s1");
  EXPECT_EQ(report::newest_run_id(dir.path, "gru"), "");
  EXPECT_EQ(report::newest_run_id(dir / "nosuch", ""), "");
}

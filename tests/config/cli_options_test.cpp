#include <gtest/gtest.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "config/cli.hpp"
#include "core/check.hpp"

namespace seqbench::config {
namespace {

struct TinyConfig {
  double lr = 0.1;
  int64_t steps = 10;
  std::string name = "default";
  template <class V>
  void visit(V& v) {
    v("lr", lr, "learning rate", positive());
    v("steps", steps, "training steps", positive());
    v("name", name, "run name");
  }
};

// Parses args (program name first) into a fresh app with the common options.
bool parse(std::vector<std::string> args, CommonOptions& opts) {
  CLI::App app("test app", "seqbench_test");
  add_common_options(app, opts);
  std::vector<char*> argv;
  for (std::string& arg : args) argv.push_back(arg.data());
  return parse_cli(app, static_cast<int>(argv.size()), argv.data());
}

// The one-line UsageError message that parsing args must produce.
std::string parse_error(const std::vector<std::string>& args) {
  CommonOptions opts;
  ::testing::internal::CaptureStderr();
  std::string msg;
  try {
    parse(args, opts);
    ADD_FAILURE() << "expected a core::UsageError";
  } catch (const core::UsageError& e) {
    msg = e.what();
    EXPECT_EQ(e.exit_code(), core::kExitUsage);
  }
  const std::string printed = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
  EXPECT_EQ(printed, "");  // the caller prints it, once
  return msg;
}

TEST(CommonOptions, ParsesEveryOption) {
  CommonOptions opts;
  ASSERT_TRUE(parse({"seqbench_test",
                     "--config",
                     "b.yaml",
                     "--set",
                     "a.b=1",
                     "--config",
                     "a.yaml",
                     "--set",
                     "c=[1, 2]",
                     "--seed",
                     "18446744073709551615",
                     "--threads",
                     "3",
                     "--force-threads",
                     "--max-memory",
                     "1.5G",
                     "--out",
                     "res",
                     "--resume",
                     "--run-id",
                     "r7",
                     "-q",
                     "--dump-config",
                     "--demo"},
                    opts));
  EXPECT_EQ(opts.configs, (std::vector<std::string>{"b.yaml", "a.yaml"}));  // order kept
  EXPECT_EQ(opts.sets, (std::vector<std::string>{"a.b=1", "c=[1, 2]"}));
  EXPECT_EQ(opts.seed, std::optional<uint64_t>(18446744073709551615ull));
  EXPECT_EQ(opts.threads, std::optional<int>(3));
  EXPECT_TRUE(opts.force_threads);
  EXPECT_EQ(opts.max_memory, std::optional<uint64_t>(uint64_t(3) << 29));
  EXPECT_EQ(opts.out, "res");
  EXPECT_TRUE(opts.resume);
  EXPECT_EQ(opts.run_id, "r7");
  EXPECT_TRUE(opts.quiet);
  EXPECT_TRUE(opts.dump_config);
  EXPECT_TRUE(opts.demo);
}

TEST(CommonOptions, AbsentOptionsKeepDefaults) {
  CommonOptions opts;
  ASSERT_TRUE(parse({"seqbench_test"}, opts));
  EXPECT_TRUE(opts.configs.empty());
  EXPECT_TRUE(opts.sets.empty());
  EXPECT_FALSE(opts.seed.has_value());
  EXPECT_FALSE(opts.threads.has_value());
  EXPECT_FALSE(opts.force_threads);
  EXPECT_FALSE(opts.max_memory.has_value());
  EXPECT_EQ(opts.out, "");
  EXPECT_FALSE(opts.resume || opts.quiet || opts.dump_config || opts.demo);
}

TEST(CommonOptions, HelpReturnsFalse) {
  CommonOptions opts;
  ::testing::internal::CaptureStdout();
  const bool go_on = parse({"seqbench_test", "--help"}, opts);
  const std::string help = ::testing::internal::GetCapturedStdout();
  EXPECT_FALSE(go_on);
  EXPECT_NE(help.find("--config FILE"), std::string::npos) << help;
  EXPECT_NE(help.find("--set KEY=VALUE"), std::string::npos) << help;
}

TEST(CommonOptions, ParseErrorsAreOneLineUsageErrors) {
  std::string msg = parse_error({"seqbench_test", "--sed", "1"});
  EXPECT_NE(msg.find("--sed"), std::string::npos) << msg;
  EXPECT_NE(msg.find("(hint: run seqbench_test --help)"), std::string::npos) << msg;
  EXPECT_EQ(parse_error({"seqbench_test", "--threads", "0"}),
            "--threads: expected an integer in [1, 4096], got '0' (hint: run "
            "seqbench_test --help)");
  msg = parse_error({"seqbench_test", "--seed", "abc"});
  EXPECT_NE(msg.find("--seed: expected an integer in [0, 18446744073709551615], got 'abc'"),
            std::string::npos)
      << msg;
  // Neither a negative seed nor one past 2^64 - 1 may wrap around silently.
  msg = parse_error({"seqbench_test", "--seed", "-1"});
  EXPECT_NE(msg.find("got '-1'"), std::string::npos) << msg;
  msg = parse_error({"seqbench_test", "--seed", "18446744073709551616"});
  EXPECT_NE(msg.find("got '18446744073709551616'"), std::string::npos) << msg;
  // One file per --config, so a stray word is an error rather than a second config.
  msg = parse_error({"seqbench_test", "--config", "a.yaml", "b.yaml"});
  EXPECT_NE(msg.find("b.yaml"), std::string::npos) << msg;
}

class ResolveTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::path(::testing::TempDir()) /
           ((std::string("seqbench_resolve_") + std::to_string(::getpid()) + "_") +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string write(const std::string& name, const std::string& text) {
    const std::string path = (dir_ / name).string();
    std::ofstream(path) << text;
    return path;
  }
  std::filesystem::path dir_;
};

TEST_F(ResolveTest, FilesInOrderThenSets) {
  CommonOptions opts;
  opts.configs = {write("1.yaml", "lr: 0.5\nsteps: 20\nname: one\n"),
                  write("2.yaml", "lr: 0.25\n")};
  opts.sets = {"name=cli", "steps=30", "steps=40"};
  TinyConfig cfg;
  resolve(cfg, opts);
  EXPECT_DOUBLE_EQ(cfg.lr, 0.25);  // file 2 over file 1
  EXPECT_EQ(cfg.steps, 40);        // --set over files, the last --set wins
  EXPECT_EQ(cfg.name, "cli");
}

TEST_F(ResolveTest, DemoConfigComesFirstAndOnlyWithDemo) {
  const std::string demo = "lr: 0.75\nsteps: 5\n";
  CommonOptions opts;
  opts.configs = {write("1.yaml", "steps: 6\n")};
  TinyConfig without_demo;
  resolve(without_demo, opts, demo);
  EXPECT_DOUBLE_EQ(without_demo.lr, 0.1);
  EXPECT_EQ(without_demo.steps, 6);

  opts.demo = true;
  TinyConfig with_demo;
  resolve(with_demo, opts, demo);
  EXPECT_DOUBLE_EQ(with_demo.lr, 0.75);  // from the demo config
  EXPECT_EQ(with_demo.steps, 6);         // the file wins over the demo config
}

TEST_F(ResolveTest, ErrorsNameTheirSource) {
  CommonOptions opts;
  opts.configs = {write("ok.yaml", "lr: 0.5\n"), write("bad.yaml", "\nsteps: -3\n")};
  TinyConfig cfg;
  try {
    resolve(cfg, opts);
    FAIL() << "expected a core::UsageError";
  } catch (const core::UsageError& e) {
    EXPECT_EQ(std::string(e.what()),
              (dir_ / "bad.yaml").string() + ":2: steps: must be > 0, got -3");
  }
  opts.configs.clear();
  opts.sets = {"stepz=3"};
  try {
    resolve(cfg, opts);
    FAIL() << "expected a core::UsageError";
  } catch (const core::UsageError& e) {
    EXPECT_EQ(std::string(e.what()), "--set stepz=3: unknown key 'stepz' (did you mean 'steps'?)");
  }
}

}  // namespace
}  // namespace seqbench::config

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "config/field.hpp"
#include "config/yaml_config.hpp"
#include "core/check.hpp"

namespace seqbench::config {
namespace {

// Test-only structs: two levels of nesting and every supported field type.
struct ScheduleConfig {
  std::string kind = "none";
  int64_t step_size = 1000;
  double gamma = 0.1;
  std::optional<int64_t> max_updates;
  bool operator==(const ScheduleConfig&) const = default;
  template <class V>
  void visit(V& v) {
    v("kind", kind, "none | step | plateau", one_of({"none", "step", "plateau"}));
    v("step_size", step_size, "updates between decays", positive());
    v("gamma", gamma, "decay factor", range(0.0, 1.0));
    v("max_updates", max_updates, "stop decaying after this many updates", positive());
  }
};

struct OptimConfig {
  std::string name = "rmsprop";
  double lr = 1e-3;
  std::optional<double> target;
  std::vector<int> sizes{1, 2};
  ScheduleConfig schedule;
  bool operator==(const OptimConfig&) const = default;
  template <class V>
  void visit(V& v) {
    v("name", name, "optimizer", one_of({"sgd", "adam", "rmsprop"}));
    v("lr", lr, "learning rate", positive());
    v("target", target, "stop at this loss", non_negative());
    v("sizes", sizes, "group sizes", positive());
    v("schedule", schedule, "learning-rate schedule");
  }
};

struct ModelConfig {
  int hidden = 128;
  int offset = 0;
  uint64_t seed = 42;
  bool bidirectional = false;
  std::vector<int64_t> widths;
  std::vector<double> dropouts{0.1};
  std::vector<std::string> layers{"lstm"};
  bool operator==(const ModelConfig&) const = default;
  template <class V>
  void visit(V& v) {
    v("hidden", hidden, "hidden units", at_least(1));
    v("offset", offset, "index offset");
    v("seed", seed, "init seed");
    v("bidirectional", bidirectional, "run both directions");
    v("widths", widths, "layer widths", positive());
    v("dropouts", dropouts, "dropout per layer", range(0.0, 1.0));
    v("layers", layers, "layer kinds");
  }
};

struct TestConfig {
  std::string name = "run";
  bool quiet = false;
  ModelConfig model;
  OptimConfig optim;
  bool operator==(const TestConfig&) const = default;
  template <class V>
  void visit(V& v) {
    v("name", name, "run name");
    v("quiet", quiet, "less output");
    v("model", model, "model");
    v("optim", optim, "optimizer");
  }
};

// Runs fn and returns the message of the core::UsageError it must throw, after checking the
// exit code and that the message is one line.
template <class F>
std::string usage_error(F&& fn) {
  try {
    fn();
  } catch (const core::UsageError& e) {
    const std::string msg = e.what();
    EXPECT_EQ(e.exit_code(), core::kExitUsage) << msg;
    EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
    return msg;
  }
  ADD_FAILURE() << "expected a core::UsageError";
  return "";
}

class ConfigTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = std::filesystem::path(::testing::TempDir()) /
           ((std::string("seqbench_config_") + std::to_string(::getpid()) + "_") + info->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    path_ = (dir_ / "x.yaml").string();
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::string write(const std::string& name, const std::string& text) {
    const std::string path = (dir_ / name).string();
    std::ofstream(path) << text;
    return path;
  }

  // Writes `text` to path_, applies it and returns the UsageError message it must produce.
  std::string file_error(const std::string& text) {
    write("x.yaml", text);
    TestConfig cfg;
    return usage_error([&] { apply_yaml_file(cfg, path_); });
  }

  std::filesystem::path dir_;
  std::string path_;  // the file file_error() writes
};

TEST_F(ConfigTest, EmptyAndCommentOnlyFilesKeepDefaults) {
  TestConfig cfg;
  apply_yaml_file(cfg, write("empty.yaml", ""));
  EXPECT_EQ(cfg, TestConfig{});
  apply_yaml_file(cfg, write("comments.yaml", "# nothing here\n\n# still nothing\n"));
  EXPECT_EQ(cfg, TestConfig{});
  apply_yaml_text(cfg, "optim:\n  schedule:\n  # every key commented out\n", "inline");
  EXPECT_EQ(cfg, TestConfig{});
}

TEST_F(ConfigTest, FileOverridesOnlyItsKeys) {
  TestConfig cfg;
  apply_yaml_file(cfg, write("a.yaml", "optim:\n  lr: 0.05\n  schedule:\n    kind: step\n"));
  TestConfig expected;
  expected.optim.lr = 0.05;
  expected.optim.schedule.kind = "step";
  EXPECT_EQ(cfg, expected);
}

TEST_F(ConfigTest, EveryFieldTypeDecodes) {
  TestConfig cfg;
  cfg.optim.target = 1.0;  // null in the file must clear it
  apply_yaml_file(cfg, write("all.yaml", R"(name: "true"
quiet: true
model:
  hidden: 7
  offset: -2147483648
  seed: 18446744073709551615
  bidirectional: false
  widths:
    - 3
    - 9223372036854775807
  dropouts: [0, 0.5, 1]
  layers: [lstm, 'gru', "a: b"]
optim:
  name: adam
  lr: 1e-4
  target: null
  sizes: []
  schedule:
    kind: plateau
    step_size: +5
    gamma: .25
    max_updates: 10
)"));
  EXPECT_EQ(cfg.name, "true");
  EXPECT_TRUE(cfg.quiet);
  EXPECT_EQ(cfg.model.hidden, 7);
  EXPECT_EQ(cfg.model.offset, std::numeric_limits<int>::min());
  EXPECT_EQ(cfg.model.seed, std::numeric_limits<uint64_t>::max());
  EXPECT_FALSE(cfg.model.bidirectional);
  EXPECT_EQ(cfg.model.widths, (std::vector<int64_t>{3, std::numeric_limits<int64_t>::max()}));
  EXPECT_EQ(cfg.model.dropouts, (std::vector<double>{0.0, 0.5, 1.0}));
  EXPECT_EQ(cfg.model.layers, (std::vector<std::string>{"lstm", "gru", "a: b"}));
  EXPECT_EQ(cfg.optim.name, "adam");
  EXPECT_DOUBLE_EQ(cfg.optim.lr, 1e-4);
  EXPECT_FALSE(cfg.optim.target.has_value());
  EXPECT_TRUE(cfg.optim.sizes.empty());
  EXPECT_EQ(cfg.optim.schedule.kind, "plateau");
  EXPECT_EQ(cfg.optim.schedule.step_size, 5);
  EXPECT_DOUBLE_EQ(cfg.optim.schedule.gamma, 0.25);
  EXPECT_EQ(cfg.optim.schedule.max_updates, std::optional<int64_t>(10));

  // An absent optional stays empty; a present one is set; the emptied optional can be set again.
  apply_yaml_text(cfg, "optim: {target: 0.5}", "inline");
  EXPECT_EQ(cfg.optim.target, std::optional<double>(0.5));
  EXPECT_FALSE(TestConfig{}.optim.schedule.max_updates.has_value());
}

TEST_F(ConfigTest, LaterFileWins) {
  TestConfig cfg;
  apply_yaml_file(cfg, write("1.yaml", "model:\n  hidden: 64\noptim:\n  lr: 0.1\n"));
  apply_yaml_file(cfg, write("2.yaml", "optim:\n  lr: 0.2\n  sizes: [5]\n"));
  TestConfig expected;
  expected.model.hidden = 64;  // only in file 1: kept
  expected.optim.lr = 0.2;     // in both: file 2 wins
  expected.optim.sizes = {5};
  EXPECT_EQ(cfg, expected);
}

TEST_F(ConfigTest, SetWinsOverFiles) {
  TestConfig cfg;
  cfg.optim.target = 3.0;
  apply_yaml_file(cfg, write("1.yaml", "optim:\n  lr: 0.1\n  name: sgd\n"));
  apply_override(cfg, "optim.lr=0.5");
  apply_override(cfg, "model.widths=[4, 8]");
  apply_override(cfg, "optim.schedule.kind=step");
  apply_override(cfg, "optim.target=null");
  apply_override(cfg, "optim.schedule={gamma: 0.5}");
  apply_override(cfg, "name=a=b");  // only the first '=' separates key and value
  TestConfig expected;
  expected.optim.lr = 0.5;
  expected.optim.name = "sgd";
  expected.model.widths = {4, 8};
  expected.optim.schedule.kind = "step";
  expected.optim.schedule.gamma = 0.5;
  expected.name = "a=b";
  EXPECT_EQ(cfg, expected);
}

TEST_F(ConfigTest, ToYamlRoundTrips) {
  TestConfig cfg;
  cfg.name = "";
  cfg.quiet = true;
  cfg.model.hidden = 3;
  cfg.model.offset = std::numeric_limits<int>::min();
  cfg.model.seed = std::numeric_limits<uint64_t>::max();
  cfg.model.widths = {1, std::numeric_limits<int64_t>::max()};
  cfg.model.dropouts = {0.0, 1.0, 1.0 / 3.0, 1e-300};
  cfg.model.layers = {"true", "null", "123", "1e5", "a: b", "x, y", " padded ", "#hash", "~", ""};
  cfg.optim.lr = 3e20;
  cfg.optim.target = 0.1 + 0.2;  // needs all 17 digits to come back exactly
  cfg.optim.sizes = {};
  cfg.optim.schedule.max_updates = 12;
  cfg.optim.schedule.gamma = 1.0;

  const std::string yaml = to_yaml(cfg);
  TestConfig back;
  apply_yaml_text(back, yaml, "dumped");
  EXPECT_EQ(back, cfg) << yaml;

  // With docs as comments it still reads back, and every key is in it.
  const std::string documented = to_yaml(cfg, /*with_docs=*/true);
  EXPECT_NE(documented.find("# learning rate"), std::string::npos) << documented;
  EXPECT_NE(documented.find("schedule:  # learning-rate schedule"), std::string::npos)
      << documented;
  TestConfig back_documented;
  apply_yaml_text(back_documented, documented, "dumped with docs");
  EXPECT_EQ(back_documented, cfg) << documented;

  // Defaults (with an empty optional and a default-empty list) round-trip too.
  TestConfig defaults_back;
  defaults_back.optim.target = 9.0;
  apply_yaml_text(defaults_back, to_yaml(TestConfig{}), "defaults");
  EXPECT_EQ(defaults_back, TestConfig{});
}

TEST_F(ConfigTest, ToYamlIsBlockStyleWithEveryKey) {
  const std::string yaml = to_yaml(TestConfig{});
  EXPECT_EQ(yaml.rfind("name: run\n", 0), 0u) << yaml;
  EXPECT_NE(yaml.find("\noptim:\n  name: rmsprop\n  lr: 0.001\n  target: null\n  sizes: [1, 2]\n"
                      "  schedule:\n    kind: none\n"),
            std::string::npos)
      << yaml;
  EXPECT_NE(yaml.find("  gamma: 0.1\n"), std::string::npos) << yaml;
  EXPECT_NE(yaml.find("  dropouts: [0.1]\n"), std::string::npos) << yaml;
  EXPECT_NE(yaml.find("  widths: []\n"), std::string::npos) << yaml;
  for (const std::string& key : keys(TestConfig{})) {
    const std::string leaf = key.substr(key.rfind('.') + 1);
    EXPECT_NE(yaml.find(leaf + ":"), std::string::npos) << key;
  }
}

TEST_F(ConfigTest, KeysListsEveryLeafInOrder) {
  const std::vector<std::string> expected = {"name",
                                             "quiet",
                                             "model.hidden",
                                             "model.offset",
                                             "model.seed",
                                             "model.bidirectional",
                                             "model.widths",
                                             "model.dropouts",
                                             "model.layers",
                                             "optim.name",
                                             "optim.lr",
                                             "optim.target",
                                             "optim.sizes",
                                             "optim.schedule.kind",
                                             "optim.schedule.step_size",
                                             "optim.schedule.gamma",
                                             "optim.schedule.max_updates"};
  EXPECT_EQ(keys(TestConfig{}), expected);
}

TEST_F(ConfigTest, UnknownKeySuggestsNearest) {
  std::string msg = file_error("model:\n  hidden: 4\noptim:\n  lrr: 1\n");
  EXPECT_EQ(msg, path_ + ":4: unknown key 'optim.lrr' (did you mean 'optim.lr'?)");
  msg = file_error("optim:\n  schedule:\n    kind: step\n    gama: 0.5\n");
  EXPECT_EQ(msg,
            path_ + ":4: unknown key 'optim.schedule.gama' (did you mean 'optim.schedule.gamma'?)");
  msg = file_error("# top\nmodle:\n  hidden: 4\n");
  EXPECT_EQ(msg, path_ + ":2: unknown key 'modle' (did you mean 'model'?)");
}

TEST_F(ConfigTest, UnknownKeyWithoutCloseMatch) {
  // Right name at the wrong level.
  std::string msg = file_error("lr: 0.1\n");
  EXPECT_EQ(msg, path_ + ":1: unknown key 'lr' (did you mean 'optim.lr'?)");
  // Nothing close: list what is valid instead of guessing.
  msg = file_error("optim:\n  momentum: 0.9\n");
  EXPECT_EQ(msg, path_ +
                     ":2: unknown key 'optim.momentum' (valid keys here: name, lr, target, "
                     "sizes, schedule)");
  // A dotted key in a file.
  msg = file_error("optim.lr: 0.1\n");
  EXPECT_NE(msg.find(":1: unknown key 'optim.lr' (hint: write nested mappings"), std::string::npos)
      << msg;
}

TEST_F(ConfigTest, WrongTypeNamesFileLineAndKey) {
  EXPECT_EQ(file_error("name: x\noptim:\n  lr: fast\n"),
            path_ + ":3: optim.lr: expected a number, got 'fast'");
  EXPECT_EQ(file_error("model:\n  hidden: 1.5\n"),
            path_ + ":2: model.hidden: expected an integer, got '1.5'");
  EXPECT_EQ(file_error("model:\n  hidden: 1e3\n"),
            path_ + ":2: model.hidden: expected an integer, got '1e3'");
  EXPECT_EQ(file_error("quiet: yes\n"),
            path_ + ":1: quiet: expected a boolean (true or false), got 'yes'");
  EXPECT_EQ(file_error("quiet: 1\n"),
            path_ + ":1: quiet: expected a boolean (true or false), got '1'");
  EXPECT_EQ(file_error("optim:\n  sizes: 3\n"),
            path_ + ":2: optim.sizes: expected a list, got '3'");
  EXPECT_EQ(file_error("optim:\n  schedule: 5\n"),
            path_ + ":2: optim.schedule: expected a mapping, got '5'");
  EXPECT_EQ(file_error("optim:\n  lr: [1]\n"),
            path_ + ":2: optim.lr: expected a number, got a list");
  EXPECT_EQ(file_error("name: {a: 1}\n"), path_ + ":1: name: expected a string, got a mapping");
  EXPECT_EQ(file_error("optim:\n  lr:\n  name: sgd\n"),
            path_ + ":2: optim.lr: expected a number, got null");
  EXPECT_EQ(file_error("optim:\n  name:\n"),
            path_ +
                ":2: optim.name: expected a string, got null (hint: write '' for an empty "
                "string)");
  EXPECT_EQ(file_error("optim:\n  lr: .nan\n"),
            path_ + ":2: optim.lr: expected a number, got '.nan'");
  // A bad list element is named by index and blamed on its own line.
  EXPECT_EQ(file_error("model:\n  widths:\n    - 1\n    - two\n"),
            path_ + ":4: model.widths[1]: expected an integer, got 'two'");
  EXPECT_EQ(file_error("- 1\n- 2\n"),
            path_ + ":1: top level: expected a mapping of keys (key: value lines), got a list");
}

TEST_F(ConfigTest, IntegersOutOfTheirTypeRange) {
  EXPECT_EQ(file_error("model:\n  hidden: 2147483648\n"),
            path_ +
                ":2: model.hidden: expected an integer in [-2147483648, 2147483647], got "
                "'2147483648'");
  EXPECT_EQ(file_error("model:\n  seed: -1\n"),
            path_ + ":2: model.seed: expected an integer in [0, 18446744073709551615], got '-1'");
  EXPECT_EQ(file_error("model:\n  widths: [99999999999999999999]\n"),
            path_ +
                ":2: model.widths[0]: expected an integer in [-9223372036854775808, "
                "9223372036854775807], got '99999999999999999999'");
  EXPECT_EQ(file_error("optim:\n  lr: 1e999\n"),
            path_ + ":2: optim.lr: expected a number within double range, got '1e999'");
}

TEST_F(ConfigTest, ConstraintViolations) {
  EXPECT_EQ(file_error("optim:\n  name: sgd\n  lr: -1\n"),
            path_ + ":3: optim.lr: must be > 0, got -1");
  EXPECT_EQ(file_error("optim:\n  name: adamw\n"),
            path_ +
                ":2: optim.name: must be one of sgd, adam, rmsprop, got 'adamw' (did you "
                "mean 'adam'?)");
  EXPECT_EQ(file_error("optim:\n  schedule:\n    gamma: 1.5\n"),
            path_ + ":3: optim.schedule.gamma: must be in [0, 1], got 1.5");
  EXPECT_EQ(file_error("optim:\n  target: -0.5\n"),
            path_ + ":2: optim.target: must be >= 0, got -0.5");
  EXPECT_EQ(file_error("model:\n  hidden: 0\n"), path_ + ":2: model.hidden: must be >= 1, got 0");
  EXPECT_EQ(file_error("optim:\n  schedule:\n    max_updates: 0\n"),
            path_ + ":3: optim.schedule.max_updates: must be > 0, got 0");
  EXPECT_EQ(file_error("optim:\n  sizes: [1,\n    0]\n"),
            path_ + ":3: optim.sizes[1]: must be > 0, got 0");
  EXPECT_EQ(file_error("model:\n  dropouts: [0.5, -.inf]\n"),
            path_ + ":2: model.dropouts[1]: must be in [0, 1], got -.inf");
}

TEST_F(ConfigTest, StringsWithControlCharactersAreRefusedButCrlfFilesRead) {
  // Found by fuzz/config_fuzz: "a\r\r\r" did not survive to_yaml and back.
  const std::string msg = file_error("name: a\r\r\r\n");
  EXPECT_EQ(msg, path_ + ":1: name: the value holds a control character (\\x0d); a config "
                         "string is one line of printable text");
  EXPECT_NE(file_error("name: \"a\\tb\"\n").find("(\\x09)"), std::string::npos);
  TestConfig cfg;
  apply_yaml_file(cfg, write("crlf.yaml", "name: crlf\r\noptim:\r\n  name: adam\r\n"));
  EXPECT_EQ(cfg.name, "crlf");
  EXPECT_EQ(cfg.optim.name, "adam");
}

TEST_F(ConfigTest, MalformedYamlGivesLineAndColumn) {
  const std::string msg = file_error("optim:\n  lr: 0.1\nmodel:\n  a: b: c\n");
  EXPECT_EQ(msg.rfind(path_ + ":4:7: malformed YAML: ", 0), 0u) << msg;
  EXPECT_GT(msg.size(), (path_ + ":4:7: malformed YAML: ").size())
      << "yaml-cpp's reason is missing";
}

TEST_F(ConfigTest, DuplicateKeysAndSeveralDocumentsAreErrors) {
  EXPECT_EQ(file_error("optim:\n  lr: 0.1\n  lr: 0.2\n"),
            path_ + ":3: duplicate key 'optim.lr' (it appears twice in the same mapping)");
  const std::string msg = file_error("name: a\n---\nname: b\n");
  EXPECT_NE(msg.find(path_ + ":2: found a second YAML document"), std::string::npos) << msg;
  // yaml-cpp 0.7's LoadAll never returns on these (found by fuzz/config_fuzz.cpp).
  for (const char* text : {" ,", ",", "# c\n ,\n", "a: 1\n,\n"})
    EXPECT_NE(file_error(text).find("malformed YAML"), std::string::npos) << text;
}

TEST_F(ConfigTest, MissingFile) {
  TestConfig cfg;
  const std::string path = (dir_ / "nope.yaml").string();
  const std::string msg = usage_error([&] { apply_yaml_file(cfg, path); });
  EXPECT_EQ(msg.rfind("config file '" + path +
                          "' not found (hint: paths are relative to the current directory",
                      0),
            0u)
      << msg;
  const std::string dir_msg = usage_error([&] { apply_yaml_file(cfg, dir_.string()); });
  EXPECT_NE(dir_msg.find("is a directory"), std::string::npos) << dir_msg;
}

TEST_F(ConfigTest, SetErrors) {
  TestConfig cfg;
  EXPECT_EQ(usage_error([&] { apply_override(cfg, "optim.lrr=1"); }),
            "--set optim.lrr=1: unknown key 'optim.lrr' (did you mean 'optim.lr'?)");
  EXPECT_EQ(usage_error([&] { apply_override(cfg, "foo"); }), "--set foo: expected key.path=value");
  EXPECT_EQ(usage_error([&] { apply_override(cfg, "optim..lr=1"); }),
            "--set optim..lr=1: expected key.path=value");
  EXPECT_EQ(usage_error([&] { apply_override(cfg, "=1"); }), "--set =1: expected key.path=value");
  EXPECT_EQ(usage_error([&] { apply_override(cfg, "optim.lr=fast"); }),
            "--set optim.lr=fast: optim.lr: expected a number, got 'fast'");
  EXPECT_EQ(usage_error([&] { apply_override(cfg, "optim.lr=-1"); }),
            "--set optim.lr=-1: optim.lr: must be > 0, got -1");
  EXPECT_EQ(usage_error([&] { apply_override(cfg, "optim.lr.x=1"); }),
            "--set optim.lr.x=1: optim.lr: expected a number, got a mapping");
  const std::string msg = usage_error([&] { apply_override(cfg, "model.widths=[1,2"); });
  EXPECT_EQ(msg.rfind("--set model.widths=[1,2: malformed YAML: ", 0), 0u) << msg;
  EXPECT_EQ(cfg, TestConfig{});
}

// Issue 29, items 6 and 12: a second YAML document in a --set value is refused, not
// dropped; a key path of 100000 parts is refused after reading at most 17 of them
// (building it took time quadratic in its depth).
TEST_F(ConfigTest, SetRefusesASecondDocumentAndKeysDeeperThanAnyConfigKey) {
  TestConfig cfg;
  const std::string two = usage_error([&] { apply_override(cfg, "optim.lr=0.5\n---\n0.7"); });
  EXPECT_NE(two.find("the value holds a second YAML document (after '---'); a --set value is one"),
            std::string::npos)
      << two;
  std::string deep;
  for (int i = 0; i < 100000; ++i) deep += "a.";
  deep += "b=1";
  const std::string m = usage_error([&] { apply_override(cfg, deep); });
  EXPECT_NE(m.find(": the key has more than 16 parts; no config key is that deep"), std::string::npos)
      << m.substr(m.size() > 200 ? m.size() - 200 : 0);
  EXPECT_EQ(cfg, TestConfig{});
  apply_override(cfg, "optim.lr=0.5\n");  // one document with its line end is fine
  EXPECT_EQ(cfg.optim.lr, 0.5);
}

TEST_F(ConfigTest, FailedSourceLeavesConfigUnchanged) {
  TestConfig cfg;
  const std::string path = write("bad.yaml", "optim:\n  lr: 0.5\n  sizes: [1, -2]\n");
  usage_error([&] { apply_yaml_file(cfg, path); });
  EXPECT_EQ(cfg, TestConfig{});
}

// A constraint that cannot apply to the field's type is a bug in visit(), not a user mistake.
struct MisusedConstraint {
  int n = 1;
  template <class V>
  void visit(V& v) {
    v("n", n, "a count", one_of({"a", "b"}));
  }
};

TEST_F(ConfigTest, ConstraintOnWrongTypeIsInternalError) {
  MisusedConstraint cfg;
  try {
    apply_yaml_text(cfg, "n: 2\n", "inline");
    FAIL() << "expected core::Error";
  } catch (const core::UsageError& e) {
    FAIL() << "a struct bug must not look like a user mistake: " << e.what();
  } catch (const core::Error& e) {
    EXPECT_EQ(e.exit_code(), core::kExitError);
    EXPECT_NE(std::string(e.what()).find("config key 'n': constraint one_of()"), std::string::npos)
        << e.what();
  }
}

TEST(NearestKey, SuggestsOnlyCloseKeys) {
  const std::vector<std::string> names = {"name", "lr", "schedule", "step_size", "T"};
  EXPECT_EQ(detail::nearest_key("lrr", names), "lr");
  EXPECT_EQ(detail::nearest_key("LR", names), "lr");
  EXPECT_EQ(detail::nearest_key("stepsize", names), "step_size");
  EXPECT_EQ(detail::nearest_key("sched", names), "schedule");
  EXPECT_EQ(detail::nearest_key("nmae", names), "name");  // transposition
  EXPECT_EQ(detail::nearest_key("foo", names), "");
  EXPECT_EQ(detail::nearest_key("learning_rate", names), "");
}

}  // namespace
}  // namespace seqbench::config

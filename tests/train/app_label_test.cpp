// The run's label as the app runner derives it once (lib/train/app.hpp), for runs.csv,
// the app's hooks and the run id.
#include <gtest/gtest.h>

#include <algorithm>
#include <new>
#include <stdexcept>
#include <string>

#include "train/app.hpp"

using namespace seqbench;

namespace {

struct Output {
  std::string label;
};
struct Model {
  std::string cell;
};
struct WithCell {
  Output output;
  Model model;
};
struct WithoutCell {
  Output output;
  std::string attention;
};
struct Exp {};

}  // namespace

TEST(AppLabel, OutputLabelThenTheAppsDefaultThenModelCellThenTheName) {
  train::AppSpec<WithCell, Exp> spec;
  spec.name = "copy";
  WithCell c;
  c.model.cell = "lstm";
  EXPECT_EQ(train::app_label(c, spec), "lstm");
  c.output.label = "mine";
  EXPECT_EQ(train::app_label(c, spec), "mine");
  c.output.label.clear();
  spec.label = [](const WithCell& cfg) { return "env-" + cfg.model.cell; };
  EXPECT_EQ(train::app_label(c, spec), "env-lstm");
  spec.label = [](const WithCell&) { return std::string(); };
  c.model.cell.clear();
  EXPECT_EQ(train::app_label(c, spec), "copy");

  train::AppSpec<WithoutCell, Exp> lm;
  lm.name = "wikitext103";
  EXPECT_EQ(train::app_label(WithoutCell{}, lm), "wikitext103");
}

TEST(AppLabel, RunIdPrefixIsTheLabelUnlessTheAppSpellsItForRunIds) {
  train::AppSpec<WithoutCell, Exp> spec;
  spec.name = "wikitext103";
  spec.label = [](const WithoutCell& c) { return c.attention; };
  WithoutCell c;
  c.attention = "local:2,routing:2";
  const std::string label = train::app_label(c, spec);
  EXPECT_EQ(label, "local:2,routing:2");
  EXPECT_EQ(train::app_run_id_prefix(c, spec, label), label);
  spec.run_id_label = [](const WithoutCell&) { return std::string("local2-routing2"); };
  EXPECT_EQ(train::app_run_id_prefix(c, spec, label), "local2-routing2");
  // A label the user gave is the run id's prefix as it is.
  c.output.label = "mine";
  EXPECT_EQ(train::app_run_id_prefix(c, spec, train::app_label(c, spec)), "mine");
}

// A failed allocation is one line in our words, naming memory and what to do; any other
// error keeps its own text.
TEST(AppErrors, AFailedAllocationIsNamedAsOutOfMemoryInOneLine) {
  ::testing::internal::CaptureStderr();
  EXPECT_EQ(seqbench::train::report_error("copy", std::bad_alloc(), 1), 1);
  const std::string oom = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(oom.find("std::bad_alloc"), std::string::npos) << oom;
  EXPECT_EQ(oom.rfind("seqbench copy: error: out of memory: an allocation failed (hint: ", 0), 0u) << oom;
  EXPECT_EQ(std::count(oom.begin(), oom.end(), '\n'), 1) << oom;
  ::testing::internal::CaptureStderr();
  EXPECT_EQ(seqbench::train::report_error("copy", std::runtime_error("disk on fire"), 1), 1);
  EXPECT_EQ(::testing::internal::GetCapturedStderr(), "seqbench copy: error: disk on fire\n");
}

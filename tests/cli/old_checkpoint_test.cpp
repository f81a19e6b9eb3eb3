// Checkpoints written by an older build still resume: tests/fixtures/old_checkpoints
// holds one small finished run per kind of saved state (the trainer's and the copy
// task's RNG; a carried LSTM state; a Transformer's dropout RNG and routing centroids;
// PPO's environments and rollout), written once by the commit named in its README.md.
//
// Bit-exactness is shown without depending on the build that wrote the fixture (other
// compilers and -march settings round differently): resuming a fixture with nothing left
// to train makes this build read the state and write it straight back, and every value
// must come back bit for bit; a run resumed from the fixture then continues exactly as
// one resumed from this build's own copy of the same state.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "cli/cli_util.hpp"
#include "report/csv.hpp"
#include "train/checkpoint.hpp"

using namespace seqbench;
using clitest::run;
namespace fs = std::filesystem;

namespace {

const std::string kFront = SEQBENCH_FRONT_BIN;
const std::string kFixtures = std::string(SEQBENCH_SOURCE_DIR) + "/tests/fixtures/old_checkpoints";

struct OldRun {
  const char* app;
  const char* extend;  // --set that trains past the fixture's end
};

void PrintTo(const OldRun& o, std::ostream* os) { *os << o.app; }

class OldCheckpoint : public ::testing::TestWithParam<OldRun> {
 protected:
  // A copy of the fixture as run `id` under dir/results, its input files beside it.
  void place(const std::string& dir, const std::string& id) {
    const std::string src = kFixtures + "/" + GetParam().app;
    const std::string run_dir = dir + "/results/" + GetParam().app + "/" + id;
    fs::create_directories(run_dir);
    fs::copy_file(src + "/config.yaml", run_dir + "/config.yaml");
    fs::copy_file(src + "/checkpoint.sbck", run_dir + "/checkpoint.sbck");
    if (fs::exists(src + "/corpus") && !fs::exists(dir + "/corpus"))
      fs::copy(src + "/corpus", dir + "/corpus", fs::copy_options::recursive);
  }
  std::string resume(const std::string& id, const std::string& extra = "") {
    return kFront + " " + GetParam().app + " -q --out results --run-id " + id + " --resume " +
           extra;
  }
  std::string checkpoint(const std::string& dir, const std::string& id) {
    return dir + "/results/" + GetParam().app + "/" + id + "/checkpoint.sbck";
  }
};

TEST_P(OldCheckpoint, IsReadAndWrittenBackBitForBit) {
  const std::string dir = clitest::fresh_dir(std::string("oldck_rt_") + GetParam().app);
  place(dir, "old");
  // The fixture's run had finished: resuming it trains nothing and saves the state again.
  const auto r = run(resume("old"), dir);
  ASSERT_EQ(r.code, 0) << r.err;
  const auto before = train::load_checkpoint(kFixtures + "/" + GetParam().app + "/checkpoint.sbck");
  const auto after = train::load_checkpoint(checkpoint(dir, "old"));
  ASSERT_GT(before.arrays.size(), 0u);
  ASSERT_EQ(before.arrays.size(), after.arrays.size());
  for (size_t i = 0; i < before.arrays.size(); ++i) {
    EXPECT_EQ(before.arrays[i].name, after.arrays[i].name);
    EXPECT_EQ(before.arrays[i].shape, after.arrays[i].shape) << before.arrays[i].name;
    EXPECT_EQ(before.arrays[i].data, after.arrays[i].data) << before.arrays[i].name;
  }
  ASSERT_EQ(before.meta.size(), after.meta.size());
  for (const auto& [k, v] : before.meta) {
    if (k == "elapsed_s") continue;  // wall-clock time spent in training, grows on resume
    ASSERT_TRUE(after.has_meta(k)) << k;
    EXPECT_EQ(v, after.meta_at(k)) << k;
  }
}

TEST_P(OldCheckpoint, ContinuesExactlyLikeThisBuildsOwnCopyOfTheState) {
  const std::string dir = clitest::fresh_dir(std::string("oldck_go_") + GetParam().app);
  place(dir, "old");
  place(dir, "own");
  // "own": the fixture's state rewritten by this build, then trained on like "old".
  ASSERT_EQ(run(resume("own"), dir).code, 0);
  for (const char* id : {"old", "own"}) {
    const auto r = run(resume(id, GetParam().extend), dir);
    ASSERT_EQ(r.code, 0) << id << ": " << r.err;
  }
  const auto a = train::load_checkpoint(checkpoint(dir, "old"));
  const auto b = train::load_checkpoint(checkpoint(dir, "own"));
  const auto start = train::load_checkpoint(kFixtures + "/" + GetParam().app + "/checkpoint.sbck");
  EXPECT_GT(a.meta_int("step"), start.meta_int("step")) << "the resumed run trained on";
  ASSERT_EQ(a.arrays.size(), b.arrays.size());
  for (size_t i = 0; i < a.arrays.size(); ++i)
    EXPECT_EQ(a.arrays[i].data, b.arrays[i].data) << a.arrays[i].name;
  const auto ma = report::read_csv(dir + "/results/" + GetParam().app + "/old/metrics.csv");
  const auto mb = report::read_csv(dir + "/results/" + GetParam().app + "/own/metrics.csv");
  const int loss = ma.col("loss");
  ASSERT_GT(ma.rows.size(), 0u);
  ASSERT_EQ(ma.rows.size(), mb.rows.size());
  for (size_t i = 0; i < ma.rows.size(); ++i) EXPECT_EQ(ma.rows[i][loss], mb.rows[i][loss]) << i;
}

INSTANTIATE_TEST_SUITE_P(Fixtures, OldCheckpoint,
                         ::testing::Values(OldRun{"copy", "--set train.steps=20"},
                                           OldRun{"char_ptb", "--set train.steps=18"},
                                           OldRun{"wikitext103", "--set train.steps=9"},
                                           OldRun{"minigrid", "--set train.steps=21"}),
                         [](const auto& p) { return std::string(p.param.app); });

}  // namespace

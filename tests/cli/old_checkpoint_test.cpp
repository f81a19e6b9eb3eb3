// Checkpoints written by an older build still resume: tests/fixtures/old_checkpoints
// holds one small finished run per kind of saved state (the trainer's and the copy
// task's RNG; a carried LSTM state; a Transformer's dropout RNG and routing centroids;
// PPO's environments and rollout), written once by the commit named in its README.md.
//
// Bit-exactness is shown without depending on the build that wrote the fixture (other
// compilers and -march settings round differently): resuming a fixture with nothing left
// to train makes this build read the state and write it straight back, and every value
// must come back bit for bit (under the same keys, but for the legacy keys listed below);
// a run resumed from the fixture then continues exactly as one resumed from this build's
// own copy of the same state.
#include <gtest/gtest.h>

#include <filesystem>
#include <set>
#include <sstream>
#include <string>
#include <vector>

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

// The one encoding the state container changed: the copy task's data RNG, four meta keys
// data_rng0..3 (one word each) before, one key data_rng ("w0 w1 w2 w3") now, as every
// other RNG is written. A legacy key is checked through its successor: the old keys are
// gone and the new key's word `word` equals the old key's value. Every key not listed
// here must come back with exactly its old name and text.
struct LegacyKey {
  const char* old_key;
  const char* new_key;
  int word;  // which of the new key's space-separated words holds the old value
};
constexpr LegacyKey kLegacyKeys[] = {{"data_rng0", "data_rng", 0},
                                     {"data_rng1", "data_rng", 1},
                                     {"data_rng2", "data_rng", 2},
                                     {"data_rng3", "data_rng", 3}};

const LegacyKey* legacy(const std::string& key) {
  for (const auto& l : kLegacyKeys)
    if (key == l.old_key) return &l;
  return nullptr;
}

std::vector<std::string> words(const std::string& s) {
  std::vector<std::string> out;
  std::istringstream in(s);
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

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
  // Every old key is accounted for, exactly or through the legacy table...
  std::set<std::string> expected_new;
  for (const auto& [k, v] : before.meta) {
    if (k == "elapsed_s") {  // wall-clock time spent in training, grows on resume
      expected_new.insert(k);
      continue;
    }
    if (const LegacyKey* l = legacy(k)) {
      EXPECT_FALSE(after.has(k)) << k << " is written under its new name " << l->new_key;
      ASSERT_TRUE(after.has(l->new_key)) << l->new_key << " (for " << k << ")";
      const auto w = words(after.get_string(l->new_key));
      ASSERT_EQ(w.size(), 4u) << l->new_key << " = " << after.get_string(l->new_key);
      EXPECT_EQ(w[size_t(l->word)], v) << k << " -> " << l->new_key << " word " << l->word;
      expected_new.insert(l->new_key);
      continue;
    }
    ASSERT_TRUE(after.has(k)) << k;
    EXPECT_EQ(v, after.get_string(k)) << k;
    expected_new.insert(k);
  }
  // ...the resolved config, which checkpoints hold since the fixtures were written (a
  // resume compares it with config.yaml)...
  ASSERT_TRUE(after.has("config_yaml"));
  EXPECT_FALSE(before.has("config_yaml"));
  EXPECT_EQ(after.get_string("config_yaml"), clitest::slurp(dir + "/results/" + GetParam().app + "/old/config.yaml"));
  expected_new.insert("config_yaml");
  // ...and nothing else is written.
  std::set<std::string> written;
  for (const auto& [k, v] : after.meta) written.insert(k);
  EXPECT_EQ(written, expected_new);
  EXPECT_EQ(after.meta.size(), written.size());
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
  EXPECT_GT(a.get_int("step"), start.get_int("step")) << "the resumed run trained on";
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

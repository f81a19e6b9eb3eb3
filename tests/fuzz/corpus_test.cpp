// Every committed fuzz input, seeds (fuzz/corpus/<target>/) and past crashes
// (fuzz/regressions/<target>/), through the same target code libFuzzer runs
// (fuzz/targets.cpp): each input must be read or refused with a one-line seqbench error.
// This runs in every build, the sanitized one included, without clang or libFuzzer.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>

#include "core/check.hpp"
#include "fuzz/targets.hpp"

namespace fs = std::filesystem;

namespace {

struct Target {
  const char* name;
  std::function<void(std::string_view)> run;
};

const Target kTargets[] = {
    {"config", seqbench::fuzz::config},       {"idx", seqbench::fuzz::idx},
    {"npz", seqbench::fuzz::npz},             {"text_corpus", seqbench::fuzz::text_corpus},
    {"checkpoint", seqbench::fuzz::checkpoint}, {"runs_csv", seqbench::fuzz::runs_csv},
    {"sweep", seqbench::fuzz::sweep},         {"slurm_script", seqbench::fuzz::slurm_script},
    {"escapes", seqbench::fuzz::escapes},
};

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Runs every file of <root>/<kind>/<target>/; returns how many.
int run_dir(const Target& t, const std::string& kind) {
  const fs::path dir = fs::path(SEQBENCH_SOURCE_DIR) / "fuzz" / kind / t.name;
  if (!fs::exists(dir)) return 0;
  int n = 0;
  for (const auto& e : fs::directory_iterator(dir)) {
    if (!e.is_regular_file() || e.path().filename() == "README.md") continue;
    ++n;
    const std::string bytes = slurp(e.path());
    try {
      t.run(bytes);
    } catch (const std::exception& ex) {
      ADD_FAILURE() << t.name << " on " << e.path() << ": " << seqbench::core::one_line(ex.what());
    }
  }
  return n;
}

}  // namespace

TEST(FuzzCorpus, EverySeedAndPastCrashIsReadOrRefusedCleanly) {
  // The sweep target finds base configs such as configs/copy/lstm_small.yaml from the
  // current directory, as a user running `seqbench sweep` from the repository root would.
  const fs::path cwd = fs::current_path();
  fs::current_path(SEQBENCH_SOURCE_DIR);
  for (const Target& t : kTargets) {
    EXPECT_GT(run_dir(t, "corpus"), 0) << "fuzz/corpus/" << t.name << " has no seed";
    run_dir(t, "regressions");
  }
  fs::current_path(cwd);
}

TEST(FuzzCorpus, CleanRejectionsPassAndErrorsStayOnOneLine) {
  EXPECT_NO_THROW(seqbench::fuzz::npz("not an npy file"));
  EXPECT_NO_THROW(seqbench::fuzz::config(std::string(1, '\0') + "model: {hidden: 8}\n"));
  EXPECT_NO_THROW(seqbench::fuzz::config(std::string(1, '\0') + "model: {hiden: 8}\n"));
  // core::Error keeps a message on one line even when it quotes a file's bytes.
  EXPECT_EQ(std::string(seqbench::core::Error("a\nb\r\x1b").what()), "a\\nb\\r\\x1b");
}

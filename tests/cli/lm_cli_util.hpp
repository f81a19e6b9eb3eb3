// Helpers shared by the Transformer-LM CLI tests (wikitext103, imagenet64): a runs.csv
// cell, the bit-for-bit comparison of two runs' checkpoints, a config mistake's
// expected failure, and the check that every committed preset resolves.
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <initializer_list>
#include <ostream>
#include <string>

#include "cli/cli_util.hpp"
#include "report/csv.hpp"
#include "train/checkpoint.hpp"

namespace seqbench::clitest {

inline std::string cell(const report::CsvTable& t, const char* col, size_t row = 0) {
  return t.rows[row][size_t(t.col(col))];
}

// a and b hold the same arrays (names, order, values bit for bit) and the same values
// under the meta keys.
inline void expect_same_checkpoints(const train::Checkpoint& a, const train::Checkpoint& b,
                                    std::initializer_list<const char*> keys) {
  ASSERT_EQ(a.arrays.size(), b.arrays.size());
  for (size_t i = 0; i < a.arrays.size(); ++i) {
    EXPECT_EQ(a.arrays[i].name, b.arrays[i].name);
    EXPECT_EQ(a.arrays[i].data, b.arrays[i].data) << a.arrays[i].name << " differs";
  }
  for (const char* k : keys) EXPECT_EQ(a.get_string(k), b.get_string(k)) << k;
}

// A config mistake given by --set assignments: the run must fail naming must_contain.
struct BadSet {
  const char* name;
  const char* set;  // --set assignments after the test's config file
  const char* must_contain;
};

inline void PrintTo(const BadSet& b, std::ostream* os) { *os << b.name; }

// `cmd` run in dir exits 2 with one line on stderr holding must_contain and writes no
// results/.
inline void expect_config_error(const std::string& cmd, const std::string& dir,
                                const char* must_contain) {
  const auto r = run(cmd, dir);
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_EQ(count_lines(r.err), 1) << r.err;
  EXPECT_NE(r.err.find(must_contain), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(dir + "/results"))
      << "a failed config must not create results/";
}

// Every configs/<app>/*.yaml resolves (`<bin> --config F --dump-config` exits 0), and
// there are `expected` of them; run in dir.
inline void expect_presets_resolve(const std::string& bin, const std::string& app,
                                   const std::string& dir, int expected) {
  int n = 0;
  for (const auto& e :
       std::filesystem::directory_iterator(std::string(SEQBENCH_SOURCE_DIR) + "/configs/" + app)) {
    if (e.path().extension() != ".yaml") continue;
    ++n;
    const auto r = run(bin + " --config '" + e.path().string() + "' --dump-config", dir);
    EXPECT_EQ(r.code, 0) << e.path() << ": " << r.err;
  }
  EXPECT_EQ(n, expected) << "presets in configs/" << app;
}

}  // namespace seqbench::clitest

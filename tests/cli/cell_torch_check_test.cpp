// The recurrent cells against PyTorch on shared weights (the cells' numerical check, which
// `make bench` runs too; docs/bench.md): seqbench_bench_cell --dump writes one forward and
// backward of a cell on a small shape (its weights, x, w, y, dx and every parameter
// gradient), and tools/bench/torch_cells.py --check recomputes them in float64 PyTorch from
// the papers' equations and fails above 1e-4 relative. Every cell torch_cells.py has a
// reference for is checked (the listed ones at least: the LSTM, the momentum family that
// shares MomentumLstmCell's gate kernel, stable_lstm, rel_lstm; and lstm on oneDNN), and
// perturbed files show the check can fail. python3-torch for /usr/bin/python3 comes with
// `make deps-bench`, not `make deps`: where /usr/bin/python3 cannot import torch these
// tests report themselves as skipped, with the reason (never as passed).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "cli/cli_util.hpp"

using namespace seqbench;
using clitest::run;

namespace {

const std::string kBin = SEQBENCH_BENCH_CELL_BIN;
const std::string kCheck =
    "/usr/bin/python3 " + std::string(SEQBENCH_SOURCE_DIR) + "/tools/bench/torch_cells.py";
// run.sh's CELL_CHECK: with nu 2 and rho 2, rel_lstm's relevant set fills at t = 3, 4 and
// is offered a new member at t = 5, 6, 7; the weights times 4 make the attention peaked
// enough that some are taken (at 1 it is near uniform and the earliest states stay).
const std::string kSizes = " --batch 3 --T 8 --input 5 --hidden 6 --nu 2 --rho 2";
const std::string kScale = " --dump-scale 4";

bool have_torch() { return std::system("/usr/bin/python3 -c 'import torch' >/dev/null 2>&1") == 0; }

#define SKIP_WITHOUT_TORCH()                                                              \
  if (!have_torch())                                                                      \
  GTEST_SKIP() << "/usr/bin/python3 cannot import torch (python3-torch: make deps-bench " \
                  "installs it)"

// worst_rel=<x> of the check's line (NaN when absent).
double worst_rel(const std::string& out) {
  std::smatch m;
  if (!std::regex_search(out, m, std::regex("worst_rel=([-0-9.eE+naif]+)"))) return NAN;
  return std::stod(m[1].str());
}

// Adds delta to the first value of tensor `key` in a dump file.
void perturb(const std::string& path, const std::string& key, double delta) {
  std::ifstream in(path);
  std::vector<std::string> lines;
  bool found = false;
  for (std::string line; std::getline(in, line);) {
    std::istringstream ss(line);
    std::string k, n, v0, rest;
    ss >> k >> n >> v0;
    if (k == key) {
      std::getline(ss, rest);
      line = k + " " + n + " " + std::to_string(std::stod(v0) + delta) + rest;
      found = true;
    }
    lines.push_back(line);
  }
  ASSERT_TRUE(found) << key << " is not in " << path;
  std::ofstream out(path);
  for (const auto& l : lines) out << l << "\n";
}

clitest::Result dump(const std::string& cell, const std::string& dir,
                     const std::string& backend = "ours") {
  return run(kBin + " --cell " + cell + " --backend " + backend + kSizes + kScale + " --dump " +
                 cell + ".txt",
             dir);
}

clitest::Result check(const std::string& cell, const std::string& dir) {
  return run(kCheck + " --cell " + cell + kSizes + " --check " + cell + ".txt", dir);
}

}  // namespace

TEST(CellTorchCheck, EveryCellWithAReferenceMatchesPyTorchOnSharedWeights) {
  SKIP_WITHOUT_TORCH();
  const std::string dir = clitest::fresh_dir("x");
  auto r = run(kCheck + " --references", dir);
  ASSERT_EQ(r.code, 0) << r.err;
  std::vector<std::string> cells;
  std::istringstream ss(r.out);
  for (std::string c; ss >> c;)
    if (c != "nn.LSTM") cells.push_back(c);  // PyTorch's own LSTM, no cell of ours
  for (const char* c :
       {"lstm", "momentum_lstm", "adam_lstm", "rmsprop_lstm", "sr_lstm", "stable_lstm", "rel_lstm"})
    EXPECT_NE(std::find(cells.begin(), cells.end(), c), cells.end()) << c << " has no reference";
  for (const auto& c : cells) {
    SCOPED_TRACE(c);
    r = dump(c, dir);
    ASSERT_EQ(r.code, 0) << r.err;
    r = check(c, dir);
    EXPECT_EQ(r.code, 0) << r.out << r.err;
    EXPECT_NE(r.out.find("ok=yes"), std::string::npos) << r.out;
    const double worst = worst_rel(r.out);
    EXPECT_TRUE(std::isfinite(worst)) << r.out;
    EXPECT_LE(worst, 1e-4) << r.out;
    // rel_lstm: the relevant set's selection is exercised, not only its filling.
    if (c == "rel_lstm") {
      EXPECT_TRUE(std::regex_search(r.out, std::regex(" swaps=[1-9]"))) << r.out;
    }
  }
  // oneDNN's LSTM primitive (model.backend: onednn) against the same reference.
  r = dump("lstm", dir, "onednn");
  ASSERT_EQ(r.code, 0) << r.err;
  r = check("lstm", dir);
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_LE(worst_rel(r.out), 1e-4) << r.out;
}

// The check can fail: a weight changed after the dump (ours ran the old one) is caught,
// and so is rel_lstm's u_a, which only the attention reads (so the check exercises it).
TEST(CellTorchCheck, APerturbedWeightFailsTheCheck) {
  SKIP_WITHOUT_TORCH();
  const std::string dir = clitest::fresh_dir("x");
  for (const auto& [cell, key] : std::vector<std::pair<std::string, std::string>>{
           {"lstm", "w_h"}, {"momentum_lstm", "b_x"}, {"rel_lstm", "u_a"}}) {
    SCOPED_TRACE(cell);
    ASSERT_EQ(dump(cell, dir).code, 0);
    ASSERT_EQ(check(cell, dir).code, 0);
    perturb(dir + "/" + cell + ".txt", key, 0.05);
    const auto r = check(cell, dir);
    EXPECT_EQ(r.code, 1) << r.out << r.err;
    EXPECT_NE(r.out.find("ok=no"), std::string::npos) << r.out;
    EXPECT_GT(worst_rel(r.out), 1e-4) << r.out;
  }
}

// So can one gradient value of ours off (the first of dL/dw_h, by 1: far above 1e-4 of
// any gradient on this shape), and the check names the tensor.
TEST(CellTorchCheck, APerturbedGradientFailsTheCheck) {
  SKIP_WITHOUT_TORCH();
  const std::string dir = clitest::fresh_dir("x");
  ASSERT_EQ(dump("adam_lstm", dir).code, 0);
  const std::string path = dir + "/adam_lstm.txt";
  perturb(path, "grad.w_h", 1.0);
  auto r = check("adam_lstm", dir);
  EXPECT_EQ(r.code, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("on=grad.w_h"), std::string::npos) << r.out;
}

// A dump of another cell or size is refused with a hint, not compared.
TEST(CellTorchCheck, ADumpOfAnotherCellIsRefused) {
  SKIP_WITHOUT_TORCH();
  const std::string dir = clitest::fresh_dir("x");
  ASSERT_EQ(dump("lstm", dir).code, 0);
  auto r = run(kCheck + " --cell momentum_lstm" + kSizes + " --check lstm.txt", dir);
  EXPECT_NE(r.code, 0);
  EXPECT_NE(r.err.find("hint: the same --cell"), std::string::npos) << r.err;
  r = run(kCheck + " --cell lstm --batch 3 --T 8 --input 5 --hidden 7 --check lstm.txt", dir);
  EXPECT_NE(r.code, 0);
  EXPECT_NE(r.err.find("hint: the same sizes"), std::string::npos) << r.err;
}

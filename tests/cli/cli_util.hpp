// Helpers for tests that run the real binaries.
#pragma once

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <functional>
#include <string>
#include <thread>

namespace seqbench::clitest {

struct Result {
  int code = -1;
  std::string out, err;
};

inline std::string slurp(const std::string& path) {
  std::ifstream f(path);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

// Runs `cmd` through the shell in `cwd`, capturing stdout, stderr and the exit code.
inline Result run(const std::string& cmd, const std::string& cwd) {
  const std::string out = cwd + "/.stdout", err = cwd + "/.stderr";
  const std::string full = "cd '" + cwd + "' && " + cmd + " >'" + out + "' 2>'" + err + "'";
  const int status = std::system(full.c_str());
  Result r;
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  r.out = slurp(out);
  r.err = slurp(err);
  std::filesystem::remove(out);
  std::filesystem::remove(err);
  return r;
}

// A fresh, empty directory for one test.
inline std::string fresh_dir(const std::string& name) {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  std::string dir = ::testing::TempDir() + "seqbench_cli_" + std::to_string(getpid()) + "_" +
                    info->test_suite_name() + "_" + info->name() + "_" + name;
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

// Waits until `ready()` holds, for an event another process causes (a file appearing, a
// row written). Nothing is timed and no test asserts on how long it took: the pause
// only keeps the loop from taking a core from the process it waits for. A wait that
// never ends is ended by ctest's per-test timeout. `gone()`, when given, reports that
// the awaited process has ended, which makes the wait fail at once.
inline bool wait_for(const std::function<bool()>& ready, const std::function<bool()>& gone = {}) {
  while (!ready()) {
    if (gone && gone()) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return true;
}

inline void write(const std::string& path, const std::string& text) {
  std::ofstream(path) << text;
}

inline int count_lines(const std::string& s) {
  int n = 0;
  for (char c : s) n += c == '\n';
  return n;
}

}  // namespace seqbench::clitest

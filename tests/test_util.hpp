// Small helpers shared by tests that touch the file system.
#pragma once

#include <stdlib.h>

#include <filesystem>
#include <string>

#include "core/check.hpp"

namespace seqbench::testutil {

// A fresh directory under /tmp, removed with everything in it at scope exit.
struct TempDir {
  std::string path;
  TempDir() {
    char tmpl[] = "/tmp/seqbench_test_XXXXXX";
    path = ::mkdtemp(tmpl);
  }
  ~TempDir() { std::filesystem::remove_all(path); }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  std::string operator/(const std::string& name) const { return path + "/" + name; }
};

// The message of the core::Error that fn throws, or "(no exception)".
inline std::string message_of(auto&& fn) {
  try {
    fn();
  } catch (const core::Error& e) {
    return e.what();
  }
  return "(no exception)";
}

}  // namespace seqbench::testutil

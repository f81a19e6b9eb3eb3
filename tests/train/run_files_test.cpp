#include "train/run_files.hpp"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>

#include "core/check.hpp"
#include "test_util.hpp"

using namespace seqbench;
using testutil::message_of;
using testutil::TempDir;

TEST(RunFiles, ASecondWriterOfTheSameRunIsRefusedWhileTheFirstHoldsIt) {
  TempDir root;
  {
    train::RunFiles a(root.path, "copy", "r1", "acc", false);
    a.write_config("x: 1\n");
    // Same process, second open file description: the lock is taken, so it fails, both
    // for a new run and for --resume, and touches nothing.
    try {
      train::RunFiles b(root.path, "copy", "r1", "acc", false);
      FAIL() << "second writer was let in";
    } catch (const core::UsageError& e) {
      EXPECT_NE(std::string(e.what()).find("is in use by another seqbench process (pid " +
                                           std::to_string(::getpid()) + ")"),
                std::string::npos)
          << e.what();
    }
    EXPECT_THROW(train::RunFiles(root.path, "copy", "r1", "acc", true), core::UsageError);
    // Another process sees the lock too.
    const pid_t child = ::fork();
    if (child == 0) {
      try {
        train::RunFiles c(root.path, "copy", "r1", "acc", true);
      } catch (const core::UsageError&) {
        ::_exit(42);
      }
      ::_exit(0);
    }
    int status = 0;
    ASSERT_EQ(::waitpid(child, &status, 0), child);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 42);
  }
  // Released with the first: a new run is refused because the directory holds one (a
  // usage error, exit 2), and --resume gets in.
  const std::string msg = message_of([&] { train::RunFiles(root.path, "copy", "r1", "acc", false); });
  EXPECT_NE(msg.find("already holds a run"), std::string::npos) << msg;
  EXPECT_THROW(train::RunFiles(root.path, "copy", "r1", "acc", false), core::UsageError);
  EXPECT_NO_THROW(train::RunFiles(root.path, "copy", "r1", "acc", true));
}

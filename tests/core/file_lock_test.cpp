#include "core/file_lock.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <optional>
#include <string>
#include <utility>

#include "core/check.hpp"
#include "core/fs.hpp"
#include "test_util.hpp"

using seqbench::core::FileLock;
using seqbench::testutil::message_of;
using seqbench::testutil::TempDir;
using Mode = FileLock::Mode;

// flock locks belong to the open file, so a second FileLock in this process stands for a
// second process.

TEST(FileLock, TwoExclusiveLocksOnOneFileConflict) {
  TempDir dir;
  const std::string p = dir / "run.lock";
  const FileLock held(p);
  EXPECT_TRUE(seqbench::core::file_exists(p));  // created on first use
  EXPECT_FALSE(FileLock::try_lock(p).has_value());
  EXPECT_FALSE(FileLock::try_lock(p, Mode::kShared).has_value());
  EXPECT_TRUE(FileLock::try_lock(dir / "other.lock").has_value());  // another file is free
}

TEST(FileLock, IsReleasedOnDestructionAndFollowsAMove) {
  TempDir dir;
  const std::string p = dir / "run.lock";
  std::optional<FileLock> first = FileLock::try_lock(p);
  ASSERT_TRUE(first.has_value());
  FileLock moved = std::move(*first);
  first.reset();  // the moved-from lock holds nothing: releasing it changes nothing
  EXPECT_FALSE(FileLock::try_lock(p).has_value());
  EXPECT_EQ(moved.path(), p);
  {
    const FileLock gone = std::move(moved);
  }
  EXPECT_TRUE(FileLock::try_lock(p).has_value());
}

TEST(FileLock, SharedLocksCoexistAndKeepAnExclusiveOneOut) {
  TempDir dir;
  const std::string p = dir / "runs.csv.lock";
  std::optional<FileLock> a = FileLock::try_lock(p, Mode::kShared);
  std::optional<FileLock> b = FileLock::try_lock(p, Mode::kShared);
  ASSERT_TRUE(a.has_value());
  ASSERT_TRUE(b.has_value());
  EXPECT_EQ(a->mode(), Mode::kShared);
  EXPECT_FALSE(FileLock::try_lock(p).has_value());
  a.reset();
  EXPECT_FALSE(FileLock::try_lock(p).has_value());  // b still holds it
  b.reset();
  const FileLock blocking(p);  // free again: the blocking form returns at once
  EXPECT_EQ(blocking.mode(), Mode::kExclusive);
}

TEST(FileLock, TheNoteIsReadBackByWhoeverFindsTheLockTaken) {
  TempDir dir;
  const std::string p = dir / ".lock";
  FileLock held(p);
  held.write_note("12345");
  held.write_note("678");  // replaces, does not append
  EXPECT_EQ(FileLock::read_note(p), "678");
  EXPECT_EQ(FileLock::read_note(dir / "missing.lock"), "");
}

TEST(FileLock, AnUnopenablePathIsAClearError) {
  TempDir dir;
  const std::string p = dir / "no_such_dir/run.lock";
  std::string m = message_of([&] { FileLock lock(p); });
  EXPECT_NE(m.find("cannot open lock file '" + p + "'"), std::string::npos) << m;
  EXPECT_NE(m.find("No such file or directory"), std::string::npos) << m;
  m = message_of([&] { (void)FileLock::try_lock(p, Mode::kShared); });
  EXPECT_NE(m.find("cannot open lock file '" + p + "'"), std::string::npos) << m;
  EXPECT_FALSE(seqbench::core::file_exists(dir / "no_such_dir"));  // nothing created on the way
}

TEST(FileLock, ALockFileThatIsASymlinkIsRefusedAndItsTargetKept) {
  TempDir dir, outside;
  const std::string victim = outside / "victim.txt", p = dir / ".lock";
  seqbench::core::write_file_atomic(victim, "precious\n");
  std::filesystem::create_symlink(victim, p);
  for (const Mode mode : {Mode::kExclusive, Mode::kShared}) {
    std::string m = message_of([&] { FileLock lock(p, mode); });
    EXPECT_NE(m.find("'" + p + "' is a symbolic link"), std::string::npos) << m;
    m = message_of([&] { (void)FileLock::try_lock(p, mode); });
    EXPECT_NE(m.find("'" + p + "' is a symbolic link"), std::string::npos) << m;
  }
  EXPECT_EQ(FileLock::read_note(p), "");  // not read through the link either
  EXPECT_EQ(seqbench::core::read_file(victim), "precious\n");
}

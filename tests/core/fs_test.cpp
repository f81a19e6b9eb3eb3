#include "core/fs.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "core/check.hpp"
#include "test_util.hpp"

using namespace seqbench::core;
namespace stdfs = std::filesystem;

// "'path'" as error messages print it (built piecewise: GCC 12 warns falsely on a + b + c).
static std::string quoted(const std::string& s) {
  std::string q = "'";
  q += s;
  q += "'";
  return q;
}

using seqbench::testutil::TempDir;
using seqbench::testutil::message_of;

namespace {

int count_entries(const std::string& dir) {
  int n = 0;
  for ([[maybe_unused]] const auto& e : stdfs::directory_iterator(dir)) ++n;
  return n;
}

}  // namespace

TEST(Fs, AtomicWriteCreatesAndReplacesContent) {
  TempDir dir;
  const std::string p = dir / "a.txt";
  write_file_atomic(p, "first version, longer than the second");
  EXPECT_EQ(read_file(p), "first version, longer than the second");
  write_file_atomic(p, "second");
  EXPECT_EQ(read_file(p), "second");
  write_file_atomic(p, std::vector<std::string_view>{"a", "", "bc"});
  EXPECT_EQ(read_file(p), "abc");
  EXPECT_EQ(count_entries(dir.path), 1);  // no temp file left behind
}

TEST(Fs, AtomicWriteKeepsPermissionBits) {
  TempDir dir;
  const std::string p = dir / "exe.sh";
  write_file_atomic(p, "#!/bin/sh\n");
  ::chmod(p.c_str(), 0750);
  write_file_atomic(p, "#!/bin/sh\necho hi\n");
  struct stat st {};
  ASSERT_EQ(::stat(p.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0750u);
}

TEST(Fs, AtomicWriteToMissingDirectoryThrowsNamingPath) {
  TempDir dir;
  const std::string p = dir / "no/such/dir/out.csv";
  std::string m = message_of([&] { write_file_atomic(p, "x"); });
  EXPECT_NE(m.find(quoted(p)), std::string::npos) << m;
  EXPECT_NE(m.find("No such file or directory"), std::string::npos) << m;
  EXPECT_NE(m.find("hint:"), std::string::npos) << m;
  EXPECT_EQ(count_entries(dir.path), 0);
}

TEST(Fs, FailedRenameRemovesTempAndKeepsOldContent) {
  // Replacing a non-empty directory with a file fails at rename(); the temp file was
  // already written, so this exercises the cleanup path.
  TempDir dir;
  const std::string p = dir / "target";
  make_dirs(p + "/inner");
  write_file_atomic(dir / "keep.txt", "old");
  std::string m = message_of([&] { write_file_atomic(p, "new"); });
  EXPECT_NE(m.find("cannot write '" + p + "'"), std::string::npos) << m;
  EXPECT_EQ(count_entries(dir.path), 2);  // target/ and keep.txt, no target.tmp.<pid>
  EXPECT_TRUE(stdfs::is_directory(p + "/inner"));
  EXPECT_EQ(read_file(dir / "keep.txt"), "old");
}

TEST(Fs, ReadFileErrorsNamePath) {
  TempDir dir;
  const std::string p = dir / "missing.txt";
  std::string m = message_of([&] { read_file(p); });
  EXPECT_EQ(m, "cannot read '" + p + "': No such file or directory");
  std::string d = message_of([&] { read_file(dir.path); });
  EXPECT_NE(d.find("cannot read '" + dir.path + "': it is a directory"), std::string::npos) << d;
}

TEST(Fs, MakeDirsAndFileExists) {
  TempDir dir;
  const std::string deep = dir / "a/b/c";
  EXPECT_FALSE(file_exists(deep));
  make_dirs(deep);
  EXPECT_TRUE(stdfs::is_directory(deep));
  EXPECT_TRUE(file_exists(deep));
  make_dirs(deep);  // existing directory: fine
  make_dirs("");
  write_file_atomic(dir / "file", "x");
  std::string m = message_of([&] { make_dirs(dir / "file"); });
  EXPECT_NE(m.find(quoted((dir / "file"))), std::string::npos) << m;
  std::string m2 = message_of([&] { make_dirs(dir / "file/sub"); });
  EXPECT_NE(m2.find(quoted((dir / "file/sub"))), std::string::npos) << m2;
}

TEST(Fs, AppendFileAppendsAcrossOpens) {
  TempDir dir;
  const std::string p = dir / "log.txt";
  {
    AppendFile f(p);
    EXPECT_EQ(f.path(), p);
    f.write("one\n");
    f.write("two\n");
    f.flush_sync();
    EXPECT_EQ(read_file(p), "one\ntwo\n");  // visible before close: no user-space buffer
  }
  AppendFile g(p);
  g.write("three\n");
  AppendFile moved = std::move(g);
  moved.write("four\n");
  moved.flush_sync();
  EXPECT_EQ(read_file(p), "one\ntwo\nthree\nfour\n");
}

TEST(Fs, AppendFileErrors) {
  TempDir dir;
  std::string m = message_of([&] { AppendFile f(dir / "nodir/log.txt"); });
  EXPECT_NE(m.find(fmt::format("'{}'", dir / "nodir/log.txt")), std::string::npos) << m;
  // /dev/full accepts the open but every write fails with ENOSPC.
  AppendFile full("/dev/full");
  std::string w = message_of([&] { full.write("row\n"); });
  EXPECT_NE(w.find("'/dev/full'"), std::string::npos) << w;
  EXPECT_NE(w.find("disk full"), std::string::npos) << w;
}

namespace {

// A file outside the directory under test, which a write through a link would change.
struct Victim {
  TempDir outside;
  std::string path = outside / "victim.txt";
  Victim() { write_file_atomic(path, "precious\n"); }
  bool untouched() const { return read_file(path) == "precious\n"; }
};

bool names_the_link(const std::string& message, const std::string& path) {
  return message.find(quoted(path)) != std::string::npos &&
         message.find("is a symbolic link") != std::string::npos;
}

// The pid of a process that has ended (a child reaped at once).
pid_t dead_pid() {
  const pid_t child = ::fork();
  if (child == 0) ::_exit(0);
  int status = 0;
  ::waitpid(child, &status, 0);
  return child;
}

nlink_t links_of(const std::string& path) {
  struct stat st {};
  EXPECT_EQ(::lstat(path.c_str(), &st), 0) << path;
  return st.st_nlink;
}

}  // namespace

TEST(Fs, NoWriteFollowsASymlinkAtTheTarget) {
  Victim victim;
  TempDir dir;
  const std::string link = dir / "file";
  stdfs::create_symlink(victim.path, link);
  std::string m = message_of([&] { write_file_atomic(link, "x"); });
  EXPECT_TRUE(names_the_link(m, link)) << m;
  m = message_of([&] { write_file_atomic_keep_previous(link, {"x"}, dir / "file.prev"); });
  EXPECT_TRUE(names_the_link(m, link)) << m;
  m = message_of([&] { (void)create_file_exclusive(link, "x"); });
  EXPECT_TRUE(names_the_link(m, link)) << m;
  m = message_of([&] { AppendFile f(link); });
  EXPECT_TRUE(names_the_link(m, link)) << m;
  m = message_of([&] { (void)read_file(link, Links::kRefuse); });
  EXPECT_TRUE(names_the_link(m, link)) << m;
  EXPECT_EQ(read_file(link), "precious\n");  // a plain read still follows it
  EXPECT_TRUE(victim.untouched());
  EXPECT_TRUE(stdfs::is_symlink(link));   // refused, not replaced
  EXPECT_EQ(count_entries(dir.path), 1);  // and no temp file left
}

TEST(Fs, AtomicWriteNeverWritesThroughALinkPlantedAsItsTempFile) {
  // The temp name "<path>.tmp.<pid>" is predictable; it is created with O_EXCL, so a link
  // planted there is removed (as a leftover) instead of followed and truncated.
  Victim victim;
  TempDir dir;
  const std::string p = dir / "summary.json";
  stdfs::create_symlink(victim.path, p + ".tmp." + std::to_string(::getpid()));
  write_file_atomic(p, "{}\n");
  EXPECT_EQ(read_file(p), "{}\n");
  EXPECT_TRUE(victim.untouched());
  EXPECT_EQ(count_entries(dir.path), 1);
}

TEST(Fs, MakeRealDirCreatesOrAcceptsADirectoryAndRefusesALinkOrAFile) {
  TempDir outside, dir;
  make_real_dir(dir / "exp");
  make_real_dir(dir / "exp");  // already there: fine
  make_real_dir(dir / "exp/run/");
  EXPECT_TRUE(stdfs::is_directory(dir / "exp/run"));
  stdfs::create_directory_symlink(outside.path, dir / "linked");
  for (const std::string& p : {dir / "linked", dir / "linked/"}) {
    const std::string m = message_of([&] { make_real_dir(p); });
    EXPECT_NE(m.find("is a symbolic link"), std::string::npos) << m;
    EXPECT_NE(m.find(dir / "linked"), std::string::npos) << m;
  }
  stdfs::create_symlink(dir / "nowhere", dir / "dangling");
  EXPECT_NE(message_of([&] { make_real_dir(dir / "dangling"); }).find("is a symbolic link"),
            std::string::npos);
  write_file_atomic(dir / "file", "x");
  EXPECT_NE(message_of([&] { make_real_dir(dir / "file"); }).find("a file with that name exists"),
            std::string::npos);
  EXPECT_EQ(count_entries(outside.path), 0);
  EXPECT_FALSE(stdfs::exists(dir / "nowhere"));
}

TEST(Fs, KeepPreviousRenamesTheOldFileAndNeverLinksIt) {
  TempDir dir;
  const std::string p = dir / "checkpoint.sbck", prev = dir / "checkpoint.prev.sbck";
  write_file_atomic_keep_previous(p, {"one"}, prev);
  EXPECT_EQ(read_file(p), "one");
  EXPECT_FALSE(file_exists(prev));  // nothing to keep yet
  write_file_atomic_keep_previous(p, {"tw", "o"}, prev);
  write_file_atomic_keep_previous(p, {"three"}, prev);
  EXPECT_EQ(read_file(p), "three");
  EXPECT_EQ(read_file(prev), "two");
  // Two separate files: each has one name, so damage to one cannot reach the other.
  EXPECT_EQ(links_of(p), 1u);
  EXPECT_EQ(links_of(prev), 1u);
  EXPECT_EQ(count_entries(dir.path), 2);  // no temp file left
}

TEST(Fs, RenameFileReplacesTheTargetAndNamesBothPathsOnFailure) {
  TempDir dir;
  write_file_atomic(dir / "a", "A");
  write_file_atomic(dir / "b", "B");
  rename_file(dir / "a", dir / "b");
  EXPECT_EQ(read_file(dir / "b"), "A");
  EXPECT_FALSE(file_exists(dir / "a"));
  const std::string m = message_of([&] { rename_file(dir / "a", dir / "c"); });
  EXPECT_NE(m.find(quoted(dir / "a")), std::string::npos) << m;
  EXPECT_NE(m.find(quoted(dir / "c")), std::string::npos) << m;
}

TEST(Fs, RemoveStaleTempsRemovesOnlyTheTempFilesOfProcessesThatAreGone) {
  TempDir dir, outside;
  const std::string dead = std::to_string(dead_pid());
  const std::string alive = std::to_string(::getppid());
  const std::string self = std::to_string(::getpid());
  for (const std::string& name : std::vector<std::string>{
           "checkpoint.sbck.tmp." + dead, "summary.json.tmp." + self, "metrics.csv.tmp." + alive,
           ".tmp." + dead, "x.tmp.", "x.tmp.12a", "x.tmp.-" + dead, "x.tmp." + dead + ".bak",
           "checkpoint.sbck", "notes.txt"})
    write_file_atomic(dir / name, "data");
  make_real_dir(dir / "sub");
  write_file_atomic(dir / ("sub/deeper.tmp." + dead), "data");  // only dir itself
  make_real_dir(dir / ("folder.tmp." + dead));                  // not a regular file
  write_file_atomic(outside / "target", "precious");
  stdfs::create_symlink(outside / "target", dir / ("link.tmp." + dead));  // not followed
  auto removed = remove_stale_temps(dir.path);
  std::sort(removed.begin(), removed.end());
  EXPECT_EQ(removed,
            (std::vector<std::string>{"checkpoint.sbck.tmp." + dead, "summary.json.tmp." + self}));
  EXPECT_FALSE(file_exists(dir / ("checkpoint.sbck.tmp." + dead)));
  EXPECT_TRUE(file_exists(dir / ("metrics.csv.tmp." + alive)));  // its writer may be at work
  for (const std::string& kept :
       std::vector<std::string>{".tmp." + dead, "x.tmp.", "x.tmp.12a", "x.tmp.-" + dead,
                                "x.tmp." + dead + ".bak", "checkpoint.sbck", "notes.txt",
                                "sub/deeper.tmp." + dead, "folder.tmp." + dead, "link.tmp." + dead})
    EXPECT_TRUE(stdfs::exists(stdfs::symlink_status(dir / kept))) << kept;
  EXPECT_EQ(read_file(outside / "target"), "precious");
  EXPECT_TRUE(remove_stale_temps(dir / "missing").empty());
}

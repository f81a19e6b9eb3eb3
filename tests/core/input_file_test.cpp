// Bounded reads: only regular files, refused at once otherwise, and a size cap.
#include "core/input_file.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <string>

#include "core/check.hpp"
#include "core/fs.hpp"
#include "test_util.hpp"

using namespace seqbench;
using testutil::message_of;
using testutil::TempDir;

// A FIFO without a writer would block a plain open or read forever; /dev/zero would fill
// memory. Each is refused at once, naming the path and what it is. (If the FIFO were
// opened blocking, this test would hang until ctest's timeout: it would not pass.)
TEST(InputFile, FifosDevicesAndDirectoriesAreRefusedAtOnce) {
  TempDir dir;
  const std::string fifo = dir / "pipe";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  for (const auto& item : std::vector<std::pair<std::string, std::string>>{
           {fifo, "a FIFO"}, {"/dev/zero", "a character device"}, {"/dev/urandom", "a character device"},
           {dir.path, "a directory"}}) {
    // Named copies, not a structured binding: clang cannot capture one in a lambda.
    const std::string& path = item.first;
    const std::string& what = item.second;
    const std::string m = message_of([&] { core::read_input(path, core::kMaxTextFile); });
    EXPECT_EQ(m.rfind("cannot read '" + path + "': it is " + what, 0), 0u) << m;
    EXPECT_EQ(message_of([&] { core::read_file(path); }), m);
  }
}

TEST(InputFile, AFileAboveItsCapIsRefusedNamingBothSizes) {
  TempDir dir;
  core::write_file_atomic(dir / "big", std::string(3000, 'x'));
  EXPECT_EQ(core::read_input(dir / "big", 3000).size(), 3000u);
  const std::string m = message_of([&] { core::read_input(dir / "big", 2999); });
  EXPECT_NE(m.find("it is 3000 bytes, above the limit of 2999 bytes"), std::string::npos) << m;
  uint64_t size = 0;
  const int fd = core::open_input(dir / "big", 1 << 20, &size);
  EXPECT_EQ(size, 3000u);
  ::close(fd);
  // A link is followed unless asked not to.
  ASSERT_EQ(::symlink((dir / "big").c_str(), (dir / "link").c_str()), 0);
  EXPECT_EQ(core::read_input(dir / "link", 1 << 20).size(), 3000u);
  EXPECT_NE(message_of([&] { core::read_input(dir / "link", 1 << 20, false); }).find("symbolic link"),
            std::string::npos);
}

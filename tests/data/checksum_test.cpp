#include "data/checksum.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "core/check.hpp"
#include "core/fs.hpp"
#include "data/mnist.hpp"
#include "data/text_corpus.hpp"
#include "test_util.hpp"

using namespace seqbench;
using testutil::message_of;
using testutil::TempDir;

namespace {

void write(const std::string& path, const std::string& bytes) {
  core::write_file_atomic(path, bytes);
}

// Rewrites a file with the same size and modification time, as a silent bit flip would.
void flip_keeping_stamp(const std::string& path) {
  const auto when = std::filesystem::last_write_time(path);
  std::string bytes = core::read_file(path);
  bytes[0] ^= 1;
  write(path, bytes);
  std::filesystem::last_write_time(path, when);
}

}  // namespace

TEST(Sha256, KnownVectors) {
  // FIPS 180-2 examples.
  EXPECT_EQ(data::sha256_hex(""),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(data::sha256_hex("abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  TempDir dir;
  write(dir / "abc", "abc");
  EXPECT_EQ(data::sha256_file(dir / "abc"), data::sha256_hex("abc"));
}

TEST(CheckFiles, VerifiedAgainstSha256sums) {
  TempDir dir;
  write(dir / "a.txt", "alpha\n");
  write(dir / "b.txt", "beta\n");
  write(dir / "SHA256SUMS", data::sha256_hex("alpha\n") + "  a.txt\n" +
                                data::sha256_hex("beta\n") + " *b.txt\n");
  const data::DataDigest d = data::check_files({dir / "a.txt", dir / "b.txt"});
  EXPECT_TRUE(d.verified);
  ASSERT_EQ(d.files.size(), 2u);
  EXPECT_EQ(d.files[0].second, data::sha256_hex("alpha\n"));
  // The set's checksum is the sha256 of sha256sum's listing, sorted by name.
  EXPECT_EQ(d.sha256(), data::sha256_hex(data::sha256_hex("alpha\n") + "  a.txt\n" +
                                         data::sha256_hex("beta\n") + "  b.txt\n"));
  // Read order does not matter.
  EXPECT_EQ(data::check_files({dir / "b.txt", dir / "a.txt"}).sha256(), d.sha256());
}

TEST(CheckFiles, UnrecordedFilesAreHashedButNotVerified) {
  TempDir dir;
  write(dir / "a.txt", "alpha\n");
  data::DataDigest d = data::check_files({dir / "a.txt"});
  EXPECT_FALSE(d.verified);
  EXPECT_EQ(d.files.at(0).second, data::sha256_hex("alpha\n"));
  // A SHA256SUMS that does not list the file: still unverified.
  write(dir / "SHA256SUMS", data::sha256_hex("x") + "  other.txt\n");
  EXPECT_FALSE(data::check_files({dir / "a.txt"}).verified);
}

TEST(CheckFiles, MismatchNamesFileAndDigests) {
  TempDir dir;
  write(dir / "a.txt", "alpha\n");
  write(dir / "SHA256SUMS", data::sha256_hex("something else") + "  a.txt\n");
  const std::string msg = message_of([&] { data::check_files({dir / "a.txt"}); });
  EXPECT_NE(msg.find("a.txt"), std::string::npos) << msg;
  EXPECT_NE(msg.find(data::sha256_hex("alpha\n")), std::string::npos) << msg;
  EXPECT_NE(msg.find(data::sha256_hex("something else")), std::string::npos) << msg;
  EXPECT_NE(msg.find("tools/fetch_data"), std::string::npos) << msg;
}

TEST(CheckFiles, DamagedSha256sumsIsAnError) {
  TempDir dir;
  write(dir / "a.txt", "alpha\n");
  write(dir / "SHA256SUMS", "not a checksum line\n");
  const std::string msg = message_of([&] { data::check_files({dir / "a.txt"}); });
  EXPECT_NE(msg.find("SHA256SUMS:1"), std::string::npos) << msg;
}

TEST(CheckFiles, HashesOnceThenTrustsSizeAndTime) {
  TempDir dir;
  write(dir / "a.txt", "alpha\n");
  write(dir / "SHA256SUMS", data::sha256_hex("alpha\n") + "  a.txt\n");
  EXPECT_TRUE(data::check_files({dir / "a.txt"}).verified);
  EXPECT_TRUE(core::file_exists(dir / ".sha256-cache"));
  // Same size and time: the remembered digest is used, the file is not read again.
  flip_keeping_stamp(dir / "a.txt");
  EXPECT_TRUE(data::check_files({dir / "a.txt"}).verified);
  // A change of content that changes the size is noticed.
  write(dir / "a.txt", "alpha, longer\n");
  EXPECT_NE(message_of([&] { data::check_files({dir / "a.txt"}); }).find("a.txt"),
            std::string::npos);
  // Without the cache the flipped file is hashed and caught.
  write(dir / "a.txt", "alpha\n");
  flip_keeping_stamp(dir / "a.txt");
  std::filesystem::remove(dir / ".sha256-cache");
  EXPECT_NE(message_of([&] { data::check_files({dir / "a.txt"}); }).find("has sha256"),
            std::string::npos);
}

TEST(CheckFiles, AnEditedSha256sumsIsAlwaysRead) {
  TempDir dir;
  write(dir / "a.txt", "alpha\n");
  write(dir / "SHA256SUMS", data::sha256_hex("alpha\n") + "  a.txt\n");
  EXPECT_TRUE(data::check_files({dir / "a.txt"}).verified);
  write(dir / "SHA256SUMS", data::sha256_hex("beta\n") + "  a.txt\n");
  EXPECT_THROW(data::check_files({dir / "a.txt"}), core::Error);
}

TEST(CheckFiles, MissingFilesAreLeftToTheLoader) {
  TempDir dir;
  EXPECT_TRUE(data::check_files({dir / "nope"}).files.empty());
  // load_mnist still names the missing file itself.
  const std::string msg = message_of([&] { data::load_mnist(dir.path); });
  EXPECT_NE(msg.find(data::kMnistTrainImages), std::string::npos) << msg;
}

TEST(CheckFiles, LoadersCarryTheDigest) {
  TempDir dir;
  write(dir / "train.txt", "the cat sat\n");
  write(dir / "valid.txt", "the cat\n");
  write(dir / "test.txt", "sat\n");
  data::CorpusConfig cfg;
  cfg.format = "text";
  cfg.dir = dir.path;
  data::Corpus c = data::load_corpus(cfg);
  EXPECT_EQ(c.digest.files.size(), 3u);
  EXPECT_FALSE(c.digest.verified);
  const std::string unverified = c.digest.sha256();
  EXPECT_EQ(unverified.size(), 64u);
  write(dir / "SHA256SUMS", data::sha256_hex("the cat sat\n") + "  train.txt\n" +
                                data::sha256_hex("the cat\n") + "  valid.txt\n" +
                                data::sha256_hex("sat\n") + "  test.txt\n");
  c = data::load_corpus(cfg);
  EXPECT_TRUE(c.digest.verified);
  EXPECT_EQ(c.digest.sha256(), unverified);  // the same files, the same checksum
  // A corrupted split is refused before it is parsed.
  write(dir / "valid.txt", "the dog\n");
  EXPECT_NE(message_of([&] { data::load_corpus(cfg); }).find("valid.txt"), std::string::npos);
}

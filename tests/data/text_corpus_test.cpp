#include "data/text_corpus.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/fs.hpp"
#include "test_util.hpp"

using namespace seqbench;
using testutil::message_of;
using testutil::TempDir;

namespace {

void write(const std::string& path, const std::string& text) { core::write_file_atomic(path, text); }

// The tokens of ids, spelled back through the vocabulary.
std::vector<std::string> spell(const data::Vocab& v, const std::vector<int32_t>& ids) {
  std::vector<std::string> out;
  for (int32_t i : ids) out.push_back(v.itos.at(size_t(i)));
  return out;
}

std::string join(const data::Vocab& v, const std::vector<int32_t>& ids) {
  std::string out;
  for (int32_t i : ids) out += v.itos.at(size_t(i));
  return out;
}

using Toks = std::vector<std::string>;

// A usage error's message, or "(no usage error)".
std::string usage_message_of(auto&& fn) {
  try {
    fn();
  } catch (const core::UsageError& e) {
    return e.what();
  } catch (const core::Error&) {
  }
  return "(no usage error)";
}

}  // namespace

TEST(PtbChar, SymbolsAndEosPerLine) {
  TempDir dir;
  write(dir / "ptb.char.train.txt", "a b _ c\n b a\n");
  write(dir / "ptb.char.valid.txt", "c _ a\n");
  write(dir / "ptb.char.test.txt", "a\n\nb");  // a blank line, and a last line without '\n'
  data::CorpusConfig cfg;
  cfg.format = "ptb_char";
  cfg.dir = dir.path;
  const data::Corpus c = data::load_corpus(cfg);
  EXPECT_EQ(c.vocab.itos, (Toks{"a", "b", "_", "c", "<eos>"}));  // first appearance in train
  EXPECT_EQ(c.vocab.size(), 5);
  EXPECT_EQ(c.vocab.unk, -1);
  EXPECT_EQ(c.train, (std::vector<int32_t>{0, 1, 2, 3, 4, 1, 0, 4}));
  EXPECT_EQ(spell(c.vocab, c.valid), (Toks{"c", "_", "a", "<eos>"}));
  EXPECT_EQ(spell(c.vocab, c.test), (Toks{"a", "<eos>", "<eos>", "b", "<eos>"}));
  EXPECT_EQ(c.name, dir.path.substr(dir.path.rfind('/') + 1) + ":ptb_char");
}

TEST(PtbChar, UnseenSymbolInTestIsAnErrorNamingFileLineAndToken) {
  TempDir dir;
  write(dir / "ptb.char.train.txt", "a b\n");
  write(dir / "ptb.char.valid.txt", "a\n");
  write(dir / "ptb.char.test.txt", "b\na z\n");
  data::CorpusConfig cfg;
  cfg.format = "ptb_char";
  cfg.dir = dir.path;
  const std::string msg = message_of([&] { data::load_corpus(cfg); });
  EXPECT_NE(msg.find(dir / "ptb.char.test.txt"), std::string::npos) << msg;
  EXPECT_NE(msg.find("line 2: token 'z'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("no <unk>"), std::string::npos) << msg;
  EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
}

// Issue 29, item 12: dir and path together were accepted, and path silently ignored.
TEST(PtbChar, DirAndPathTogetherAreAUsageErrorNamingBoth) {
  TempDir dir;
  data::CorpusConfig cfg;
  cfg.format = "text";
  cfg.dir = dir.path;
  cfg.path = dir / "one.txt";
  try {
    data::load_corpus(cfg);
    ADD_FAILURE() << "accepted";
  } catch (const core::UsageError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("corpus dir '" + dir.path + "' and path '" + cfg.path + "' are both set"),
              std::string::npos)
        << msg;
  }
}

TEST(PtbWord, UnkFromTheFilesIsUsedForUnseenWords) {
  TempDir dir;
  write(dir / "ptb.train.txt", " the cat <unk> sat \n the dog\n");
  write(dir / "ptb.valid.txt", " the bird\n");
  write(dir / "ptb.test.txt", " dog \t cat\r\n");
  data::CorpusConfig cfg;
  cfg.format = "ptb_word";
  cfg.dir = dir.path;
  const data::Corpus c = data::load_corpus(cfg);
  EXPECT_EQ(c.vocab.itos, (Toks{"the", "cat", "<unk>", "sat", "<eos>", "dog"}));
  EXPECT_EQ(c.vocab.unk, 2);
  EXPECT_EQ(c.vocab.id("bird"), 2);
  EXPECT_EQ(c.vocab.id("sat"), 3);
  EXPECT_EQ(spell(c.vocab, c.train), (Toks{"the", "cat", "<unk>", "sat", "<eos>", "the", "dog", "<eos>"}));
  EXPECT_EQ(spell(c.vocab, c.valid), (Toks{"the", "<unk>", "<eos>"}));
  EXPECT_EQ(spell(c.vocab, c.test), (Toks{"dog", "cat", "<eos>"}));  // \t and \r separate
}

TEST(Wikitext, ReadsTokensFilesWithBlankLines) {
  TempDir dir;
  write(dir / "wiki.train.tokens", " \n = Title = \n\n x y <unk> \n");
  write(dir / "wiki.valid.tokens", " x q \n");
  write(dir / "wiki.test.tokens", " y \n");
  data::CorpusConfig cfg;
  cfg.format = "wikitext";
  cfg.dir = dir.path;
  const data::Corpus c = data::load_corpus(cfg);
  EXPECT_EQ(spell(c.vocab, c.train),
            (Toks{"<eos>", "=", "Title", "=", "<eos>", "<eos>", "x", "y", "<unk>", "<eos>"}));
  EXPECT_EQ(spell(c.vocab, c.valid), (Toks{"x", "<unk>", "<eos>"}));
  EXPECT_EQ(c.vocab.size(), 6);
}

TEST(TextChar, EveryByteIsATokenAndUnseenBytesAreUnk) {
  TempDir dir;
  write(dir / "train.txt", "ab\nba\xc3\xa9\n");  // UTF-8 e-acute is two byte tokens
  write(dir / "valid.txt", "a\nZ");
  write(dir / "test.txt", "\xc3\xa9");
  data::CorpusConfig cfg;
  cfg.dir = dir.path;  // format text, level char are the defaults
  const data::Corpus c = data::load_corpus(cfg);
  EXPECT_EQ(c.vocab.itos, (Toks{"a", "b", "\n", "\xc3", "\xa9", "<unk>"}));
  EXPECT_EQ(c.vocab.unk, 5);
  EXPECT_EQ(c.train, (std::vector<int32_t>{0, 1, 2, 1, 0, 3, 4, 2}));
  EXPECT_EQ(c.valid, (std::vector<int32_t>{0, 2, 5}));
  EXPECT_EQ(c.test, (std::vector<int32_t>{3, 4}));
  EXPECT_NE(c.name.find(":text-char"), std::string::npos) << c.name;
}

TEST(TextChar, SingleFileIsCutContiguouslyByFraction) {
  TempDir dir;
  std::string text;
  for (int i = 0; i < 100; ++i) text += char('a' + i % 26);
  write(dir / "all.txt", text);
  data::CorpusConfig cfg;
  cfg.path = dir / "all.txt";
  cfg.valid_fraction = 0.1;
  cfg.test_fraction = 0.2;
  const data::Corpus c = data::load_corpus(cfg);
  EXPECT_EQ(c.train.size(), 70u);
  EXPECT_EQ(c.valid.size(), 10u);
  EXPECT_EQ(c.test.size(), 20u);
  EXPECT_EQ(join(c.vocab, c.train) + join(c.vocab, c.valid) + join(c.vocab, c.test), text);
  EXPECT_EQ(c.name, "all:text-char");
}

TEST(TextWord, SingleFileCutsAtLineStartsAndKeepsLineNumbers) {
  TempDir dir;
  // 10 lines of 10 bytes: fractions 0.25/0.25 fall mid-line and move to the next line start.
  std::string text;
  for (int i = 0; i < 10; ++i) {
    // Appended piece by piece: GCC 12 warns (-Wrestrict, a false positive) on "w" + to_string(i).
    text += 'w';
    text += std::to_string(i);
    text += " common\n";
  }
  write(dir / "all.txt", text);
  data::CorpusConfig cfg;
  cfg.path = dir / "all.txt";
  cfg.level = "word";
  cfg.valid_fraction = 0.25;
  cfg.test_fraction = 0.25;
  const data::Corpus c = data::load_corpus(cfg);
  // cut1 = 50 -> line start 50 (line 6); cut2 = 75 -> 80 (line 9).
  EXPECT_EQ(c.train.size(), 5u * 3);
  EXPECT_EQ(c.valid.size(), 3u * 3);
  EXPECT_EQ(c.test.size(), 2u * 3);
  EXPECT_EQ(spell(c.vocab, c.valid), (Toks{"<unk>", "common", "<eos>", "<unk>", "common", "<eos>",
                                           "<unk>", "common", "<eos>"}));
  EXPECT_EQ(c.vocab.find("w4"), 6);
  EXPECT_EQ(c.vocab.find("w5"), -1);
  EXPECT_EQ(c.vocab.itos.back(), "<unk>");
}

TEST(TextWord, MinCountMapsRareTrainWordsToUnk) {
  TempDir dir;
  write(dir / "train.txt", "a b a\nc a b\n");
  write(dir / "valid.txt", "c\n");
  write(dir / "test.txt", "b\n");
  data::CorpusConfig cfg;
  cfg.dir = dir.path;
  cfg.level = "word";
  cfg.min_count = 2;
  const data::Corpus c = data::load_corpus(cfg);
  EXPECT_EQ(c.vocab.itos, (Toks{"a", "b", "<eos>", "<unk>"}));
  EXPECT_EQ(spell(c.vocab, c.train), (Toks{"a", "b", "a", "<eos>", "<unk>", "a", "b", "<eos>"}));
  EXPECT_EQ(spell(c.vocab, c.valid), (Toks{"<unk>", "<eos>"}));
}

TEST(PtbChar, MinCountAddsUnkToAClosedVocabulary) {
  TempDir dir;
  write(dir / "ptb.char.train.txt", "a a b\n");
  write(dir / "ptb.char.valid.txt", "b z\n");
  write(dir / "ptb.char.test.txt", "a\n");
  data::CorpusConfig cfg;
  cfg.format = "ptb_char";
  cfg.dir = dir.path;
  cfg.min_count = 2;
  const data::Corpus c = data::load_corpus(cfg);
  EXPECT_EQ(c.vocab.itos, (Toks{"a", "<eos>", "<unk>"}));
  EXPECT_EQ(spell(c.vocab, c.valid), (Toks{"<unk>", "<unk>", "<eos>"}));
}

TEST(Vocab, IdFallsBackToUnkOrThrowsNamingTheToken) {
  data::Vocab v;
  EXPECT_EQ(v.add("x"), 0);
  EXPECT_EQ(v.add("y"), 1);
  EXPECT_EQ(v.add("x"), 0);
  EXPECT_EQ(v.size(), 2);
  EXPECT_EQ(v.id("y"), 1);
  EXPECT_EQ(v.find("q"), -1);
  const std::string msg = message_of([&] { v.id("new\nline"); });
  EXPECT_NE(msg.find("token 'new\\nline' is not in the vocabulary (2 entries, no <unk>)"),
            std::string::npos)
      << msg;
  EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
  EXPECT_EQ(v.add("<unk>"), 2);
  EXPECT_EQ(v.unk, 2);
  EXPECT_EQ(v.id("q"), 2);
}

TEST(Vocab, PrintableTokenEscapesControlAndNonAsciiBytes) {
  EXPECT_EQ(data::printable_token("a\tb"), "a\\tb");
  EXPECT_EQ(data::printable_token("\x01\xc3'\\"), "\\x01\\xc3\\'\\\\");
}

TEST(Corpus, MissingFilesAreNamedWithAHint) {
  TempDir dir;
  data::CorpusConfig cfg;
  cfg.format = "ptb_word";
  cfg.dir = dir / "absent";
  std::string msg = message_of([&] { data::load_corpus(cfg); });
  EXPECT_NE(msg.find("corpus directory '" + (dir / "absent") + "' does not exist"), std::string::npos) << msg;
  EXPECT_NE(msg.find("tools/fetch_data brown"), std::string::npos) << msg;

  write(dir / "ptb.train.txt", "a\n");
  write(dir / "ptb.valid.txt", "a\n");
  cfg.dir = dir.path;
  msg = message_of([&] { data::load_corpus(cfg); });
  EXPECT_NE(msg.find("corpus file '" + (dir / "ptb.test.txt") + "' not found"), std::string::npos) << msg;

  data::CorpusConfig text;
  text.path = dir / "none.txt";
  msg = message_of([&] { data::load_corpus(text); });
  EXPECT_NE(msg.find(dir / "none.txt"), std::string::npos) << msg;
  EXPECT_NE(msg.find("tools/fetch_data"), std::string::npos) << msg;
}

TEST(Corpus, EmptyFilesAreErrors) {
  TempDir dir;
  write(dir / "train.txt", "");
  write(dir / "valid.txt", "a");
  write(dir / "test.txt", "a");
  data::CorpusConfig cfg;
  cfg.dir = dir.path;
  std::string msg = message_of([&] { data::load_corpus(cfg); });
  EXPECT_NE(msg.find("corpus file '" + (dir / "train.txt") + "' is empty"), std::string::npos) << msg;

  write(dir / "train.txt", "a b\n");
  write(dir / "valid.txt", "\n \n");  // bytes, but no words
  cfg.level = "word";
  msg = message_of([&] { data::load_corpus(cfg); });
  EXPECT_NE(msg.find("'" + (dir / "valid.txt") + "' has no tokens"), std::string::npos) << msg;

  // One line cannot be cut into three word-level splits.
  write(dir / "one.txt", "just one line of words\n");
  data::CorpusConfig single;
  single.path = dir / "one.txt";
  single.level = "word";
  msg = message_of([&] { data::load_corpus(single); });
  EXPECT_NE(msg.find("leaves the valid split empty"), std::string::npos) << msg;
}

TEST(Corpus, BadConfigIsAUsageError) {
  data::CorpusConfig cfg;
  cfg.format = "ptb";
  cfg.dir = "/tmp";
  EXPECT_NE(usage_message_of([&] { data::load_corpus(cfg); }).find("corpus format 'ptb' is unknown"),
            std::string::npos);
  cfg.format = "text";
  cfg.level = "bpe";
  EXPECT_NE(usage_message_of([&] { data::load_corpus(cfg); }).find("corpus level 'bpe'"),
            std::string::npos);
  data::CorpusConfig none;
  EXPECT_NE(usage_message_of([&] { data::load_corpus(none); }).find("needs dir"), std::string::npos);
  data::CorpusConfig frac;
  frac.path = "/tmp/x.txt";
  frac.valid_fraction = 0.6;
  frac.test_fraction = 0.4;
  EXPECT_NE(usage_message_of([&] { data::load_corpus(frac); }).find("sum below 1"),
            std::string::npos);
  data::CorpusConfig ptb;
  ptb.format = "wikitext";
  EXPECT_NE(usage_message_of([&] { data::load_corpus(ptb); }).find("needs dir"), std::string::npos);
  data::CorpusConfig mc;
  mc.dir = "/tmp";
  mc.min_count = 0;
  EXPECT_NE(usage_message_of([&] { data::load_corpus(mc); }).find("min_count"), std::string::npos);
}

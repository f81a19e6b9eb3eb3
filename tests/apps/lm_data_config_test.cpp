// The data section char_ptb and wikitext103 share (apps/common/lm_data_config.hpp): the
// corpus keys land in one data::CorpusConfig, and each experiment's choices (its formats,
// whether data.level is a key) show in the keys and messages users see.
#include "apps/common/lm_data_config.hpp"

#include <gtest/gtest.h>

#include <string>

#include "config/yaml_config.hpp"
#include "core/check.hpp"
#include "test_util.hpp"

using namespace seqbench;
using testutil::message_of;

namespace {

struct Section {  // the data section as it sits in an experiment's config
  apps::LmDataConfig data;
  template <class V>
  void visit(V& v) {
    v("data", data, "corpus, split and caps");
  }
};

}  // namespace

TEST(LmDataConfig, CorpusKeysAreReadIntoTheCorpusConfigItself) {
  Section s;
  EXPECT_EQ(s.data.corpus.dir, "data/brown");
  config::apply_yaml_text(s,
                          "data: {format: ptb_word, dir: words, path: one.txt, level: word, "
                          "valid_fraction: 0.1, test_fraction: 0.2, min_count: 3, eval_batch: 4}",
                          "x.yaml");
  const data::CorpusConfig& c = s.data.corpus;
  EXPECT_EQ(c.format, "ptb_word");
  EXPECT_EQ(c.dir, "words");
  EXPECT_EQ(c.path, "one.txt");
  EXPECT_EQ(c.level, "word");
  EXPECT_EQ(c.valid_fraction, 0.1);
  EXPECT_EQ(c.test_fraction, 0.2);
  EXPECT_EQ(c.min_count, 3);
  EXPECT_EQ(s.data.eval_batch, 4);
  // Written back under the same flat keys.
  const std::string yaml = config::to_yaml(s);
  EXPECT_NE(yaml.find("  min_count: 3\n"), std::string::npos) << yaml;
  EXPECT_EQ(yaml.find("corpus"), std::string::npos) << yaml;
}

TEST(LmDataConfig, AnExperimentsFormatsAndLevelKeyAreWhatUsersSee) {
  Section s;
  s.data.formats = {"wikitext", "text", "ptb_word"};
  s.data.level_key = false;
  s.data.corpus.level = "word";
  std::string m = message_of([&] { config::apply_override(s, "data.format=ptb_char"); });
  EXPECT_NE(m.find("data.format: must be one of wikitext, text, ptb_word, got 'ptb_char'"),
            std::string::npos)
      << m;
  m = message_of([&] { config::apply_override(s, "data.level=char"); });
  EXPECT_NE(m.find("unknown key 'data.level'"), std::string::npos) << m;
  EXPECT_EQ(s.data.corpus.level, "word");
  EXPECT_EQ(config::to_yaml(s).find("level"), std::string::npos);
  config::apply_override(s, "data.format=wikitext");
  EXPECT_EQ(s.data.corpus.format, "wikitext");
}

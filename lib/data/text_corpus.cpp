#include "data/text_corpus.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>

#include "core/check.hpp"
#include "core/fs.hpp"

namespace seqbench::data {

std::string printable_token(std::string_view tok) {
  std::string out;
  for (const char ch : tok) {
    const auto c = static_cast<unsigned char>(ch);
    if (c == '\n') out += "\\n";
    else if (c == '\t') out += "\\t";
    else if (c == '\r') out += "\\r";
    else if (c == '\\' || c == '\'') out += {'\\', ch};
    else if (c < 0x20 || c >= 0x7f) out += fmt::format("\\x{:02x}", c);
    else out += ch;
  }
  return out;
}

int32_t Vocab::find(const std::string& tok) const {
  const auto it = stoi.find(tok);
  return it == stoi.end() ? -1 : it->second;
}

int32_t Vocab::id(const std::string& tok) const {
  const int32_t i = find(tok);
  if (i >= 0) return i;
  SB_CHECK(unk >= 0,
           "token '{}' is not in the vocabulary ({} entries, no {}) (hint: a closed vocabulary "
           "such as ptb_char's only knows the symbols of its training file)",
           printable_token(tok), size(), kUnkToken);
  return unk;
}

int32_t Vocab::add(const std::string& tok) {
  const auto [it, inserted] = stoi.try_emplace(tok, int32_t(itos.size()));
  if (inserted) {
    SB_CHECK(itos.size() < size_t(INT32_MAX), "vocabulary is full at {} entries", itos.size());
    itos.push_back(tok);
    if (tok == kUnkToken) unk = it->second;
  }
  return it->second;
}

namespace {

// One split's text and where it came from, for messages.
struct Part {
  std::string file;        // the file it was read from
  std::string_view text;   // the split's bytes (a view into the owned file contents)
  int64_t first_line = 1;  // line number of text[0] in file
};

// Calls f(token, line) for every token of text. Word level: whitespace-separated tokens,
// then kEosToken at the end of every line; the piece after a final '\n' is not a line.
template <class F>
void for_each_word(std::string_view text, int64_t first_line, F&& f) {
  const std::string_view eos(kEosToken);
  int64_t line = first_line;
  size_t i = 0;
  const size_t n = text.size();
  while (i < n) {
    size_t end = text.find('\n', i);
    if (end == std::string_view::npos) end = n;
    size_t j = i;
    while (j < end) {
      while (j < end && (text[j] == ' ' || text[j] == '\t' || text[j] == '\r' ||
                         text[j] == '\v' || text[j] == '\f'))
        ++j;
      size_t k = j;
      while (k < end && !(text[k] == ' ' || text[k] == '\t' || text[k] == '\r' ||
                          text[k] == '\v' || text[k] == '\f'))
        ++k;
      if (k > j) f(text.substr(j, k - j), line);
      j = k;
    }
    f(eos, line);
    ++line;
    i = end + 1;
  }
}

std::string hint_for(const std::string& format) {
  if (format == "ptb_char" || format == "ptb_word")
    return "hint: PTB is not redistributed; put the ptb files there, or use a stand-in: "
           "tools/fetch_data brown, then format: text, dir: data/brown (docs/data.md)";
  if (format == "wikitext")
    return "hint: put wiki.train.tokens, wiki.valid.tokens, wiki.test.tokens there, or use a "
           "stand-in: tools/fetch_data gcide, then format: text, dir: data/gcide (docs/data.md)";
  return "hint: tools/fetch_data brown|gcide|kjv writes data/<name>/{train,valid,test}.txt "
         "(docs/data.md)";
}

std::string read_corpus_file(const std::string& file, const std::string& format) {
  SB_CHECK(core::file_exists(file), "corpus file '{}' not found ({})", file, hint_for(format));
  std::string bytes = core::read_file(file);
  SB_CHECK(!bytes.empty(), "corpus file '{}' is empty ({})", file, hint_for(format));
  return bytes;
}

std::string base_name(std::string p, bool strip_extension) {
  while (p.size() > 1 && p.back() == '/') p.pop_back();
  const size_t slash = p.rfind('/');
  if (slash != std::string::npos) p = p.substr(slash + 1);
  if (strip_extension) {
    const size_t dot = p.rfind('.');
    if (dot != std::string::npos && dot > 0) p = p.substr(0, dot);
  }
  return p;
}

// Byte offset at which the text after `at` starts a new line (or the end).
size_t next_line_start(std::string_view text, size_t at) {
  if (at == 0 || at >= text.size() || text[at - 1] == '\n') return std::min(at, text.size());
  const size_t nl = text.find('\n', at);
  return nl == std::string_view::npos ? text.size() : nl + 1;
}

int64_t count_lines(std::string_view text) {
  int64_t n = 0;
  for (const char c : text) n += c == '\n';
  return n;
}

void check_rules(const CorpusConfig& cfg) {
  const auto bad = [](const std::string& msg) { throw core::UsageError(msg); };
  if (cfg.format != "ptb_char" && cfg.format != "ptb_word" && cfg.format != "wikitext" &&
      cfg.format != "text")
    bad(fmt::format("corpus format '{}' is unknown (ptb_char | ptb_word | wikitext | text)",
                    cfg.format));
  if (cfg.format == "text" && cfg.level != "char" && cfg.level != "word")
    bad(fmt::format("corpus level '{}' is unknown (char | word)", cfg.level));
  if (cfg.min_count < 1)
    bad(fmt::format("corpus min_count must be at least 1, got {} (hint: 1 keeps every token)",
                    cfg.min_count));
  if (!cfg.dir.empty() && !cfg.path.empty())
    bad(fmt::format("corpus dir '{}' and path '{}' are both set; a corpus is read from one "
                    "(hint: dir for the three split files, path for one file to cut)",
                    cfg.dir, cfg.path));
  if (cfg.format != "text" && cfg.dir.empty())
    bad(fmt::format("corpus format {} needs dir, the directory with its three files ({})",
                    cfg.format, hint_for(cfg.format)));
  if (cfg.format == "text" && cfg.dir.empty()) {
    if (cfg.path.empty())
      bad("corpus format text needs dir (train.txt, valid.txt, test.txt) or path (one file "
          "cut into train | valid | test by valid_fraction and test_fraction)");
    if (!(cfg.valid_fraction > 0 && cfg.test_fraction > 0 &&
          cfg.valid_fraction + cfg.test_fraction < 1))
      bad(fmt::format("corpus valid_fraction {} and test_fraction {} must be positive with a sum "
                      "below 1 (hint: 0.05 and 0.05)",
                      cfg.valid_fraction, cfg.test_fraction));
  }
}

}  // namespace

Corpus load_corpus(const CorpusConfig& cfg) {
  check_rules(cfg);
  const bool char_level = cfg.format == "text" && cfg.level == "char";
  const bool open_vocab = cfg.format == "text";

  // Owned file contents; the parts view into them.
  std::array<std::string, 3> contents;
  std::array<Part, 3> parts;
  Corpus corpus;
  if (!cfg.dir.empty()) {
    std::array<std::string, 3> names;
    if (cfg.format == "ptb_char") names = {"ptb.char.train.txt", "ptb.char.valid.txt", "ptb.char.test.txt"};
    else if (cfg.format == "ptb_word") names = {"ptb.train.txt", "ptb.valid.txt", "ptb.test.txt"};
    else if (cfg.format == "wikitext") names = {"wiki.train.tokens", "wiki.valid.tokens", "wiki.test.tokens"};
    else names = {"train.txt", "valid.txt", "test.txt"};
    SB_CHECK(core::file_exists(cfg.dir), "corpus directory '{}' does not exist ({})", cfg.dir,
             hint_for(cfg.format));
    corpus.digest = check_files({cfg.dir + "/" + names[0], cfg.dir + "/" + names[1],
                                 cfg.dir + "/" + names[2]});
    for (size_t s = 0; s < 3; ++s) {
      parts[s].file = cfg.dir + "/" + names[s];
      contents[s] = read_corpus_file(parts[s].file, cfg.format);
      parts[s].text = contents[s];
    }
    corpus.name = base_name(cfg.dir, false);
  } else {
    corpus.digest = check_files({cfg.path});
    contents[0] = read_corpus_file(cfg.path, cfg.format);
    const std::string_view all = contents[0];
    const auto n = double(all.size());
    size_t cut1 = size_t(std::llround(n * (1.0 - cfg.valid_fraction - cfg.test_fraction)));
    size_t cut2 = size_t(std::llround(n * (1.0 - cfg.test_fraction)));
    if (!char_level) {
      cut1 = next_line_start(all, cut1);
      cut2 = next_line_start(all, std::max(cut1, cut2));
    }
    const std::array<size_t, 4> at = {0, cut1, cut2, all.size()};
    int64_t line = 1;
    for (size_t s = 0; s < 3; ++s) {
      parts[s].file = cfg.path;
      parts[s].text = all.substr(at[s], at[s + 1] - at[s]);
      parts[s].first_line = line;
      line += count_lines(parts[s].text);
      static constexpr const char* kSplit[3] = {"train", "valid", "test"};
      SB_CHECK(!parts[s].text.empty(),
               "corpus file '{}' ({} bytes, {} lines) leaves the {} split empty (hint: a "
               "word-level split cuts at line starts; use a longer file or larger fractions)",
               cfg.path, all.size(), count_lines(all), kSplit[s]);
    }
    corpus.name = base_name(cfg.path, true);
  }
  corpus.name += ":" + cfg.format + (cfg.format == "text" ? "-" + cfg.level : "");

  Vocab& vocab = corpus.vocab;
  std::array<std::vector<int32_t>*, 3> dst = {&corpus.train, &corpus.valid, &corpus.test};
  if (char_level) {
    // Bytes index a table directly: no string per token on 10^8-byte files.
    std::array<int64_t, 256> counts{};
    std::vector<unsigned char> order;  // bytes by first appearance in train
    for (const char ch : parts[0].text) {
      const auto c = static_cast<unsigned char>(ch);
      if (counts[c]++ == 0) order.push_back(c);
    }
    std::array<int32_t, 256> ids;
    ids.fill(-1);
    bool dropped = false;
    for (const unsigned char c : order) {
      if (counts[c] >= cfg.min_count) ids[c] = vocab.add(std::string(1, char(c)));
      else dropped = true;
    }
    if (dropped || open_vocab) vocab.add(kUnkToken);
    for (size_t s = 0; s < 3; ++s) {
      dst[s]->resize(parts[s].text.size());
      int32_t* out = dst[s]->data();  // (tokens)
      for (const char ch : parts[s].text) {
        const int32_t i = ids[static_cast<unsigned char>(ch)];
        *out++ = i >= 0 ? i : vocab.unk;
      }
    }
    return corpus;
  }

  // Word level (also ptb_char, whose tokens are the space-separated symbols).
  std::unordered_map<std::string, int64_t> counts;
  std::vector<std::string> order;
  std::string key;
  int64_t real_tokens = 0;
  for_each_word(parts[0].text, parts[0].first_line, [&](std::string_view tok, int64_t) {
    key.assign(tok);
    const auto [it, inserted] = counts.try_emplace(key, 0);
    if (inserted) order.push_back(key);
    ++it->second;
  });
  for (const auto& [tok, n] : counts) real_tokens += tok == kEosToken ? 0 : n;
  SB_CHECK(real_tokens > 0, "corpus file '{}' has no tokens, only blank lines ({})",
           parts[0].file, hint_for(cfg.format));
  bool dropped = false;
  for (const std::string& tok : order) {
    // <eos> and <unk> stay whatever their count: the model must be able to emit them.
    if (counts[tok] >= cfg.min_count || tok == kEosToken || tok == kUnkToken) vocab.add(tok);
    else dropped = true;
  }
  if (dropped || open_vocab) vocab.add(kUnkToken);

  for (size_t s = 0; s < 3; ++s) {
    std::vector<int32_t>& out = *dst[s];
    int64_t real = 0;
    for_each_word(parts[s].text, parts[s].first_line, [&](std::string_view tok, int64_t line) {
      key.assign(tok);
      int32_t i = vocab.find(key);
      if (i < 0) {
        SB_CHECK(vocab.unk >= 0,
                 "corpus file '{}' line {}: token '{}' does not occur in '{}' and the vocabulary "
                 "has no {} (hint: {} has a closed vocabulary; check that the files belong "
                 "together)",
                 parts[s].file, line, printable_token(tok), parts[0].file, kUnkToken, cfg.format);
        i = vocab.unk;
      }
      real += tok != kEosToken;
      out.push_back(i);
    });
    SB_CHECK(real > 0, "corpus file '{}' has no tokens, only blank lines ({})", parts[s].file,
             hint_for(cfg.format));
  }
  return corpus;
}

}  // namespace seqbench::data

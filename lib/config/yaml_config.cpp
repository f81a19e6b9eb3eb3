#include "config/yaml_config.hpp"

#include <fmt/format.h>
#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/parser.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <set>
#include <sstream>
#include <system_error>

#include "core/check.hpp"
#include "core/input_file.hpp"
#include "core/text.hpp"

namespace seqbench::config::detail {
namespace {

// What a node is, for "got ..." in messages.
std::string describe_node(const YAML::Node& node) {
  if (!node.IsDefined() || node.IsNull()) return "null";
  if (node.IsSequence()) return "a list";
  if (node.IsMap()) return "a mapping";
  std::string s = node.Scalar();
  if (s.size() > 60) s = s.substr(0, 57) + "...";
  return "'" + s + "'";
}

using core::join;
using core::lower;

std::string unknown_key_message(const std::string& key, const std::string& prefix,
                                const std::vector<std::string>& names, const Source& src) {
  const std::string path = join_key(prefix, key);
  std::string msg = fmt::format("unknown key '{}'", path);
  const auto& all = src.all_keys;
  if (key.find('.') != std::string::npos && std::find(all.begin(), all.end(), path) != all.end())
    return msg + " (hint: write nested mappings, not dotted keys, in YAML files)";
  if (std::string best = nearest_key(key, names); !best.empty())
    return msg + fmt::format(" (did you mean '{}'?)", join_key(prefix, best));
  // Right name, wrong level: "lr:" at the top instead of under "optim:".
  for (const std::string& candidate : all) {
    const std::size_t dot = candidate.rfind('.');
    const std::string leaf = dot == std::string::npos ? candidate : candidate.substr(dot + 1);
    if (leaf == key) return msg + fmt::format(" (did you mean '{}'?)", candidate);
  }
  return msg + fmt::format(" (valid keys here: {})", join(names, ", "));
}

[[noreturn]] void internal_constraint_error(const Where& where, std::string_view constraint,
                                            std::string_view what) {
  throw core::Error(
      fmt::format("config key '{}': constraint {} does not apply to {} (fix the struct's visit())",
                  where.path, constraint, what));
}

const char* constraint_name(Constraint::Kind kind) {
  switch (kind) {
    case Constraint::Kind::kAny:
      return "any()";
    case Constraint::Kind::kInterval:
      return "an interval (range(), positive(), ...)";
    case Constraint::Kind::kOneOf:
      return "one_of()";
  }
  return "?";
}

struct ParsedInt {
  bool negative = false;
  uint64_t magnitude = 0;
  bool overflow = false;  // more than 64 bits of magnitude
};

// Decimal only, optional sign: "1.5", "1e3" and "0x10" are not integers here.
bool parse_int(const std::string& s, ParsedInt& out) {
  std::size_t pos = 0;
  if (pos < s.size() && (s[pos] == '+' || s[pos] == '-')) out.negative = s[pos++] == '-';
  if (pos == s.size()) return false;
  for (std::size_t i = pos; i < s.size(); ++i)
    if (!std::isdigit(static_cast<unsigned char>(s[i]))) return false;
  auto [ptr, ec] = std::from_chars(s.data() + pos, s.data() + s.size(), out.magnitude);
  if (ec == std::errc::result_out_of_range) {
    out.overflow = true;
    return true;
  }
  return ec == std::errc() && ptr == s.data() + s.size();
}

enum class ParsedDouble { kOk, kNotANumber, kOutOfRange };

// YAML spellings for infinity (.inf) are accepted; NaN is not (no constraint could hold).
ParsedDouble parse_double(const std::string& s, double& out) {
  std::size_t pos = 0;
  bool negative = false;
  if (pos < s.size() && (s[pos] == '+' || s[pos] == '-')) negative = s[pos++] == '-';
  const std::string body = s.substr(pos);
  if (body == ".inf" || body == ".Inf" || body == ".INF") {
    out = negative ? -HUGE_VAL : HUGE_VAL;
    return ParsedDouble::kOk;
  }
  if (body.empty() || !(std::isdigit(static_cast<unsigned char>(body[0])) || body[0] == '.'))
    return ParsedDouble::kNotANumber;
  double x = 0.0;
  auto [ptr, ec] = std::from_chars(body.data(), body.data() + body.size(), x);
  if (ec == std::errc::result_out_of_range) return ParsedDouble::kOutOfRange;
  if (ec != std::errc() || ptr != body.data() + body.size()) return ParsedDouble::kNotANumber;
  out = negative ? -x : x;
  return ParsedDouble::kOk;
}

// Strings that a YAML reader would take for null, a bool or a number must be quoted to come
// back as strings.
bool needs_quotes(const std::string& s) {
  static const std::set<std::string> kSpecial = {"~",  "null", "true", "false", "yes", "no",
                                                 "on", "off",  "y",    "n",     ".nan"};
  if (s.empty() || kSpecial.count(lower(s))) return true;
  ParsedInt as_int;
  double as_double = 0.0;
  return parse_int(s, as_int) || parse_double(s, as_double) != ParsedDouble::kNotANumber;
}

}  // namespace

void fail(const Source& src, const YAML::Mark& mark, const std::string& msg) {
  if (src.has_lines && mark.line >= 0)
    throw core::UsageError(fmt::format("{}:{}: {}", src.name, mark.line + 1, msg));
  throw core::UsageError(fmt::format("{}: {}", src.name, msg));
}

void fail_type(const Where& where, std::string_view expected, const YAML::Node& node) {
  std::string msg =
      fmt::format("{}: expected {}, got {}", where.path, expected, describe_node(node));
  if (expected == "a string" && node.IsNull()) msg += " (hint: write '' for an empty string)";
  fail(*where.src, where.mark, msg);
}

std::string join_key(const std::string& prefix, std::string_view key) {
  return prefix.empty() ? std::string(key) : prefix + "." + std::string(key);
}

YAML::Mark value_mark(const YAML::Node& key, const YAML::Node& value) {
  return value.IsNull() ? key.Mark() : value.Mark();
}

bool decode_bool(const YAML::Node& node, const Where& where) {
  if (node.IsScalar()) {
    if (node.Scalar() == "true") return true;
    if (node.Scalar() == "false") return false;
  }
  fail_type(where, "a boolean (true or false)", node);
}

int64_t decode_signed(const YAML::Node& node, const Where& where, int64_t lo, int64_t hi) {
  ParsedInt parsed;
  if (!node.IsScalar() || !parse_int(node.Scalar(), parsed)) fail_type(where, "an integer", node);
  // Within int64 first (a negative number may reach 2^63), then within [lo, hi]: a lower
  // bound above zero (jobs: 0) is a bound too.
  const uint64_t int64_limit = uint64_t(std::numeric_limits<int64_t>::max()) + (parsed.negative ? 1 : 0);
  const auto out_of_range = [&] {
    fail_type(where, fmt::format("an integer in [{}, {}]", lo, hi), node);
  };
  if (parsed.overflow || parsed.magnitude > int64_limit) out_of_range();
  // Two's complement negation in unsigned arithmetic; the conversion is exact in C++20.
  const int64_t v = parsed.negative ? static_cast<int64_t>(~parsed.magnitude + 1)
                                    : static_cast<int64_t>(parsed.magnitude);
  if (v < lo || v > hi) out_of_range();
  return v;
}

uint64_t decode_unsigned(const YAML::Node& node, const Where& where, uint64_t hi) {
  ParsedInt parsed;
  if (!node.IsScalar() || !parse_int(node.Scalar(), parsed)) fail_type(where, "an integer", node);
  if (parsed.overflow || parsed.magnitude > hi || (parsed.negative && parsed.magnitude != 0))
    fail_type(where, fmt::format("an integer in [0, {}]", hi), node);
  return parsed.magnitude;
}

double decode_double(const YAML::Node& node, const Where& where) {
  double value = 0.0;
  if (!node.IsScalar()) fail_type(where, "a number", node);
  switch (parse_double(node.Scalar(), value)) {
    case ParsedDouble::kOk:
      return value;
    case ParsedDouble::kOutOfRange:
      fail_type(where, "a number within double range", node);
    case ParsedDouble::kNotANumber:
      break;
  }
  fail_type(where, "a number", node);
}

std::string decode_string(const YAML::Node& node, const Where& where) {
  if (!node.IsScalar()) fail_type(where, "a string", node);
  // Labels, paths and specs are one line of text. A control character (say a stray '\r'
  // kept by yaml-cpp) would not survive the config's own round trip (--dump-config, resume).
  for (const char ch : node.Scalar()) {
    const auto byte = static_cast<unsigned char>(ch);
    if (byte < 0x20 || byte == 0x7f)
      fail(*where.src, where.mark,
           fmt::format("{}: the value holds a control character (\\x{:02x}); a config string is "
                       "one line of printable text",
                       where.path, byte));
  }
  return node.Scalar();
}

void check_number(const Constraint& c, double value, const YAML::Node& node, const Where& where) {
  if (c.kind == Constraint::Kind::kOneOf) internal_constraint_error(where, "one_of()", "a number");
  if (c.admits(value)) return;
  // Show the value as written ("1e-3", not "0.001") so it can be found in the source.
  fail(*where.src, where.mark,
       fmt::format("{}: must be {}, got {}{}", where.path, c.rule(), node.Scalar(), c.hint_suffix()));
}

void check_string(const Constraint& c, const std::string& value, const Where& where) {
  if (c.kind == Constraint::Kind::kAny) return;
  if (c.kind != Constraint::Kind::kOneOf)
    internal_constraint_error(where, constraint_name(c.kind), "a string");
  if (std::find(c.choices.begin(), c.choices.end(), value) != c.choices.end()) return;
  std::string msg =
      fmt::format("{}: must be one of {}, got '{}'", where.path, join(c.choices, ", "), value);
  if (std::string best = nearest_key(value, c.choices); !best.empty())
    msg += fmt::format(" (did you mean '{}'?)", best);
  msg += c.hint_suffix();
  fail(*where.src, where.mark, msg);
}

void check_unconstrained(const Constraint& c, const Where& where, std::string_view what) {
  if (c.kind != Constraint::Kind::kAny)
    internal_constraint_error(where, constraint_name(c.kind), what);
}

void check_keys(const YAML::Node& map, const std::vector<std::string>& names,
                const std::string& prefix, const Source& src) {
  std::set<std::string> declared;
  for (const std::string& name : names) {
    SB_CHECK(!name.empty() && name.find('.') == std::string::npos,
             "config key '{}' must be a plain name without dots (fix the struct's visit())",
             join_key(prefix, name));
    SB_CHECK(declared.insert(name).second,
             "config key '{}' is declared twice (fix the struct's visit())",
             join_key(prefix, name));
  }
  std::set<std::string> seen;
  for (const auto& entry : map) {
    const YAML::Node key_node = entry.first;
    if (!key_node.IsScalar())
      fail(src, key_node.Mark(),
           fmt::format("{}: keys must be plain names, got {}",
                       prefix.empty() ? "top level" : prefix, describe_node(key_node)));
    const std::string& key = key_node.Scalar();
    if (!declared.count(key))
      fail(src, key_node.Mark(), unknown_key_message(key, prefix, names, src));
    if (!seen.insert(key).second)
      fail(src, key_node.Mark(),
           fmt::format("duplicate key '{}' (it appears twice in the same mapping)",
                       join_key(prefix, key)));
  }
}

std::string nearest_key(const std::string& key, const std::vector<std::string>& candidates) {
  return core::nearest(key, candidates);
}

namespace {

// Sees one document's events without building it: where it starts and whether it holds
// anything (an empty document between two '---' is no document).
class DocumentProbe : public YAML::EventHandler {
 public:
  YAML::Mark start;
  bool content = false;

  void OnDocumentStart(const YAML::Mark& mark) override { start = mark; }
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark&, YAML::anchor_t) override {}
  void OnAlias(const YAML::Mark&, YAML::anchor_t) override { content = true; }
  void OnScalar(const YAML::Mark&, const std::string&, YAML::anchor_t, const std::string&) override {
    content = true;
  }
  void OnSequenceStart(const YAML::Mark&, const std::string&, YAML::anchor_t,
                       YAML::EmitterStyle::value) override {
    content = true;
  }
  void OnSequenceEnd() override {}
  void OnMapStart(const YAML::Mark&, const std::string&, YAML::anchor_t,
                  YAML::EmitterStyle::value) override {
    content = true;
  }
  void OnMapEnd() override {}
};

// Whether a YAML text has nothing but blank lines, comments and document markers.
bool only_comments(std::string_view text) {
  while (!text.empty()) {
    const size_t eol = text.find('\n');
    std::string_view line = text.substr(0, eol);
    text = eol == std::string_view::npos ? std::string_view{} : text.substr(eol + 1);
    const size_t first = line.find_first_not_of(" \t\r");
    if (first == std::string_view::npos) continue;
    line = line.substr(first);
    if (line[0] == '#' || line.starts_with("---") || line.starts_with("...")) continue;
    return false;
  }
  return true;
}

}  // namespace

YAML::Node load_text(const std::string& text, const std::string& source) {
  // The first document, then a look at whether a second one follows. Not YAML::LoadAll:
  // in yaml-cpp 0.7 it never returns (and allocates without bound) on some malformed
  // input, such as a lone ',' (jbeder/yaml-cpp#1040, fixed upstream in 2024), because
  // the parser keeps reporting empty documents; found by fuzz/config_fuzz.cpp.
  try {
    YAML::Node first = YAML::Load(text);
    // yaml-cpp 0.7 also reads some malformed text (a lone ',') as an empty document.
    if (first.IsNull() && !only_comments(text))
      throw core::UsageError(fmt::format("{}: malformed YAML: no document found in its text "
                                         "(a stray ',' or an empty value?)",
                                         source));
    std::istringstream in(text);
    YAML::Parser parser(in);
    DocumentProbe probe;
    if (parser.HandleNextDocument(probe)) {
      DocumentProbe second;
      if (parser.HandleNextDocument(second) && second.content)
        fail(Source{source, true, {}}, second.start,
             "found a second YAML document after '---'; a config file holds one");
    }
    return first;
  } catch (const YAML::Exception& e) {
    if (e.mark.is_null())
      throw core::UsageError(fmt::format("{}: malformed YAML: {}", source, e.msg));
    throw core::UsageError(fmt::format("{}:{}:{}: malformed YAML: {}", source, e.mark.line + 1,
                                       e.mark.column + 1, e.msg));
  }
}

std::string read_config_file(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::exists(path, ec)) {
    const fs::path cwd = fs::current_path(ec);
    throw core::UsageError(
        fmt::format("config file '{}' not found (hint: paths are relative to the current "
                             "directory, {})",
                             path, ec ? std::string("unknown") : cwd.string()));
  }
  if (fs::is_directory(path, ec))
    throw core::UsageError(fmt::format("config file '{}' is a directory, not a YAML file", path));
  // A regular file of at most 16 MiB: a FIFO or /dev/zero named as a config is refused
  // at once instead of waiting or filling memory.
  try {
    return core::read_input(path, core::kMaxTextFile);
  } catch (const core::Error& e) {
    throw core::UsageError(fmt::format("config file: {}", e.what()));
  }
}

YAML::Node override_node(const std::string& assignment, const std::string& source) {
  const std::size_t eq = assignment.find('=');
  auto usage = [&] { return core::UsageError(source + ": expected key.path=value"); };
  if (eq == std::string::npos) throw usage();
  // Trim the key so "optim.lr = 0.1" (quoted as one argument) still works.
  std::string key = assignment.substr(0, eq);
  key.erase(0, key.find_first_not_of(" \t"));
  key.erase(key.find_last_not_of(" \t") + 1);
  // One pass over the key, and at most kMaxKeyDepth parts (no config key is deeper than a
  // few), so a key of thousands of dots costs nothing downstream.
  constexpr std::size_t kMaxKeyDepth = 16;
  std::vector<std::string> parts;
  std::size_t start = 0;
  while (true) {
    const std::size_t dot = key.find('.', start);
    parts.push_back(key.substr(start, dot == std::string::npos ? std::string::npos : dot - start));
    if (parts.back().empty()) throw usage();
    if (parts.size() > kMaxKeyDepth)
      throw core::UsageError(fmt::format("{}: the key has more than {} parts; no config key is "
                                         "that deep",
                                         source, kMaxKeyDepth));
    if (dot == std::string::npos) break;
    start = dot + 1;
  }
  const std::string value = assignment.substr(eq + 1);
  YAML::Node node;
  try {
    node = YAML::Load(value);
    // One YAML value: a second document ("1\n---\n2") is refused, not dropped.
    std::istringstream in(value);
    YAML::Parser parser(in);
    DocumentProbe first, second;
    if (parser.HandleNextDocument(first) && parser.HandleNextDocument(second) && second.content)
      throw core::UsageError(fmt::format(
          "{}: the value holds a second YAML document (after '---'); a --set value is one", source));
  } catch (const YAML::Exception& e) {
    throw core::UsageError(fmt::format("{}: malformed YAML: {}", source, e.msg));
  }
  for (auto it = parts.rbegin(); it != parts.rend(); ++it) {
    YAML::Node map(YAML::NodeType::Map);
    map[*it] = node;
    node.reset(map);  // rebind; operator= would overwrite the node map[*it] refers to
  }
  return node;
}

void emit_double(YAML::Emitter& out, double value) {
  if (std::isinf(value)) {
    out << (value > 0 ? ".inf" : "-.inf");
    return;
  }
  std::string s = fmt::format("{}", value);  // shortest text that reads back exactly
  // Keep doubles recognisable as such for other YAML readers ("1" would read as an int).
  if (s.find_first_of(".eEn") == std::string::npos) s += ".0";
  out << s;
}

void emit_string(YAML::Emitter& out, const std::string& value) {
  if (needs_quotes(value)) out << YAML::DoubleQuoted;
  out << value;
}

}  // namespace seqbench::config::detail

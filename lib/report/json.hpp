// Flat JSON objects for summary.json and JSON-lines logs. Keys keep insertion order so
// files diff cleanly between runs; setting an existing key replaces its value in place.
// Numbers use fmt's shortest round-trip form; NaN and +-inf (not valid JSON) are null.
#pragma once

#include <fmt/format.h>

#include <concepts>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace seqbench::report {

// s as a JSON string literal including the quotes; control characters, " and \ escaped,
// other UTF-8 passed through.
std::string json_quote(std::string_view s);

class JsonObject {
 public:
  JsonObject& set(const std::string& k, double v);
  JsonObject& set(const std::string& k, int64_t v);
  JsonObject& set(const std::string& k, const std::string& v);
  JsonObject& set(const std::string& k, bool v);
  // Without this a string literal would pick the bool overload (pointer -> bool).
  JsonObject& set(const std::string& k, const char* v) { return set(k, std::string(v)); }
  // Other integer types (int, size_t, uint64_t), so set(k, 3) is not ambiguous.
  template <std::integral I>
  requires(!std::same_as<I, int64_t> &&
           !std::same_as<I, bool>) JsonObject& set(const std::string& k, I v) {
    return set_raw(k, fmt::format("{}", v));
  }

  // {"a": 1, "b": "x"} on one line (for JSON lines).
  std::string str() const;
  // One key per line, two-space indent, trailing newline (for summary.json).
  std::string pretty() const;
  bool empty() const { return items_.empty(); }

 private:
  JsonObject& set_raw(const std::string& k, std::string encoded);
  std::vector<std::pair<std::string, std::string>> items_;  // key -> encoded value
};

}  // namespace seqbench::report

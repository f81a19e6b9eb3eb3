// Flat JSON objects for summary.json and JSON-lines logs, held in nlohmann::ordered_json:
// keys keep insertion order so files diff cleanly between runs, and setting an existing
// key replaces its value in place. The library escapes strings (bytes that are not UTF-8
// become U+FFFD) and prints doubles in a shortest form that reads back to the same value;
// a double with a whole value below 1e16 is written as an integer ("1000", not "1000.0"),
// and NaN and +-inf (not valid JSON) are null.
#pragma once

#include <nlohmann/json.hpp>

#include <concepts>
#include <string>

namespace seqbench::report {

class JsonObject {
 public:
  JsonObject& set(const std::string& k, double v);
  // Strings (a string literal stays a string), bools and integers of any width.
  template <class T>
  requires(!std::floating_point<T>) JsonObject& set(const std::string& k, const T& v) {
    j_[k] = v;
    return *this;
  }

  // {"a": 1, "b": "x"} on one line (for JSON lines).
  std::string str() const;
  // One key per line, two-space indent, trailing newline (for summary.json).
  std::string pretty() const;
  bool empty() const { return j_.empty(); }
  const nlohmann::ordered_json& json() const { return j_; }

 private:
  nlohmann::ordered_json j_ = nlohmann::ordered_json::object();
};

}  // namespace seqbench::report

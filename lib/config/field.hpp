// What a config struct needs to describe its fields; deliberately free of YAML and CLI11
// so that every module can own its config struct without depending on the config library.
//
// A config struct lists its fields in a visit() template; the config library supplies the
// visitors (read YAML, write YAML, list keys):
//
//   struct ScheduleConfig {
//     std::string kind = "none";
//     double gamma = 0.1;
//     template <class V> void visit(V& v) {
//       v("kind", kind, "none | step | plateau", config::one_of({"none", "step", "plateau"}));
//       v("gamma", gamma, "decay factor", config::range(0.0, 1.0));
//     }
//   };
//
// v(key, field, doc, constraint = any()). Keys are plain names (no dots) unique within the
// struct; doc is one line. Field types: bool, signed and unsigned integers, double,
// std::string, std::optional<T> and std::vector<T> of those, and nested structs that have
// their own visit() (a nested struct takes no constraint). See docs/configs.md.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace seqbench::config {

// A check on a field's value. Numeric kinds apply to numbers (and to each element of a
// vector of numbers); kOneOf applies to strings. A kind that does not fit the field's type
// is a bug in the struct's visit() and is reported as an internal error when the field is
// read.
struct Constraint {
  enum class Kind { kAny, kGreater, kAtLeast, kRange, kOneOf };
  Kind kind = Kind::kAny;
  double lo = 0.0;  // kGreater: value > lo; kAtLeast: value >= lo; kRange: lo <= value <= hi
  double hi = 0.0;
  std::vector<std::string> choices;  // kOneOf
};

inline Constraint any() { return {}; }
inline Constraint positive() { return {Constraint::Kind::kGreater, 0.0, 0.0, {}}; }
inline Constraint non_negative() { return {Constraint::Kind::kAtLeast, 0.0, 0.0, {}}; }
inline Constraint at_least(double x) { return {Constraint::Kind::kAtLeast, x, 0.0, {}}; }
// Inclusive at both ends.
inline Constraint range(double lo, double hi) { return {Constraint::Kind::kRange, lo, hi, {}}; }
inline Constraint one_of(std::vector<std::string> choices) {
  return {Constraint::Kind::kOneOf, 0.0, 0.0, std::move(choices)};
}

}  // namespace seqbench::config

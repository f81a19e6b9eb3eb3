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

#include <fmt/format.h>

#include <cmath>
#include <limits>
#include <string>
#include <utility>
#include <vector>

namespace seqbench::config {

// A check on a field's value. kInterval applies to numbers (and to each element of a
// vector of numbers), either end open or closed or absent; kOneOf applies to strings. A
// kind that does not fit the field's type is a bug in the struct's visit() and is reported
// as an internal error when the field is read or checked (config/check.hpp).
struct Constraint {
  enum class Kind { kAny, kInterval, kOneOf };
  Kind kind = Kind::kAny;
  // kInterval: lo < value (lo_open) or lo <= value, and likewise for hi; an infinite end is
  // no bound.
  double lo = -std::numeric_limits<double>::infinity();
  double hi = std::numeric_limits<double>::infinity();
  bool lo_open = false;
  bool hi_open = false;
  std::vector<std::string> choices;  // kOneOf
  std::string hint;                  // appended to the error as "(hint: ...)", may be empty

  // The same constraint with a hint for its error message: range_below(0, 1).because("...").
  Constraint because(std::string why) const {
    Constraint c = *this;
    c.hint = std::move(why);
    return c;
  }
  // " (hint: ...)" or "".
  std::string hint_suffix() const { return hint.empty() ? "" : " (hint: " + hint + ")"; }

  // "in [0, 1)", "> 0", ">= 1": the rule as it reads in an error message.
  std::string rule() const;
  // Whether a number satisfies a kInterval constraint (NaN never does).
  bool admits(double value) const;
};

inline Constraint interval(double lo, bool lo_open, double hi, bool hi_open) {
  Constraint c;
  c.kind = Constraint::Kind::kInterval;
  c.lo = lo;
  c.hi = hi;
  c.lo_open = lo_open;
  c.hi_open = hi_open;
  return c;
}
inline Constraint any() { return {}; }
inline Constraint positive() {
  return interval(0.0, true, std::numeric_limits<double>::infinity(), false);
}
inline Constraint at_least(double x) {
  return interval(x, false, std::numeric_limits<double>::infinity(), false);
}
inline Constraint non_negative() { return at_least(0.0); }
// Any number but NaN and ±inf.
inline Constraint finite() {
  return interval(-std::numeric_limits<double>::infinity(), true,
                  std::numeric_limits<double>::infinity(), true);
}
// [lo, hi], inclusive at both ends.
inline Constraint range(double lo, double hi) { return interval(lo, false, hi, false); }
// [lo, hi): a decay or a probability that must stay below 1.
inline Constraint range_below(double lo, double hi) { return interval(lo, false, hi, true); }
// (lo, hi]: a fraction that must stay above 0.
inline Constraint range_above(double lo, double hi) { return interval(lo, true, hi, false); }
inline Constraint one_of(std::vector<std::string> choices) {
  Constraint c;
  c.kind = Constraint::Kind::kOneOf;
  c.choices = std::move(choices);
  return c;
}

inline bool Constraint::admits(double value) const {
  if (kind != Kind::kInterval) return true;
  const bool lo_ok = lo_open ? value > lo : value >= lo;
  const bool hi_ok = hi_open ? value < hi : value <= hi;
  return lo_ok && hi_ok;
}

inline std::string Constraint::rule() const {
  const auto num = [](double x) { return fmt::format("{}", x); };
  const bool has_lo = std::isfinite(lo), has_hi = std::isfinite(hi);
  if (!has_lo && !has_hi) return lo_open && hi_open ? "finite" : "a number";
  if (has_lo && !has_hi) return (lo_open ? "> " : ">= ") + num(lo);
  if (!has_lo && has_hi) return (hi_open ? "< " : "<= ") + num(hi);
  return std::string("in ") + (lo_open ? "(" : "[") + num(lo) + ", " + num(hi) +
         (hi_open ? ")" : "]");
}

}  // namespace seqbench::config

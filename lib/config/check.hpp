// The constraints a config struct declares in visit() (config/field.hpp), checked on a
// struct in memory: no YAML involved. Reading a file checks each value as it is read
// (config/yaml_config.hpp); a factory handed a struct built in code calls check() so that
// the same rules hold there, written once:
//
//   config::check(cfg, "ppo");  // throws core::UsageError "ppo.epochs: must be >= 1, got 0"
//
// Only rules that relate several fields stay in hand-written code, in a function named
// check_rules(cfg) next to the struct.
#pragma once

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "config/field.hpp"
#include "core/check.hpp"
#include "core/text.hpp"

namespace seqbench::config {

// What a field's type is, for every visitor over config structs (this checker and the
// YAML reader and writer of config/yaml_config.hpp).
namespace detail {

template <class T>
inline constexpr bool kIsOptional = false;
template <class T>
inline constexpr bool kIsOptional<std::optional<T>> = true;
template <class T>
inline constexpr bool kIsVector = false;
template <class T, class A>
inline constexpr bool kIsVector<std::vector<T, A>> = true;
template <class T>
inline constexpr bool kAlwaysFalse = false;

struct ProbeVisitor {
  template <class T>
  void operator()(std::string_view, T&, std::string_view, const Constraint& = {}) {}
};

}  // namespace detail

// A type with a visit() template is a (nested) config struct.
template <class T>
concept ConfigStruct = requires(T& t, detail::ProbeVisitor& v) {
  t.visit(v);
};

namespace check_detail {

using detail::kIsOptional;
using detail::kIsVector;

[[noreturn]] inline void misdeclared(const std::string& path, std::string_view what) {
  throw core::Error(fmt::format(
      "config key '{}': its constraint does not apply to {} (fix the struct's visit())", path,
      what));
}

struct Checker {
  std::string prefix;

  std::string path(std::string_view key) const {
    return prefix.empty() ? std::string(key) : prefix + "." + std::string(key);
  }

  template <class T>
  void value(const std::string& where, const T& v, const Constraint& c) const {
    if constexpr (kIsOptional<T>) {
      if (v) value(where, *v, c);
    } else if constexpr (kIsVector<T>) {
      for (std::size_t i = 0; i < v.size(); ++i)
        value(fmt::format("{}[{}]", where, i), v[i], c);
    } else if constexpr (ConfigStruct<T>) {
      if (c.kind != Constraint::Kind::kAny) misdeclared(where, "a nested struct");
      Checker inner{where};
      const_cast<T&>(v).visit(inner);
    } else if constexpr (std::is_same_v<T, bool>) {
      if (c.kind != Constraint::Kind::kAny) misdeclared(where, "a bool");
    } else if constexpr (std::is_arithmetic_v<T>) {
      if (c.kind == Constraint::Kind::kOneOf) misdeclared(where, "a number");
      if (!c.admits(static_cast<double>(v)))
        throw core::UsageError(
            fmt::format("{}: must be {}, got {}{}", where, c.rule(), v, c.hint_suffix()));
    } else if constexpr (std::is_same_v<T, std::string>) {
      if (c.kind == Constraint::Kind::kAny) return;
      if (c.kind != Constraint::Kind::kOneOf) misdeclared(where, "a string");
      if (std::find(c.choices.begin(), c.choices.end(), v) != c.choices.end()) return;
      const std::string best = core::nearest(v, c.choices);
      throw core::UsageError(fmt::format("{}: must be one of {}, got '{}'{}{}", where,
                                         core::join(c.choices, ", "), v,
                                         best.empty() ? "" : " (did you mean '" + best + "'?)",
                                         c.hint_suffix()));
    } else {
      static_assert(detail::kAlwaysFalse<T>, "config::check: unsupported field type");
    }
  }

  template <class T>
  void operator()(std::string_view key, T& field, std::string_view, const Constraint& c = {}) {
    value(path(key), field, c);
  }
};

}  // namespace check_detail

// Checks every field of cfg (nested structs, optionals and lists included) against the
// constraint its visit() declares; the first violation throws core::UsageError naming the
// dotted key under `prefix`, the rule and the value.
template <class Cfg>
void check(const Cfg& cfg, const std::string& prefix = "") {
  check_detail::Checker c{prefix};
  const_cast<Cfg&>(cfg).visit(c);
}

}  // namespace seqbench::config

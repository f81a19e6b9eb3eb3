// Typed config structs <-> YAML. A struct describes its fields with visit() (see
// config/field.hpp); this header supplies the visitors that read YAML into it, write it back
// out and list its keys. Precedence comes from call order: each source overwrites only the
// keys it contains, so defaults < file 1 < file 2 < --set when applied in that order.
//
// Every mistake in a source throws core::UsageError (exit code 2) with a one-line message
// naming the source, the 1-based line and the dotted key, e.g.
//   configs/x.yaml:12: unknown key 'optim.lrr' (did you mean 'optim.lr'?)
//   configs/x.yaml:3: optim.lr: expected a number, got 'fast'
//   --set optim.lr=-1: optim.lr: must be > 0, got -1
// A source is applied all-or-nothing: on error the config is left as it was.
#pragma once

#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "config/check.hpp"
#include "config/field.hpp"

namespace seqbench::config {

namespace detail {

// Where the values being read come from.
struct Source {
  std::string name;                   // "configs/x.yaml" or "--set optim.lr=0.01"
  bool has_lines = true;              // false for --set: the command line has no line numbers
  std::vector<std::string> all_keys;  // every dotted key of the root struct, for suggestions
};

// The value being read: its source, the line to blame and its dotted key ("model.sizes[2]").
struct Where {
  const Source* src;
  YAML::Mark mark;
  std::string path;
};

[[noreturn]] void fail(const Source& src, const YAML::Mark& mark, const std::string& msg);
// "<path>: expected <expected>, got <what node is>"
[[noreturn]] void fail_type(const Where& where, std::string_view expected, const YAML::Node& node);
std::string join_key(const std::string& prefix, std::string_view key);
// A null value has no useful mark of its own (yaml-cpp points at the next token), so blame
// the key's line for it.
YAML::Mark value_mark(const YAML::Node& key, const YAML::Node& value);

bool decode_bool(const YAML::Node& node, const Where& where);
int64_t decode_signed(const YAML::Node& node, const Where& where, int64_t lo, int64_t hi);
uint64_t decode_unsigned(const YAML::Node& node, const Where& where, uint64_t hi);
double decode_double(const YAML::Node& node, const Where& where);
std::string decode_string(const YAML::Node& node, const Where& where);
void check_number(const Constraint& c, double value, const YAML::Node& node, const Where& where);
void check_string(const Constraint& c, const std::string& value, const Where& where);
// Bools and nested structs take no constraint; one given is a bug in the struct's visit().
void check_unconstrained(const Constraint& c, const Where& where, std::string_view what);

// Rejects keys of `map` that are not in `names` (with a suggestion), duplicates and
// non-scalar keys; also checks the struct's own names (non-empty, no dots, unique).
void check_keys(const YAML::Node& map, const std::vector<std::string>& names,
                const std::string& prefix, const Source& src);
// The closest of `candidates` to `key` by edit distance, or "" when none is close enough.
std::string nearest_key(const std::string& key, const std::vector<std::string>& candidates);

// Parses a whole config text (one YAML document; empty text gives a null node).
YAML::Node load_text(const std::string& text, const std::string& source);
std::string read_config_file(const std::string& path);
// "a.b=v" -> {a: {b: v}} with v parsed as a YAML node.
YAML::Node override_node(const std::string& assignment, const std::string& source);

void emit_double(YAML::Emitter& out, double value);
void emit_string(YAML::Emitter& out, const std::string& value);

}  // namespace detail

template <class Cfg>
std::vector<std::string> keys(const Cfg& cfg);

namespace detail {

template <class Cfg>
void apply_map(Cfg& cfg, const YAML::Node& map, const std::string& prefix, const Source& src);

template <class T>
void read_value(const YAML::Node& node, T& dst, const Where& where, const Constraint& c) {
  if constexpr (kIsOptional<T>) {
    if (node.IsNull()) {
      dst.reset();
      return;
    }
    typename T::value_type value{};
    read_value(node, value, where, c);
    dst = std::move(value);
  } else if constexpr (kIsVector<T>) {
    if (!node.IsSequence()) fail_type(where, "a list", node);
    T values;
    values.reserve(node.size());
    for (std::size_t i = 0; i < node.size(); ++i) {
      const YAML::Node item = node[i];
      Where item_where{where.src, item.IsNull() ? where.mark : item.Mark(),
                       where.path + "[" + std::to_string(i) + "]"};
      typename T::value_type value{};
      read_value(item, value, item_where, c);
      values.push_back(std::move(value));
    }
    dst = std::move(values);
  } else if constexpr (ConfigStruct<T>) {
    check_unconstrained(c, where, "a nested struct");
    if (node.IsNull()) return;  // "schedule:" with every child commented out
    if (!node.IsMap()) fail_type(where, "a mapping", node);
    apply_map(dst, node, where.path, *where.src);
  } else if constexpr (std::is_same_v<T, bool>) {
    check_unconstrained(c, where, "a boolean");
    dst = decode_bool(node, where);
  } else if constexpr (std::is_integral_v<T> && std::is_signed_v<T>) {
    const int64_t value =
        decode_signed(node, where, std::numeric_limits<T>::min(), std::numeric_limits<T>::max());
    check_number(c, static_cast<double>(value), node, where);
    dst = static_cast<T>(value);
  } else if constexpr (std::is_integral_v<T>) {
    const uint64_t value = decode_unsigned(node, where, std::numeric_limits<T>::max());
    check_number(c, static_cast<double>(value), node, where);
    dst = static_cast<T>(value);
  } else if constexpr (std::is_floating_point_v<T>) {
    const double value = decode_double(node, where);
    check_number(c, value, node, where);
    dst = static_cast<T>(value);
  } else if constexpr (std::is_same_v<T, std::string>) {
    std::string value = decode_string(node, where);
    check_string(c, value, where);
    dst = std::move(value);
  } else {
    static_assert(kAlwaysFalse<T>, "config field type not supported (see config/field.hpp)");
  }
}

// Reads the keys one mapping holds into the matching fields; absent keys keep their value.
class Reader {
 public:
  Reader(const YAML::Node& map, const std::string& prefix, const Source& src)
      : map_(map), prefix_(prefix), src_(src) {}

  template <class T>
  void operator()(std::string_view key, T& field, std::string_view /*doc*/,
                  const Constraint& c = {}) {
    for (const auto& entry : map_) {
      const YAML::Node key_node = entry.first;
      if (key_node.Scalar() != key) continue;
      const YAML::Node value = entry.second;
      const Where where{&src_, value_mark(key_node, value), join_key(prefix_, key)};
      read_value(value, field, where, c);
      return;
    }
  }

 private:
  const YAML::Node& map_;
  const std::string& prefix_;
  const Source& src_;
};

struct NameCollector {
  std::vector<std::string> names;
  template <class T>
  void operator()(std::string_view key, T&, std::string_view, const Constraint& = {}) {
    names.emplace_back(key);
  }
};

template <class Cfg>
void apply_map(Cfg& cfg, const YAML::Node& map, const std::string& prefix, const Source& src) {
  NameCollector names;
  cfg.visit(names);
  check_keys(map, names.names, prefix, src);
  Reader reader(map, prefix, src);
  cfg.visit(reader);
}

template <class Cfg>
void apply_node(Cfg& cfg, const YAML::Node& root, Source src) {
  if (!root.IsDefined() || root.IsNull()) return;  // an empty file changes nothing
  if (!root.IsMap()) {
    Where where{&src, root.Mark(), "top level"};
    fail_type(where, "a mapping of keys (key: value lines)", root);
  }
  src.all_keys = keys(cfg);
  Cfg updated = cfg;  // all-or-nothing: cfg is untouched if any key is wrong
  apply_map(updated, root, "", src);
  cfg = std::move(updated);
}

class Writer {
 public:
  Writer(YAML::Emitter& out, bool with_docs) : out_(out), with_docs_(with_docs) {}

  template <class T>
  void operator()(std::string_view key, T& field, std::string_view doc, const Constraint& = {}) {
    out_ << YAML::Key << std::string(key) << YAML::Value;
    // A comment must precede a nested block mapping, else it would land after its last key.
    const bool comment = with_docs_ && !doc.empty();
    if constexpr (ConfigStruct<T>) {
      if (comment) out_ << YAML::Comment(std::string(doc));
      write(field);
    } else {
      write(field);
      if (comment) out_ << YAML::Comment(std::string(doc));
    }
  }

  template <class T>
  void write(const T& value) {
    if constexpr (kIsOptional<T>) {
      if (value) {
        write(*value);
      } else {
        out_ << YAML::Null;
      }
    } else if constexpr (kIsVector<T>) {
      out_ << YAML::Flow << YAML::BeginSeq;
      for (const auto& item : value) write(static_cast<const typename T::value_type&>(item));
      out_ << YAML::EndSeq;
    } else if constexpr (ConfigStruct<T>) {
      T copy = value;  // visit() is not const
      out_ << YAML::BeginMap;
      copy.visit(*this);
      out_ << YAML::EndMap;
    } else if constexpr (std::is_same_v<T, bool>) {
      out_ << (value ? "true" : "false");
    } else if constexpr (std::is_integral_v<T>) {
      out_ << std::to_string(value);
    } else if constexpr (std::is_floating_point_v<T>) {
      emit_double(out_, static_cast<double>(value));
    } else if constexpr (std::is_same_v<T, std::string>) {
      emit_string(out_, value);
    } else {
      static_assert(kAlwaysFalse<T>, "config field type not supported (see config/field.hpp)");
    }
  }

 private:
  YAML::Emitter& out_;
  bool with_docs_;
};

struct KeyCollector {
  std::string prefix;
  std::vector<std::string>* out;
  template <class T>
  void operator()(std::string_view key, T& field, std::string_view, const Constraint& = {}) {
    std::string path = join_key(prefix, key);
    if constexpr (ConfigStruct<T>) {
      KeyCollector inner{path, out};
      field.visit(inner);
    } else {
      out->push_back(std::move(path));
    }
  }
};

}  // namespace detail

// Applies one YAML text; `source` names it in error messages (usually the file path).
template <class Cfg>
void apply_yaml_text(Cfg& cfg, const std::string& text, const std::string& source) {
  detail::apply_node(cfg, detail::load_text(text, source), detail::Source{source, true, {}});
}

// Paths are relative to the current directory.
template <class Cfg>
void apply_yaml_file(Cfg& cfg, const std::string& path) {
  apply_yaml_text(cfg, detail::read_config_file(path), path);
}

// "optim.lr=0.01": the value is parsed as a YAML scalar or flow node ("model.sizes=[1,2]",
// "optim.target=null"); errors name the source as "--set optim.lr=0.01", or as `given`
// for an option that stands for the assignment (e.g. "weights --k 0").
template <class Cfg>
void apply_override(Cfg& cfg, const std::string& assignment, const std::string& given = "") {
  const std::string source = given.empty() ? "--set " + assignment : given;
  detail::apply_node(cfg, detail::override_node(assignment, source),
                     detail::Source{source, false, {}});
}

// The resolved config with every key, block style (lists of scalars in flow style), ending
// in a newline; apply_yaml_text() reads it back to an equal config. with_docs appends each
// field's doc as a comment.
template <class Cfg>
std::string to_yaml(const Cfg& cfg, bool with_docs = false) {
  YAML::Emitter out;
  out.SetNullFormat(YAML::LowerNull);
  detail::Writer writer(out, with_docs);
  writer.write(cfg);
  return std::string(out.c_str()) + "\n";
}

// Every leaf key as a dotted path ("optim.schedule.gamma"), in declaration order.
template <class Cfg>
std::vector<std::string> keys(const Cfg& cfg) {
  Cfg copy = cfg;  // visit() is not const
  std::vector<std::string> out;
  detail::KeyCollector collector{"", &out};
  copy.visit(collector);
  return out;
}

}  // namespace seqbench::config

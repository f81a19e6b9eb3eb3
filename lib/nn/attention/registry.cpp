// The attention kinds: one line each. A new kind also needs its class in kinds.hpp and a
// case in make_attention() (attention.cpp), a test against full attention
// (tests/nn/attention_test.cpp) and a preset.
#include <fmt/format.h>

#include "core/check.hpp"
#include "core/text.hpp"
#include "nn/attention/attention.hpp"

namespace seqbench::nn {

const std::vector<AttentionEntry>& attention_registry() {
  using K = AttentionKind;
  // clang-format off
  static const std::vector<AttentionEntry> r{
    {"full", "softmax attention over every visible key (the reference)", K::Full, false},
    {"local", "blocks of w tokens attend within their block and the one before", K::Local, false},
    {"routing", "online k-means routing: tokens attend within their cluster's top-w (Roy et al. 2021)", K::Routing, true},
    {"random", "tokens attend within randomly assigned chunks of w (the Routing Transformer's baseline)", K::Random, true},
    {"smyrf", "asymmetric LSH clustering into balanced clusters of w (Daras et al. 2020)", K::Smyrf, true},
    {"lsh", "Reformer's angular LSH: sorted buckets cut into chunks of w", K::Lsh, true},
  };
  // clang-format on
  return r;
}

const std::vector<std::string>& attention_kind_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> n;
    for (const auto& e : attention_registry()) n.push_back(e.name);
    return n;
  }();
  return names;
}

const std::string& attention_kinds_doc() {
  static const std::string doc = "attention: " + core::join(attention_kind_names(), " | ");
  return doc;
}

const AttentionEntry& find_attention(const std::string& name, const std::string& key) {
  for (const auto& e : attention_registry())
    if (name == e.name) return e;
  throw core::UsageError(fmt::format(
      "{}: {}", key, core::unknown_name("attention kind", name, attention_kind_names())));
}

std::string attention_markdown() {
  std::string out = "| kind | groups by content | what it is |\n|---|---|---|\n";
  for (const auto& e : attention_registry())
    out += fmt::format("| `{}` | {} | {} |\n", e.name, e.content ? "yes" : "no", e.doc);
  return out;
}

}  // namespace seqbench::nn

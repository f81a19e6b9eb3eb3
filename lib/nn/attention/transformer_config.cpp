// The Transformer's config: head groups (model.attention) and the rules no single field
// can check (config::check does the ranges).
#include <fmt/format.h>

#include <algorithm>
#include <sstream>

#include "config/check.hpp"
#include "core/check.hpp"
#include "core/text.hpp"
#include "nn/attention/transformer.hpp"
#include "nn/registry.hpp"

namespace seqbench::nn {

using core::trim;

bool is_content_kind(const std::string& kind) { return find_attention(kind).content; }

const std::string& head_groups_doc() {
  static const std::string doc =
      "head groups per layer: a kind (all heads) or kind:count,... summing to heads; kinds " +
      core::join(attention_kind_names(), " | ") +
      "; or a sequence mixer in place of attention (options in model.mixer): " +
      core::join(mixer_names(), " | ");
  return doc;
}

const CellEntry* transformer_mixer(const TransformerConfig& cfg) { return find_mixer(cfg.attention); }

std::vector<HeadGroup> parse_head_groups(const std::string& spec, int64_t heads) {
  const auto bad = [&](const std::string& why) {
    return core::UsageError(fmt::format(
        "model.attention: '{}' {} (hint: a kind for all heads, e.g. routing, or kind:count "
        "pairs summing to model.heads = {}, e.g. local:{},routing:{}; kinds: {})",
        spec, why, heads, heads - heads / 2, heads / 2, core::join(attention_kind_names(), ", ")));
  };
  std::vector<HeadGroup> groups;
  std::stringstream ss(spec);
  std::string item;
  std::vector<std::string> items;
  while (std::getline(ss, item, ',')) items.push_back(trim(item));
  if (items.empty()) throw bad("is empty");
  for (const auto& it : items) {
    const auto colon = it.find(':');
    HeadGroup g;
    g.kind = trim(it.substr(0, colon));
    const auto& kinds = attention_kind_names();
    if (std::find(kinds.begin(), kinds.end(), g.kind) == kinds.end())
      throw bad(fmt::format("has an unknown kind '{}'", g.kind));
    if (colon == std::string::npos) {
      if (items.size() != 1) throw bad(fmt::format("gives no head count for '{}'", g.kind));
      g.heads = heads;
    } else {
      const std::string n = trim(it.substr(colon + 1));
      char* end = nullptr;
      const long long v = std::strtoll(n.c_str(), &end, 10);
      if (n.empty() || *end != '\0' || v < 1)
        throw bad(fmt::format("has a head count '{}' that is not a positive integer", n));
      g.heads = v;
    }
    groups.push_back(g);
  }
  int64_t sum = 0;
  for (const auto& g : groups) sum += g.heads;
  if (sum != heads) throw bad(fmt::format("has {} heads, not {}", sum, heads));
  return groups;
}

std::vector<HeadGroup> layer_head_groups(const TransformerConfig& cfg, int64_t layer) {
  if (transformer_mixer(cfg)) return {};
  std::vector<HeadGroup> groups = parse_head_groups(cfg.attention, cfg.heads);
  const bool content_here = cfg.routing_layers == 0 || layer >= cfg.layers - cfg.routing_layers;
  std::vector<HeadGroup> out;
  for (auto g : groups) {
    if (!content_here && is_content_kind(g.kind)) g.kind = "local";
    if (!out.empty() && out.back().kind == g.kind)
      out.back().heads += g.heads;
    else
      out.push_back(g);
  }
  return out;
}

std::string head_groups_str(const std::vector<HeadGroup>& groups) {
  std::string s;
  for (const auto& g : groups) s += fmt::format("{}{}:{}", s.empty() ? "" : ",", g.kind, g.heads);
  return s;
}

void check_rules(const TransformerConfig& cfg) {
  config::check(cfg, "model");
  const auto fail = [](const std::string& msg) { throw core::UsageError(msg); };
  if (cfg.d_model % cfg.heads != 0)
    fail(fmt::format("model.heads: {} heads do not divide model.d_model = {} (hint: d_model = "
                     "heads x head size, e.g. heads: {})",
                     cfg.heads, cfg.d_model, cfg.heads > 1 ? cfg.heads / 2 : 1));
  if (cfg.routing_layers > cfg.layers)
    fail(fmt::format("model.routing_layers: {} is more than model.layers = {} (hint: 0 = all "
                     "layers)",
                     cfg.routing_layers, cfg.layers));
  if (transformer_mixer(cfg)) {
    // Keys of multi-head attention would do nothing for a mixer.
    const TransformerConfig d;
    const auto refuse = [&](bool set, const char* key) {
      if (set)
        fail(fmt::format("{} applies to attention heads, and model.attention is the mixer '{}' "
                         "(hint: remove the key)",
                         key, cfg.attention));
    };
    refuse(cfg.qk_norm, "model.qk_norm");
    refuse(cfg.relative_positions != 0, "model.relative_positions");
    refuse(cfg.shared_qk, "model.shared_qk");
    refuse(cfg.commitment != 0, "model.commitment");
    refuse(cfg.routing_layers != 0, "model.routing_layers");
    return;
  }
  if (!(cfg.mixer == MixerConfig{}))
    fail(fmt::format("model.mixer applies to the sequence mixers ({}), and model.attention is "
                     "'{}' (hint: remove the model.mixer section)",
                     core::join(mixer_names(), ", "), cfg.attention));
  const auto groups = parse_head_groups(cfg.attention, cfg.heads);
  for (const auto& g : groups)
    if (g.kind == "lsh" && cfg.clusters != 1 && cfg.clusters % 2 != 0)
      fail(fmt::format("model.clusters: lsh needs 1 or an even number of buckets, got {} (hint: "
                       "use {})",
                       cfg.clusters, cfg.clusters + 1));
}

}  // namespace seqbench::nn

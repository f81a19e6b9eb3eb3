#include "train/memory_estimate.hpp"

#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <fstream>
#include <limits>

#include "core/check.hpp"
#include "core/input_file.hpp"
#include "core/memory.hpp"
#include "nn/registry.hpp"
#include "optim/optimizer.hpp"

namespace seqbench::train {

namespace {

constexpr double kF = sizeof(float), kI32 = sizeof(int32_t), kI64 = sizeof(int64_t);

uint64_t clamp_bytes(double b) {
  if (!(b > 0)) return 0;
  if (b >= 1.8e19) return std::numeric_limits<uint64_t>::max();
  return uint64_t(b + 0.5);
}

uint64_t add_sat(uint64_t a, uint64_t b) {
  return a > std::numeric_limits<uint64_t>::max() - b ? std::numeric_limits<uint64_t>::max()
                                                      : a + b;
}

}  // namespace

void MemoryEstimate::add(std::string name, double bytes, std::vector<std::string> keys) {
  parts.push_back({std::move(name), clamp_bytes(bytes), std::move(keys)});
}

uint64_t MemoryEstimate::total() const {
  uint64_t t = 0;
  for (const auto& p : parts) t = add_sat(t, p.bytes);
  return t;
}

std::vector<std::string> MemoryEstimate::driving_keys() const {
  // A key's weight is the bytes of the parts it sizes; the keys that size at least half
  // of the total, heaviest first (ties in the order the parts list them).
  std::vector<std::pair<std::string, double>> weights;
  for (const auto& p : parts)
    for (const auto& k : p.keys) {
      auto it =
          std::find_if(weights.begin(), weights.end(), [&](const auto& w) { return w.first == k; });
      if (it == weights.end())
        weights.emplace_back(k, double(p.bytes));
      else
        it->second += double(p.bytes);
    }
  std::stable_sort(weights.begin(), weights.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  std::vector<std::string> keys;
  for (const auto& [k, w] : weights)
    if (w >= double(total()) / 2 || keys.empty()) keys.push_back(k);
  return keys;
}

// ---- recurrent models

// Each cell's own formulas, through the cell registry (nn/footprint.cpp).
int64_t recurrent_params(const nn::ModelConfig& m, int64_t input) {
  return nn::find_cell(m.cell).footprint->params(m, input);
}

double recurrent_layer_bytes(const nn::ModelConfig& m, int64_t input, int64_t steps, int64_t batch,
                             bool probe) {
  return nn::find_cell(m.cell).footprint->layer_bytes(m, input, double(steps), double(batch),
                                                      probe);
}

double onednn_extra_shapes_bytes(const nn::ModelConfig& m, int64_t steps, int64_t batch) {
  if (m.backend != "onednn") return 0;
  return kF * 6 * double(steps) * double(batch) * double(m.hidden);
}

double recurrent_workspace_bytes(const nn::ModelConfig& m, int64_t input) {
  return nn::find_cell(m.cell).footprint->workspace_bytes(m, input);
}

// ---- the Transformer LM

int64_t transformer_params(const nn::TransformerConfig& c, int64_t vocab, int64_t max_len) {
  const int64_t E = c.d_model, F = c.d_ff, V = vocab;
  int64_t n = V * E + V;  // token table (also the tied output), output bias
  if (c.positions == "learned") n += max_len * E;
  if (!c.tie_embeddings) n += V * E;
  int64_t mix = 3 * E * E + 3 * E + E * E + E + c.heads * c.relative_positions;
  if (nn::transformer_mixer(c)) {  // the mixer counts its own: declare it, allocate nothing
    core::ParamStoreT<float> ps;
    nn::make_mixer<float>(*nn::transformer_mixer(c)->mixer, c.mixer, ps, "probe", E, E);
    mix = ps.size();
  }
  const int64_t layer = 2 * E + mix + 2 * E + F * E + F + E * F + E;
  return n + c.layers * layer + 2 * E;
}

double transformer_activation_bytes(const nn::TransformerConfig& c, int64_t max_len, int64_t batch,
                                    int64_t n_tokens, int threads) {
  const double B = double(batch), n = double(n_tokens), BN = B * n, E = double(c.d_model);
  const double F = double(c.d_ff), Hh = double(c.heads), Dh = E / Hh, W = double(c.window);
  const double drop = c.dropout > 0 ? 1 : 0, L = double(c.layers);
  const double th = std::max(1, threads);
  // The model: residual streams, final norm, their gradients, dropout on the embedding,
  // ids, final layer-norm statistics, sinusoidal table.
  double floats = (L + 1) * BN * E + 4 * BN * E + drop * BN * E + 2 * BN +
                  (c.positions == "sinusoidal" ? double(max_len) * E : 0.0);
  double other = kI32 * BN;
  // A sequence mixer in every block says for itself what it holds (the same in each layer).
  double mixer_bytes = -1;
  if (const nn::CellEntry* mixer = nn::transformer_mixer(c)) {
    core::ParamStoreT<float> ps;
    mixer_bytes = double(
        nn::make_mixer<float>(*mixer->mixer, c.mixer, ps, "probe", c.d_model, c.d_model)
            ->estimate_bytes(batch, n_tokens));
  }
  for (int64_t l = 0; l < c.layers; ++l) {
    // Block: LN1(x), attention out, h, LN2(h), FFN out and four gradients; the FFN's
    // u, act(u), du; two dropout masks; layer-norm statistics.
    floats += 9 * BN * E + 3 * BN * F + drop * 2 * BN * E + 4 * BN;
    if (mixer_bytes >= 0) {
      other += mixer_bytes;
      continue;
    }
    // Attention: qkv, merged heads, their gradients.
    floats += 8 * BN * E;
    for (const nn::HeadGroup& g : nn::layer_head_groups(c, l)) {
      const double hg = double(g.heads), X = B * hg * n * Dh, slices = B * hg;
      const bool shared = c.shared_qk && (g.kind == "routing" || g.kind == "lsh");
      const double k_copies = shared ? 0 : 1;
      floats += (3 + k_copies) * X + 4 * X;  // q, k, v, o; dq, dk, dv, dout
      if (c.qk_norm) floats += (2 + 2 * k_copies) * X + 2 * slices * n * (1 + k_copies);
      if (c.commitment > 0 && g.kind == "routing") floats += (1 + k_copies) * X;
      // The core (nn/attention/attention.hpp): per occurrence lse, w, o_occ and the
      // structure's query and key indices (and a self flag for the hashing kinds).
      const bool hashing = g.kind == "smyrf" || g.kind == "lsh";
      const double rounds = (hashing || g.kind == "random") ? double(c.rounds) : 1;
      const double occ = slices * n * rounds;
      floats += occ * (Dh + 2);
      other += occ * (2 * kI32 + (hashing ? 1 : 0)) + kI64 * (slices + 1) +
               16 * occ / 64;  // groups: one per 64 or more occurrences
      if (c.relative_positions > 0) floats += slices * double(c.relative_positions);
      // Per-thread workspaces: score blocks of (rows x keys), gathered rows for the
      // kinds that are not contiguous, per-occurrence and per-token scalars.
      const double w = g.kind == "local" && c.local_window > 0 ? double(c.local_window) : W;
      double rows = 64, keys = n;
      if (g.kind != "full") {
        rows = std::min({128.0, w, n});
        keys = std::min(n, g.kind == "random" ? w : 2 * w);
      }
      const bool gathers = g.kind != "full" && g.kind != "local";
      floats += th * (rows * Dh + (gathers ? 2 * rows * Dh + 4 * keys * Dh : 0.0) +
                      2 * rows * keys + rows + 2 * n * rounds + 2 * n);
      // Structure builders' scratch and the routing centroids.
      if (hashing) other += th * (4 * kI32 * n * rounds + 2 * kF * n * (Dh + 2));
      if (g.kind == "random") other += th * kI32 * n * rounds;
      if (g.kind == "routing") {
        const double k = double(c.clusters);
        other += th * 3 * kI32 * n;
        floats += hg * k * Dh + k * Dh + 256 * (Dh + k);
      }
    }
  }
  return kF * floats + other;
}

// ---- parts every run has

int optimizer_slots(const optim::OptimConfig& o) {
  return optim::make_optimizer<float>(o)->n_slots();
}

void add_parameters(MemoryEstimate& e, int64_t n, const optim::OptimConfig& o,
                    const std::vector<std::string>& keys) {
  const int slots = optimizer_slots(o);
  const double N = double(n);
  e.add(fmt::format("parameters ({} floats)", n), kF * N, keys);
  e.add("gradients", kF * N, keys);
  if (slots > 0)
    e.add(fmt::format("optimizer slots ({}: {})", o.name, slots), kF * slots * N, keys);
  e.add("checkpoint copies (written, then read back)", 2 * kF * (1 + slots) * N, keys);
}

void add_recurrent(MemoryEstimate& e, const nn::ModelConfig& m, const optim::OptimConfig& o,
                   int64_t input, int64_t steps, int64_t batch, bool probe, int64_t extra_params,
                   const std::vector<std::string>& size_keys) {
  const std::string hidden = key("model.hidden", m.hidden);
  add_parameters(e, recurrent_params(m, input) + extra_params, o, {hidden});
  std::vector<std::string> keys{hidden};
  keys.insert(keys.end(), size_keys.begin(), size_keys.end());
  if (nn::find_cell(m.cell).footprint->quadratic_in_steps) keys.push_back("model.cell=" + m.cell);
  e.add(fmt::format("activations ({} layer{})", m.cell, m.backend == "onednn" ? ", onednn" : ""),
        recurrent_layer_bytes(m, input, steps, batch, probe), keys);
  e.add("transposed recurrent weights", recurrent_workspace_bytes(m, input), {hidden});
}

void add_transformer(MemoryEstimate& e, const nn::TransformerConfig& c, const optim::OptimConfig& o,
                     int64_t vocab, int64_t max_len, int64_t batch, int64_t n, int threads,
                     const std::vector<std::string>& size_keys,
                     const std::vector<std::string>& vocab_keys) {
  std::vector<std::string> width{key("model.d_model", c.d_model), key("model.layers", c.layers)};
  std::vector<std::string> pkeys = width;
  pkeys.insert(pkeys.end(), vocab_keys.begin(), vocab_keys.end());
  add_parameters(e, transformer_params(c, vocab, max_len), o, pkeys);
  std::vector<std::string> akeys = width;
  akeys.push_back(key("model.d_ff", c.d_ff));
  akeys.insert(akeys.end(), size_keys.begin(), size_keys.end());
  e.add("activations (transformer)", transformer_activation_bytes(c, max_len, batch, n, threads),
        akeys);
  std::vector<std::string> lkeys = size_keys;
  lkeys.insert(lkeys.end(), vocab_keys.begin(), vocab_keys.end());
  const double BN = double(batch) * double(n);
  e.add(fmt::format("logits and their gradient (vocabulary {})", vocab),
        2 * kF * BN * double(vocab) + 2 * kI32 * BN + kF * BN, lkeys);
}

uint64_t file_bytes(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return 0;
  return uint64_t(st.st_size);
}

bool idx_images_header(const std::string& path, int64_t& count, int64_t& pixels) {
  // A regular file only (a FIFO here would block the estimate), and a header that agrees
  // with the file's size: a damaged one is left to the loader, which names what is wrong,
  // instead of becoming an absurd memory estimate.
  unsigned char h[16];
  uint64_t size = 0;
  try {
    const int fd = core::open_input(path, core::kMaxDataFile, &size);
    const ssize_t got = ::pread(fd, h, sizeof h, 0);
    ::close(fd);
    if (got != ssize_t(sizeof h)) return false;
  } catch (const core::Error&) {
    return false;
  }
  const auto u32 = [&](int at) {
    return int64_t(h[at]) << 24 | int64_t(h[at + 1]) << 16 | int64_t(h[at + 2]) << 8 |
           int64_t(h[at + 3]);
  };
  if (u32(0) != 0x00000803) return false;
  if (double(u32(4)) * double(u32(8)) * double(u32(12)) + 16 != double(size)) return false;
  count = u32(4);
  pixels = u32(8) * u32(12);
  return true;
}

CorpusSize corpus_size(const data::CorpusConfig& c) {
  std::array<std::string, 3> files;
  if (c.dir.empty()) {
    files = {c.path, "", ""};
  } else {
    std::array<std::string, 3> names = {"train.txt", "valid.txt", "test.txt"};
    if (c.format == "ptb_char")
      names = {"ptb.char.train.txt", "ptb.char.valid.txt", "ptb.char.test.txt"};
    if (c.format == "ptb_word") names = {"ptb.train.txt", "ptb.valid.txt", "ptb.test.txt"};
    if (c.format == "wikitext")
      names = {"wiki.train.tokens", "wiki.valid.tokens", "wiki.test.tokens"};
    for (size_t i = 0; i < 3; ++i) files[i] = c.dir + "/" + names[i];
  }
  CorpusSize s;
  for (const auto& f : files) s.bytes += double(f.empty() ? 0 : file_bytes(f));
  const double train_bytes = c.dir.empty()
                                 ? s.bytes * std::max(0.0, 1 - c.valid_fraction - c.test_fraction)
                                 : double(file_bytes(files[0]));
  const bool char_text = c.format == "text" && c.level == "char";
  const double per_token = char_text ? 1 : c.format == "ptb_char" ? 2 : 5;
  s.tokens = s.bytes / per_token;
  s.train_tokens = train_bytes / per_token;
  s.vocab = char_text                ? 256
            : c.format == "ptb_char" ? 50
            : c.format == "ptb_word"
                ? 10000
                : std::max(1.0, std::min(s.train_tokens,
                                         30 * std::sqrt(s.train_tokens / double(c.min_count))));
  return s;
}

// ---- the limit

MemoryLimit memory_limit(const std::optional<uint64_t>& max_memory) {
  if (max_memory) return {*max_memory, "--max-memory"};
  const core::AvailableMemory a = core::available_memory();
  return {a.bytes, a.source};
}

void check_memory(const MemoryEstimate& e, const MemoryLimit& limit) {
  const uint64_t total = e.total();
  if (limit.bytes == 0 || total <= limit.bytes) return;
  const MemoryPart* largest = nullptr;
  for (const auto& p : e.parts)
    if (!largest || p.bytes > largest->bytes) largest = &p;
  const std::vector<std::string> keys = e.driving_keys();
  throw core::UsageError(fmt::format(
      "memory estimate {} is above the limit of {} ({}); largest part: {} {}; sized by {} "
      "(hint: lower {}, or set --max-memory; --dump-config lists every part)",
      core::format_bytes(total), core::format_bytes(limit.bytes), limit.source,
      largest ? largest->name : "?", largest ? core::format_bytes(largest->bytes) : "?",
      keys.empty() ? std::string("the sizes in the config")
                   : fmt::format("{}", fmt::join(keys, ", ")),
      keys.size() == 1 ? "it" : "them"));
}

std::string memory_comment(const MemoryEstimate& e, const MemoryLimit& limit) {
  const uint64_t total = e.total();
  std::string out = fmt::format("# memory estimate: {}", core::format_bytes(total));
  if (limit.bytes > 0)
    out += fmt::format(" (limit {}, {}{})", core::format_bytes(limit.bytes), limit.source,
                       total > limit.bytes ? "; a run would be refused" : "");
  out += "\n";
  size_t width = 0;
  for (const auto& p : e.parts) width = std::max(width, p.name.size());
  for (const auto& p : e.parts) {
    std::string line =
        fmt::format("#   {:<{}}  {:>10}", p.name, width, core::format_bytes(p.bytes));
    if (!p.keys.empty()) line += fmt::format("  {}", fmt::join(p.keys, ", "));
    out += core::one_line(line) + "\n";
  }
  return out;
}

}  // namespace seqbench::train

#include "apps/wikitext103/attention_jsd.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <utility>

#include "apps/wikitext103/analysis_output.hpp"
#include "apps/wikitext103/attention_matrix.hpp"
#include "core/check.hpp"
#include "core/fs.hpp"
#include "report/csv.hpp"
#include "report/markdown.hpp"

namespace seqbench::apps {

double jensen_shannon(const double* p, const double* q, int64_t n) {
  double s = 0;
  for (int64_t i = 0; i < n; ++i) {
    const double m = 0.5 * (p[i] + q[i]);
    if (p[i] > 0) s += p[i] * std::log(p[i] / m);  // 0 log 0 = 0
    if (q[i] > 0) s += q[i] * std::log(q[i] / m);
  }
  return std::max(0.0, 0.5 * s);
}

namespace {

// One head of a layer: its kind and its attention matrices P (B, N, N), row t = the
// distribution of query t over the keys (0 after t).
struct HeadProbs {
  std::string kind;
  std::vector<double> p;
};

// Appends group g's heads with their attention matrices, after checking that P V
// reproduces the model's own output of that group.
void group_probs(nn::MultiHeadAttentionT<float>& mha, int64_t g, int64_t layer,
                 std::vector<HeadProbs>& heads) {
  const auto io = mha.core_io(g);
  const int64_t B = io.q.dim(0), H = io.q.dim(1), N = io.q.dim(2);
  const std::vector<double> P = attention_matrix(mha.core(g), io.q, io.k, io.bias);  // (B, H, N, N)
  const double worst = attention_matrix_error(P, io.v, io.o);
  SB_CHECK(worst < 1e-4,
           "attention jsd: layer {} group {} ({}): the recovered attention matrix does not "
           "reproduce the core's output (worst relative difference {:.3g}; hint: a core whose "
           "held structure is not reused exactly)",
           layer, g, mha.group(g).kind, worst);
  for (int64_t h = 0; h < H; ++h) {
    HeadProbs hp{mha.group(g).kind, std::vector<double>(size_t(B * N * N))};
    for (int64_t b = 0; b < B; ++b)
      std::copy_n(P.data() + (b * H + h) * N * N, N * N, hp.p.data() + b * N * N);
    heads.push_back(std::move(hp));
  }
}

}  // namespace

int attention_jsd_command(const JsdCommandOptions& opts, const LmRunLoader& load) {
  if (opts.segments < 1)
    throw core::UsageError(
        fmt::format("attention jsd: --segments must be >= 1, got {}", opts.segments));
  const TrainedLmRun run = load(opts.run_dir, "attention jsd", "");
  TransformerLmExperiment* const exp = run.exp.get();
  nn::TransformerLM& lm = exp->model();
  bool mixed = false;
  for (int64_t l = 0; l < lm.layers(); ++l) {
    if (!lm.block(l).has_attention())
      throw core::UsageError(fmt::format(
          "attention jsd: the run at '{}' mixes tokens with the sequence mixer '{}', which has "
          "no attention heads to compare (hint: a run with model.attention: routing or "
          "local:2,routing:2)",
          opts.run_dir, run.attention));
    const auto& mha = lm.block(l).attention();
    for (int64_t g = 1; g < mha.groups(); ++g)
      mixed = mixed || mha.group(g).kind != mha.group(0).kind;
  }
  if (!mixed)
    throw core::UsageError(fmt::format(
        "attention jsd: the run at '{}' has no layer mixing head kinds (model.attention: {}; "
        "hint: train configs/{}/routing_small.yaml)",
        opts.run_dir, run.attention, run.experiment));

  // (layer, "kindA-kindB") -> (Σ JSD, count); layer -1 pools all layers.
  std::map<std::pair<int64_t, std::string>, std::pair<double, int64_t>> sums;
  std::vector<std::string> pair_order;  // first appearance
  const int64_t segments = std::min(opts.segments, exp->valid_batches());
  std::vector<double> p, q;
  for (int64_t i = 0; i < segments; ++i) {
    const auto [B, N] = exp->forward_valid(i);
    for (int64_t l = 0; l < lm.layers(); ++l) {
      auto& mha = lm.block(l).attention();
      std::vector<HeadProbs> heads;
      for (int64_t g = 0; g < mha.groups(); ++g) group_probs(mha, g, l, heads);
      for (size_t a = 0; a < heads.size(); ++a)
        for (size_t c = a + 1; c < heads.size(); ++c) {
          const std::string pair = heads[a].kind + "-" + heads[c].kind;
          if (std::find(pair_order.begin(), pair_order.end(), pair) == pair_order.end())
            pair_order.push_back(pair);
          double s = 0;
          int64_t n = 0;
          for (int64_t b = 0; b < B; ++b)
            for (int64_t t = 0; t < N; ++t) {
              const double* pa = heads[a].p.data() + (b * N + t) * N;
              const double* pc = heads[c].p.data() + (b * N + t) * N;
              // Renormalised over the keys <= t: float rounding leaves sums of 1 ± 1e-6.
              double za = 0, zc = 0;
              for (int64_t j = 0; j <= t; ++j) za += pa[j], zc += pc[j];
              if (za <= 0 || zc <= 0) continue;  // a query that saw no key (none here)
              p.assign(pa, pa + t + 1);
              q.assign(pc, pc + t + 1);
              for (auto& x : p) x /= za;
              for (auto& x : q) x /= zc;
              s += jensen_shannon(p.data(), q.data(), t + 1);
              ++n;
            }
          for (const int64_t key : {l, int64_t(-1)}) {
            auto& acc = sums[{key, pair}];
            acc.first += s;
            acc.second += n;
          }
        }
    }
  }

  std::string csv = report::csv_line({"layer", "pair", "mean_jsd", "count"});
  std::vector<std::string> header{"pair"};
  for (int64_t l = 0; l < lm.layers(); ++l) header.push_back(fmt::format("layer {}", l));
  header.push_back("all layers");
  std::vector<std::vector<std::string>> body;
  for (const auto& pair : pair_order) {
    std::vector<std::string> row{pair};
    for (int64_t l = 0; l <= lm.layers(); ++l) {
      const int64_t key = l < lm.layers() ? l : -1;
      const auto it = sums.find({key, pair});
      if (it == sums.end() || it->second.second == 0) {
        row.push_back("—");
        continue;
      }
      const double mean = it->second.first / double(it->second.second);
      row.push_back(fmt::format("{:.3f}", mean));
      csv += report::csv_line({key < 0 ? "all" : std::to_string(key), pair,
                               fmt::format("{:.6g}", mean), std::to_string(it->second.second)});
    }
    body.push_back(row);
  }
  const std::string md = fmt::format(
      "Jensen-Shannon divergence (nats; at most ln 2 = 0.693) between the attention "
      "distributions of pairs of heads, mean over queries and pairs: {} ({}, model.attention "
      "{}, data {})\n\n{}",
      opts.run_dir, run.describe(segments), lm.describe(), run.data,
      report::markdown_table(header, body));
  write_run_analysis(opts.run_dir, opts.out_dir, "attention_jsd", csv, md);
  return core::kExitOk;
}

}  // namespace seqbench::apps

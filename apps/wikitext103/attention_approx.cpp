#include "apps/wikitext103/attention_approx.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <memory>

#include "apps/wikitext103/attention_matrix.hpp"
#include "core/check.hpp"
#include "core/fs.hpp"
#include "report/csv.hpp"
#include "report/gnuplot.hpp"
#include "report/markdown.hpp"

namespace seqbench::apps {

nn::AttentionConfig approx_config(const std::string& kind, int64_t w, int64_t n,
                                  const ApproxOptions& opts) {
  nn::AttentionConfig c;
  c.kind = kind;
  c.causal = true;
  c.window = w;
  c.rounds = 1;
  c.seed = opts.seed;
  const int64_t k = std::max<int64_t>(1, n / (2 * w));  // clusters of about 2w tokens
  if (kind == "routing") {
    c.clusters = k;
    c.ema_decay = 0.0;  // update_centroids() is then a Lloyd step
  } else if (kind == "lsh") {
    c.clusters = k < 2 ? 1 : k - k % 2;  // 1 or even
  } else if (kind == "random") {
    c.window = 2 * w;  // a random cluster's query sees the cluster's earlier keys: <= 2w
  }
  nn::check_rules(c);  // an unknown kind: UsageError naming the kinds
  return c;
}

void ApproxAccumulator::add(int64_t layer, core::ConstView q, core::ConstView k, core::ConstView v,
                            core::ConstView o_full, core::ConstView bias) {
  SB_CHECK(q.shape.rank == 4, "attention approx: q must be (B, H, N, D), got {}", q.shape.str());
  for (const auto* t : {&k, &v, &o_full})
    core::check_shape(*t, q.shape, "attention approx: k, v, o_full");
  const int64_t H = q.dim(1), N = q.dim(2), D = q.dim(3);
  layers_ = std::max(layers_, layer + 1);
  double ref2 = 0;
  for (int64_t i = 0; i < o_full.numel(); ++i) ref2 += double(o_full.data[i]) * o_full.data[i];
  core::Tensor o(q.shape);
  for (const auto& kind : opts_.kinds)
    for (int64_t w : opts_.windows) {
      auto att = nn::make_attention<float>(approx_config(kind, w, N, opts_), H, D);
      // Routing: fit the centroids to this segment's q and k first (no-op for the others).
      if (att->kind() == nn::AttentionKind::Routing)
        for (int it = 0; it < opts_.kmeans_iters; ++it) {
          att->forward(q, k, v, o.view(), bias);
          att->update_centroids();
        }
      att->forward(q, k, v, o.view(), bias);
      const std::vector<double> P = attention_matrix(*att, q, k, bias);  // (B, H, N, N)
      const auto keys = double(std::count_if(P.begin(), P.end(), [](double x) { return x > 0; }));
      double err2 = 0;
      for (int64_t i = 0; i < o.numel(); ++i) {
        const double d = double(o.data()[i]) - o_full.data[i];
        err2 += d * d;
      }
      Sums& s = sums_[{layer, kind, w}];
      s.err2 += err2;
      s.ref2 += ref2;
      s.keys += keys;
      s.queries += double(q.dim(0) * H * N);
    }
}

std::vector<ApproxAccumulator::Row> ApproxAccumulator::rows() const {
  std::vector<Row> out;
  const auto rel = [](const Sums& s) { return s.ref2 > 0 ? std::sqrt(s.err2 / s.ref2) : 0.0; };
  for (int64_t l = 0; l <= layers_; ++l)  // l == layers_: all layers pooled
    for (const auto& kind : opts_.kinds)
      for (int64_t w : opts_.windows) {
        Sums s;
        bool any = false;
        for (int64_t j = (l < layers_ ? l : 0); j < (l < layers_ ? l + 1 : layers_); ++j) {
          const auto it = sums_.find({j, kind, w});
          if (it == sums_.end()) continue;
          s.err2 += it->second.err2;
          s.ref2 += it->second.ref2;
          s.keys += it->second.keys;
          s.queries += it->second.queries;
          any = true;
        }
        if (any)
          out.push_back({l < layers_ ? std::to_string(l) : "all", kind, w, rel(s),
                         s.queries > 0 ? s.keys / s.queries : 0.0});
      }
  return out;
}

std::string approx_csv(const std::vector<ApproxAccumulator::Row>& rows) {
  std::string text =
      report::csv_line({"layer", "kind", "window", "max_keys", "mean_keys", "rel_error"});
  for (const auto& r : rows)
    text +=
        report::csv_line({r.layer, r.kind, std::to_string(r.window), std::to_string(2 * r.window),
                          fmt::format("{:.4g}", r.mean_keys), fmt::format("{:.6g}", r.rel_error)});
  return text;
}

std::string approx_markdown(const std::vector<ApproxAccumulator::Row>& rows,
                            const ApproxOptions& opts) {
  std::vector<std::string> header{"kind"};
  for (int64_t w : opts.windows) header.push_back(fmt::format("w={} (≤{} keys)", w, 2 * w));
  // One table of `value(row)` over kinds and windows.
  const auto table = [&](auto value) {
    std::vector<std::vector<std::string>> body;
    for (const auto& kind : opts.kinds) {
      std::vector<std::string> line{kind};
      for (int64_t w : opts.windows) {
        std::string cell = "—";
        for (const auto& r : rows)
          if (r.layer == "all" && r.kind == kind && r.window == w) cell = value(r);
        line.push_back(cell);
      }
      body.push_back(line);
    }
    return report::markdown_table(header, body);
  };
  return table([](const auto& r) { return fmt::format("{:.3f}", r.rel_error); }) +
         "\nMean keys a query attends to (weight > 0):\n\n" +
         table([](const auto& r) { return fmt::format("{:.1f}", r.mean_keys); });
}

namespace {

// gnuplot data: one block per kind ("window rel_error", all layers pooled) and the figure
// drawing them against the window on a log-2 axis (PNG only).
std::string approx_dat(const std::vector<ApproxAccumulator::Row>& rows, const ApproxOptions& opts) {
  std::string text;
  for (const auto& kind : opts.kinds) {
    text += fmt::format("# {}: window rel_error\n", kind);
    for (const auto& r : rows)
      if (r.layer == "all" && r.kind == kind)
        text += fmt::format("{} {:.6g}\n", r.window, r.rel_error);
    text += "\n\n";
  }
  return text;
}

report::GnuplotFigure approx_figure(const ApproxOptions& opts, const std::string& title) {
  report::GnuplotFigure fig;
  fig.stem = "attention_approx";
  fig.written_by = "seqbench report attention approx";
  fig.settings = fmt::format(
      "set title {} noenhanced\n"
      "set logscale x 2\n"
      "set xlabel 'window w (each query sees at most 2w keys)'\n"
      "set ylabel '‖o − o_full‖ / ‖o_full‖'\n"
      "set yrange [0:*]\n",
      report::gp_quote(title));
  fig.plot = "plot ";
  for (size_t i = 0; i < opts.kinds.size(); ++i)
    fig.plot += fmt::format("{}'attention_approx.dat' index {} using 1:2 with linespoints {} title {}",
                            i ? ", " : "", i, report::series_style(int(i)), report::gp_quote(opts.kinds[i]));
  fig.width = 800;
  fig.height = 560;
  fig.svg = false;
  return fig;
}

}  // namespace

int attention_approx_command(const ApproxCommandOptions& opts, const LmRunLoader& load) {
  if (opts.segments < 1)
    throw core::UsageError(
        fmt::format("attention approx: --segments must be >= 1, got {}", opts.segments));
  for (int64_t w : opts.approx.windows)
    if (w < 1)
      throw core::UsageError(fmt::format(
          "attention approx: --windows must be >= 1, got {} (hint: e.g. --windows 8,16,32)", w));
  for (const auto& kind : opts.approx.kinds) (void)approx_config(kind, 1, 1, opts.approx);

  const TrainedLmRun run = load(opts.run_dir, "attention approx", "");
  TransformerLmExperiment* const exp = run.exp.get();
  nn::TransformerLM& lm = exp->model();
  bool has_full = false;
  for (int64_t l = 0; l < lm.layers(); ++l)
    if (lm.block(l).has_attention())
      for (int64_t g = 0; g < lm.block(l).attention().groups(); ++g)
      has_full = has_full || lm.block(l).attention().group(g).kind == "full";
  if (!has_full)
    throw core::UsageError(fmt::format(
        "attention approx: the run at '{}' has no full heads (model.attention: {}; hint: train "
        "configs/{}/full_small.yaml)",
        opts.run_dir, run.attention, run.experiment));

  ApproxAccumulator acc(opts.approx);
  const int64_t segments = std::min(opts.segments, exp->valid_batches());
  for (int64_t i = 0; i < segments; ++i) {
    exp->forward_valid(i);
    for (int64_t l = 0; l < lm.layers(); ++l) {
      if (!lm.block(l).has_attention()) continue;
      const auto& mha = lm.block(l).attention();
      for (int64_t g = 0; g < mha.groups(); ++g) {
        if (mha.group(g).kind != "full") continue;
        const auto io = mha.core_io(g);
        acc.add(l, io.q, io.k, io.v, io.o, io.bias);
      }
    }
  }

  const std::string out = opts.out_dir.empty() ? opts.run_dir + "/attention_approx" : opts.out_dir;
  core::make_dirs(out);
  const auto rows = acc.rows();
  const std::string title =
      fmt::format("Sparse attention vs full on the inputs of {} ({}, {} layers, data {})",
                  opts.run_dir, run.describe(segments), lm.layers(), run.data);
  const std::string md =
      fmt::format("{}\nRelative output error ||o - o_full|| / ||o_full||, all layers pooled:\n\n{}",
                  title, approx_markdown(rows, opts.approx));
  core::write_file_atomic(out + "/attention_approx.csv", approx_csv(rows));
  core::write_file_atomic(out + "/attention_approx.md", md);
  const report::FigureFiles figure = report::write_figure(
      out, approx_figure(opts.approx, "Sparse attention vs full attention"),
      approx_dat(rows, opts.approx));
  fmt::print("{}\n", md);
  const report::GnuplotStatus drawn = report::run_gnuplot(figure.script);
  if (drawn.drawn()) {
    fmt::print("wrote {}/attention_approx.{{csv,md,png}}\n", out);
  } else {
    if (drawn.kind == report::GnuplotStatus::Kind::kNotFound)
      fmt::print(stderr,
                 "seqbench report: no gnuplot on PATH, no PNG (hint: apt-get install "
                 "gnuplot-nox)\n");
    else
      fmt::print(stderr, "seqbench report: {}, no PNG\n", drawn.message);
    fmt::print("wrote {}/attention_approx.{{csv,md}}\n", out);
  }
  return core::kExitOk;
}

}  // namespace seqbench::apps

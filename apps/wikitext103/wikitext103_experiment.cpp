// The wikitext103 experiment: the corpus, its token columns and their segments as
// batches of the shared Transformer LM; reading a trained run back for analyses.
#include "apps/wikitext103/wikitext103_experiment.hpp"

#include <algorithm>

#include "apps/wikitext103/demo_config.hpp"
#include "config/yaml_config.hpp"
#include "core/check.hpp"
#include "core/fs.hpp"
#include "core/threads.hpp"
#include "train/checkpoint.hpp"
#include "train/run_record.hpp"
#include "train/trainer.hpp"

namespace seqbench::apps {

const char* const kWikitext103DemoYaml = kWikitext103DemoYamlText;

// Defaults: the small routing preset's sizes (configs/wikitext103/routing_small.yaml);
// the paper's settings are in configs/wikitext103/routing.yaml.
train::MemoryEstimate wikitext103_memory(const Wikitext103Config& c) {
  const train::CorpusSize corpus = train::corpus_size(c.data.corpus);
  const int64_t B = std::max(c.train.batch, c.data.eval_batch), n = c.lm.seq_len;
  const int threads = c.train.threads > 0 ? c.train.threads : core::available_cores();
  train::MemoryEstimate e;
  train::add_transformer(e, c.model, c.optim, int64_t(corpus.vocab), n, B, n, threads,
                         {train::key("lm.seq_len", n), train::key("train.batch", c.train.batch),
                          train::key("data.eval_batch", c.data.eval_batch)},
                         {train::key("data.dir", c.data.corpus.dir)});
  e.add(fmt::format("corpus token ids (~{:.3g} tokens)", corpus.tokens),
        sizeof(int32_t) * corpus.tokens + 64 * corpus.vocab, {train::key("data.dir", c.data.corpus.dir)});
  return e;
}

Wikitext103Config::Wikitext103Config() {
  data.formats = {"wikitext", "text", "ptb_word"};
  data.level_key = false;
  data.corpus.level = "word";
  data.corpus.min_count = 5;  // Brown: about 14k words left
  data.eval_batch = 8;
  model.attention = "local:2,routing:2";
  model.window = 32;
  model.clusters = 4;
  optim.name = "adam";
  optim.lr = 1e-3;
  optim.clip = 1.0;
  train.batch = 8;
  train.steps = 600;
  train.eval_every = 200;
  train.log_every = 20;
}

Wikitext103Experiment::Wikitext103Experiment(const Wikitext103Config& cfg)
    : TransformerLmExperiment("wikitext103", LmMetric::kPerplexity, cfg.model, cfg.optim,
                              cfg.train, "lm.seq_len sets the context"),
      cfg_(cfg) {
  const auto& d = cfg.data;
  const auto& dir = d.corpus.dir;
  if (!dir.empty() && !core::file_exists(dir))
    throw core::UsageError(fmt::format(
        "data.dir: no corpus at '{}' (hint: {}, see docs/data.md; or set data.dir, or for one "
        "file data.dir: \"\" and data.path)",
        dir,
        d.corpus.format == "wikitext" ? "put wiki.train.tokens, wiki.valid.tokens and wiki.test.tokens "
                                 "there (Wikitext-103, fetched by hand)"
                               : "run tools/fetch_data brown for the stand-in"));
  corpus_ = data::load_corpus(d.corpus);
  data_digest_ = corpus_.digest;
  const int64_t L = cfg.lm.seq_len;
  const LmStreams streams = lm_streams(corpus_, d, cfg.train.batch, L);
  train_ = streams.train;
  valid_ = streams.valid;
  test_ = streams.test;
  build_model(corpus_.vocab.size(), L, train_.segments(L));
}

auto Wikitext103Experiment::load_segment(const TokenColumns& s, int64_t i) -> Batch {
  const int64_t L = s.segment_len(i, cfg_.lm.seq_len), b = s.B, pos = i * cfg_.lm.seq_len;
  ids_.resize(size_t(b * L));
  targets_.resize(size_t(b * L));
  for (int64_t c = 0; c < b; ++c) {
    const int32_t* col = s.tokens + c * s.cols + pos;
    std::copy_n(col, L, ids_.data() + c * L);
    std::copy_n(col + 1, L, targets_.data() + c * L);
  }
  return {b, L};
}

auto Wikitext103Experiment::load_train_batch(int64_t update) -> Batch {
  return load_segment(train_, update % updates_per_epoch());
}

int64_t Wikitext103Experiment::eval_batches(Split s) const {
  return stream(s).segments(cfg_.lm.seq_len);
}

auto Wikitext103Experiment::load_eval_batch(Split s, int64_t i) -> Batch {
  return load_segment(stream(s), i);
}

int64_t Wikitext103Experiment::forward_segment(const TokenColumns& s, int64_t i) {
  SB_CHECK(i >= 0 && i < s.segments(cfg_.lm.seq_len),
           "wikitext103: segment {} of a stream with {} segments", i, s.segments(cfg_.lm.seq_len));
  EvalDraws draws(model());
  const Batch x = load_segment(s, i);
  forward(x, false);
  return x.L;
}

TrainedLmRun load_wikitext103_run(const std::string& run_dir, const std::string& attention) {
  Wikitext103Config cfg;
  config::apply_yaml_file(cfg, run_dir + "/config.yaml");
  if (!attention.empty()) cfg.model.attention = attention;
  auto exp = std::make_unique<Wikitext103Experiment>(cfg);
  const train::Checkpoint ck = train::load_checkpoint(run_dir + "/checkpoint.sbck");
  train::load_parameters(exp->params(), ck);
  exp->load_state(ck);
  TrainedLmRun run;
  run.experiment = "wikitext103";
  run.exp = std::move(exp);
  run.attention = cfg.model.attention;
  run.data = train::data_label(cfg.data.name, cfg.data.stand_in);
  run.batch = "segment";
  run.batches = "segments";
  run.batch_shape = fmt::format("of {} tokens", cfg.lm.seq_len);
  return run;
}

}  // namespace seqbench::apps

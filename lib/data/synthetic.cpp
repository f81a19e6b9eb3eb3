#include "data/synthetic.hpp"

#include <algorithm>
#include <cmath>

#include "core/check.hpp"

namespace seqbench::data {

// How a task of the copy experiment is shaped and drawn (its registry entry points here).
struct CopyTaskOps {
  int64_t (*input_size)(const TaskConfig& cfg);
  // Fills the examples of a batch whose buffers generate() has sized and cleared (x zero,
  // labels 0, mask 1); scratch is the task's own.
  void (*fill)(const TaskConfig& cfg, core::Rng& rng, SeqBatch& batch,
               std::vector<int64_t>& scratch);
};

namespace {

int64_t symbols_blank_delimiter(const TaskConfig& cfg) { return cfg.n_symbols + 2; }
int64_t symbols_blank_delimiter_marker(const TaskConfig& cfg) { return cfg.n_symbols + 3; }
int64_t value_and_marker(const TaskConfig&) { return 2; }

void fill_copy(const TaskConfig& cfg, core::Rng& rng, SeqBatch& batch, std::vector<int64_t>&) {
  const int64_t K = cfg.copy_len, n = cfg.n_symbols, T = cfg.T;
  const int64_t L = batch.L, B = batch.B, I = batch.x.shape()[2];
  float* x = batch.x.data();
  for (int64_t b = 0; b < B; ++b) {
    for (int64_t t = 0; t < L; ++t) {
      int64_t in = 0;  // blank
      if (t < K) {
        in = 1 + rng.randint(n);
        batch.labels[static_cast<size_t>((T + K + t) * B + b)] = static_cast<int32_t>(in);
      } else if (t == T + K - 1) {
        in = n + 1;  // delimiter
      }
      x[(t * B + b) * I + in] = 1.f;
    }
  }
}

void fill_denoise(const TaskConfig& cfg, core::Rng& rng, SeqBatch& batch,
                  std::vector<int64_t>& positions) {
  const int64_t K = cfg.copy_len, n = cfg.n_symbols, T = cfg.T, span = T + K - 1;
  const int64_t L = batch.L, B = batch.B, I = batch.x.shape()[2];
  SB_CHECK(span >= K, "denoise: {} symbols do not fit in {} steps", K, span);
  float* x = batch.x.data();
  positions.resize(static_cast<size_t>(span));
  for (int64_t b = 0; b < B; ++b) {
    // K distinct positions in [0, span): a partial Fisher-Yates shuffle, then sorted.
    for (int64_t i = 0; i < span; ++i) positions[size_t(i)] = i;
    for (int64_t i = 0; i < K; ++i)
      std::swap(positions[size_t(i)], positions[size_t(i + rng.randint(span - i))]);
    std::sort(positions.begin(), positions.begin() + K);
    for (int64_t t = 0; t < L; ++t) x[(t * B + b) * I] = 1.f;  // blank everywhere
    for (int64_t i = 0; i < K; ++i) {
      const int64_t t = positions[size_t(i)], sym = 1 + rng.randint(n);
      x[(t * B + b) * I] = 0.f;
      x[(t * B + b) * I + sym] = 1.f;
      batch.labels[static_cast<size_t>((T + K + i) * B + b)] = static_cast<int32_t>(sym);
    }
    x[(span * B + b) * I] = 0.f;
    x[(span * B + b) * I + n + 2] = 1.f;  // marker
  }
}

void fill_adding(const TaskConfig& cfg, core::Rng& rng, SeqBatch& batch, std::vector<int64_t>&) {
  const int64_t T = cfg.T, B = batch.B, I = batch.x.shape()[2];
  float* x = batch.x.data();
  for (int64_t b = 0; b < B; ++b) {
    for (int64_t t = 0; t < T; ++t) x[(t * B + b) * I] = static_cast<float>(rng.uniform());
    const int64_t p1 = rng.randint(T / 2);
    const int64_t p2 = T / 2 + rng.randint(T - T / 2);
    x[(p1 * B + b) * I + 1] = 1.f;
    x[(p2 * B + b) * I + 1] = 1.f;
    batch.target[b] = x[(p1 * B + b) * I] + x[(p2 * B + b) * I];
  }
}

}  // namespace

const CopyTaskOps kCopyTask{symbols_blank_delimiter, fill_copy};
const CopyTaskOps kDenoiseTask{symbols_blank_delimiter_marker, fill_denoise};
const CopyTaskOps kAddingTask{value_and_marker, fill_adding};

SyntheticTask::SyntheticTask(const TaskConfig& cfg)
    : cfg_(cfg), entry_(&find_task(cfg.name, TaskFamily::kCopy)) {}

int64_t SyntheticTask::length() const {
  return classification() ? cfg_.T + 2 * cfg_.copy_len : cfg_.T;
}

int64_t SyntheticTask::input_size() const { return entry_->copy->input_size(cfg_); }

int64_t SyntheticTask::output_size() const { return classification() ? cfg_.n_symbols + 1 : 1; }

double SyntheticTask::baseline_loss() const {
  if (classification())
    return double(cfg_.copy_len) * std::log(double(cfg_.n_symbols)) / double(length());
  return 1.0 / 6.0;
}

void SyntheticTask::generate(core::Rng& rng, int64_t B, SeqBatch& batch) const {
  const int64_t L = length(), I = input_size();
  if (batch.L != L || batch.B != B || batch.x.numel() != L * B * I) {
    batch.L = L;
    batch.B = B;
    batch.x.resize(core::Shape{L, B, I});
    batch.labels.resize(static_cast<size_t>(L * B));
    batch.mask.resize(static_cast<size_t>(L * B));
    batch.target.resize(core::Shape{B, classification() ? int64_t{1} : output_size()});
  }
  batch.x.zero();
  std::fill(batch.labels.begin(), batch.labels.end(), 0);
  std::fill(batch.mask.begin(), batch.mask.end(), 1.f);
  entry_->copy->fill(cfg_, rng, batch, positions_);
}

}  // namespace seqbench::data

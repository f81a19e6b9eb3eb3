#include "data/synthetic.hpp"

#include <algorithm>
#include <cmath>

namespace seqbench::data {

SyntheticTask::SyntheticTask(const TaskConfig& cfg) : cfg_(cfg) {
  SB_CHECK(cfg.name == "copy" || cfg.name == "denoise" || cfg.name == "adding",
           "unknown task '{}' (copy | denoise | adding)", cfg.name);
}

int64_t SyntheticTask::length() const {
  return classification() ? cfg_.T + 2 * cfg_.copy_len : cfg_.T;
}

int64_t SyntheticTask::input_size() const {
  if (cfg_.name == "adding") return 2;
  return cfg_.n_symbols + (cfg_.name == "denoise" ? 3 : 2);
}

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
    batch.labels.assign(static_cast<size_t>(L * B), 0);
    batch.mask.assign(static_cast<size_t>(L * B), 1.f);
    batch.target.resize(core::Shape{B, classification() ? int64_t{1} : output_size()});
  }
  batch.x.zero();
  float* x = batch.x.data();
  if (cfg_.name == "denoise") {
    const int64_t K = cfg_.copy_len, n = cfg_.n_symbols, T = cfg_.T, span = T + K - 1;
    SB_CHECK(span >= K, "denoise: {} symbols do not fit in {} steps", K, span);
    std::fill(batch.labels.begin(), batch.labels.end(), 0);
    std::fill(batch.mask.begin(), batch.mask.end(), 1.f);
    positions_.resize(static_cast<size_t>(span));
    for (int64_t b = 0; b < B; ++b) {
      // K distinct positions in [0, span): a partial Fisher-Yates shuffle, then sorted.
      for (int64_t i = 0; i < span; ++i) positions_[size_t(i)] = i;
      for (int64_t i = 0; i < K; ++i)
        std::swap(positions_[size_t(i)], positions_[size_t(i + rng.randint(span - i))]);
      std::sort(positions_.begin(), positions_.begin() + K);
      for (int64_t t = 0; t < L; ++t) x[(t * B + b) * I] = 1.f;  // blank everywhere
      for (int64_t i = 0; i < K; ++i) {
        const int64_t t = positions_[size_t(i)], sym = 1 + rng.randint(n);
        x[(t * B + b) * I] = 0.f;
        x[(t * B + b) * I + sym] = 1.f;
        batch.labels[static_cast<size_t>((T + K + i) * B + b)] = static_cast<int32_t>(sym);
      }
      x[(span * B + b) * I] = 0.f;
      x[(span * B + b) * I + n + 2] = 1.f;  // marker
    }
  } else if (classification()) {
    const int64_t K = cfg_.copy_len, n = cfg_.n_symbols, T = cfg_.T;
    std::fill(batch.labels.begin(), batch.labels.end(), 0);
    std::fill(batch.mask.begin(), batch.mask.end(), 1.f);
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
  } else {
    const int64_t T = cfg_.T;
    for (int64_t b = 0; b < B; ++b) {
      for (int64_t t = 0; t < T; ++t) x[(t * B + b) * I] = static_cast<float>(rng.uniform());
      const int64_t p1 = rng.randint(T / 2);
      const int64_t p2 = T / 2 + rng.randint(T - T / 2);
      x[(p1 * B + b) * I + 1] = 1.f;
      x[(p2 * B + b) * I + 1] = 1.f;
      batch.target[b] = x[(p1 * B + b) * I] + x[(p2 * B + b) * I];
    }
  }
}

}  // namespace seqbench::data

// What a stopped run leaves behind: summary.json in its directory and, once it has
// finished (for any reason but an interruption), one row in <experiment>/runs.csv.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "data/checksum.hpp"
#include "nn/model_config.hpp"
#include "train/run_files.hpp"
#include "train/trainer.hpp"

namespace seqbench::train {

// Identity of a run, in a fixed order chosen by the experiment: label, task, T, model,
// backend, hidden, data ... (strings, as they appear in runs.csv).
using RunIdentity = std::vector<std::pair<std::string, std::string>>;

// The training-setup columns the apps put after their model columns, in this order:
// params, batch, optimizer, lr, bptt, seed, threads (the OpenMP threads now), gemm.
RunIdentity setup_columns(size_t params, const TrainConfig& train,
                          const optim::OptimConfig& optim);
// The columns a recurrent model's run starts with: label, task, T (the sequence length it
// trains on), model (the cell), backend, hidden, then setup_columns.
RunIdentity recurrent_columns(const std::string& label, const std::string& task, int64_t T,
                              const nn::ModelConfig& model, size_t params,
                              const TrainingSections& setup);
// Appends b's columns to a.
void append(RunIdentity& a, const RunIdentity& b);
// How runs.csv and the tables name a data set: "<name> (stand-in)" or "<name> (real)".
std::string data_label(const std::string& name, bool stand_in);
// The data columns of a run that read files: data (the label above), data_sha256 (the
// set's checksum, data/checksum.hpp) and data_verified ("true" when every file matched
// its recorded SHA256SUMS entry, "false" when some file had none).
RunIdentity data_columns(const std::string& name, bool stand_in, const data::DataDigest& digest);

// The full record: run_id, experiment, the identity columns, then the summary's
// columns (status, updates, metric, final_metric, best_metric, ...). Column names are
// stable; docs/formats.md lists them.
RunIdentity run_record(const RunFiles& files, const std::string& experiment,
                       const RunIdentity& identity, const Summary& s);

// The run's achieved LSTM-equivalent GFLOP/s (update_gflop over step_ms) and their
// percentage of the sgemm peak; NaN where the count, the time or the peak is missing.
double achieved_gflops(const Summary& s);
double pct_sgemm_peak(const Summary& s);

// Writes summary.json (the record, the efficiency keys step_ms, lstm_gflop_per_update,
// gflops, sgemm_peak_gflops and pct_sgemm_peak, null where not known, then the message)
// and, unless the run was interrupted, appends the record to runs.csv.
void write_run_outputs(const RunFiles& files, const RunIdentity& record, const Summary& s);

// A one-row Markdown table of the most useful columns of a record, with the run's
// GFLOP/s and % of the sgemm peak where they are known.
std::string summary_table(const RunIdentity& record, const Summary& s);

}  // namespace seqbench::train

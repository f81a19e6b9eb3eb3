// How close a training run came to the hardware: its LSTM-equivalent GFLOP/s and their
// fraction of this machine's sgemm peak, measured once per machine and cached.
//
// The count (the bench's, docs/bench.md): one LSTM layer of hidden size H over L steps of B
// rows with input size I computes the gate pre-activations [x_t, h_{t-1}] W, (B, I+H) x
// (I+H, 4H), at every step: 2·L·B·4H·(I+H) flop forward; backward twice that (the input
// and the weight gradients), 6·L·B·4H·(I+H) per update. Only these GEMMs count (not the
// head, the embedding, the gate arithmetic or the optimizer). It is defined for the cells
// whose step holds an LSTM's gate GEMMs (lstm_gemm_cells()); their own extra work (rel_lstm's
// attention, ...) is not counted, so their figure is a lower bound on what they computed.
//
// The peak: C = A B of n x n floats (n = 1536) with the run's float GEMM (train.gemm), at
// the run's thread count; the fastest of at least 3 products after one warm-up, timed for
// about 250 ms. Cached per machine in <cache>/sgemm_peak-<hash>.json, where <cache> is
// $SEQBENCH_CACHE_DIR, else $XDG_CACHE_HOME/seqbench, else $HOME/.cache/seqbench; the
// file names its key (CPU model, cores, oneDNN's ISA, the build's ISA, the GEMM library,
// threads) and is used only when the key matches. SEQBENCH_SGEMM_PEAK: auto (the default:
// the cached peak, measured when there is none), cached (the cached peak only, never
// measured), off (no peak).
#pragma once

#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <vector>

namespace seqbench::train {

// 6·L·B·4H·(I+H), in flop.
double lstm_equivalent_flop(int64_t batch, int64_t steps, int64_t input, int64_t hidden);
// The cells the count is defined for.
const std::vector<std::string>& lstm_gemm_cells();
// lstm_equivalent_flop for a run of `cell`, 0 where the count is not defined for it.
double lstm_equivalent_flop(const std::string& cell, int64_t batch, int64_t steps, int64_t input,
                            int64_t hidden);

enum class PeakMode { kAuto, kCached, kOff };
// SEQBENCH_SGEMM_PEAK; anything but auto, cached or off (or unset) is a core::UsageError.
PeakMode peak_mode();
// Where the peaks are cached; "" when no variable names a place.
std::string peak_cache_dir();
// This machine and run's key: CPU model, cores, oneDNN's ISA, the build's ISA, the GEMM
// library and the thread count.
std::string peak_key(int threads);
// GFLOP/s of the fastest n x n sgemm (backend::gemm<float>, the current threads): one
// warm-up, then at least 3 products, more until they add up to min_ms.
double measure_sgemm_gflops(int64_t n = 1536, double min_ms = 250);

struct PeakLookup {
  double gflops = std::numeric_limits<double>::quiet_NaN();  // NaN: none
  bool measured = false;  // measured now (the file was missing, unreadable or for another key)
  std::string path;       // the cache file
  std::string note;       // why a file was ignored or could not be written, else empty
};
// The peak for `key` cached in `dir`; in kAuto, measured with `measure` when the file is
// missing, damaged or holds another key, and written there (atomically; a failure to write
// is a note, not an error). Two processes never measure at once (a lock beside the file).
PeakLookup cached_sgemm_peak(const std::string& dir, const std::string& key, PeakMode mode,
                             const std::function<double()>& measure);
// cached_sgemm_peak for this machine at `threads` threads, as SEQBENCH_SGEMM_PEAK and the
// cache variables say.
PeakLookup machine_sgemm_peak(int threads, PeakMode mode);

}  // namespace seqbench::train

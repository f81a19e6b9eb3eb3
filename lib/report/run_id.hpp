// Run ids name result directories: results/<experiment>/<run-id>/.
#pragma once

#include <cstdint>
#include <ctime>
#include <string>
#include <string_view>

namespace seqbench::report {

// A run id (or the label that prefixes one) names one directory inside the results
// root: non-empty, at most 200 bytes, no '/', no control characters, not starting with
// '.' (so not "." or ".." either). Throws core::UsageError naming `what` otherwise.
void check_run_id(const std::string& id, const std::string& what);

// "<prefix>-YYYYmmdd-HHMMSS-s<seed>" (local time, now), made unique within results_dir
// by a suffix "-2", "-3", ... The directory results_dir/<id> is created here (and
// results_dir with it): creating it is what claims the id, so two runs started in the
// same second with the same seed cannot both get it. results_dir itself must be a real
// directory (core::make_real_dir: a symbolic link there is refused naming it).
std::string make_run_id(const std::string& results_dir, const std::string& prefix, uint64_t seed);
// Same at a given broken-down time (for tests and reproducible ids).
std::string make_run_id(const std::string& results_dir, const std::string& prefix, uint64_t seed,
                        const std::tm& when);

// The prefix of an id make_run_id made ("lstm" of "lstm-20261122-170134-s1-2"); "" for
// any other id (a sweep's "lstm_small-T5-s1", a --run-id of one's own).
std::string run_id_prefix(std::string_view id);
// The newest run in results_dir (a directory holding config.yaml) whose id make_run_id
// made, with this prefix ("" for any), by the date and time in the id; "" when there is
// none. What `--resume latest` continues.
std::string newest_run_id(const std::string& results_dir, const std::string& prefix);

}  // namespace seqbench::report

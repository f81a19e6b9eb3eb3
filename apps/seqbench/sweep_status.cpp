// `seqbench sweep status SPEC`: where each run of a sweep stands, as its files say
// (sweep::run_status; a running run's update and ETA from sweep/live.hpp), the counts per
// state and the sweep's ETA.
#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "apps/seqbench/sweep_backend.hpp"
#include "core/check.hpp"
#include "sweep/estimate.hpp"
#include "sweep/live.hpp"

namespace seqbench::apps {

using sweep::Run;
using sweep::RunStatus;
using sweep::State;

int print_status(const sweep::Spec& spec, const std::vector<Run>& runs, int64_t slots) {
  std::map<State, int> counts;
  size_t w = 2;
  for (const Run& r : runs) w = std::max(w, r.id.size());
  fmt::print("{:<{}}  {:<11}  {}\n", "id", w, "state", "detail");
  for (const Run& r : runs) {
    const RunStatus st = sweep::run_status(spec, r);
    ++counts[st.state];
    const std::string detail = st.state == State::kRunning
                                   ? sweep::progress_text(sweep::run_progress(sweep::run_dir(spec, r)))
                                   : st.detail;
    fmt::print("{:<{}}  {:<11}  {}\n", r.id, w, sweep::state_name(st.state), detail);
  }
  fmt::print("\n{} run(s): {} done, {} running, {} interrupted, {} failed, {} pending\n",
             runs.size(), counts[State::kDone], counts[State::kRunning],
             counts[State::kInterrupted], counts[State::kFailed], counts[State::kPending]);
  if (counts[State::kRunning] > 0) {
    const sweep::SweepProgress p = sweep::sweep_progress(spec, runs, slots);
    fmt::print("sweep ETA: {} ({} at once)\n",
               p.eta_s ? sweep::format_duration(*p.eta_s) : std::string("not known yet"), slots);
  }
  return core::kExitOk;
}

}  // namespace seqbench::apps

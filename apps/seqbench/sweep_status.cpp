// `seqbench sweep status SPEC`: where each run of a sweep stands, as its files say
// (sweep::run_status), and the counts per state.
#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "apps/seqbench/sweep_backend.hpp"
#include "core/check.hpp"

namespace seqbench::apps {

using sweep::Run;
using sweep::RunStatus;
using sweep::State;

int print_status(const sweep::Spec& spec, const std::vector<Run>& runs) {
  std::map<State, int> counts;
  size_t w = 2;
  for (const Run& r : runs) w = std::max(w, r.id.size());
  fmt::print("{:<{}}  {:<11}  {}\n", "id", w, "state", "detail");
  for (const Run& r : runs) {
    const RunStatus st = sweep::run_status(spec, r);
    ++counts[st.state];
    fmt::print("{:<{}}  {:<11}  {}\n", r.id, w, sweep::state_name(st.state), st.detail);
  }
  fmt::print("\n{} run(s): {} done, {} running, {} interrupted, {} failed, {} pending\n",
             runs.size(), counts[State::kDone], counts[State::kRunning],
             counts[State::kInterrupted], counts[State::kFailed], counts[State::kPending]);
  return core::kExitOk;
}

}  // namespace seqbench::apps

#include "sweep/live.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>

#include "core/check.hpp"
#include "core/fs.hpp"
#include "report/csv.hpp"
#include "sweep/estimate.hpp"

namespace seqbench::sweep {
namespace {

// The header and the last complete line of a CSV file, read from its two ends: a long
// run's metrics.csv is never read whole.
std::string header_and_last_line(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return {};
  std::string header;
  if (!std::getline(in, header)) return {};
  in.clear();
  in.seekg(0, std::ios::end);
  const std::streamoff size = in.tellg();
  const std::streamoff from = std::max<std::streamoff>(0, size - 4096);
  in.seekg(from);
  std::string tail(size_t(size - from), '\0');
  in.read(tail.data(), std::streamsize(tail.size()));
  tail.resize(size_t(in.gcount()));
  // A row still being written has no newline yet: the last complete one ends at the last '\n'.
  const size_t end = tail.rfind('\n');
  if (end == std::string::npos) return {};
  const size_t start = tail.rfind('\n', end == 0 ? 0 : end - 1);
  std::string last = start == std::string::npos ? tail.substr(0, end) : tail.substr(start + 1, end - start - 1);
  if (start == std::string::npos && from > 0) return {};  // a row longer than the window
  if (last == header) return {};
  return header + "\n" + last + "\n";
}

}  // namespace

std::optional<double> RunProgress::eta_s() const {
  if (total <= 0 || rate() <= 0) return std::nullopt;
  return double(std::max<int64_t>(0, total - step)) / rate();
}

RunProgress run_progress(const std::string& run_dir) {
  RunProgress p;
  try {
    const std::string cfg_path = run_dir + "/config.yaml";
    if (core::file_exists(cfg_path)) {
      const Plan plan = plan_of(flatten_config(core::read_file(cfg_path), cfg_path));
      p.total = plan.training ? plan.updates : 0;
      p.may_stop_early = plan.may_stop_early;
    }
    const std::string text = header_and_last_line(run_dir + "/metrics.csv");
    if (!text.empty()) {
      const report::CsvTable t = report::parse_csv(text, run_dir + "/metrics.csv");
      if (t.rows.size() == 1 && t.has("step") && t.has("elapsed_s")) {
        p.step = int64_t(t.number(0, "step"));
        p.elapsed_s = t.number(0, "elapsed_s");
      }
    }
  } catch (const core::Error&) {
    // A file being replaced or cut short: nothing known this time.
  }
  return p;
}

std::string progress_text(const RunProgress& p) {
  if (p.step <= 0) return "starting";
  std::string out = p.total > 0 ? fmt::format("update {}/{}", p.step, p.total)
                                : fmt::format("update {}", p.step);
  if (p.rate() > 0)  // "3800/s", "41.2/s", "0.05/s": no exponents
    out += p.rate() >= 100 ? fmt::format(", {:.0f}/s", p.rate()) : fmt::format(", {:.3g}/s", p.rate());
  if (const auto eta = p.eta_s())
    out += fmt::format(", ETA {}{}", format_duration(*eta),
                       p.may_stop_early ? fmt::format(" (to target or {} updates)", p.total) : "");
  return out;
}

SweepProgress sweep_progress(const Spec& spec, const std::vector<Run>& runs, int64_t slots) {
  SweepProgress out;
  out.total = int(runs.size());
  double done_seconds = 0, running_left = 0, longest = 0, projected = 0;
  int done_timed = 0, projected_n = 0, no_rate = 0;
  for (const Run& r : runs) {
    const RunStatus st = run_status(spec, r);
    switch (st.state) {
      case State::kDone: {
        ++out.done;
        const std::string summary = run_dir(spec, r) + "/summary.json";
        const auto j = nlohmann::json::parse(core::file_exists(summary) ? core::read_file(summary) : "",
                                             nullptr, false);
        if (j.is_object() && j.contains("train_seconds") && j["train_seconds"].is_number()) {
          done_seconds += j["train_seconds"].get<double>();
          ++done_timed;
        }
        break;
      }
      case State::kRunning: {
        ++out.running;
        const RunProgress p = run_progress(run_dir(spec, r));
        out.running_runs.push_back({r.id, p});
        if (const auto eta = p.eta_s()) {
          running_left += *eta;
          longest = std::max(longest, *eta);
          projected += p.elapsed_s + *eta;
          ++projected_n;
        } else {
          ++no_rate;  // just started: counted as a whole run below
        }
        break;
      }
      case State::kFailed:
        ++out.failed;
        break;
      default:
        ++out.to_go;
    }
  }
  const double per_run = done_timed > 0 ? done_seconds / done_timed
                         : projected_n > 0 ? projected / projected_n
                                           : -1;
  // Unknown until some run is done or has a rate to go by.
  if (per_run >= 0) {
    const double work = running_left + per_run * (out.to_go + no_rate);
    const int64_t at_once = slots > 0 ? slots : std::max(1, out.running);
    out.eta_s = std::max(longest, work / double(at_once));
  }
  return out;
}

std::string progress_line(const SweepProgress& p) {
  std::string out = fmt::format("[{}/{} done, {} running, {} failed]", p.done, p.total, p.running, p.failed);
  for (const auto& r : p.running_runs) out += fmt::format(" {} {};", r.id, progress_text(r.progress));
  if (!p.running_runs.empty()) out.pop_back();
  if (p.done + p.failed < p.total)
    out += p.eta_s ? fmt::format("; sweep ETA {}", format_duration(*p.eta_s)) : "; sweep ETA not known yet";
  return out;
}

}  // namespace seqbench::sweep

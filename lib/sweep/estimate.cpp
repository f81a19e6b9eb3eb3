#include "sweep/estimate.hpp"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <functional>
#include <queue>
#include <regex>
#include <set>
#include <sstream>

#include "core/check.hpp"
#include "core/fs.hpp"
#include "report/csv.hpp"

namespace seqbench::sweep {

namespace fs = std::filesystem;

namespace {

std::string flow_text(const YAML::Node& n) {
  if (n.IsScalar()) return n.Scalar();
  if (n.IsNull() || !n.IsDefined()) return "null";
  std::vector<std::string> items;
  if (n.IsSequence()) {
    for (const auto& x : n) items.push_back(flow_text(x));
    return "[" + fmt::format("{}", fmt::join(items, ", ")) + "]";
  }
  for (const auto& kv : n) items.push_back(kv.first.Scalar() + ": " + flow_text(kv.second));
  return "{" + fmt::format("{}", fmt::join(items, ", ")) + "}";
}

void flatten(const YAML::Node& n, const std::string& prefix, FlatConfig& out) {
  if (n.IsMap()) {
    for (const auto& kv : n) {
      const std::string key = prefix.empty() ? kv.first.Scalar() : prefix + "." + kv.first.Scalar();
      flatten(kv.second, key, out);
    }
    return;
  }
  out[prefix] = flow_text(n);
}

std::optional<int64_t> int_of(const FlatConfig& cfg, const std::string& key) {
  const auto it = cfg.find(key);
  if (it == cfg.end()) return std::nullopt;
  try {
    size_t used = 0;
    const long long v = std::stoll(it->second, &used);
    if (used != it->second.size()) return std::nullopt;
    return int64_t(v);
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

bool done_status(const std::string& s) {
  return s == "finished" || s == "target_reached" || s == "early_stopped";
}

}  // namespace

FlatConfig flatten_config(const std::string& yaml_text, const std::string& where) {
  YAML::Node root;
  try {
    root = YAML::Load(yaml_text);
  } catch (const YAML::Exception& e) {
    throw core::Error(fmt::format("{}: not YAML: {}", where, e.what()));
  }
  FlatConfig out;
  if (root.IsMap()) flatten(root, "", out);
  return out;
}

bool cost_free_key(const std::string& key) {
  static const std::set<std::string> kFree{
      "seed",           "threads",          "train.seed",           "train.threads",
      "train.steps",    "train.target",     "train.patience",       "train.log_every",
      "train.eval_every", "train.checkpoint_every", "train.gradnorm_every", "train.nan_check",
      "data.permute",   "data.permute_seed", "data.check_epochs",   "ppo.frames"};
  if (kFree.count(key)) return true;
  for (const char* prefix : {"output.", "optim."})
    if (key.rfind(prefix, 0) == 0) return true;
  return false;
}

std::string cost_key(const FlatConfig& cfg) {
  std::string out;
  for (const auto& [k, v] : cfg)  // std::map: sorted
    if (!cost_free_key(k)) out += k + "=" + v + "\n";
  return out;
}

std::set<std::string> near_miss_keys(const std::string& key, const std::vector<Measurement>& ms) {
  // cost_key's "k=v" lines -> {k: v}
  const auto parse = [](const std::string& text) {
    std::map<std::string, std::string> out;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);)
      if (const size_t eq = line.find('='); eq != std::string::npos) out[line.substr(0, eq)] = line.substr(eq + 1);
    return out;
  };
  const auto want = parse(key);
  std::set<std::string> out;
  std::set<std::string> seen;
  for (const auto& m : ms) {
    if (m.cost_key == key || !seen.insert(m.cost_key).second) continue;
    const auto have = parse(m.cost_key);
    std::vector<std::string> differ;
    for (const auto& [k, v] : want) {
      const auto it = have.find(k);
      if (it == have.end() || it->second != v) differ.push_back(k);
    }
    for (const auto& [k, v] : have)
      if (!want.count(k)) differ.push_back(k);
    if (differ.size() == 1) out.insert(differ.front());
  }
  return out;
}

int64_t validations(int64_t updates, int64_t eval_every) {
  if (updates <= 0) return 0;
  if (eval_every <= 0) return 1;
  return updates / eval_every + (updates % eval_every != 0 ? 1 : 0);
}

Plan plan_of(const FlatConfig& cfg) {
  Plan p;
  p.cost_key = cost_key(cfg);
  const auto steps = int_of(cfg, "train.steps");
  p.training = steps.has_value();
  if (!p.training) return p;
  p.updates = *steps;
  p.eval_every = int_of(cfg, "train.eval_every").value_or(0);
  const auto target = cfg.find("train.target");
  p.may_stop_early = (target != cfg.end() && target->second != "null" && !target->second.empty()) ||
                     int_of(cfg, "train.patience").value_or(0) > 0;
  return p;
}

Measurement measure(const std::string& metrics_csv_text, int64_t updates, double train_seconds,
                    std::optional<double> wall_s) {
  Measurement m;
  m.updates = updates;
  m.training = true;
  const report::CsvTable t = report::parse_csv(metrics_csv_text, "metrics.csv");
  if (!t.has("step") || !t.has("split") || !t.has("elapsed_s"))
    throw core::Error("metrics.csv: no step, split or elapsed_s column");
  struct Row {
    int64_t step;
    double elapsed;
  };
  std::vector<Row> train, valid;
  const int split = t.col("split");
  for (size_t r = 0; r < t.rows.size(); ++r) {
    const Row row{int64_t(t.number(r, "step")), t.number(r, "elapsed_s")};
    (t.rows[r][size_t(split)] == "valid" ? valid : train).push_back(row);
  }
  if (updates <= 0 || valid.empty() || valid.back().step != updates)
    throw core::Error("metrics.csv: no validation at the last update");
  m.valid_s = std::max(0.0, train_seconds - valid.back().elapsed);
  const auto simple = [&] {
    return std::max(0.0, 1000.0 * (train_seconds - double(valid.size()) * m.valid_s) /
                             double(updates));
  };
  double warm = 0;
  m.train_ms = simple();
  // Steady state: from the first training row to the last, validations in between taken
  // out; what the first interval took beyond that rate is warm-up, a per-run cost.
  if (train.size() >= 2 && train.back().step > train.front().step) {
    const Row a = train.front(), b = train.back();
    int64_t between = 0;
    for (const Row& v : valid) between += v.step >= a.step && v.step < b.step;
    const double ms =
        1000.0 * (b.elapsed - a.elapsed - double(between) * m.valid_s) / double(b.step - a.step);
    if (ms > 0) {
      m.train_ms = ms;
      warm = std::max(0.0, a.elapsed - double(a.step) * ms / 1000.0);
    }
  }
  m.start_s = warm;
  if (wall_s) {
    m.start_known = true;
    m.start_s += std::max(0.0, *wall_s - train_seconds);
  }
  m.total_s = wall_s.value_or(train_seconds);
  return m;
}

std::vector<Measurement> read_measurements(const std::string& runs_csv, const std::string& source,
                                           int rank) {
  std::vector<Measurement> out;
  if (!core::file_exists(runs_csv)) return out;
  report::CsvTable t;
  try {
    t = report::read_csv(runs_csv);
  } catch (const core::Error&) {
    return out;
  }
  for (const char* c : {"run_id", "status", "updates", "train_seconds"})
    if (!t.has(c)) return out;
  const fs::path dir = fs::path(runs_csv).parent_path();
  const fs::path logs = dir.parent_path() / ".sweep" / "logs";
  // The last row of a run id is the run its directory holds now.
  std::map<std::string, size_t> last;
  for (size_t r = 0; r < t.rows.size(); ++r) last[t.rows[r][size_t(t.col("run_id"))]] = r;
  std::vector<size_t> order;
  for (const auto& [id, r] : last) order.push_back(r);
  std::sort(order.begin(), order.end());
  for (size_t r : order) {
    const std::string id = t.rows[r][size_t(t.col("run_id"))];
    if (!done_status(t.rows[r][size_t(t.col("status"))])) continue;
    const fs::path run = dir / id;
    try {
      const FlatConfig cfg =
          flatten_config(core::read_file((run / "config.yaml").string()), (run / "config.yaml").string());
      const Plan p = plan_of(cfg);
      std::optional<double> wall, cpu;
      const fs::path wall_file = logs / (id + ".wall");
      if (core::file_exists(wall_file.string())) {
        std::istringstream in(core::read_file(wall_file.string()));
        double w = 0, c = 0;
        if (in >> w) wall = w;
        if (wall && in >> c) cpu = c;
      }
      const double train_seconds = t.number(r, "train_seconds");
      Measurement m;
      if (p.training) {
        m = measure(core::read_file((run / "metrics.csv").string()), int64_t(t.number(r, "updates")),
                    train_seconds, wall);
      } else {
        m.training = false;
        m.total_s = wall.value_or(train_seconds);
        m.start_known = wall.has_value();
      }
      m.run_dir = run.string();
      m.source = source;
      m.rank = rank;
      m.cost_key = p.cost_key;
      m.threads = t.has("threads") ? int64_t(t.number(r, "threads"))
                                   : int_of(cfg, "train.threads").value_or(
                                         int_of(cfg, "threads").value_or(1));
      if (m.threads < 1) m.threads = 1;
      if (wall && cpu && *wall > 0) {
        m.share_known = true;
        m.cpu_share = *cpu / (*wall * double(m.threads));
      }
      out.push_back(std::move(m));
    } catch (const std::exception&) {
      // A run without its files (moved, half copied) measures nothing.
    }
  }
  return out;
}

RunEstimate estimate_run(const Plan& plan, int64_t threads,
                         const std::vector<Measurement>& measurements) {
  RunEstimate e;
  std::vector<const Measurement*> fit;
  for (const Measurement& m : measurements)
    if (m.cost_key == plan.cost_key && m.training == plan.training && m.threads <= threads)
      fit.push_back(&m);
  if (fit.empty()) return e;
  int64_t best_threads = 0;
  for (const auto* m : fit) best_threads = std::max(best_threads, m->threads);
  int best_rank = 1 << 30;
  for (const auto* m : fit)
    if (m->threads == best_threads) best_rank = std::min(best_rank, m->rank);
  for (const auto* m : fit)
    if (m->threads == best_threads && m->rank == best_rank) e.used.push_back(m);
  e.ok = true;
  e.measured_threads = best_threads;
  std::vector<double> shares;
  for (const auto* m : e.used)
    if (m->share_known) shares.push_back(m->cpu_share);
  e.share_known = !shares.empty();
  if (e.share_known) e.cpu_share = median(shares);
  if (!plan.training) {
    std::vector<double> total;
    for (const auto* m : e.used) total.push_back(m->total_s);
    e.seconds = median(total);
    e.start_known = std::all_of(e.used.begin(), e.used.end(),
                                [](const Measurement* m) { return m->start_known; });
    return e;
  }
  std::vector<double> train, valid, start_known, start_any;
  for (const auto* m : e.used) {
    train.push_back(m->train_ms);
    valid.push_back(m->valid_s);
    (m->start_known ? start_known : start_any).push_back(m->start_s);
  }
  e.train_ms = median(train);
  e.valid_s = median(valid);
  e.start_known = !start_known.empty();
  e.start_s = median(e.start_known ? start_known : start_any);
  e.validations = validations(plan.updates, plan.eval_every);
  e.seconds = e.start_s + double(plan.updates) * e.train_ms / 1000.0 +
              double(e.validations) * e.valid_s;
  return e;
}

double makespan(const std::vector<double>& seconds, int64_t slots) {
  if (slots < 1) slots = 1;
  std::priority_queue<double, std::vector<double>, std::greater<>> ends;
  double last = 0;
  for (double s : seconds) {
    double start = 0;
    if (int64_t(ends.size()) >= slots) {
      start = ends.top();
      ends.pop();
    }
    ends.push(start + s);
    last = std::max(last, start + s);
  }
  return last;
}

std::string format_duration(double s) {
  if (s < 10) return fmt::format("{:.1f} s", s);
  if (s < 100) return fmt::format("{:.0f} s", s);
  if (s < 6000) return fmt::format("{:.1f} min", s / 60);
  if (s < 72 * 3600) return fmt::format("{:.1f} h", s / 3600);
  return fmt::format("{:.1f} days ({:.0f} h)", s / 86400, s / 3600);
}

std::optional<double> parse_slurm_time(const std::string& text) {
  static const std::regex re(R"(^(?:(\d+)-)?(\d+)(?::(\d+))?(?::(\d+))?$)");
  std::smatch m;
  if (!std::regex_match(text, m, re)) return std::nullopt;
  const auto num = [&](int i) { return m[i].matched ? std::stod(m[i].str()) : 0.0; };
  const int parts = 1 + int(m[3].matched) + int(m[4].matched);
  if (m[1].matched) {  // days-hours[:minutes[:seconds]]
    return num(1) * 86400 + num(2) * 3600 + num(3) * 60 + num(4);
  }
  if (parts == 1) return num(2) * 60;                         // minutes
  if (parts == 2) return num(2) * 60 + num(3);                // minutes:seconds
  return num(2) * 3600 + num(3) * 60 + num(4);                // hours:minutes:seconds
}

}  // namespace seqbench::sweep

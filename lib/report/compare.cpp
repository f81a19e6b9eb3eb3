#include "report/compare.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <map>
#include <optional>
#include <set>
#include <tuple>

#include "core/check.hpp"
#include "core/text.hpp"
#include "report/markdown.hpp"

namespace seqbench::report {
namespace {

const char* const kIdentity[] = {"model", "task", "T", "width", "state_bytes", "image_size", "data"};
const char* const kNumeric[] = {"final_metric",      "best_metric",       "updates",
                                "updates_to_target", "seconds_to_target", "ms_per_update",
                                "peak_rss_mb"};

// The values of one group while the rows are scanned, per column (kNumeric's order).
struct Acc {
  CompareRow row;
  std::vector<double> values[kCompareColumns];
  std::vector<std::vector<std::string>> identity_seen;  // per identity column, distinct values
};

std::string readable(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  // Large counts (updates, seconds) read better without an exponent.
  if (std::fabs(v) >= 1e4 && std::fabs(v) < 1e15) return fmt::format("{:.0f}", v);
  return fmt::format("{:.4g}", v);
}

// "0.91 ± 0.02" (n >= 3), "0.91 (0.89–0.93)" (n = 2), "0.91" (one run, or all equal).
std::string with_spread(double mean, const Spread& s) {
  if (s.min == s.max) return readable(mean);
  if (s.n >= 3) return readable(mean) + " ± " + readable(s.sd);
  if (s.n == 2) return fmt::format("{} ({}–{})", readable(mean), readable(s.min), readable(s.max));
  return readable(mean);
}

double mean_of(const std::vector<double>& v) {
  double sum = 0;
  for (double x : v) sum += x;
  return v.empty() ? std::nan("") : sum / double(v.size());
}

Spread spread_of(const std::vector<double>& v) {
  Spread s;
  s.n = int(v.size());
  s.sd = s.min = s.max = std::nan("");
  if (v.empty()) return s;
  s.min = *std::min_element(v.begin(), v.end());
  s.max = *std::max_element(v.begin(), v.end());
  if (v.size() >= 2) {
    const double m = mean_of(v);
    double ss = 0;
    for (double x : v) ss += (x - m) * (x - m);
    s.sd = std::sqrt(ss / double(v.size() - 1));
  }
  return s;
}

}  // namespace

bool higher_is_better(std::string_view metric) {
  const std::string m = core::lower(metric);
  for (const char* name : {"acc", "accuracy", "reward", "return", "f1", "auc"})
    if (m == name) return true;
  return false;
}

bool ignored_config_key(const std::string& key) {
  // `seed` is the stability analyses' seed (they have no train section).
  // train.nan_check only decides how soon a diverging run stops, so runs written before
  // the key existed still group with newer ones. train.gemm only picks the library that
  // multiplies (the same products, summed in another order), like the thread count: runs
  // of one sweep made before and after its default changed are seeds of one setting.
  return key == "train.seed" || key == "seed" || key == "train.nan_check" || key == "train.gemm" ||
         key.rfind("output.", 0) == 0;
}

std::string config_signature(const std::map<std::string, std::string>& cfg, const std::string& also_ignored) {
  std::string sig;
  for (const auto& [k, v] : cfg)
    if (!ignored_config_key(k) && k != also_ignored) sig += k + "=" + v + "\n";
  return sig;
}

std::string config_value(const std::map<std::string, std::string>& cfg, const std::string& key) {
  const auto v = cfg.find(key);
  return v == cfg.end() ? std::string("(unset)") : v->second;
}

std::vector<std::string> differing_config_keys(const std::vector<const std::map<std::string, std::string>*>& cfgs) {
  std::set<std::string> keys;
  for (const auto* cfg : cfgs)
    for (const auto& kv : *cfg) keys.insert(kv.first);
  std::vector<std::string> differing;
  for (const auto& k : keys) {
    if (ignored_config_key(k)) continue;
    std::set<std::string> values;
    for (const auto* cfg : cfgs) values.insert(config_value(*cfg, k));
    if (values.size() > 1) differing.push_back(k);
  }
  return differing;
}

std::vector<std::string> differing_config_tags(const std::vector<const std::map<std::string, std::string>*>& cfgs) {
  const std::vector<std::string> differing = differing_config_keys(cfgs);
  std::vector<std::string> tags;
  for (const auto* cfg : cfgs) {
    std::string tag;
    for (const auto& k : differing) tag += fmt::format("{}{}={}", tag.empty() ? "" : ", ", k, config_value(*cfg, k));
    tags.push_back(tag);
  }
  return tags;
}

CompareTable compare_runs(const CsvTable& runs, const CompareOptions& opts,
                          const RunConfigs& configs) {
  SB_CHECK(configs.empty() || configs.size() == runs.rows.size(),
           "{}: {} configs for {} rows", runs.path, configs.size(), runs.rows.size());
  CompareTable table;
  table.source = runs.path;
  table.by = opts.by;
  // col() throws naming the file and listing its columns.
  const bool by_config = !runs.has(opts.by);
  if (by_config) {
    bool known = false;
    std::set<std::string> varying;  // the config keys whose values differ between runs
    std::map<std::string, std::set<std::string>> values;
    for (const auto& cfg : configs)
      for (const auto& [k, v] : cfg) {
        known |= k == opts.by;
        values[k].insert(v);
      }
    for (const auto& [k, vs] : values)
      if (vs.size() > 1 && !ignored_config_key(k)) varying.insert(k);
    if (!known)
      throw core::UsageError(fmt::format(
          "--by {}: neither a column of {} ({}) nor a key of its runs' config.yaml (keys that "
          "vary: {})",
          opts.by, runs.path, core::join(runs.columns, ", "),
          varying.empty() ? "none" : core::join(std::vector<std::string>(varying.begin(), varying.end()), ", ")));
  }
  runs.col("metric");
  for (const char* name : kNumeric) runs.col(name);
  if (runs.rows.empty())
    throw core::Error(fmt::format(
        "{}: no runs in the file, only a header (hint: finish a run first, or pass another "
        "runs.csv)",
        runs.path));
  for (const char* name : kIdentity)
    if (runs.has(name) && name != opts.by) table.identity_columns.push_back(name);

  // (key, metric, config signature) -> group; the signature is empty when configs are
  // not split on.
  std::map<std::tuple<std::string, std::string, std::string>, size_t> index;
  std::vector<Acc> groups;
  std::vector<size_t> first_row;  // per group, a row whose config it has
  const bool split = !opts.average_over_configs && !configs.empty();
  for (size_t r = 0; r < runs.rows.size(); ++r) {
    const auto& cells = runs.rows[r];
    const std::string key = by_config ? config_value(configs[r], opts.by) : cells[runs.col(opts.by)];
    const std::string& metric = cells[runs.col("metric")];
    const std::string sig = split ? config_signature(configs[r]) : std::string();
    auto [it, inserted] = index.try_emplace({key, metric, sig}, groups.size());
    if (inserted) {
      groups.emplace_back();
      groups.back().row.key = key;
      groups.back().row.metric = metric;
      groups.back().identity_seen.resize(table.identity_columns.size());
      first_row.push_back(r);
    }
    Acc& g = groups[it->second];
    ++g.row.n;
    for (int c : {kFinal, kBest, kUpdates, kMsPerUpdate, kPeakRss})
      g.values[c].push_back(runs.number(r, kNumeric[c]));
    // runs.csv writes -1 for "never reached" (or no target set).
    const double upd = runs.number(r, "updates_to_target");
    const double sec = runs.number(r, "seconds_to_target");
    if (upd >= 0) {
      ++g.row.n_target;
      g.values[kUpdatesToTarget].push_back(upd);
      g.values[kSecondsToTarget].push_back(sec);
    }
    for (size_t i = 0; i < table.identity_columns.size(); ++i) {
      const std::string& v = cells[runs.col(table.identity_columns[i])];
      auto& seen = g.identity_seen[i];
      if (std::find(seen.begin(), seen.end(), v) == seen.end()) seen.push_back(v);
    }
  }

  // Groups that share a key but not a config are named by the keys that differ.
  if (split) {
    std::map<std::pair<std::string, std::string>, std::vector<size_t>> by_key;
    for (size_t g = 0; g < groups.size(); ++g)
      by_key[{groups[g].row.key, groups[g].row.metric}].push_back(g);
    for (const auto& [key, members] : by_key) {
      if (members.size() < 2) continue;
      std::vector<const std::map<std::string, std::string>*> cfgs;
      for (size_t g : members) cfgs.push_back(&configs[first_row[g]]);
      const std::vector<std::string> tags = differing_config_tags(cfgs);
      for (size_t i = 0; i < members.size(); ++i) groups[members[i]].row.key += " [" + tags[i] + "]";
    }
  }

  bool mixed = false;
  const std::string first_metric = groups.front().row.metric;
  for (Acc& g : groups) {
    CompareRow& row = g.row;
    row.final_metric = mean_of(g.values[kFinal]);
    row.best_metric = mean_of(g.values[kBest]);
    row.updates = mean_of(g.values[kUpdates]);
    row.ms_per_update = mean_of(g.values[kMsPerUpdate]);
    row.peak_rss_mb = mean_of(g.values[kPeakRss]);
    if (row.n_target > 0) {
      row.updates_to_target = mean_of(g.values[kUpdatesToTarget]);
      row.seconds_to_target = mean_of(g.values[kSecondsToTarget]);
    }
    for (int c = 0; c < kCompareColumns; ++c) row.spread[c] = spread_of(g.values[c]);
    for (const auto& seen : g.identity_seen) {
      std::string joined;
      for (const auto& v : seen) joined += (joined.empty() ? "" : "/") + v;
      row.identity.push_back(joined);
    }
    mixed |= row.metric != first_metric;
    table.rows.push_back(std::move(row));
  }
  if (!mixed) table.metric = table.rows.front().metric;

  std::stable_sort(
      table.rows.begin(), table.rows.end(), [](const CompareRow& a, const CompareRow& b) {
        if (a.metric != b.metric) return a.metric < b.metric;
        // A diverged run's NaN sorts last whatever the direction.
        const bool a_nan = std::isnan(a.final_metric), b_nan = std::isnan(b.final_metric);
        if (a_nan != b_nan) return b_nan;
        if (!a_nan && a.final_metric != b.final_metric)
          return higher_is_better(a.metric) ? a.final_metric > b.final_metric
                                            : a.final_metric < b.final_metric;
        return a.key < b.key;
      });
  return table;
}

std::vector<std::string> compare_header(const CompareTable& table, bool exact) {
  std::vector<std::string> header{table.by};
  for (const auto& c : table.identity_columns) header.push_back(c);
  header.push_back("n");
  if (exact) header.push_back("n_target");
  if (table.metric.empty()) header.push_back("metric");
  const std::string final_name = table.metric.empty() ? "final" : "final " + table.metric;
  const std::string best_name = table.metric.empty() ? "best" : "best " + table.metric;
  for (const std::string& name : {final_name, best_name, std::string("updates"),
                                  std::string("updates_to_target"), std::string("seconds_to_target"),
                                  std::string("ms_per_update"), std::string("peak_rss_mb")}) {
    header.push_back(name);
    if (exact) header.insert(header.end(), {name + " sd", name + " min", name + " max"});
  }
  return header;
}

std::vector<std::vector<std::string>> compare_cells(const CompareTable& table, bool exact) {
  std::vector<std::vector<std::string>> out;
  for (const CompareRow& r : table.rows) {
    std::vector<std::string> cells{r.key};
    cells.insert(cells.end(), r.identity.begin(), r.identity.end());
    cells.push_back(std::to_string(r.n));
    if (exact) cells.push_back(std::to_string(r.n_target));
    if (table.metric.empty()) cells.push_back(r.metric);
    const std::optional<double> means[kCompareColumns] = {
        r.final_metric,      r.best_metric,     r.updates,    r.updates_to_target,
        r.seconds_to_target, r.ms_per_update,   r.peak_rss_mb};
    for (int c = 0; c < kCompareColumns; ++c) {
      const Spread& s = r.spread[c];
      if (exact) {
        // Numbers only: a target never reached is an empty cell, an undefined sd "nan".
        for (double v : {means[c].value_or(0), s.sd, s.min, s.max})
          cells.push_back(means[c] ? CsvWriter::cell(v) : "");
        continue;
      }
      const bool target = c == kUpdatesToTarget || c == kSecondsToTarget;
      if (!means[c]) {
        cells.push_back("—");
        continue;
      }
      std::string cell = with_spread(*means[c], s);
      if (target && r.n_target < r.n) cell += fmt::format(" ({}/{})", r.n_target, r.n);
      cells.push_back(cell);
    }
    out.push_back(std::move(cells));
  }
  return out;
}

std::string compare_markdown(const CompareTable& table) {
  return markdown_table(compare_header(table), compare_cells(table, false));
}

std::string compare_csv(const CompareTable& table) {
  std::string out = csv_line(compare_header(table, true));
  for (const auto& row : compare_cells(table, true)) out += csv_line(row);
  return out;
}

}  // namespace seqbench::report

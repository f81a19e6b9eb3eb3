#include "report/claims.hpp"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <random>
#include <set>

#include "core/check.hpp"
#include "core/fs.hpp"
#include "report/csv.hpp"
#include "report/gnuplot.hpp"
#include "report/html.hpp"
#include "report/markdown.hpp"
#include "report/paper_spec.hpp"

namespace seqbench::report {

namespace fs = std::filesystem;

namespace {

// ---- parsing ----------------------------------------------------------------------------

struct Where {
  std::string file;
  std::string at(const YAML::Node& n, const std::string& key) const {
    return n.Mark().line >= 0 ? fmt::format("{}:{}: {}", file, n.Mark().line + 1, key) : file + ": " + key;
  }
};

void only_keys(const YAML::Node& map, const std::set<std::string>& known, const Where& w, const std::string& key) {
  if (!map.IsMap()) throw core::Error(fmt::format("{}: expected a map", w.at(map, key)));
  for (const auto& kv : map)
    if (!known.count(kv.first.Scalar()))
      throw core::Error(fmt::format("{}: unknown key '{}' (have: {})", w.at(kv.first, key), kv.first.Scalar(),
                                    fmt::join(known, ", ")));
}

std::string scalar(const YAML::Node& map, const char* key, const Where& w, const std::string& where,
                   bool required) {
  const YAML::Node n = map[key];
  if (!n) {
    if (required) throw core::Error(fmt::format("{}: '{}' missing", w.at(map, where), key));
    return "";
  }
  if (!n.IsScalar()) throw core::Error(fmt::format("{}: expected a single value", w.at(n, where + "." + key)));
  return n.Scalar();
}

double to_number(const YAML::Node& n, const Where& w, const std::string& key) {
  try {
    return n.as<double>();
  } catch (const YAML::Exception&) {
    throw core::Error(fmt::format("{}: '{}' is not a number", w.at(n, key), n.Scalar()));
  }
}

std::vector<std::string> strings(const YAML::Node& n, const Where& w, const std::string& key) {
  std::vector<std::string> out;
  if (!n) return out;
  if (n.IsScalar()) return {n.Scalar()};
  if (!n.IsSequence()) throw core::Error(fmt::format("{}: expected a list", w.at(n, key)));
  for (const auto& s : n) {
    if (!s.IsScalar()) throw core::Error(fmt::format("{}: expected text items", w.at(s, key)));
    out.push_back(s.Scalar());
  }
  return out;
}

std::vector<std::pair<std::string, std::string>> equalities(const YAML::Node& n, const Where& w,
                                                            const std::string& key) {
  std::vector<std::pair<std::string, std::string>> out;
  if (!n) return out;
  if (!n.IsMap()) throw core::Error(fmt::format("{}: expected a map of columns to values", w.at(n, key)));
  for (const auto& kv : n) {
    if (!kv.second.IsScalar())
      throw core::Error(fmt::format("{}: expected one value", w.at(kv.second, key + "." + kv.first.Scalar())));
    out.push_back({kv.first.Scalar(), kv.second.Scalar()});
  }
  return out;
}

ClaimValue parse_value(const YAML::Node& n, const Where& w, const std::string& key) {
  only_keys(n, {"column", "where", "range", "last_of", "log10", "slope", "log_x", "reduce", "minus"}, w, key);
  ClaimValue v;
  v.column = scalar(n, "column", w, key, true);
  v.where = equalities(n["where"], w, key + ".where");
  if (const YAML::Node r = n["range"]) {
    if (!r.IsMap()) throw core::Error(fmt::format("{}: expected {{column: [lo, hi]}}", w.at(r, key + ".range")));
    for (const auto& kv : r) {
      const std::string k = key + ".range." + kv.first.Scalar();
      if (!kv.second.IsSequence() || kv.second.size() != 2)
        throw core::Error(fmt::format("{}: expected [lo, hi]", w.at(kv.second, k)));
      v.range.push_back({kv.first.Scalar(), {to_number(kv.second[0], w, k), to_number(kv.second[1], w, k)}});
    }
  }
  v.last_of = scalar(n, "last_of", w, key, false);
  if (n["log10"]) v.log10 = n["log10"].as<bool>();
  v.slope_x = scalar(n, "slope", w, key, false);
  if (n["log_x"]) v.log_x = n["log_x"].as<bool>();
  if (v.log_x && v.slope_x.empty())
    throw core::Error(fmt::format("{}: 'log_x' needs 'slope' (the x column)", w.at(n, key)));
  if (n["reduce"]) {
    v.reduce = scalar(n, "reduce", w, key, false);
    static const std::set<std::string> kinds{"mean", "max", "min", "last"};
    if (!kinds.count(v.reduce))
      throw core::Error(fmt::format("{}: '{}' is not one of: {}", w.at(n["reduce"], key + ".reduce"), v.reduce,
                                    fmt::join(kinds, ", ")));
  }
  if (n["minus"]) v.minus = std::make_shared<ClaimValue>(parse_value(n["minus"], w, key + ".minus"));
  return v;
}

ClaimGroup parse_group(const YAML::Node& n, const Where& w, const std::string& key) {
  only_keys(n, {"name", "where"}, w, key);
  ClaimGroup g{scalar(n, "name", w, key, true), equalities(n["where"], w, key + ".where")};
  if (g.where.empty()) throw core::Error(fmt::format("{}: 'where' missing or empty", w.at(n, key)));
  return g;
}

ClaimCriterion parse_criterion(const YAML::Node& n, const Where& w, const std::string& key) {
  only_keys(n, {"direction", "threshold", "range", "min_n", "deterministic"}, w, key);
  ClaimCriterion c;
  const std::string d = scalar(n, "direction", w, key, true);
  if (d == "greater") c.direction = ClaimCriterion::Direction::Greater;
  else if (d == "less") c.direction = ClaimCriterion::Direction::Less;
  else if (d == "within") c.direction = ClaimCriterion::Direction::Within;
  else throw core::Error(fmt::format("{}: '{}' is not one of: greater, less, within", w.at(n["direction"], key + ".direction"), d));
  if (c.direction == ClaimCriterion::Direction::Within) {
    const YAML::Node r = n["range"];
    if (!r || !r.IsSequence() || r.size() != 2)
      throw core::Error(fmt::format("{}: 'within' needs range: [lo, hi]", w.at(n, key)));
    c.lo = to_number(r[0], w, key + ".range");
    c.hi = to_number(r[1], w, key + ".range");
    if (!(c.lo < c.hi)) throw core::Error(fmt::format("{}: range needs lo < hi", w.at(r, key + ".range")));
  } else {
    if (!n["threshold"]) throw core::Error(fmt::format("{}: '{}' needs a threshold", w.at(n, key), d));
    c.threshold = to_number(n["threshold"], w, key + ".threshold");
  }
  if (n["min_n"]) c.min_n = int(to_number(n["min_n"], w, key + ".min_n"));
  if (n["deterministic"]) c.deterministic = n["deterministic"].as<bool>();
  if (c.min_n < 1) throw core::Error(fmt::format("{}: min_n must be at least 1", w.at(n, key)));
  return c;
}

ClaimTest parse_test(const YAML::Node& n, const Where& w, const std::string& key) {
  only_keys(n, {"name", "runs", "file", "table", "sample_by", "value", "a", "b", "relative", "criterion", "scale",
                "unit", "decimals"},
            w, key);
  ClaimTest t;
  t.name = scalar(n, "name", w, key, true);
  t.runs = scalar(n, "runs", w, key, false);
  t.file = scalar(n, "file", w, key, false);
  t.table = scalar(n, "table", w, key, false);
  t.sample_by = scalar(n, "sample_by", w, key, false);
  if (t.runs.empty() == t.table.empty())
    throw core::Error(fmt::format("{}: give 'runs' (an experiment directory) or 'table' (a CSV), one of them",
                                  w.at(n, key)));
  if (!t.table.empty() && t.sample_by.empty())
    throw core::Error(fmt::format("{}: a 'table' needs 'sample_by' (the column that names a sample)", w.at(n, key)));
  if (!t.file.empty() && t.runs.empty())
    throw core::Error(fmt::format("{}: 'file' is a file in each run directory; it needs 'runs'", w.at(n, key)));
  if (!n["value"]) throw core::Error(fmt::format("{}: 'value' missing", w.at(n, key)));
  t.value = parse_value(n["value"], w, key + ".value");
  if (!n["a"]) throw core::Error(fmt::format("{}: 'a' missing (the group the claim is about)", w.at(n, key)));
  t.a = parse_group(n["a"], w, key + ".a");
  if (n["b"]) t.b = parse_group(n["b"], w, key + ".b");
  if (n["relative"]) t.relative = n["relative"].as<bool>();
  if (t.relative && !t.b) throw core::Error(fmt::format("{}: 'relative' needs a group 'b'", w.at(n, key)));
  if (!n["criterion"]) throw core::Error(fmt::format("{}: 'criterion' missing", w.at(n, key)));
  t.criterion = parse_criterion(n["criterion"], w, key + ".criterion");
  if (n["scale"]) t.scale = to_number(n["scale"], w, key + ".scale");
  t.unit = scalar(n, "unit", w, key, false);
  if (n["decimals"]) t.decimals = int(to_number(n["decimals"], w, key + ".decimals"));
  return t;
}

const std::vector<std::string>& paper_order() {
  static const std::vector<std::string> order{"kerg2020", "nguyen2020", "miller2019", "daras2020", "roy2021"};
  return order;
}

}  // namespace

Claim parse_claim(const std::string& yaml_text, const std::string& path) {
  const Where w{path};
  YAML::Node root;
  try {
    root = YAML::Load(yaml_text);
  } catch (const YAML::Exception& e) {
    throw core::Error(fmt::format("{}:{}: not valid YAML: {}", path, e.mark.line + 1, e.msg));
  }
  only_keys(root, {"id", "paper", "title", "claim", "paper_says", "numbers", "budget", "commands", "tests", "changes"},
            w, "claim");
  Claim c;
  c.path = path;
  c.id = scalar(root, "id", w, "claim", true);
  c.paper = scalar(root, "paper", w, "claim", true);
  if (std::find(paper_order().begin(), paper_order().end(), c.paper) == paper_order().end())
    throw core::Error(fmt::format("{}: paper '{}' is not one of: {}", w.at(root["paper"], "paper"), c.paper,
                                  fmt::join(paper_order(), ", ")));
  c.title = scalar(root, "title", w, "claim", true);
  c.claim = scalar(root, "claim", w, "claim", true);
  c.paper_says = scalar(root, "paper_says", w, "claim", false);
  c.budget = scalar(root, "budget", w, "claim", true);
  c.commands = strings(root["commands"], w, "commands");
  c.changes = strings(root["changes"], w, "changes");
  if (const YAML::Node ns = root["numbers"]) {
    if (!ns.IsSequence()) throw core::Error(fmt::format("{}: expected a list", w.at(ns, "numbers")));
    for (const auto& n : ns) {
      only_keys(n, {"table", "row", "column"}, w, "numbers");
      ClaimNumberRef r{scalar(n, "table", w, "numbers", true), scalar(n, "row", w, "numbers", true),
                       scalar(n, "column", w, "numbers", false)};
      if (!find_paper_number(paper_spec(c.paper), r.table, r.row, r.column))
        throw core::Error(fmt::format("{}: {}'s numbers.yaml has no number for table '{}', row '{}', column '{}'",
                                      w.at(n, "numbers"), c.paper, r.table, r.row, r.column));
      c.numbers.push_back(r);
    }
  }
  const YAML::Node ts = root["tests"];
  if (!ts || !ts.IsSequence() || ts.size() == 0)
    throw core::Error(fmt::format("{}: 'tests' missing or empty (a list of tests)", w.at(root, "claim")));
  for (size_t i = 0; i < ts.size(); ++i) c.tests.push_back(parse_test(ts[i], w, fmt::format("tests[{}]", i)));
  return c;
}

std::vector<Claim> load_claims(const std::string& dir) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) throw core::Error(fmt::format("{}: not a directory of claim files", dir));
  std::vector<Claim> out;
  std::set<std::string> ids;
  for (const auto& e : fs::directory_iterator(dir)) {
    if (!e.is_regular_file() || e.path().extension() != ".yaml") continue;
    Claim c = parse_claim(core::read_file(e.path().string()), e.path().string());
    if (!ids.insert(c.id).second) throw core::Error(fmt::format("{}: claim id '{}' is used twice", c.path, c.id));
    out.push_back(std::move(c));
  }
  if (out.empty()) throw core::Error(fmt::format("{}: no claim files (*.yaml)", dir));
  auto rank = [](const Claim& c) {
    return std::find(paper_order().begin(), paper_order().end(), c.paper) - paper_order().begin();
  };
  std::sort(out.begin(), out.end(), [&](const Claim& x, const Claim& y) {
    return rank(x) != rank(y) ? rank(x) < rank(y) : x.id < y.id;
  });
  return out;
}

std::string verdict_name(Verdict v) {
  switch (v) {
    case Verdict::Reproduced: return "reproduced";
    case Verdict::NotReproduced: return "not reproduced";
    case Verdict::NotRun: return "not run yet";
    default: return "inconclusive at this budget";
  }
}

// ---- statistics -------------------------------------------------------------------------

namespace {

double mean(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x;
  return s / double(v.size());
}

double effect(const std::vector<double>& a, const std::vector<double>& b, bool relative) {
  if (b.empty()) return mean(a);
  const double mb = mean(b);
  return relative ? (mean(a) - mb) / mb : mean(a) - mb;
}

// A uniform index in [0, n) from a 64-bit draw, the same on every platform (std::
// distributions are not).
size_t draw(std::mt19937_64& g, size_t n) { return size_t(g() % n); }

}  // namespace

std::pair<double, double> bootstrap_interval(const std::vector<double>& a, const std::vector<double>& b,
                                             bool relative, int resamples, uint64_t seed) {
  SB_CHECK(!a.empty() && resamples > 0, "bootstrap_interval: no samples");
  std::mt19937_64 g(seed);
  std::vector<double> stats(static_cast<size_t>(resamples)), ra(a.size()), rb(b.size());
  for (auto& s : stats) {
    for (auto& x : ra) x = a[draw(g, a.size())];
    for (auto& x : rb) x = b[draw(g, b.size())];
    s = effect(ra, rb, relative);
  }
  std::sort(stats.begin(), stats.end());
  auto q = [&](double p) {  // linear interpolation between order statistics
    const double pos = p * double(stats.size() - 1);
    const size_t i = size_t(pos);
    const double f = pos - double(i);
    return i + 1 < stats.size() ? stats[i] * (1 - f) + stats[i + 1] * f : stats[i];
  };
  return {q(0.025), q(0.975)};
}

// ---- samples ----------------------------------------------------------------------------

namespace {

bool cell_equal(const std::string& cell, const std::string& want) {
  if (cell == want) return true;
  try {
    size_t i = 0, j = 0;
    const double x = std::stod(cell, &i), y = std::stod(want, &j);
    return i == cell.size() && j == want.size() && x == y;
  } catch (const std::exception&) {
    return false;
  }
}

bool matches(const CsvTable& t, size_t row, const std::vector<std::pair<std::string, std::string>>& where) {
  for (const auto& [k, v] : where)
    if (!cell_equal(t.rows[row][size_t(t.col(k))], v)) return false;
  return true;
}

std::string describe(const ClaimValue& v) {
  std::string s = v.log10 ? "log10 " + v.column : v.column;
  if (!v.slope_x.empty()) s = fmt::format("slope of {} against {}{}", s, v.log_x ? "log10 " : "", v.slope_x);
  else if (v.reduce != "mean") s = v.reduce + " " + s;
  for (const auto& [k, r] : v.range) s += fmt::format(", {} in [{}, {}]", k, r.first, r.second);
  for (const auto& [k, x] : v.where) s += fmt::format(", {} = {}", k, x);
  if (!v.last_of.empty()) s += fmt::format(", at the largest {}", v.last_of);
  if (v.minus) s += " minus (" + describe(*v.minus) + ")";
  return s;
}

// No row matches a value's filters: the analysis has not reached them yet (a probe still
// running) or a filter is wrong; the test counts the sample as pending and says which.
struct NoRows : core::Error {
  using core::Error::Error;
};

// The value of `rows` (indices into t) under v; throws NoRows naming the file when nothing
// matches.
double extract(const ClaimValue& v, const CsvTable& t, const std::vector<size_t>& rows, const std::string& what) {
  std::vector<double> xs, ys;
  double last = -INFINITY;
  if (!v.last_of.empty())
    for (size_t r : rows)
      if (matches(t, r, v.where)) last = std::max(last, t.number(r, v.last_of));
  for (size_t r : rows) {
    if (!matches(t, r, v.where)) continue;
    if (!v.last_of.empty() && t.number(r, v.last_of) != last) continue;
    bool in = true;
    for (const auto& [k, lim] : v.range) {
      const double x = t.number(r, k);
      if (x < lim.first || x > lim.second) in = false;
    }
    if (!in) continue;
    double y = t.number(r, v.column);
    if (v.log10) {
      if (!(y > 0)) continue;  // a zero gradient norm (an underflow) has no logarithm; skipped
      y = std::log10(y);
    }
    ys.push_back(y);
    if (!v.slope_x.empty()) {
      double x = t.number(r, v.slope_x);
      if (v.log_x) x = std::log10(x);
      xs.push_back(x);
    }
  }
  if (ys.empty())
    throw NoRows(fmt::format("{}: no rows for {} in {}", t.path, describe(v), what));
  double out = 0;
  if (!v.slope_x.empty()) {
    if (ys.size() < 2) throw core::Error(fmt::format("{}: a slope needs two points ({})", t.path, what));
    const double mx = mean(xs), my = mean(ys);
    double sxy = 0, sxx = 0;
    for (size_t i = 0; i < xs.size(); ++i) {
      sxy += (xs[i] - mx) * (ys[i] - my);
      sxx += (xs[i] - mx) * (xs[i] - mx);
    }
    if (sxx == 0) throw core::Error(fmt::format("{}: a slope needs two distinct x ({})", t.path, what));
    out = sxy / sxx;
  } else if (v.reduce == "max") {
    out = *std::max_element(ys.begin(), ys.end());
  } else if (v.reduce == "min") {
    out = *std::min_element(ys.begin(), ys.end());
  } else if (v.reduce == "last") {
    out = ys.back();
  } else {
    out = mean(ys);
  }
  if (v.minus) out -= extract(*v.minus, t, rows, what);
  return out;
}

bool finished(const std::string& status) {
  return status == "finished" || status == "target_reached" || status == "early_stopped";
}

struct Samples {
  std::vector<double> values;
  std::vector<std::string> ids;
  int unfinished = 0;  // runs of the group that are not finished (running, diverged, ...)
  std::string missing;  // the first NoRows message, if any
  // Adds extract(...) as a sample, or counts it as pending when its rows are not there.
  template <class F>
  void add(const std::string& id, F&& value) {
    try {
      values.push_back(value());
      ids.push_back(id);
    } catch (const NoRows& e) {
      ++unfinished;
      if (missing.empty()) missing = e.what();
    }
  }
};

Samples group_samples(const ClaimTest& test, const ClaimGroup& g, const std::string& root,
                      std::vector<std::string>& sources) {
  Samples s;
  auto at = [&](const std::string& p) { return p.empty() || p[0] == '/' ? p : (fs::path(root) / p).string(); };
  if (!test.table.empty()) {
    const CsvTable t = read_csv(at(test.table));
    sources.push_back(test.table);
    std::map<std::string, std::vector<size_t>> by;
    std::vector<std::string> order;
    for (size_t r = 0; r < t.rows.size(); ++r) {
      if (!matches(t, r, g.where)) continue;
      const std::string key = t.rows[r][size_t(t.col(test.sample_by))];
      if (!by.count(key)) order.push_back(key);
      by[key].push_back(r);
    }
    for (const auto& key : order)
      s.add(key, [&] { return extract(test.value, t, by[key], fmt::format("{} = {} of group {}", test.sample_by, key, g.name)); });
    return s;
  }
  const std::string dir = at(test.runs);
  const std::string csv = (fs::path(dir) / "runs.csv").string();
  if (!core::file_exists(csv)) return s;  // nothing has run yet: no samples
  const CsvTable t = read_csv(csv);
  sources.push_back((fs::path(test.runs) / "runs.csv").string());
  // A run resumed or rerun appends a new row: the last row of each run id counts.
  std::map<std::string, size_t> last;
  std::vector<std::string> order;
  for (size_t r = 0; r < t.rows.size(); ++r) {
    if (!matches(t, r, g.where)) continue;
    const std::string id = t.rows[r][size_t(t.col("run_id"))];
    if (!last.count(id)) order.push_back(id);
    last[id] = r;
  }
  for (const auto& id : order) {
    const size_t r = last[id];
    if (!finished(t.rows[r][size_t(t.col("status"))])) {
      ++s.unfinished;
      continue;
    }
    if (test.file.empty()) {
      s.add(id, [&] { return extract(test.value, t, {r}, "run " + id); });
    } else {
      const std::string path = (fs::path(dir) / id / test.file).string();
      if (!core::file_exists(path)) {
        ++s.unfinished;  // the analysis of this run has not been made yet
        continue;
      }
      const CsvTable f = read_csv(path);
      std::vector<size_t> all(f.rows.size());
      for (size_t i = 0; i < all.size(); ++i) all[i] = i;
      s.add(id, [&] { return extract(test.value, f, all, "run " + id); });
    }
  }
  return s;
}

std::string num(double v, int decimals) {
  if (std::isnan(v)) return "nan";
  if (v != 0 && (std::fabs(v) < std::pow(10.0, -decimals) || std::fabs(v) >= 1e6)) return fmt::format("{:.{}g}", v, 3);
  return fmt::format("{:.{}f}", v, decimals);
}

// An effect or threshold as shown: a relative difference in % (one decimal), anything
// else in the test's scale and decimals.
std::string effect_text(const ClaimTest& t, double v) {
  return t.relative ? num(100 * v, 1) + " %" : num(v * t.scale, t.decimals);
}

std::string criterion_text(const ClaimTest& t) {
  const auto& c = t.criterion;
  const auto show = [&](double v) { return effect_text(t, v); };
  std::string what = t.b ? (t.relative ? fmt::format("({0} − {1}) / {1}", t.a.name, t.b->name)
                                       : fmt::format("{} − {}", t.a.name, t.b->name))
                         : t.a.name;
  std::string rule;
  switch (c.direction) {
    case ClaimCriterion::Direction::Greater: rule = fmt::format("{} > {}", what, show(c.threshold)); break;
    case ClaimCriterion::Direction::Less: rule = fmt::format("{} < {}", what, show(c.threshold)); break;
    default: rule = fmt::format("{} within [{}, {}]", what, show(c.lo), show(c.hi));
  }
  return c.deterministic ? rule + " (a noiseless measurement)"
                         : fmt::format("{}, 95 % bootstrap interval, at least {} samples per group", rule, c.min_n);
}

}  // namespace

TestResult evaluate_test(const ClaimTest& test, const std::string& root) {
  TestResult r;
  r.test = &test;
  const Samples a = group_samples(test, test.a, root, r.sources);
  Samples b;
  if (test.b) b = group_samples(test, *test.b, root, r.sources);
  std::sort(r.sources.begin(), r.sources.end());
  r.sources.erase(std::unique(r.sources.begin(), r.sources.end()), r.sources.end());
  r.a = a.values;
  r.a_ids = a.ids;
  r.b = b.values;
  r.b_ids = b.ids;
  const auto& c = test.criterion;
  const int need = c.deterministic ? 1 : c.min_n;
  const size_t n = test.b ? std::min(a.values.size(), b.values.size()) : a.values.size();
  const std::string counts = test.b ? fmt::format("n = {} {}, {} {}", a.values.size(), test.a.name, b.values.size(),
                                                  test.b->name)
                                    : fmt::format("n = {}", a.values.size());
  std::string pending = a.unfinished + b.unfinished > 0
                            ? fmt::format("; {} sample(s) not finished or not analysed yet", a.unfinished + b.unfinished)
                            : "";
  if (!a.missing.empty() || !b.missing.empty())
    pending += " (" + (a.missing.empty() ? b.missing : a.missing) + ")";
  if (a.values.empty() || (test.b && b.values.empty())) {
    r.verdict = Verdict::NotRun;
    r.reason = fmt::format("no samples yet ({}){}", counts, pending);
    return r;
  }
  r.have = true;
  r.estimate = effect(a.values, b.values, test.relative);
  if (c.deterministic) {
    r.lo = r.hi = r.estimate;
  } else if (n >= 2) {
    std::tie(r.lo, r.hi) = bootstrap_interval(a.values, b.values, test.relative);
  } else {
    r.lo = r.hi = std::nan("");
  }
  if (!std::isfinite(r.estimate)) {
    r.reason = "the effect is not a finite number (a diverged run?)";
    return r;
  }
  const auto show = [&](double v) { return effect_text(test, v); };
  const std::string est = c.deterministic ? show(r.estimate)
                                          : fmt::format("{} [{}, {}]", show(r.estimate), show(r.lo), show(r.hi));
  if (int(n) < need) {
    r.reason = fmt::format("{} ({}), fewer than the {} per group the criterion needs{}", est, counts, need, pending);
    return r;
  }
  using D = ClaimCriterion::Direction;
  bool yes = false, no = false;
  std::string side;
  switch (c.direction) {
    case D::Greater:
      yes = r.lo > c.threshold;
      no = r.hi < c.threshold;
      side = fmt::format("{} {}", yes ? "above" : no ? "below" : "straddles", show(c.threshold));
      break;
    case D::Less:
      yes = r.hi < c.threshold;
      no = r.lo > c.threshold;
      side = fmt::format("{} {}", yes ? "below" : no ? "above" : "straddles", show(c.threshold));
      break;
    default:
      yes = r.lo >= c.lo && r.hi <= c.hi;
      no = r.hi < c.lo || r.lo > c.hi;
      side = fmt::format("{} [{}, {}]", yes ? "inside" : no ? "outside" : "overlaps the edge of", show(c.lo), show(c.hi));
  }
  r.verdict = yes ? Verdict::Reproduced : no ? Verdict::NotReproduced : Verdict::Inconclusive;
  r.reason = fmt::format("{}{} {} ({}){}", test.name.empty() ? "" : test.name + ": ", est, side, counts, pending);
  return r;
}

ClaimResult evaluate_claim(const Claim& claim, const std::string& root) {
  ClaimResult out;
  out.claim = &claim;
  for (const auto& t : claim.tests) {
    try {
      out.tests.push_back(evaluate_test(t, root));
    } catch (const core::Error& e) {
      throw core::Error(fmt::format("{}: test '{}': {}", claim.path, t.name, e.what()));
    }
  }
  bool all = true, any_no = false, any_unrun = false;
  for (const auto& t : out.tests) {
    all = all && t.verdict == Verdict::Reproduced;
    any_no = any_no || t.verdict == Verdict::NotReproduced;
    any_unrun = any_unrun || t.verdict == Verdict::NotRun;
  }
  out.verdict = any_no      ? Verdict::NotReproduced
                : all       ? Verdict::Reproduced
                : any_unrun ? Verdict::NotRun
                            : Verdict::Inconclusive;
  // The reason: the deciding test (the first that failed, else the first undecided, else all).
  const TestResult* decide = nullptr;
  for (const auto& t : out.tests)
    if (t.verdict == Verdict::NotReproduced) { decide = &t; break; }
  if (!decide)
    for (const auto& t : out.tests)
      if (t.verdict == Verdict::Inconclusive || t.verdict == Verdict::NotRun) { decide = &t; break; }
  if (decide) {
    out.reason = decide->reason;
  } else {
    out.reason = out.tests.front().reason;
    if (out.tests.size() > 1)
      out.reason += fmt::format("; and {} more test{} passed", out.tests.size() - 1, out.tests.size() > 2 ? "s" : "");
  }
  std::vector<std::string> cells, srcs;
  for (const auto& ref : claim.numbers) {
    const PaperSpec& p = paper_spec(claim.paper);
    const PaperNumber* n = find_paper_number(p, ref.table, ref.row, ref.column);
    cells.push_back(fmt::format("{}{}: {}{}", n->row, n->column.empty() ? "" : " " + n->column, number_cell(*n),
                                n->unit.empty() ? "" : " " + n->unit));
    const std::string src = number_source(p, *n);
    if (std::find(srcs.begin(), srcs.end(), src) == srcs.end()) srcs.push_back(src);
  }
  out.paper_number = cells.empty() ? "—" : fmt::format("{}", fmt::join(cells, "; "));
  out.paper_source = fmt::format("{}", fmt::join(srcs, "; "));
  return out;
}

void add_recheck(std::vector<ClaimResult>& results, const std::string& root, const std::string& label) {
  for (auto& r : results) {
    const ClaimResult again = evaluate_claim(*r.claim, root);
    if (again.verdict == Verdict::NotRun) continue;
    r.recheck = ClaimResult::Recheck{label, again.verdict, again.reason};
  }
}

// ---- the page ---------------------------------------------------------------------------

namespace {

std::string ours_cell(const TestResult& r) {
  const ClaimTest& t = *r.test;
  if (r.a.empty()) return "—";
  auto side = [&](const std::string& name, const std::vector<double>& v) {
    std::vector<double> s;
    for (double x : v) s.push_back(x * t.scale);
    return fmt::format("{} {} (n={})", name, mean_sd(s, t.decimals), v.size());
  };
  return t.b && !r.b.empty() ? side(t.a.name, r.a) + "; " + side(t.b->name, r.b) : side(t.a.name, r.a);
}

std::string effect_cell(const TestResult& r) {
  if (!r.have) return "—";
  const ClaimTest& t = *r.test;
  const auto show = [&](double v) { return effect_text(t, v); };
  if (t.criterion.deterministic || std::isnan(r.lo)) return show(r.estimate);
  return fmt::format("{} [{}, {}]", show(r.estimate), show(r.lo), show(r.hi));
}

std::string summary_line(const std::vector<ClaimResult>& results) {
  int yes = 0, no = 0, open = 0, unrun = 0;
  for (const auto& r : results)
    (r.verdict == Verdict::Reproduced      ? yes
     : r.verdict == Verdict::NotReproduced ? no
     : r.verdict == Verdict::NotRun        ? unrun
                                           : open)++;
  return fmt::format("{} claims: {} reproduced, {} not reproduced, {} inconclusive at this budget, {} not run yet.",
                     results.size(), yes, no, open, unrun);
}

bool any_recheck(const std::vector<ClaimResult>& results) {
  return std::any_of(results.begin(), results.end(), [](const ClaimResult& r) { return r.recheck.has_value(); });
}

// "Rechecked with seeds 6-10: 6 claims; the same verdict for K3, S2, R2; another for K1
// (inconclusive at this budget), ..." ("" without rechecks).
std::string recheck_line(const std::vector<ClaimResult>& results) {
  std::vector<std::string> same, other;
  std::string label;
  for (const auto& r : results) {
    if (!r.recheck) continue;
    label = r.recheck->label;
    if (r.recheck->verdict == r.verdict)
      same.push_back(r.claim->id);
    else
      other.push_back(fmt::format("{} ({})", r.claim->id, verdict_name(r.recheck->verdict)));
  }
  if (same.empty() && other.empty()) return "";
  std::string out = fmt::format("Rerun with other seeds ({}): {} claim{}; the same verdict for {} of them", label,
                                same.size() + other.size(), same.size() + other.size() == 1 ? "" : "s", same.size());
  if (!same.empty()) out += fmt::format(" ({})", fmt::join(same, ", "));
  if (!other.empty()) out += fmt::format(", another for {}", fmt::join(other, ", "));
  return out + ".";
}

std::string recheck_cell(const ClaimResult& r) { return r.recheck ? verdict_name(r.recheck->verdict) : "not rerun"; }

constexpr const char* kIntro =
    "Each claim of the five papers, tested on runs made on this machine at a budget it can "
    "afford. A claim's file in configs/claims/ fixes its test before the runs: the groups of runs "
    "compared, the number read from each run, the direction, the smallest effect that counts and "
    "the number of seeds. The verdict is computed from the runs: reproduced when the whole 95 % "
    "bootstrap interval of the effect lies on the claimed side of the threshold, not reproduced "
    "when it lies wholly on the other side, inconclusive otherwise, and not run yet while a test has no runs. "
    "A paper number marked "
    "(unchecked) has no named source yet.";

}  // namespace

std::string claims_markdown(const std::vector<ClaimResult>& results) {
  const bool rechecked = any_recheck(results);
  std::string out = "# Do the papers' claims reproduce?\n\n" + std::string(kIntro) + "\n\n" + summary_line(results) +
                    "\n\n";
  if (rechecked) out += recheck_line(results) + "\n\n";
  std::vector<std::vector<std::string>> rows;
  for (const auto& r : results) {
    rows.push_back({r.claim->id, r.claim->paper, r.claim->title, verdict_name(r.verdict), r.reason});
    if (rechecked) rows.back().insert(rows.back().begin() + 4, recheck_cell(r));
  }
  out += rechecked ? markdown_table({"id", "paper", "claim", "verdict", "other seeds", "why"}, rows)
                   : markdown_table({"id", "paper", "claim", "verdict", "why"}, rows);
  for (const auto& r : results) {
    const Claim& c = *r.claim;
    out += fmt::format("\n## {} ({}): {}\n\n{}\n\n", c.id, c.paper, c.title, c.claim);
    out += fmt::format("- **Verdict:** {}. {}\n", verdict_name(r.verdict), r.reason);
    if (r.recheck)
      out += fmt::format("- **With other seeds ({}):** {}. {}\n", r.recheck->label, verdict_name(r.recheck->verdict),
                         r.recheck->reason);
    if (!c.paper_says.empty()) out += fmt::format("- **The paper:** {}\n", c.paper_says);
    out += fmt::format("- **Paper number:** {}{}\n", r.paper_number,
                       r.paper_source.empty() ? "" : " (" + r.paper_source + ")");
    out += fmt::format("- **Budget:** {}\n", c.budget);
    std::vector<std::vector<std::string>> trows;
    for (const auto& t : r.tests)
      trows.push_back({t.test->name, ours_cell(t), effect_cell(t), criterion_text(*t.test), verdict_name(t.verdict)});
    out += "\n" + markdown_table({"test", "ours: mean ± sd (n)", "effect [95 % interval]", "criterion", "verdict"}, trows);
    if (!r.figure.empty()) out += fmt::format("\n![{}]({})\n", c.id, r.figure);
    if (!c.commands.empty()) {
      out += "\nThe runs:\n\n```sh\n";
      for (const auto& cmd : c.commands) out += cmd + "\n";
      out += "```\n";
    }
    for (const auto& ch : c.changes) out += fmt::format("\nChanged after results existed: {}\n", ch);
  }
  return out;
}

std::string claims_summary_markdown(const std::vector<ClaimResult>& results) {
  const bool rechecked = any_recheck(results);
  std::vector<std::vector<std::string>> rows;
  for (const auto& r : results) {
    rows.push_back({r.claim->id, r.claim->paper, r.claim->title, verdict_name(r.verdict)});
    if (rechecked) rows.back().push_back(recheck_cell(r));
  }
  std::string out = summary_line(results) + "\n\n";
  if (rechecked) out += recheck_line(results) + "\n\n";
  return out + (rechecked ? markdown_table({"id", "paper", "claim", "verdict", "other seeds"}, rows)
                          : markdown_table({"id", "paper", "claim", "verdict"}, rows));
}

std::string claims_csv(const std::vector<ClaimResult>& results) {
  std::string out = csv_line({"claim", "paper", "title", "claim_verdict", "test", "group_a", "n_a", "mean_a", "group_b",
                              "n_b", "mean_b", "effect", "ci_lo", "ci_hi", "criterion", "test_verdict", "reason",
                              "paper_number", "paper_source", "recheck_label", "recheck_verdict", "recheck_reason"});
  for (const auto& r : results)
    for (const auto& t : r.tests) {
      auto m = [](const std::vector<double>& v) { return v.empty() ? std::string() : CsvWriter::cell(mean(v)); };
      auto d = [&](double v) { return t.have ? CsvWriter::cell(v) : std::string(); };
      out += csv_line({r.claim->id, r.claim->paper, r.claim->title, verdict_name(r.verdict), t.test->name,
                       t.test->a.name, std::to_string(t.a.size()), m(t.a), t.test->b ? t.test->b->name : "",
                       t.test->b ? std::to_string(t.b.size()) : "", m(t.b), d(t.estimate), d(t.lo), d(t.hi),
                       criterion_text(*t.test), verdict_name(t.verdict), t.reason, r.paper_number, r.paper_source,
                       r.recheck ? r.recheck->label : "", r.recheck ? verdict_name(r.recheck->verdict) : "",
                       r.recheck ? r.recheck->reason : ""});
    }
  return out;
}

std::string claims_html(const std::vector<ClaimResult>& results, const std::string& out_dir) {
  static const char* kStyle =
      "body{font-family:sans-serif;max-width:72em;margin:2em auto;padding:0 1em;line-height:1.4}"
      "table{border-collapse:collapse;margin:1em 0}td,th{border:1px solid #ccc;padding:.3em .6em;vertical-align:top}"
      "th{background:#f4f4f4}.reproduced{color:#1a7f37;font-weight:bold}.not{color:#b42318;font-weight:bold}"
      ".open{color:#7a5d00;font-weight:bold}.unrun{color:#666}pre{background:#f6f6f6;padding:.6em;overflow-x:auto}img{max-width:100%}";
  auto cls = [](Verdict v) {
    return v == Verdict::Reproduced ? "reproduced" : v == Verdict::NotReproduced ? "not" : v == Verdict::NotRun ? "unrun" : "open";
  };
  const bool rechecked = any_recheck(results);
  std::string out = fmt::format(
      "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>seqbench: the papers' claims</title>"
      "<style>{}</style></head>\n<body>\n<h1>Do the papers' claims reproduce?</h1>\n<p>{}</p>\n<p><b>{}</b></p>\n{}"
      "<table><tr><th>id</th><th>paper</th><th>claim</th><th>verdict</th>{}<th>why</th></tr>\n",
      kStyle, html_escape(kIntro), html_escape(summary_line(results)),
      rechecked ? "<p>" + html_escape(recheck_line(results)) + "</p>\n" : "", rechecked ? "<th>other seeds</th>" : "");
  for (const auto& r : results)
    out += fmt::format("<tr><td><a href=\"#{0}\">{0}</a></td><td>{1}</td><td>{2}</td><td class=\"{3}\">{4}</td>{5}<td>{6}</td></tr>\n",
                       html_escape(r.claim->id), html_escape(r.claim->paper), html_escape(r.claim->title),
                       cls(r.verdict), html_escape(verdict_name(r.verdict)),
                       !rechecked ? ""
                       : r.recheck ? fmt::format("<td class=\"{}\">{}</td>", cls(r.recheck->verdict),
                                                 html_escape(verdict_name(r.recheck->verdict)))
                                   : "<td class=\"unrun\">not rerun</td>",
                       html_escape(r.reason));
  out += "</table>\n";
  for (const auto& r : results) {
    const Claim& c = *r.claim;
    out += fmt::format("<h2 id=\"{0}\">{0} ({1}): {2}</h2>\n<p>{3}</p>\n<ul>\n", html_escape(c.id), html_escape(c.paper),
                       html_escape(c.title), html_escape(c.claim));
    out += fmt::format("<li><b>Verdict:</b> <span class=\"{}\">{}</span>. {}</li>\n", cls(r.verdict),
                       html_escape(verdict_name(r.verdict)), html_escape(r.reason));
    if (r.recheck)
      out += fmt::format("<li><b>With other seeds ({}):</b> <span class=\"{}\">{}</span>. {}</li>\n",
                         html_escape(r.recheck->label), cls(r.recheck->verdict),
                         html_escape(verdict_name(r.recheck->verdict)), html_escape(r.recheck->reason));
    if (!c.paper_says.empty()) out += "<li><b>The paper:</b> " + html_escape(c.paper_says) + "</li>\n";
    out += fmt::format("<li><b>Paper number:</b> {}{}</li>\n", html_escape(r.paper_number),
                       r.paper_source.empty() ? "" : " (" + html_escape(r.paper_source) + ")");
    out += "<li><b>Budget:</b> " + html_escape(c.budget) + "</li>\n</ul>\n";
    out += "<table><tr><th>test</th><th>ours: mean ± sd (n)</th><th>effect [95 % interval]</th><th>criterion</th>"
           "<th>verdict</th></tr>\n";
    for (const auto& t : r.tests)
      out += fmt::format("<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td class=\"{}\">{}</td></tr>\n",
                         html_escape(t.test->name), html_escape(ours_cell(t)), html_escape(effect_cell(t)),
                         html_escape(criterion_text(*t.test)), cls(t.verdict), html_escape(verdict_name(t.verdict)));
    out += "</table>\n";
    if (!r.figure.empty()) {
      const std::string png = (fs::path(out_dir) / r.figure).string();
      if (core::file_exists(png))
        out += fmt::format("<img alt=\"{} samples\" src=\"data:image/png;base64,{}\">\n", html_escape(c.id),
                           base64(core::read_file(png)));
    }
    if (!c.commands.empty()) {
      out += "<pre>";
      for (const auto& cmd : c.commands) out += html_escape(cmd) + "\n";
      out += "</pre>\n";
    }
    for (const auto& ch : c.changes)
      out += "<p><b>Changed after results existed:</b> " + html_escape(ch) + "</p>\n";
  }
  return out + "</body></html>\n";
}

namespace {

// One panel per test with samples: a column of points per group (the runs' values), the
// group's mean as a short bar, and for a one-group test the criterion's line(s). Returns the
// PNG's path relative to out_dir, or "" when nothing was drawn.
std::string draw_samples(const ClaimResult& r, const std::string& out_dir) {
  std::string dat, panels;
  int block = 0, n_panels = 0;
  for (const auto& t : r.tests) {
    if (t.a.empty()) continue;
    const ClaimTest& test = *t.test;
    std::vector<std::pair<std::string, const std::vector<double>*>> groups{{test.a.name, &t.a}};
    if (test.b && !t.b.empty()) groups.push_back({test.b->name, &t.b});
    double lo = INFINITY, hi = -INFINITY;
    std::string tics, plots;
    for (size_t gi = 0; gi < groups.size(); ++gi) {
      const auto& [name, v] = groups[gi];
      tics += fmt::format("{}{} {}", gi ? ", " : "", gp_quote(name), gi + 1);
      // Points, spread a little sideways so equal values stay visible, then the mean.
      for (size_t i = 0; i < v->size(); ++i) {
        const double y = (*v)[i] * test.scale;
        dat += fmt::format("{} {}\n", double(gi + 1) + 0.06 * (double(i) - 0.5 * double(v->size() - 1)), y);
        lo = std::min(lo, y);
        hi = std::max(hi, y);
      }
      dat += fmt::format("\n\n{} {}\n{} {}\n\n\n", double(gi + 1) - 0.25, mean(*v) * test.scale,
                         double(gi + 1) + 0.25, mean(*v) * test.scale);
      plots += fmt::format("{}'{}.dat' index {} using 1:2 with points pt 7 ps 1.3 lc rgb '{}' notitle, "
                           "'' index {} using 1:2 with lines lw 2 dt 1 lc rgb '{}' notitle",
                           gi ? ", " : "", r.claim->id, block, palette_colour(0), block + 1, palette_colour(1));
      block += 2;
    }
    std::string lines;
    if (groups.size() == 1) {
      const auto& c = test.criterion;
      std::vector<double> ys;
      if (c.direction == ClaimCriterion::Direction::Within) ys = {c.lo, c.hi};
      else ys = {c.threshold};
      for (double y : ys) {
        lines += fmt::format(", {} with lines dt 2 lw 1.5 lc rgb '#555555' notitle", y * test.scale);
        lo = std::min(lo, y * test.scale);
        hi = std::max(hi, y * test.scale);
      }
    }
    const double pad = hi > lo ? 0.1 * (hi - lo) : std::max(1e-3, std::fabs(hi) * 0.1);
    panels += fmt::format(
        "set title {} noenhanced\nset xtics ({}) noenhanced\nset xrange [0.4:{}.6]\nset yrange [{}:{}]\n"
        "set ylabel {} noenhanced\nplot {}{}\n",
        gp_quote(test.name), tics, groups.size(), lo - pad, hi + pad,
        gp_quote(test.unit.empty() ? "value per run" : test.unit), plots, lines);
    ++n_panels;
  }
  if (n_panels == 0) return "";
  // Wide enough for the titles at about 7.5 pixels a character (Sans 11): gnuplot cuts a
  // title that does not fit.
  const std::string title = r.claim->id + ": " + r.claim->title;
  size_t longest_test = 0;
  for (const auto& t : r.claim->tests) longest_test = std::max(longest_test, t.name.size());
  const int width = std::max({80 + 380 * n_panels, 60 + int(7.5 * double(title.size())),
                      n_panels * (140 + int(7.5 * double(longest_test)))});
  GnuplotFigure g;
  g.stem = r.claim->id;
  g.written_by = "seqbench report claims";
  g.settings = "set key off\nset grid ytics\nset samples 2\n";
  g.plot = fmt::format("set multiplot layout 1,{} title {} noenhanced\n{}unset multiplot\n", n_panels,
                       gp_quote(title), panels);
  g.width = width;
  g.height = 440;
  const std::string dir = (fs::path(out_dir) / "figures").string();
  const DrawnFigure d = draw_figure(dir, g, dat);
  if (!d.status.drawn()) return "";
  return (fs::path("figures") / (r.claim->id + ".png")).string();
}

}  // namespace

std::vector<std::string> write_claims_report(std::vector<ClaimResult>& results, const std::string& out_dir) {
  core::make_dirs(out_dir);
  for (auto& r : results) r.figure = draw_samples(r, out_dir);
  std::vector<std::string> written;
  for (const auto& [name, body] : std::vector<std::pair<std::string, std::string>>{
           {"claims.md", claims_markdown(results)},
           {"summary.md", claims_summary_markdown(results)},
           {"claims.csv", claims_csv(results)},
           {"index.html", claims_html(results, out_dir)}}) {
    const std::string path = (fs::path(out_dir) / name).string();
    core::write_file_atomic(path, body);
    written.push_back(path);
  }
  return written;
}

}  // namespace seqbench::report

#include "report/paper_spec.hpp"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <set>

#include "config/yaml_config.hpp"
#include "core/check.hpp"
#include "report/markdown.hpp"
#include "report/paper_specs_data.hpp"

namespace seqbench::report {

namespace {

// A map node's keys must all be known: a typo in a spec is a build-time bug we want named.
void only_keys(const YAML::Node& map, const std::set<std::string>& known, const std::string& where) {
  if (!map.IsMap()) throw core::Error(fmt::format("{}: expected a map", where));
  for (const auto& kv : map)
    if (!known.count(kv.first.Scalar()))
      throw core::Error(fmt::format("{}: unknown key '{}' (have: {})", where, kv.first.Scalar(),
                                    fmt::join(known, ", ")));
}

std::string text(const YAML::Node& map, const char* key, const std::string& where,
                 bool required = false) {
  const YAML::Node n = map[key];
  if (!n) {
    if (required) throw core::Error(fmt::format("{}: '{}' missing", where, key));
    return "";
  }
  if (!n.IsScalar()) throw core::Error(fmt::format("{}.{}: expected a scalar", where, key));
  return n.Scalar();
}

double number(const YAML::Node& map, const char* key, const std::string& where, double fallback) {
  const YAML::Node n = map[key];
  if (!n) return fallback;
  try {
    return n.as<double>();
  } catch (const YAML::Exception&) {
    throw core::Error(fmt::format("{}.{}: '{}' is not a number", where, key, n.Scalar()));
  }
}

bool flag(const YAML::Node& map, const char* key, const std::string& where, bool fallback) {
  const YAML::Node n = map[key];
  if (!n) return fallback;
  try {
    return n.as<bool>();
  } catch (const YAML::Exception&) {
    throw core::Error(fmt::format("{}.{}: '{}' is not true or false", where, key, n.Scalar()));
  }
}

// {key: a.b, as: transform, name: header}, or {csv: column, ...} for a runs.csv column.
void key_spec(const YAML::Node& n, const std::string& where, std::string& key, bool& csv,
              std::string& as, std::string* name) {
  only_keys(n,
            name ? std::set<std::string>{"key", "csv", "as", "name"} : std::set<std::string>{"key", "csv", "as"},
            where);
  if (n["key"] && n["csv"])
    throw core::Error(fmt::format("{}: give 'key' (a config key) or 'csv' (a runs.csv column), not both", where));
  csv = bool(n["csv"]);
  key = text(n, csv ? "csv" : "key", where, !csv);
  if (csv && key.empty()) throw core::Error(fmt::format("{}.csv: empty column name", where));
  as = text(n, "as", where);
  (void)apply_key_transform(as, "");  // an unknown transform fails here, named
  if (name) *name = text(n, "name", where);
}

// `where: {width: 64, model: [gla, lru]}`: each name with one value or a list of values.
RunWhere parse_where(const YAML::Node& n, const std::string& where) {
  RunWhere out;
  const YAML::Node w = n["where"];
  if (!w) return out;
  if (!w.IsMap() || w.size() == 0)
    throw core::Error(fmt::format(
        "{}.where: expected a map of runs.csv columns to values, e.g. {{width: 64}} or {{model: [gla, lru]}}",
        where));
  for (const auto& kv : w) {
    const std::string bad =
        fmt::format("{}.where.{}: expected a value or a list of values", where, kv.first.Scalar());
    std::vector<std::string> values;
    if (kv.second.IsScalar()) {
      values.push_back(kv.second.Scalar());
    } else if (kv.second.IsSequence() && kv.second.size() > 0) {
      for (const auto& v : kv.second) {
        if (!v.IsScalar()) throw core::Error(bad);
        values.push_back(v.Scalar());
      }
    } else {
      throw core::Error(bad);
    }
    out.push_back({kv.first.Scalar(), std::move(values)});
  }
  return out;
}

TableSpec parse_table(const YAML::Node& n, const std::string& where) {
  only_keys(n, {"id", "title", "sweep", "experiment", "row", "rows", "column", "where", "metric",
                "tolerance", "make", "tune", "curves_note"},
            where);
  TableSpec t;
  t.id = text(n, "id", where, true);
  t.title = text(n, "title", where, true);
  t.sweep = text(n, "sweep", where, true);
  t.experiment = text(n, "experiment", where, true);
  t.make = text(n, "make", where);
  t.curves_note = text(n, "curves_note", where);
  if (!n["row"]) throw core::Error(fmt::format("{}: 'row' missing", where));
  key_spec(n["row"], where + ".row", t.row_key, t.row_csv, t.row_as, nullptr);
  if (const YAML::Node rows = n["rows"]) {
    if (!rows.IsSequence()) throw core::Error(fmt::format("{}.rows: expected a list", where));
    for (const auto& r : rows) {
      const std::string s = r.Scalar();
      const size_t eq = s.find('=');
      t.rows.push_back(eq == std::string::npos ? RowSpec{s, s}
                                               : RowSpec{s.substr(0, eq), s.substr(eq + 1)});
    }
  }
  if (n["column"])
    key_spec(n["column"], where + ".column", t.column_key, t.column_csv, t.column_as, &t.column_name);
  t.where = parse_where(n, where);
  const YAML::Node m = n["metric"];
  if (!m) throw core::Error(fmt::format("{}: 'metric' missing", where));
  const std::string mw = where + ".metric";
  only_keys(m, {"column", "file", "file_key", "transform", "scale", "unit", "decimals", "better"}, mw);
  t.metric_column = text(m, "column", mw, true);
  t.metric_file = text(m, "file", mw);
  t.metric_file_key = text(m, "file_key", mw);
  if (t.metric_file.empty() != t.metric_file_key.empty())
    throw core::Error(fmt::format("{}: 'file' and 'file_key' go together", mw));
  t.transform = text(m, "transform", mw);
  if (!t.transform.empty() && t.transform != "exp2")
    throw core::Error(fmt::format("{}.transform: '{}' is not one of: exp2", mw, t.transform));
  t.scale = number(m, "scale", mw, 1);
  t.unit = text(m, "unit", mw, true);
  t.decimals = int(number(m, "decimals", mw, 2));
  const std::string better = text(m, "better", mw);
  if (!better.empty() && better != "higher" && better != "lower")
    throw core::Error(fmt::format("{}.better: '{}' is not higher or lower", mw, better));
  t.higher_is_better = better != "lower";
  t.tolerance = number(n, "tolerance", where, 0);
  if (const YAML::Node tune = n["tune"]) {
    const std::string tw = where + ".tune";
    only_keys(tune, {"key", "window"}, tw);
    t.tune_key = text(tune, "key", tw, true);
    if (t.tune_key.empty()) throw core::Error(fmt::format("{}.key: empty", tw));
    t.tune_window = number(tune, "window", tw, NAN);
  }
  return t;
}

FigureSpec parse_figure(const YAML::Node& n, const std::string& where) {
  only_keys(n, {"id", "kind", "title", "sweep", "experiment", "make", "where"}, where);
  FigureSpec f{text(n, "id", where, true),    text(n, "kind", where, true),
               text(n, "title", where, true), text(n, "sweep", where),
               text(n, "experiment", where),  text(n, "make", where),
               parse_where(n, where)};
  static const std::set<std::string> kinds{"gradnorm_distance", "gradnorm_heatmap",  "input_gradnorm",
                                           "memory",            "truncation",        "attention_scaling",
                                           "accuracy_vs_state", "weight_gap",        "extrapolation"};
  if (!kinds.count(f.kind))
    throw core::Error(fmt::format("{}.kind: '{}' is not one of: {}", where, f.kind, fmt::join(kinds, ", ")));
  if (!f.where.empty() && f.kind != "accuracy_vs_state")
    throw core::Error(fmt::format("{}.where: only accuracy_vs_state figures take it, not {}", where, f.kind));
  if (f.kind != "attention_scaling" && (f.sweep.empty() || f.experiment.empty()))
    throw core::Error(fmt::format("{}: a {} figure needs 'sweep' and 'experiment'", where, f.kind));
  return f;
}

PaperNumber parse_number(const YAML::Node& n, const std::string& where) {
  only_keys(n,
            {"table", "row", "column", "value", "unit", "text", "source", "arxiv", "checked", "in_suite", "note",
             "search"},
            where);
  PaperNumber p;
  p.table = text(n, "table", where, true);
  p.row = text(n, "row", where, true);
  p.column = text(n, "column", where);
  if (!n["value"]) throw core::Error(fmt::format("{}: 'value' missing", where));
  p.value = number(n, "value", where, 0);
  p.unit = text(n, "unit", where);
  p.text = text(n, "text", where);
  if (p.text.empty()) p.text = fmt::format("{}", p.value);
  p.source = text(n, "source", where);
  p.arxiv = text(n, "arxiv", where);
  p.checked = flag(n, "checked", where, false);
  p.in_suite = flag(n, "in_suite", where, true);
  p.note = text(n, "note", where);
  p.search = text(n, "search", where);
  if (p.checked && p.source.empty())
    throw core::Error(fmt::format("{}: a checked number needs its 'source' (table or figure)", where));
  return p;
}

YAML::Node load(const std::string& yaml, const std::string& where) {
  try {
    return YAML::Load(yaml);
  } catch (const YAML::Exception& e) {
    throw core::Error(fmt::format("{}: not readable YAML: {}", where, e.msg));
  }
}

}  // namespace

std::string apply_key_transform(const std::string& as, const std::string& value) {
  if (as.empty()) return value;
  if (as == "attention_kinds") return attention_kinds(value);
  if (as == "minigrid_env") {
    std::string v = value;
    if (v.rfind("MiniGrid-", 0) == 0) v = v.substr(9);
    if (v.size() > 3 && v.compare(v.size() - 3, 3, "-v0") == 0) v.resize(v.size() - 3);
    return v;
  }
  throw core::Error(fmt::format("'as: {}' is not one of: attention_kinds, minigrid_env", as));
}

PaperSpec parse_paper_spec(const std::string& report_yaml, const std::string& numbers_yaml,
                           const std::string& source) {
  const std::string rw = source + "/report.yaml", nw = source + "/numbers.yaml";
  const YAML::Node r = load(report_yaml, rw);
  only_keys(r, {"paper", "tables", "figures"}, rw);
  PaperSpec p;
  p.name = text(r, "paper", rw, true);
  if (const YAML::Node tables = r["tables"])
    for (size_t i = 0; i < tables.size(); ++i)
      p.tables.push_back(parse_table(tables[i], fmt::format("{}: tables[{}]", rw, i)));
  if (const YAML::Node figures = r["figures"])
    for (size_t i = 0; i < figures.size(); ++i)
      p.figures.push_back(parse_figure(figures[i], fmt::format("{}: figures[{}]", rw, i)));
  if (numbers_yaml.find_first_not_of(" \n\t") == std::string::npos) return p;
  const YAML::Node n = load(numbers_yaml, nw);
  only_keys(n, {"paper", "title", "cite", "arxiv", "numbers"}, nw);
  if (text(n, "paper", nw, true) != p.name)
    throw core::Error(fmt::format("{}: paper '{}' but report.yaml says '{}'", nw, text(n, "paper", nw), p.name));
  p.title = text(n, "title", nw);
  p.cite = text(n, "cite", nw);
  p.arxiv = text(n, "arxiv", nw);
  if (const YAML::Node numbers = n["numbers"])
    for (size_t i = 0; i < numbers.size(); ++i)
      p.numbers.push_back(parse_number(numbers[i], fmt::format("{}: numbers[{}]", nw, i)));
  return p;
}

const std::vector<PaperSpec>& paper_specs() {
  static const std::vector<PaperSpec> specs = [] {
    std::vector<PaperSpec> out;
    for (const auto& e : kEmbeddedPapers)
      out.push_back(parse_paper_spec(e.report_yaml, e.numbers_yaml,
                                     std::string("configs/papers/") + e.name));
    return out;
  }();
  return specs;
}

const PaperSpec& paper_spec(const std::string& name) {
  std::vector<std::string> names;
  for (const auto& p : paper_specs()) {
    if (p.name == name) return p;
    names.push_back(p.name);
  }
  const std::string near = config::detail::nearest_key(name, names);
  throw core::UsageError(fmt::format("no paper '{}'{} (have: {})", name,
                                     near.empty() ? "" : fmt::format("; did you mean '{}'?", near),
                                     fmt::join(names, ", ")));
}

const PaperNumber* find_paper_number(const PaperSpec& paper, const std::string& table,
                                     const std::string& row, const std::string& column) {
  for (const auto& n : paper.numbers)
    if (n.table == table && n.row == row && n.column == column) return &n;
  return nullptr;
}

std::pair<std::string, std::string> paper_cells(const std::string& paper, const std::string& table,
                                                const std::string& row_value, const std::string& column) {
  const PaperSpec& spec = paper_spec(paper);
  std::string row = row_value;
  for (const auto& t : spec.tables)
    if (t.id == table)
      for (const auto& r : t.rows)
        if (r.match == row_value) row = r.name;
  const PaperNumber* n = find_paper_number(spec, table, row, column);
  if (!n) return {"—", ""};
  return {number_cell(*n), number_source(spec, *n)};
}

bool is_repository_source(const std::string& source) { return source.rfind("github:", 0) == 0; }

std::string number_source(const PaperSpec& paper, const PaperNumber& number) {
  if (!number.checked) return "unchecked" + (number.source.empty() ? "" : "; " + number.source);
  if (is_repository_source(number.source)) return number.source;  // not the paper: no arXiv id
  const std::string& arxiv = number.arxiv.empty() ? paper.arxiv : number.arxiv;
  return arxiv.empty() ? number.source : fmt::format("{}, arXiv {}", number.source, arxiv);
}

CheckedCount count_checked(const PaperSpec& paper) {
  CheckedCount c;
  for (const auto& n : paper.numbers) {
    ++c.total;
    c.checked += n.checked;
    c.in_repository += n.checked && is_repository_source(n.source);
  }
  return c;
}

std::string checked_statement(const PaperSpec& paper) {
  const CheckedCount c = count_checked(paper);
  if (c.total == 0) return "No paper numbers are recorded.";
  std::vector<std::string> where;
  if (c.checked > c.in_repository)
    where.push_back(fmt::format("{} read in the published text, tables or figures", c.checked - c.in_repository));
  if (c.in_repository > 0)
    where.push_back(fmt::format("{} in a file of the authors' public repository", c.in_repository));
  const std::string what = fmt::format("checked against a named source ({})", fmt::join(where, "; "));
  if (c.checked == 0)
    return c.total == 1 ? std::string("The paper's one number is not checked against a named source: it is marked "
                                      "(unchecked) and is not an established fact.")
                        : fmt::format("None of the {} paper numbers is checked against a named source: all are "
                                      "marked (unchecked) and are not established facts.",
                                      c.total);
  if (c.checked == c.total)
    return c.total == 1 ? "The paper's one number is " + what + "."
                        : fmt::format("All {} paper numbers are {}.", c.total, what);
  return fmt::format("{} of {} paper numbers {} {}; the others are marked (unchecked) and are not established facts.",
                     c.checked, c.total, c.checked == 1 ? "is" : "are", what);
}

std::string number_cell(const PaperNumber& number) {
  return number.checked ? number.text : number.text + " (unchecked)";
}

}  // namespace seqbench::report

#include "report/csv.hpp"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <set>

#include "core/check.hpp"
#include "core/input_file.hpp"

namespace seqbench::report {
namespace {

struct Record {
  std::vector<std::string> fields;
  int line = 0;  // 1-based line on which the record starts
};

// Characters that make a spreadsheet read a cell as a formula when they start it (OWASP,
// "CSV Injection"), "\n" added for good measure.
bool formula_char(char c) {
  return c == '=' || c == '+' || c == '-' || c == '@' || c == '\t' || c == '\r' || c == '\n';
}

// Whether s, after any leading single quotes, starts with a formula character.
bool formula_start(std::string_view s) {
  const size_t i = s.find_first_not_of('\'');
  return i != std::string_view::npos && formula_char(s[i]);
}

bool ieq(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) == y;
         });
}

// A plain decimal number as the writers print numbers: an optional sign, digits with an
// optional fraction (or a fraction alone), an optional exponent; or nan / inf / infinity
// (any case) with an optional sign. "-1.5", "+3", "-1e-05", "-inf" are; "-2+3" is not.
bool plain_number(std::string_view s) {
  size_t i = 0;
  if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
  const std::string_view rest = s.substr(i);
  if (ieq(rest, "nan") || ieq(rest, "inf") || ieq(rest, "infinity")) return true;
  size_t digits = 0;
  const auto run = [&] {
    while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) ++i, ++digits;
  };
  run();
  if (i < s.size() && s[i] == '.') {
    ++i;
    run();
  }
  if (digits == 0) return false;
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
    const size_t before = i;
    while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) ++i;
    if (i == before) return false;
  }
  return i == s.size();
}

// What the writer neutralises: a cell a spreadsheet would run as a formula. Numbers keep
// their sign ("-1.5" stays a number), and a lone "-" (a placeholder) cannot be a formula.
bool needs_formula_guard(std::string_view field) {
  return formula_start(field) && !plain_number(field) && field != "-";
}

// RFC 4180 records from text; stops after max_records (0: all).
std::vector<Record> parse_records(std::string_view text, const std::string& path,
                                  size_t max_records) {
  std::vector<Record> out;
  size_t i = 0;
  int line = 1;
  const size_t n = text.size();
  while (i < n && (max_records == 0 || out.size() < max_records)) {
    Record rec;
    rec.line = line;
    std::string field;
    for (;;) {
      bool quoted = false;
      if (i < n && text[i] == '"') {
        quoted = true;
        const int quote_line = line;
        ++i;
        for (;;) {
          if (i >= n)
            throw core::Error(
                fmt::format("{}:{}: unterminated quoted field (hint: the file may be truncated)",
                            path, quote_line));
          char c = text[i++];
          if (c == '"') {
            if (i < n && text[i] == '"') {
              field += '"';
              ++i;
            } else {
              break;
            }
          } else {
            if (c == '\n') ++line;
            field += c;
          }
        }
        // After a closing quote only a separator or line end may follow.
        if (i < n && text[i] != ',' && text[i] != '\n' && text[i] != '\r')
          throw core::Error(
              fmt::format("{}:{}: unexpected character after a quoted field", path, line));
      } else {
        while (i < n && text[i] != ',' && text[i] != '\n' &&
               !(text[i] == '\r' && i + 1 < n && text[i + 1] == '\n'))
          field += text[i++];
      }
      // The writer's guard against formulas: a quoted field "'<formula>" is "<formula>"
      // (one quote off; "''=x" was written for "'=x").
      if (quoted && !field.empty() && field[0] == '\'' && formula_start(field)) field.erase(0, 1);
      rec.fields.push_back(std::move(field));
      field.clear();
      if (i < n && text[i] == ',') {
        ++i;
        continue;
      }
      if (i < n && text[i] == '\r') ++i;
      if (i < n && text[i] == '\n') {
        ++i;
        ++line;
      }
      break;
    }
    out.push_back(std::move(rec));
  }
  return out;
}

std::string joined(const std::vector<std::string>& v) {
  std::string s;
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + v[i];
  return s;
}

}  // namespace

std::string csv_escape(std::string_view field) {
  const bool guard = needs_formula_guard(field);
  if (!guard && field.find_first_of(",\"\r\n") == std::string_view::npos) return std::string(field);
  std::string out = guard ? "\"'" : "\"";
  for (char c : field) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

std::string csv_line(const std::vector<std::string>& fields) {
  std::string out;
  for (size_t i = 0; i < fields.size(); ++i) {
    if (i) out += ',';
    out += csv_escape(fields[i]);
  }
  return out + "\n";
}

namespace {
// A file written by an older seqbench whose columns are a subset of today's: rewritten
// (atomically) under today's header, the old rows' new columns left empty, so a results
// directory keeps working after an upgrade that added columns. False (nothing written)
// when some old column is gone or the old rows do not fit their header.
bool upgrade_header(const std::string& path, const std::string& text,
                    const std::vector<std::string>& old_cols,
                    const std::vector<std::string>& columns) {
  std::vector<int> from;  // for each new column, its old index or -1
  for (const auto& c : columns) {
    int at = -1;
    for (size_t i = 0; i < old_cols.size(); ++i)
      if (old_cols[i] == c) at = int(i);
    from.push_back(at);
  }
  for (const auto& c : old_cols)
    if (std::find(columns.begin(), columns.end(), c) == columns.end()) return false;
  // Every row, the last one too when it has no line end (it must fit the header).
  const auto records = parse_records(text, path, 0);
  std::string out = csv_line(columns);
  for (size_t r = 1; r < records.size(); ++r) {
    if (records[r].fields.size() != old_cols.size()) return false;
    std::vector<std::string> cells;
    for (int at : from) cells.push_back(at < 0 ? "" : records[r].fields[size_t(at)]);
    out += csv_line(cells);
  }
  core::write_file_atomic(path, out);
  return true;
}
}  // namespace

std::string CsvWriter::cell(double v) { return fmt::format("{}", v); }
std::string CsvWriter::cell(int64_t v) { return fmt::format("{}", v); }

CsvWriter::CsvWriter(const std::string& path, std::vector<std::string> columns, Mode mode)
    : columns_(std::move(columns)), file_(open(path, columns_, mode)) {}

core::AppendFile CsvWriter::open(const std::string& path, const std::vector<std::string>& columns,
                                 Mode mode) {
  SB_CHECK(!columns.empty(), "{}: a CSV file needs at least one column", path);
  std::set<std::string> seen;
  for (const auto& c : columns)
    SB_CHECK(!c.empty() && seen.insert(c).second, "{}: column name '{}' is empty or repeated", path,
             c);
  const std::string header = csv_line(columns);
  core::refuse_symlink(path);  // never written (or read back to append) through a link
  if (mode == Mode::Truncate) {
    core::write_file_atomic(path, header);
    return core::AppendFile(path);
  }
  if (core::create_file_exclusive(path, header)) return core::AppendFile(path);
  std::string text = core::read_input(path, core::kMaxTableFile, /*follow_links=*/false);
  if (text.empty()) {
    core::write_file_atomic(path, header);
    return core::AppendFile(path);
  }
  auto first = parse_records(text, path, 1);
  if (!first.empty() && first[0].fields != columns && upgrade_header(path, text, first[0].fields, columns))
    return core::AppendFile(path);
  if (first.empty() || first[0].fields != columns)
    throw core::Error(fmt::format(
        "{}: header differs from the expected columns: file has [{}], expected [{}] (hint: "
        "move the old file aside)",
        path, first.empty() ? "" : joined(first[0].fields), joined(columns)));
  core::AppendFile file(path);
  if (text.back() != '\n') {
    // A last row without its line end (a hand edit, say) is kept and ended: a row is only
    // ever dropped by AppendFile, when its own write of it failed.
    file.write("\n");
    file.flush_sync();
  }
  return file;
}

std::string_view without_cut_off_row(std::string_view text, const std::string& path) {
  if (text.empty() || text.back() == '\n') return text;
  const size_t last_end = text.rfind('\n');
  if (last_end == std::string_view::npos) return text;  // the header alone
  const std::string_view head = text.substr(0, last_end + 1), tail = text.substr(last_end + 1);
  size_t header_fields = 0;
  try {
    const auto head_records = parse_records(head, path, 0);
    if (head_records.empty()) return text;
    header_fields = head_records[0].fields.size();
  } catch (const core::Error&) {
    return text;  // the line break is inside a quoted field: leave it to the reader
  }
  try {
    const auto tail_records = parse_records(tail, path, 0);
    if (tail_records.size() == 1 && tail_records[0].fields.size() == header_fields) return text;
  } catch (const core::Error&) {
    // an unterminated quote: cut off
  }
  return head;
}

void CsvWriter::row(const std::vector<std::string>& cells) { rows({cells}); }

void CsvWriter::rows(const std::vector<std::vector<std::string>>& block) {
  std::string text;
  for (const auto& cells : block) {
    if (cells.size() != columns_.size())
      throw core::Error(fmt::format("{}: row has {} cells, expected {} (columns: {})", path(),
                                    cells.size(), columns_.size(), joined(columns_)));
    text += csv_line(cells);
  }
  file_.write(text);
  file_.flush_sync();
}

int CsvTable::col(const std::string& name) const {
  for (size_t i = 0; i < columns.size(); ++i)
    if (columns[i] == name) return static_cast<int>(i);
  throw core::Error(fmt::format("{}: no column '{}' (columns: {})", path, name, joined(columns)));
}

double CsvTable::number(size_t row, const std::string& name) const {
  const std::string& cell = rows[row][size_t(col(name))];
  char* end = nullptr;
  const double v = cell.empty() ? 0.0 : std::strtod(cell.c_str(), &end);
  if (cell.empty() || end != cell.c_str() + cell.size())
    throw core::Error(fmt::format(
        "{}:{}: column '{}' holds '{}', not a number (hint: is this a seqbench runs.csv?)", path,
        row + 2, name, cell));
  return v;
}

bool CsvTable::has(const std::string& name) const {
  for (const auto& c : columns)
    if (c == name) return true;
  return false;
}

CsvTable parse_csv(std::string_view text, const std::string& path) {
  auto records = parse_records(text, path, 0);
  if (records.empty())
    throw core::Error(fmt::format("{}: empty file, expected a header line", path));
  CsvTable t;
  t.path = path;
  t.columns = std::move(records[0].fields);
  t.rows.reserve(records.size() - 1);
  for (size_t r = 1; r < records.size(); ++r) {
    if (records[r].fields.size() != t.columns.size())
      throw core::Error(fmt::format("{}:{}: row has {} fields, the header has {}", path,
                                    records[r].line, records[r].fields.size(), t.columns.size()));
    t.rows.push_back(std::move(records[r].fields));
  }
  return t;
}

CsvTable read_csv(const std::string& path) {
  return parse_csv(core::read_input(path, core::kMaxTableFile), path);
}

}  // namespace seqbench::report

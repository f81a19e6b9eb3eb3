#include "report/markdown.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>

#include "core/check.hpp"

namespace seqbench::report {
namespace {

// Length of a plain number at the start of s ("-1.5e-3", "nan", "inf"); 0 if none.
size_t number_prefix(std::string_view s) {
  size_t i = 0;
  if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
  for (std::string_view word : {"nan", "inf"})
    if (s.substr(i, 3) == word) return i + 3;
  size_t digits = 0;
  while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) ++i, ++digits;
  if (i < s.size() && s[i] == '.') {
    ++i;
    while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) ++i, ++digits;
  }
  if (digits == 0) return 0;
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    size_t j = i + 1;
    if (j < s.size() && (s[j] == '+' || s[j] == '-')) ++j;
    size_t exp_digits = 0;
    while (j < s.size() && std::isdigit(static_cast<unsigned char>(s[j]))) ++j, ++exp_digits;
    if (exp_digits) i = j;
  }
  return i;
}

size_t display_width(std::string_view s) {
  // Count UTF-8 lead bytes only, so multi-byte characters such as "±" count once.
  return static_cast<size_t>(std::count_if(
      s.begin(), s.end(), [](char c) { return (static_cast<unsigned char>(c) & 0xC0) != 0x80; }));
}

// A cell's text as Markdown shows it literally: '|' escaped (it would end the cell), line
// breaks as spaces (they would end the row), and '&', '<', '>' as HTML entities, so that
// no text (a label, a config value) can become HTML when the table is rendered.
std::string escape_cell(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '|')
      out += "\\|";
    else if (c == '\n' || c == '\r')
      out += ' ';
    else if (c == '&')
      out += "&amp;";
    else if (c == '<')
      out += "&lt;";
    else if (c == '>')
      out += "&gt;";
    else
      out += c;
  }
  return out;
}

}  // namespace

bool is_numeric_cell(std::string_view s) {
  size_t n = number_prefix(s);
  if (n == 0) return false;
  std::string_view rest = s.substr(n);
  if (rest == "%" || rest.empty()) return true;
  // "mean ± std", as paper tables print it.
  for (std::string_view pm : {" ± ", " +- "}) {
    if (rest.substr(0, pm.size()) == pm) {
      std::string_view tail = rest.substr(pm.size());
      size_t m = number_prefix(tail);
      return m > 0 && (m == tail.size() || tail.substr(m) == "%");
    }
  }
  return false;
}

std::string markdown_table(const std::vector<std::string>& header,
                           const std::vector<std::vector<std::string>>& rows) {
  const size_t ncol = header.size();
  SB_CHECK(ncol > 0, "markdown_table needs at least one column");
  std::vector<std::vector<std::string>> cells;
  cells.reserve(rows.size() + 1);
  auto add = [&](const std::vector<std::string>& r) {
    std::vector<std::string> e;
    e.reserve(r.size());
    for (const auto& c : r) e.push_back(escape_cell(c));
    cells.push_back(std::move(e));
  };
  add(header);
  for (size_t r = 0; r < rows.size(); ++r) {
    SB_CHECK(rows[r].size() == ncol, "markdown_table: row {} has {} cells, the header has {}", r,
             rows[r].size(), ncol);
    add(rows[r]);
  }
  std::vector<size_t> width(ncol, 3);  // "---" is the shortest separator renderers accept
  std::vector<bool> right(ncol, false);
  for (size_t c = 0; c < ncol; ++c) {
    bool any = false, all = true;
    for (size_t r = 0; r < cells.size(); ++r) {
      width[c] = std::max(width[c], display_width(cells[r][c]));
      if (r == 0 || cells[r][c].empty()) continue;
      any = true;
      all = all && is_numeric_cell(cells[r][c]);
    }
    right[c] = any && all;
  }
  auto line = [&](const std::vector<std::string>& r) {
    std::string out = "|";
    for (size_t c = 0; c < ncol; ++c) {
      std::string pad(width[c] - display_width(r[c]), ' ');
      // Appended piecewise: GCC 12 warns falsely (-Wrestrict) on " " + (a + b) at -O3.
      out += ' ';
      out += right[c] ? pad : r[c];
      out += right[c] ? r[c] : pad;
      out += " |";
    }
    return out + "\n";
  };
  std::string out = line(cells[0]);
  out += "|";
  for (size_t c = 0; c < ncol; ++c) {
    out += ' ';
    out.append(right[c] ? width[c] - 1 : width[c], '-');
    out += right[c] ? ": |" : " |";
  }
  out += "\n";
  for (size_t r = 1; r < cells.size(); ++r) out += line(cells[r]);
  return out;
}

std::string mean_sd(const std::vector<double>& values, int decimals) {
  SB_CHECK(!values.empty(), "mean_sd: no values");
  double mean = 0;
  for (double x : values) mean += x / double(values.size());
  if (values.size() < 2) return fmt::format("{:.{}f}", mean, decimals);
  double ss = 0;
  for (double x : values) ss += (x - mean) * (x - mean);
  return fmt::format("{:.{}f} ± {:.{}f}", mean, decimals,
                     std::sqrt(ss / double(values.size() - 1)), decimals);
}

std::string attention_kinds(const std::string& attention) {
  std::vector<std::string> kinds;
  size_t at = 0;
  while (at <= attention.size()) {
    size_t end = attention.find(',', at);
    if (end == std::string::npos) end = attention.size();
    std::string kind = attention.substr(at, end - at);
    kind = kind.substr(0, kind.find(':'));
    if (!kind.empty() && std::find(kinds.begin(), kinds.end(), kind) == kinds.end())
      kinds.push_back(kind);
    at = end + 1;
  }
  std::string out;
  for (const auto& k : kinds) out += (out.empty() ? "" : "+") + k;
  return out;
}

}  // namespace seqbench::report

// CSV results files (metrics.csv, gradnorm.csv, runs.csv): a fixed header, one row per
// record, each row fsynced as it is written so a crash loses at most that row.
// Dialect: RFC 4180 — comma separated, "\n" line ends, a field is quoted when it
// contains , " \r or \n, with " doubled inside quotes. Doubles use fmt's shortest
// round-trip form ("0.1", "1e-05", "nan", "inf"), so std::stod gives the same bits back.
// A cell a spreadsheet would run as a formula (one starting with = + - @, a tab or a line
// break, after any single quotes) is written quoted with a ' in front ("=1+2" as
// "'=1+2"), unless it is a plain number ("-1.5", "+3", "-1e-05", "-inf") or a lone "-";
// the reader takes that ' off again, so every cell reads back as it was given.
#pragma once

#include <fmt/format.h>

#include <concepts>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/fs.hpp"

namespace seqbench::report {

class CsvWriter {
 public:
  // Truncate: a new file holding only the header (replacing any old one atomically).
  // Append: if the file exists its header must equal `columns`, else core::Error
  // "<path>: header differs from the expected columns ... (hint: move the old file
  // aside)"; a missing or empty file is created with the header; a last row without its
  // line end is kept and gets one (no row is ever dropped here).
  // Either way a path that is a symbolic link is refused naming it.
  enum class Mode { Truncate, Append };

  CsvWriter(const std::string& path, std::vector<std::string> columns, Mode mode);

  // Cells are plain values (not yet CSV-encoded): row() quotes whatever needs it, so
  // any string is safe here. cells.size() must equal the number of columns.
  void row(const std::vector<std::string>& cells);
  // Several rows with one write and one fsync (e.g. a gradient probe's T rows).
  void rows(const std::vector<std::vector<std::string>>& block);

  // Format values for row(): {cell(step), cell(loss), cell(model_name)}.
  static std::string cell(double v);
  static std::string cell(int64_t v);
  static std::string cell(const std::string& s) { return s; }
  static std::string cell(const char* s) { return s; }
  // Any other integer type (int, size_t, uint64_t, ...), so cell(3) is not ambiguous.
  template <std::integral I>
  requires(!std::same_as<I, int64_t> && !std::same_as<I, bool>) static std::string cell(I v) {
    return fmt::format("{}", v);
  }

  const std::vector<std::string>& columns() const { return columns_; }
  const std::string& path() const { return file_.path(); }

 private:
  static core::AppendFile open(const std::string& path, const std::vector<std::string>& columns,
                               Mode mode);
  std::vector<std::string> columns_;
  core::AppendFile file_;
};

// One field, quoted if it contains , " \r or \n; a formula is guarded (above).
std::string csv_escape(std::string_view field);
// One record (fields joined by commas, each escaped) followed by "\n".
std::string csv_line(const std::vector<std::string>& fields);

// A CSV file read back: header + rows of plain (unquoted) values.
struct CsvTable {
  std::string path;  // where it was read from, for error messages
  std::vector<std::string> columns;
  std::vector<std::vector<std::string>> rows;

  // Index of a column; throws naming the file and listing the columns it has.
  int col(const std::string& name) const;
  bool has(const std::string& name) const;
  // The cell at (row, column) as a number; throws naming the file, line and column when
  // it is empty or not a number.
  double number(size_t row, const std::string& name) const;
};

// Reads a CSV written by CsvWriter (any RFC 4180 file; "\r\n" line ends accepted).
// Throws naming path and line for an unterminated quote or a row whose field count
// differs from the header's.
CsvTable read_csv(const std::string& path);
// Same, from text already in memory; `path` is only used in messages.
CsvTable parse_csv(std::string_view text, const std::string& path);

// text without a last row that a crash provably cut off: one with no line end that has
// fewer or more fields than the header, or an unterminated quote. Anything else (a whole
// last row that merely lacks its line end, a damaged row elsewhere) is returned as it is.
// For readers that know such a row was the file's last write (a resumed run's files).
std::string_view without_cut_off_row(std::string_view text, const std::string& path);

}  // namespace seqbench::report

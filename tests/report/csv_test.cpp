#include "report/csv.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <limits>

#include "core/check.hpp"
#include "core/fs.hpp"

#include "test_util.hpp"

using namespace seqbench;
using report::CsvWriter;

using testutil::TempDir;
using testutil::message_of;

TEST(Csv, CellFormatsRoundTripDoubles) {
  EXPECT_EQ(CsvWriter::cell(0.1), "0.1");
  EXPECT_EQ(CsvWriter::cell(int64_t{-42}), "-42");
  EXPECT_EQ(CsvWriter::cell(7), "7");  // int: not ambiguous
  EXPECT_EQ(CsvWriter::cell(size_t{18446744073709551615u}), "18446744073709551615");
  EXPECT_EQ(CsvWriter::cell("lstm"), "lstm");
  for (double v : {1.0 / 3.0, 1e-300, -2.5e17, 123456.789, std::nextafter(1.0, 2.0)})
    EXPECT_EQ(std::stod(CsvWriter::cell(v)), v) << CsvWriter::cell(v);
  EXPECT_TRUE(std::isnan(std::stod(CsvWriter::cell(std::nan("")))));
  EXPECT_EQ(std::stod(CsvWriter::cell(std::numeric_limits<double>::infinity())),
            std::numeric_limits<double>::infinity());
}

TEST(Csv, EscapeQuotesOnlyWhenNeeded) {
  EXPECT_EQ(report::csv_escape("plain"), "plain");
  EXPECT_EQ(report::csv_escape("a,b"), "\"a,b\"");
  EXPECT_EQ(report::csv_escape("say \"hi\""), "\"say \"\"hi\"\"\"");
  EXPECT_EQ(report::csv_escape("two\nlines"), "\"two\nlines\"");
  EXPECT_EQ(report::csv_line({"a", "b,c", ""}), "a,\"b,c\",\n");
}

TEST(Csv, WriteReadRoundTripWithQuotesAndCommas) {
  TempDir dir;
  const std::string p = dir / "metrics.csv";
  const std::vector<std::string> cols{"step", "loss", "note"};
  const std::vector<std::vector<std::string>> rows{
      {"1", CsvWriter::cell(0.5), "plain"},
      {"2", CsvWriter::cell(1.0 / 3.0), "has, comma"},
      {"3", CsvWriter::cell(-1e-9), "say \"hi\""},
      {"4", "", "multi\nline, \"both\""},
  };
  {
    CsvWriter w(p, cols, CsvWriter::Mode::Truncate);
    for (const auto& r : rows) w.row(r);
  }
  report::CsvTable t = report::read_csv(p);
  EXPECT_EQ(t.path, p);
  EXPECT_EQ(t.columns, cols);
  EXPECT_EQ(t.rows, rows);
  EXPECT_EQ(t.col("loss"), 1);
  EXPECT_TRUE(t.has("note"));
  EXPECT_FALSE(t.has("acc"));
  EXPECT_EQ(std::stod(t.rows[1][t.col("loss")]), 1.0 / 3.0);
  std::string m = message_of([&] { t.col("acc"); });
  EXPECT_NE(m.find(p), std::string::npos) << m;
  EXPECT_NE(m.find("step, loss, note"), std::string::npos) << m;
}

TEST(Csv, TruncateReplacesAndAppendContinues) {
  TempDir dir;
  const std::string p = dir / "runs.csv";
  {
    CsvWriter w(p, {"a", "b"}, CsvWriter::Mode::Append);  // missing: created with header
    w.row({"1", "2"});
  }
  {
    CsvWriter w(p, {"a", "b"}, CsvWriter::Mode::Append);
    w.row({"3", "4"});
  }
  EXPECT_EQ(core::read_file(p), "a,b\n1,2\n3,4\n");
  {
    CsvWriter w(p, {"a", "b"}, CsvWriter::Mode::Truncate);
    w.row({"5", "6"});
  }
  EXPECT_EQ(core::read_file(p), "a,b\n5,6\n");
}

TEST(Csv, AppendKeepsALastRowWithoutItsLineEndAndFillsEmptyFile) {
  // A last row without "\n" (a hand edit, or a whole row whose line end a crash lost) is
  // kept and ended; appending never deletes a row it did not write itself.
  TempDir dir;
  const std::string p = dir / "runs.csv";
  core::write_file_atomic(p, "a,b\n1,2\n3,4");
  {
    CsvWriter w(p, {"a", "b"}, CsvWriter::Mode::Append);
    w.row({"5", "6"});
  }
  EXPECT_EQ(core::read_file(p), "a,b\n1,2\n3,4\n5,6\n");
  // Even one that does not fit its header is kept, for a person to judge: the reader then
  // names its line.
  const std::string cut = dir / "cut.csv";
  core::write_file_atomic(cut, "a,b\n1,2\n3");
  {
    CsvWriter w(cut, {"a", "b"}, CsvWriter::Mode::Append);
    w.row({"5", "6"});
  }
  EXPECT_EQ(core::read_file(cut), "a,b\n1,2\n3\n5,6\n");
  EXPECT_EQ(message_of([&] { report::read_csv(cut); }),
            cut + ":3: row has 1 fields, the header has 2");
  const std::string e = dir / "empty.csv";
  core::write_file_atomic(e, "");
  CsvWriter w(e, {"x"}, CsvWriter::Mode::Append);
  w.row({"1"});
  EXPECT_EQ(core::read_file(e), "x\n1\n");
}

TEST(Csv, WithoutCutOffRowDropsOnlyALastRowThatCannotBeWhole) {
  const std::string path = "m.csv";
  const auto cut = [&](std::string_view text) {
    return std::string(report::without_cut_off_row(text, path));
  };
  EXPECT_EQ(cut("a,b\n1,2\n3"), "a,b\n1,2\n");       // too few fields
  EXPECT_EQ(cut("a,b\n1,2\n3,4,5"), "a,b\n1,2\n");   // too many
  EXPECT_EQ(cut("a,b\n1,2\n3,\"op"), "a,b\n1,2\n");  // a quote never closed
  EXPECT_EQ(cut("a,b\n1,2\n3,4"), "a,b\n1,2\n3,4");  // whole, only the line end missing
  EXPECT_EQ(cut("a,b\n1,2\n"), "a,b\n1,2\n");
  EXPECT_EQ(cut("a,b"), "a,b");
  EXPECT_EQ(cut(""), "");
  EXPECT_EQ(cut("a,b\n1,\"x\ny\""), "a,b\n1,\"x\ny\"");  // the break is inside a quote
}

TEST(Csv, AnUpgradedHeaderKeepsALastRowWithoutItsLineEnd) {
  TempDir dir;
  const std::string p = dir / "runs.csv";
  core::write_file_atomic(p, "a,c\n1,x\n2,z");
  {
    CsvWriter w(p, {"a", "b", "c"}, CsvWriter::Mode::Append);
    w.row({"3", "new", "w"});
  }
  EXPECT_EQ(core::read_file(p), "a,b,c\n1,,x\n2,,z\n3,new,w\n");
}

TEST(Csv, AWriterRefusesAFileThatIsASymlink) {
  TempDir dir, outside;
  const std::string victim = outside / "victim.csv";
  core::write_file_atomic(victim, "a,b\n1,2\n");
  const std::string p = dir / "metrics.csv";
  std::filesystem::create_symlink(victim, p);
  for (const auto mode : {CsvWriter::Mode::Append, CsvWriter::Mode::Truncate}) {
    const std::string m = message_of([&] { CsvWriter w(p, {"a", "b"}, mode); });
    EXPECT_NE(m.find("'" + p + "' is a symbolic link"), std::string::npos) << m;
  }
  EXPECT_EQ(core::read_file(victim), "a,b\n1,2\n");
  EXPECT_TRUE(std::filesystem::is_symlink(p));
}

TEST(Csv, CellsThatASpreadsheetWouldRunAreGuardedAndNumbersAreNot) {
  // OWASP's CSV injection rule: a cell starting with = + - @ tab or CR gets a ' in front
  // and is quoted.
  EXPECT_EQ(report::csv_escape("=cmd|' /C calc'!A0"), "\"'=cmd|' /C calc'!A0\"");
  EXPECT_EQ(report::csv_escape("+SUM(1)"), "\"'+SUM(1)\"");
  EXPECT_EQ(report::csv_escape("@HYPERLINK(\"http://x\")"), "\"'@HYPERLINK(\"\"http://x\"\")\"");
  EXPECT_EQ(report::csv_escape("-2+3"), "\"'-2+3\"");
  EXPECT_EQ(report::csv_escape("\tx"), "\"'\tx\"");
  EXPECT_EQ(report::csv_escape("\rx"), "\"'\rx\"");
  EXPECT_EQ(report::csv_escape("'=x"), "\"''=x\"");  // so that it reads back with its quote
  // Numbers, negative ones and exponents too, stay as they are.
  for (const char* n : {"-1.5", "-1e-05", "+3", "-0", "-.5", "1e+05", "-2.5E17", "nan", "-nan",
                        "inf", "-inf", "+inf", "-1", "-"})
    EXPECT_EQ(report::csv_escape(n), n) << n;
  for (const char* t : {"lstm", "a-b", "x=1", "it's", "'quoted'", "", "1-2"})
    EXPECT_EQ(report::csv_escape(t), t) << t;
  // Not numbers: guarded.
  for (const char* t : {"-1e", "-e5", "--1", "-1.5x", "-inf+1", "-0x10", "+", "="})
    EXPECT_EQ(report::csv_escape(t).substr(0, 2), "\"'") << t;
}

TEST(Csv, GuardedCellsReadBackAsTheyWereWritten) {
  TempDir dir;
  const std::string p = dir / "runs.csv";
  const std::vector<std::string> cols{"label", "value"};
  const std::vector<std::vector<std::string>> rows{{"=cmd|' /C calc'!A0", "-1.5"},
                                                   {"+SUM(1)", "-1e-05"},
                                                   {"@HYPERLINK(\"x\")", "-inf"},
                                                   {"-2+3", "nan"},
                                                   {"'=x", "+3"},
                                                   {"''@y", "-1"},
                                                   {"\tTab", "0"},
                                                   {"a|b\nc", "-"},
                                                   {"'plain", "'-1"}};
  {
    CsvWriter w(p, cols, CsvWriter::Mode::Truncate);
    for (const auto& r : rows) w.row(r);
  }
  const std::string text = core::read_file(p);
  EXPECT_NE(text.find("\n\"'=cmd|' /C calc'!A0\",-1.5\n"), std::string::npos) << text;
  EXPECT_NE(text.find("\n\"'-2+3\",nan\n"), std::string::npos) << text;
  const report::CsvTable t = report::read_csv(p);
  EXPECT_EQ(t.rows, rows);
  EXPECT_EQ(t.number(1, "value"), -1e-05);
  // Appending to it again checks its header and adds a row as it is.
  {
    CsvWriter w(p, cols, CsvWriter::Mode::Append);
    w.row({"=1+1", "-2"});
  }
  EXPECT_EQ(report::read_csv(p).rows.back(), (std::vector<std::string>{"=1+1", "-2"}));
  // A hand-written file without the quotes keeps its cells as they are.
  const auto hand = report::parse_csv("label\n'=x\n\"'-1\"\n", "hand.csv");
  EXPECT_EQ(hand.rows[0][0], "'=x");
  EXPECT_EQ(hand.rows[1][0], "-1");
}

TEST(Csv, AppendHeaderMismatchIsAnError) {
  TempDir dir;
  const std::string p = dir / "runs.csv";
  core::write_file_atomic(p, "a,b\n1,2\n");
  // Column b would be lost: refused.
  std::string m = message_of([&] { CsvWriter w(p, {"a", "c"}, CsvWriter::Mode::Append); });
  EXPECT_NE(m.find(p + ": header differs from the expected columns"), std::string::npos) << m;
  EXPECT_NE(m.find("hint: move the old file aside"), std::string::npos) << m;
  EXPECT_NE(m.find("[a, c]"), std::string::npos) << m;
  EXPECT_EQ(core::read_file(p), "a,b\n1,2\n");  // untouched
}

TEST(Csv, AppendUpgradesAnOlderHeaderThatLacksNewColumns) {
  TempDir dir;
  const std::string p = dir / "runs.csv";
  core::write_file_atomic(p, "a,c\n1,\"x,y\"\n2,z\n");
  {
    CsvWriter w(p, {"a", "b", "c"}, CsvWriter::Mode::Append);
    w.row({"3", "new", "w"});
  }
  EXPECT_EQ(core::read_file(p), "a,b,c\n1,,\"x,y\"\n2,,z\n3,new,w\n");
}

TEST(Csv, RowSizeMustMatchAndColumnsMustBeValid) {
  TempDir dir;
  const std::string p = dir / "m.csv";
  CsvWriter w(p, {"a", "b"}, CsvWriter::Mode::Truncate);
  std::string m = message_of([&] { w.row({"1"}); });
  EXPECT_NE(m.find(p + ": row has 1 cells, expected 2"), std::string::npos) << m;
  EXPECT_EQ(core::read_file(p), "a,b\n");
  EXPECT_THROW(CsvWriter(dir / "x.csv", {"a", "a"}, CsvWriter::Mode::Truncate), core::Error);
  EXPECT_THROW(CsvWriter(dir / "y.csv", {}, CsvWriter::Mode::Truncate), core::Error);
}

TEST(Csv, ReaderAcceptsCrlfAndRejectsBrokenFiles) {
  report::CsvTable t = report::parse_csv("a,b\r\n1,\"x\r\ny\"\r\n", "mem.csv");
  ASSERT_EQ(t.rows.size(), 1u);
  EXPECT_EQ(t.rows[0][1], "x\r\ny");
  std::string m = message_of([] { report::parse_csv("a,b\n1,2\n3\n", "f.csv"); });
  EXPECT_EQ(m, "f.csv:3: row has 1 fields, the header has 2");
  std::string q = message_of([] { report::parse_csv("a,b\n1,\"open\n", "g.csv"); });
  EXPECT_NE(q.find("g.csv:2: unterminated quoted field"), std::string::npos) << q;
  std::string e = message_of([] { report::parse_csv("", "h.csv"); });
  EXPECT_NE(e.find("h.csv: empty file"), std::string::npos) << e;
}

TEST(CsvWriter, RowsWritesABlockAndChecksEveryRow) {
  TempDir dir;
  const std::string p = dir / "block.csv";
  {
    CsvWriter w(p, {"step", "t"}, CsvWriter::Mode::Truncate);
    w.rows({{"1", "0"}, {"1", "1"}, {"1", "2"}});
    EXPECT_THROW(w.rows({{"2", "0"}, {"2"}}), core::Error);
  }
  const auto t = report::read_csv(p);
  ASSERT_EQ(t.rows.size(), 3u);  // the rejected block wrote nothing
  EXPECT_EQ(t.rows[2][1], "2");
}

TEST(Csv, NumberReadsACellOrNamesFileLineAndColumn) {
  const auto t = report::parse_csv("a,b\n1.5,x\n,2e-3\n", "runs.csv");
  EXPECT_EQ(t.number(0, "a"), 1.5);
  EXPECT_EQ(t.number(1, "b"), 2e-3);
  for (auto [row, col] : {std::pair<size_t, const char*>{0, "b"}, {1, "a"}}) {
    try {
      t.number(row, col);
      ADD_FAILURE() << "no error for row " << row << " column " << col;
    } catch (const core::Error& e) {
      EXPECT_NE(std::string(e.what()).find(fmt::format("runs.csv:{}: column '{}'", row + 2, col)),
                std::string::npos)
          << e.what();
    }
  }
}

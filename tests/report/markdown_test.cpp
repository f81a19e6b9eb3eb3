#include "report/markdown.hpp"

#include <gtest/gtest.h>

#include <algorithm>

#include "core/check.hpp"

using namespace seqbench;

TEST(Markdown, NumericCellDetection) {
  for (const char* s :
       {"0.98", "-1e-05", "12", "+3.", ".5", "12%", "nan", "-inf", "0.91 ± 0.02", "1.2 +- 0.3"})
    EXPECT_TRUE(report::is_numeric_cell(s)) << s;
  for (const char* s : {"lstm", "", "—", "1.2.3", "e5", "12 ms", "0.9 ±", "-"})
    EXPECT_FALSE(report::is_numeric_cell(s)) << s;
}

TEST(Markdown, AlignsNumbersRightAndPadsColumns) {
  std::string t = report::markdown_table(
      {"model", "acc", "note"},
      {{"lstm", "0.98", "ok"}, {"stable", "0.9 ± 0.01", ""}, {"sab", "", "a|b"}});
  EXPECT_EQ(t,
            "| model  |        acc | note |\n"
            "| ------ | ---------: | ---- |\n"
            "| lstm   |       0.98 | ok   |\n"
            "| stable | 0.9 ± 0.01 |      |\n"
            "| sab    |            | a\\|b |\n");
}

TEST(Markdown, MixedColumnIsLeftAlignedAndRowsMustMatch) {
  std::string t = report::markdown_table({"x"}, {{"1"}, {"n/a"}});
  EXPECT_EQ(t, "| x   |\n| --- |\n| 1   |\n| n/a |\n");
  EXPECT_THROW(report::markdown_table({"a", "b"}, {{"1"}}), core::Error);
}

TEST(Markdown, MeanSdOfOneAndOfSeveralValues) {
  EXPECT_EQ(report::mean_sd({92.314}, 2), "92.31");
  EXPECT_EQ(report::mean_sd({1.0, 2.0, 3.0}, 3), "2.000 ± 1.000");  // sample sd
  EXPECT_THROW(report::mean_sd({}, 2), core::Error);
}

TEST(Markdown, AttentionKindsListsEachKindOnceInOrder) {
  EXPECT_EQ(report::attention_kinds("local:2,routing:2"), "local+routing");
  EXPECT_EQ(report::attention_kinds("full:4"), "full");
  EXPECT_EQ(report::attention_kinds("routing"), "routing");
  EXPECT_EQ(report::attention_kinds("lsh:1,local:2,lsh:1"), "lsh+local");
  EXPECT_EQ(report::attention_kinds(""), "");
}

TEST(Markdown, CellsCannotInjectHtmlOrBreakTheTable) {
  const std::string t =
      report::markdown_table({"label", "<b>x</b>"}, {{"<script>alert(1)</script>", "-1.5"},
                                                     {"<img src=x onerror=alert(1)>", "-1e-05"},
                                                     {"a & b | c\nd", "nan"}});
  EXPECT_EQ(t.find('<'), std::string::npos) << t;
  EXPECT_EQ(t.find('>'), std::string::npos) << t;
  EXPECT_NE(t.find("&lt;script&gt;alert(1)&lt;/script&gt;"), std::string::npos) << t;
  EXPECT_NE(t.find("&lt;img src=x onerror=alert(1)&gt;"), std::string::npos) << t;
  EXPECT_NE(t.find("&lt;b&gt;x&lt;/b&gt;"), std::string::npos) << t;
  EXPECT_NE(t.find("a &amp; b \\| c d"), std::string::npos) << t;
  EXPECT_EQ(std::count(t.begin(), t.end(), '\n'), 5) << t;  // header, rule, three rows
  // Numbers are untouched and still right-aligned.
  EXPECT_NE(t.find("  -1.5 |\n"), std::string::npos) << t;
  EXPECT_NE(t.find("  -1e-05 |\n"), std::string::npos) << t;
  EXPECT_NE(t.find("-: |\n"), std::string::npos) << t;
}

#include "report/paper_report.hpp"

#include <fmt/format.h>

#include <cmath>
#include <filesystem>
#include <set>

#include "core/check.hpp"
#include "core/fs.hpp"
#include "report/csv.hpp"
#include "report/html.hpp"
#include "report/markdown.hpp"
#include "report/paper_figures.hpp"
#include "report/paper_sources.hpp"
#include "report/paper_tables.hpp"

namespace seqbench::report {

namespace fs = std::filesystem;

namespace {

// --- the formats ------------------------------------------------------------------------

std::vector<std::string> header(const TableSpec& t) {
  std::vector<std::string> h{"size", "model"};
  if (!t.column_key.empty()) h.push_back(t.column_name.empty() ? t.column_key : t.column_name);
  for (const char* c : {"paper", "paper source"}) h.push_back(c);
  h.push_back("ours, " + t.unit);
  if (!t.tune_key.empty()) {
    const std::string name = t.tune_key.substr(t.tune_key.rfind('.') + 1);
    h.push_back("at " + name);
    h.push_back("best run");
    if (std::isfinite(t.tune_window)) h.push_back(fmt::format("{} where mean ≥ {:g}", name, t.tune_window));
  }
  for (const char* c : {"n", "data", "budget", "verdict", "why"}) h.push_back(c);
  return h;
}

std::vector<std::string> cells(const TableSpec& t, const PaperLine& l) {
  std::vector<std::string> c{l.size, l.row};
  if (!t.column_key.empty()) c.push_back(l.column);
  std::string n = std::to_string(l.n);
  if (l.n_missing) n += fmt::format(" (+{} without a number)", l.n_missing);
  for (const std::string& s : {l.paper, l.source, l.ours}) c.push_back(s);
  if (!t.tune_key.empty()) {
    c.push_back(l.tuned_at);
    c.push_back(l.best_run);
    if (std::isfinite(t.tune_window)) c.push_back(l.window);
  }
  for (const std::string& s : {n, l.data, l.budget, l.verdict, l.reason}) c.push_back(s);
  return c;
}

std::string latex_escape(const std::string& s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    const char ch = s[i];
    switch (ch) {
      case '&': case '%': case '$': case '#': case '_': case '{': case '}':
        out += '\\';
        out += ch;
        break;
      case '~': out += "\\textasciitilde{}"; break;
      case '^': out += "\\textasciicircum{}"; break;
      case '\\': out += "\\textbackslash{}"; break;
      case '<': out += "\\textless{}"; break;
      case '>': out += "\\textgreater{}"; break;
      default: out += ch;
    }
  }
  // A few UTF-8 symbols the tables use, in plain LaTeX.
  for (const auto& [from, to] : std::vector<std::pair<std::string, std::string>>{
           {"±", "$\\pm$"}, {"—", "---"}, {"λ", "$\\lambda$"}, {"→", "$\\to$"}, {"≈", "$\\approx$"}}) {
    for (size_t at = out.find(from); at != std::string::npos; at = out.find(from, at + to.size()))
      out.replace(at, from.size(), to);
  }
  return out;
}

std::string relative(const std::string& path, const std::string& base) {
  std::error_code ec;
  const fs::path rel = fs::relative(path, base.empty() ? "." : base, ec);
  return ec ? path : rel.string();
}

std::string heading(const PaperSpec& p) {
  return p.cite.empty() ? p.name : fmt::format("{}: {}", p.cite, p.title);
}

// The opening paragraph of every format. How much of the paper's side was checked is
// counted from numbers.yaml, so the report never claims more checking than it records.
std::string intro(const PaperSpec& p) {
  return fmt::format(
      "{}{} Ours: mean ± sd over n seeds. "
      "Verdict: reproduced (within the table's tolerance + 2 sd of the paper, real data, paper budget), "
      "partly (within it, or better, on a small budget or a stand-in corpus), not, or not run.",
      p.arxiv.empty() ? "" : fmt::format("The paper: arXiv {}. ", p.arxiv), checked_statement(p));
}

std::string checked_fraction(const PaperSpec& p) {
  const CheckedCount c = count_checked(p);
  return fmt::format("{} of {}", c.checked, c.total);
}

int count_verdict(const PaperReport& r, const std::string& verdict) {
  int n = 0;
  for (const auto& t : r.tables)
    for (const auto& l : t.lines) n += l.verdict == verdict;
  return n;
}

// Numbers of the paper whose table is not one of the report's: shown for context.
std::vector<const PaperNumber*> context_numbers(const PaperReport& r) {
  std::set<std::string> ids;
  for (const auto& t : r.tables) ids.insert(t.spec->id);
  for (const auto& f : r.figures) ids.insert(f.spec->id);  // drawn in their figure
  std::vector<const PaperNumber*> out;
  for (const auto& n : r.spec->numbers)
    if (!ids.count(n.table)) out.push_back(&n);
  return out;
}

const char* kStyle =
    "body{font-family:sans-serif;max-width:1200px;margin:2em auto;padding:0 1em;color:#222}"
    "table{border-collapse:collapse;margin:1em 0;font-size:.9em}"
    "th,td{border:1px solid #ccc;padding:.25em .5em;text-align:left;vertical-align:top}"
    "th{background:#f2f2f2}td.num{text-align:right;white-space:nowrap}"
    ".reproduced{background:#e3f4e3}.partly{background:#fdf5dc}.not{background:#fbe3e3}"
    "figure{margin:1em 0}figure img{max-width:100%;border:1px solid #ddd}code{background:#f4f4f4}";

}  // namespace

PaperReport build_paper_report(const PaperSpec& paper, const PaperReportOptions& opts) {
  for (const auto& dir : opts.sweep_dirs) {
    bool used = false;
    std::set<std::string> sweeps;
    for (const auto& t : paper.tables) {
      used = used || sweep_size(dir, t.sweep).has_value();
      sweeps.insert(t.sweep);
    }
    for (const auto& f : paper.figures) {
      used = used || (!f.sweep.empty() && sweep_size(dir, f.sweep).has_value());
      if (!f.sweep.empty()) sweeps.insert(f.sweep);
    }
    if (!fs::is_directory(dir)) throw core::UsageError(fmt::format("{}: no such directory", dir));
    if (!used)
      throw core::UsageError(fmt::format(
          "{}: its name matches no sweep of {} (a directory is named <sweep>_small or <sweep>_paper; "
          "sweeps: {})",
          dir, paper.name, fmt::join(sweeps, ", ")));
  }
  PaperReport report;
  report.spec = &paper;
  report.out_dir = opts.out_dir.empty() ? "." : opts.out_dir;
  for (const auto& t : paper.tables) report.tables.push_back(build_paper_table(paper, t, opts));
  for (const auto& f : paper.figures) report.figures.push_back(build_paper_figure(paper, f, opts));
  std::set<std::string> drawn;
  for (const auto& t : report.tables)
    for (auto& f : table_curve_figures(t, opts, drawn)) report.figures.push_back(std::move(f));
  return report;
}

std::string paper_markdown(const PaperReport& r) {
  const PaperSpec& p = *r.spec;
  std::string out = fmt::format("# {}\n\n{}\n", heading(p), intro(p));
  for (const auto& t : r.tables) {
    out += fmt::format("\n## {}\n\n", t.spec->title);
    out += fmt::format("Sweep: `configs/papers/{}/{}_{{small,paper}}.yaml` ({}). ", p.name, t.spec->sweep,
                       t.spec->experiment);
    out += t.dirs.empty() ? "No runs found.\n\n"
                          : fmt::format("Runs read from {}.\n\n", fmt::join(t.dirs, ", "));
    std::vector<std::vector<std::string>> rows;
    for (const auto& l : t.lines) rows.push_back(cells(*t.spec, l));
    if (!rows.empty()) out += markdown_table(header(*t.spec), rows);
    if (t.dirs.empty()) out += fmt::format("\nNot run. Make the runs with: `{}`\n", t.run_command);
    else if (t.lines.empty()) out += fmt::format("No run has a result for this table yet. Make them with: `{}`\n", t.run_command);
  }
  const auto context = context_numbers(r);
  if (!context.empty()) {
    out += "\n## The paper's other numbers (not reproduced here)\n\n";
    std::vector<std::vector<std::string>> rows;
    for (const PaperNumber* n : context)
      rows.push_back({n->table, n->row, n->column, number_cell(*n), n->unit, number_source(p, *n),
                      n->note.substr(0, n->note.find(". ") == std::string::npos ? n->note.size()
                                                                                 : n->note.find(". ") + 1)});
    out += markdown_table({"table", "what", "column", "paper", "unit", "source", "note"}, rows);
  }
  if (!r.figures.empty()) out += "\n## Figures\n\n";
  for (const auto& f : r.figures) {
    out += fmt::format("- {}: ", f.spec->title);
    std::vector<std::string> shown;
    for (size_t i = 0; i < f.pngs.size(); ++i)
      shown.push_back(relative(f.pngs[i], r.out_dir) +
                      (i < f.svgs.size() ? " (" + relative(f.svgs[i], r.out_dir) + ")" : ""));
    out += shown.empty() ? f.status : fmt::format("{}", fmt::join(shown, ", "));
    if (!f.note.empty()) out += " — " + f.note;
    out += "\n";
  }
  return out;
}

std::string paper_csv(const PaperReport& r) {
  std::string out = csv_line({"paper", "table", "sweep", "size", "model", "column", "column_value", "paper_number",
                              "paper_source", "unit", "ours_mean", "ours_sd", "n", "n_without_number", "data",
                              "budget", "verdict", "reason", "paper_numbers_checked", "tuned_key", "tuned_at",
                              "best_run", "window"});
  const std::string checked = checked_fraction(*r.spec);
  for (const auto& t : r.tables)
    for (const auto& l : t.lines)
      out += csv_line({r.spec->name, t.spec->id, t.spec->sweep, l.size, l.row,
                       t.spec->column_key.empty() ? "" : t.spec->column_name, l.column, l.paper, l.source,
                       t.spec->unit, l.n ? fmt::format("{}", l.mean) : "", l.n ? fmt::format("{}", l.sd) : "",
                       std::to_string(l.n), std::to_string(l.n_missing), l.data, l.budget, l.verdict, l.reason,
                       checked, t.spec->tune_key, l.tuned_at, l.best_run, l.window});
  return out;
}

std::string paper_latex(const PaperReport& r) {
  const PaperSpec& p = *r.spec;
  std::string out = fmt::format("% {} -- written by `seqbench report paper {}`.\n% {}\n", heading(p), p.name,
                                intro(p));
  for (const auto& t : r.tables) {
    const auto h = header(*t.spec);
    out += fmt::format("\n\\begin{{table}}[ht]\n\\centering\\small\n\\caption{{{}}}\n", latex_escape(t.spec->title));
    out += "\\begin{tabular}{" + std::string(h.size(), 'l') + "}\n\\hline\n";
    std::vector<std::string> hh;
    for (const auto& c : h) hh.push_back(latex_escape(c));
    out += fmt::format("{} \\\\\n\\hline\n", fmt::join(hh, " & "));
    for (const auto& l : t.lines) {
      std::vector<std::string> cc;
      for (const auto& c : cells(*t.spec, l)) cc.push_back(latex_escape(c));
      out += fmt::format("{} \\\\\n", fmt::join(cc, " & "));
    }
    if (t.lines.empty()) out += fmt::format("\\multicolumn{{{}}}{{l}}{{not run}} \\\\\n", h.size());
    out += "\\hline\n\\end{tabular}\n\\end{table}\n";
  }
  return out;
}

std::string paper_html(const PaperReport& r, const std::string& index_href) {
  const PaperSpec& p = *r.spec;
  std::string out = fmt::format(
      "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>{}</title>"
      "<style>{}</style></head>\n<body>\n{}<h1>{}</h1>\n<p>{}</p>\n",
      html_escape(p.name), kStyle,
      index_href.empty() ? "" : "<p><a href=\"" + html_escape(index_href) + "\">All papers</a></p>\n",
      html_escape(heading(p)), html_escape(intro(p)));
  for (const auto& t : r.tables) {
    out += fmt::format("<h2>{}</h2>\n<p>Sweep <code>configs/papers/{}/{}_{{small,paper}}.yaml</code>. {}</p>\n",
                       html_escape(t.spec->title), p.name, t.spec->sweep,
                       t.dirs.empty() ? "Not run. Make the runs with <code>" + html_escape(t.run_command) + "</code>."
                                      : html_escape(fmt::format("Runs read from {}.", fmt::join(t.dirs, ", "))));
    if (t.lines.empty()) {
      if (!t.dirs.empty())
        out += "<p>No run has a result for this table yet. Make them with <code>" + html_escape(t.run_command) +
               "</code>.</p>\n";
      continue;
    }
    out += "<table>\n<tr>";
    for (const auto& h : header(*t.spec)) out += "<th>" + html_escape(h) + "</th>";
    out += "</tr>\n";
    for (const auto& l : t.lines) {
      const std::string cls = l.verdict == "not run" ? "" : l.verdict;
      out += cls.empty() || cls == "—" ? "<tr>" : "<tr class=\"" + cls + "\">";
      for (const auto& c : cells(*t.spec, l))
        out += (is_numeric_cell(c) ? "<td class=\"num\">" : "<td>") + html_escape(c) + "</td>";
      out += "</tr>\n";
    }
    out += "</table>\n";
  }
  const auto context = context_numbers(r);
  if (!context.empty()) {
    out += "<h2>The paper's other numbers (not reproduced here)</h2>\n<table>\n<tr><th>table</th><th>what</th>"
           "<th>column</th><th>paper</th><th>unit</th><th>source</th><th>note</th></tr>\n";
    for (const PaperNumber* n : context)
      out += fmt::format("<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>\n",
                         html_escape(n->table), html_escape(n->row), html_escape(n->column),
                         html_escape(number_cell(*n)), html_escape(n->unit), html_escape(number_source(p, *n)),
                         html_escape(n->note));
    out += "</table>\n";
  }
  out += "<h2>Figures</h2>\n";
  for (const auto& f : r.figures) {
    out += "<figure>\n<figcaption><b>" + html_escape(f.spec->title) + "</b>";
    if (!f.status.empty()) out += ": " + html_escape(f.status);
    if (!f.note.empty()) out += " (" + html_escape(f.note) + ")";
    out += "</figcaption>\n";
    // The paper's figures are embedded, so the page travels alone. The learning curves the
    // report adds (one tall picture per sweep, a row per config) are linked from the
    // figures/ folder beside the page instead: embedded, a report of six sweeps passes 2 MB.
    const bool linked = f.own_spec != nullptr;
    for (size_t i = 0; i < f.pngs.size(); ++i) {
      if (linked)
        out += fmt::format("<p><a href=\"{}\">PNG</a></p>\n", html_escape(relative(f.pngs[i], r.out_dir)));
      else
        out += fmt::format("<img alt=\"{}\" src=\"data:image/png;base64,{}\">\n", html_escape(f.spec->title),
                           base64(core::read_file(f.pngs[i])));
      if (i < f.svgs.size())
        out += fmt::format("<p><a href=\"{}\">SVG</a></p>\n", html_escape(relative(f.svgs[i], r.out_dir)));
    }
    out += "</figure>\n";
  }
  return out + "</body></html>\n";
}

std::string papers_index_html(const std::vector<PaperReport>& reports) {
  std::string out = fmt::format(
      "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>seqbench: paper reports</title>"
      "<style>{}</style></head>\n<body>\n<h1>seqbench: the papers</h1>\n"
      "<p>One page per paper: our numbers beside the paper's, with verdicts and figures. Written by "
      "<code>seqbench report papers</code>. Paper numbers checked: those checked against a named source (read "
      "in the published text, tables or figures, or found in a file of the authors' public repository), out of "
      "all the paper's numbers recorded.</p>\n<table>\n<tr><th>paper</th><th>paper numbers checked</th><th>tables</th><th>reproduced</th>"
      "<th>partly</th><th>not</th><th>not run</th><th>figures drawn</th></tr>\n",
      kStyle);
  for (const auto& r : reports) {
    int drawn = 0;
    for (const auto& f : r.figures) drawn += !f.pngs.empty();
    out += fmt::format(
        "<tr><td><a href=\"{0}/index.html\">{1}</a></td><td class=\"num\">{9}</td><td class=\"num\">{2}</td>"
        "<td class=\"num\">{3}</td><td class=\"num\">{4}</td><td class=\"num\">{5}</td><td class=\"num\">{6}</td>"
        "<td class=\"num\">{7} of {8}</td></tr>\n",
        r.spec->name, html_escape(heading(*r.spec)), r.tables.size(), count_verdict(r, "reproduced"),
        count_verdict(r, "partly"), count_verdict(r, "not"), count_verdict(r, "not run"), drawn, r.figures.size(),
        checked_fraction(*r.spec));
  }
  return out +
         "</table>\n<p><a href=\"claims/index.html\">Do the papers' claims reproduce?</a> Each of their fifteen "
         "claims with a verdict computed from the runs (<code>seqbench report claims</code>, written beside this "
         "page by default).</p>\n</body></html>\n";
}

std::vector<std::string> write_paper_report(const PaperReport& report, const std::string& out_dir,
                                            const std::string& index_href) {
  core::make_dirs(out_dir);
  std::vector<std::string> written;
  for (const auto& [name, text] : std::vector<std::pair<std::string, std::string>>{
           {"report.md", paper_markdown(report)},
           {"report.csv", paper_csv(report)},
           {"report.tex", paper_latex(report)},
           {"index.html", paper_html(report, index_href)}}) {
    core::write_file_atomic(out_dir + "/" + name, text);
    written.push_back(out_dir + "/" + name);
  }
  return written;
}

}  // namespace seqbench::report

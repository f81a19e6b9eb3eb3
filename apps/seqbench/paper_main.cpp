#include "apps/seqbench/paper_main.hpp"

#include <fmt/format.h>

#include <filesystem>

#include "core/check.hpp"
#include "core/fs.hpp"
#include "report/claims.hpp"
#include "report/paper_report.hpp"

namespace seqbench::apps {

void add_paper_commands(CLI::App& report, PaperCommand& cmd) {
  std::vector<std::string> names;
  for (const auto& p : report::paper_specs()) names.push_back(p.name);
  cmd.paper = report.add_subcommand(
      "paper",
      "every table and figure of one paper that seqbench covers: the paper's number beside ours "
      "(mean ± sd over seeds), data, budget and a verdict; Markdown, CSV, LaTeX and HTML "
      "(docs/report.md)");
  cmd.paper->add_option("NAME", cmd.name, fmt::format("the paper: {}", fmt::join(names, ", ")))->required();
  cmd.paper->add_option("SWEEP_DIR", cmd.dirs,
                        "sweep directories to read, named <sweep>_small or <sweep>_paper (default: "
                        "results/papers/NAME/*)");
  cmd.papers = report.add_subcommand(
      "papers", "the report of every paper plus an HTML index page (OUT/index.html)");
  for (CLI::App* sub : {cmd.paper, cmd.papers}) {
    sub->add_option("--out", cmd.out,
                    sub == cmd.paper ? "output directory (default results/papers/NAME/report)"
                                     : "output directory (default results/papers/report)")
        ->type_name("DIR");
    sub->add_option("--results", cmd.results, "the results root the sweeps wrote into")
        ->type_name("DIR")
        ->capture_default_str();
    sub->add_option("--bench", cmd.bench, "where `make bench` wrote attention_scaling.*")
        ->type_name("DIR")
        ->capture_default_str();
  }
  cmd.paper->add_option("--format", cmd.format, "what to print: md (default), csv or latex")
      ->check(CLI::IsMember({"md", "csv", "latex"}))
      ->type_name("md|csv|latex");
  cmd.claims = report.add_subcommand(
      "claims",
      "each claim of the five papers (configs/claims/*.yaml) with a verdict computed from the runs: "
      "reproduced, not reproduced or inconclusive at this budget; Markdown, CSV and HTML (docs/claims.md)");
  cmd.claims->add_option("--claims", cmd.claims_dir, "the directory of claim files")
      ->type_name("DIR")
      ->capture_default_str();
  cmd.claims->add_option("--root", cmd.root, "the directory the claims' run paths are relative to")
      ->type_name("DIR")
      ->capture_default_str();
  cmd.claims->add_option("--recheck", cmd.recheck,
                         "a second root whose runs were made with other seeds (tools/claims/run with SEEDS and ROOT): "
                         "each claim's verdict there is shown beside the first")
      ->type_name("DIR");
  cmd.claims->add_option("--recheck-label", cmd.recheck_label, "how the page names the second root's seeds")
      ->type_name("TEXT")
      ->capture_default_str();
  cmd.claims->add_option("--out", cmd.out,
                         "output directory (default results/papers/report/claims, beside `report papers`' index, "
                         "which links to it)")
      ->type_name("DIR");
  cmd.claims->add_option("--format", cmd.format, "what to print: md (default) or csv")
      ->check(CLI::IsMember({"md", "csv"}))
      ->type_name("md|csv");
}

namespace {

report::PaperReport make_report(const report::PaperSpec& spec, const PaperCommand& cmd,
                                 const std::string& out, const std::vector<std::string>& dirs) {
  report::PaperReportOptions opts;
  opts.sweep_dirs = dirs;
  opts.results_root = cmd.results;
  opts.bench_dir = cmd.bench;
  opts.out_dir = out;
  return report::build_paper_report(spec, opts);
}

// The link from one paper's page in `out` to the index of `report papers`, where that
// index exists: beside the page's directory (`report papers --out DIR` wrote both), else
// at its default place; "" when there is none.
std::string papers_index_link(const PaperCommand& cmd, const std::string& out) {
  namespace fs = std::filesystem;
  const fs::path page_dir = fs::absolute(out).lexically_normal();
  for (const fs::path& index : {page_dir.parent_path() / "index.html",
                                fs::absolute(cmd.results + "/papers/report/index.html").lexically_normal()})
    if (core::file_exists(index.string()) && index.parent_path() != page_dir)
      return index.lexically_relative(page_dir).string();
  return "";
}

}  // namespace

int paper_command(const PaperCommand& cmd) {
  if (cmd.claims->parsed()) {
    const std::vector<report::Claim> claims = report::load_claims(cmd.claims_dir);
    std::vector<report::ClaimResult> results;
    for (const auto& c : claims) results.push_back(report::evaluate_claim(c, cmd.root));
    if (!cmd.recheck.empty()) {
      if (!std::filesystem::is_directory(cmd.recheck))
        throw core::Error(fmt::format("--recheck {}: no such directory", cmd.recheck));
      report::add_recheck(results, cmd.recheck, cmd.recheck_label);
    }
    const std::string out = cmd.out.empty() ? cmd.results + "/papers/report/claims" : cmd.out;
    const auto files = report::write_claims_report(results, out);
    fmt::print("{}", cmd.format == "csv" ? report::claims_csv(results) : report::claims_markdown(results));
    fmt::print(stderr, "seqbench report claims: wrote {}\n", fmt::join(files, ", "));
    return core::kExitOk;
  }
  if (cmd.paper->parsed()) {
    const report::PaperSpec& spec = report::paper_spec(cmd.name);
    const std::string out = cmd.out.empty() ? fmt::format("{}/papers/{}/report", cmd.results, spec.name) : cmd.out;
    const report::PaperReport r = make_report(spec, cmd, out, cmd.dirs);
    const auto files = report::write_paper_report(r, out, papers_index_link(cmd, out));
    fmt::print("{}", cmd.format == "csv"     ? report::paper_csv(r)
                     : cmd.format == "latex" ? report::paper_latex(r)
                                             : report::paper_markdown(r));
    fmt::print(stderr, "seqbench report paper: wrote {}\n", fmt::join(files, ", "));
    return core::kExitOk;
  }
  const std::string out = cmd.out.empty() ? cmd.results + "/papers/report" : cmd.out;
  std::vector<report::PaperReport> reports;
  for (const auto& spec : report::paper_specs()) {
    reports.push_back(make_report(spec, cmd, out + "/" + spec.name, {}));
    report::write_paper_report(reports.back(), out + "/" + spec.name, "../index.html");
  }
  core::write_file_atomic(out + "/index.html", report::papers_index_html(reports));
  for (const auto& r : reports) {
    int lines = 0, drawn = 0;
    for (const auto& t : r.tables) lines += int(t.lines.size());
    for (const auto& f : r.figures) drawn += !f.pngs.empty();
    fmt::print("{}: {} tables, {} lines, {} of {} figures -> {}/{}/index.html\n", r.spec->name,
               r.tables.size(), lines, drawn, r.figures.size(), out, r.spec->name);
  }
  fmt::print("index: {}/index.html\n", out);
  return core::kExitOk;
}

}  // namespace seqbench::apps

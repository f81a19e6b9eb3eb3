#include "sweep/slurm_script.hpp"

#include <fmt/format.h>

#include <regex>

#include "core/check.hpp"

namespace seqbench::sweep {

namespace {

constexpr size_t kMaxField = 256;

bool has_control(const std::string& s) {
  for (unsigned char c : s)
    if (c < 0x20 || c == 0x7f) return true;
  return false;
}

// Printable ASCII that means nothing to sbatch's #SBATCH parser (which splits at spaces,
// honours quotes and backslashes and ends at #) nor to a shell reading the line.
bool extra_value_char(unsigned char c) {
  return c > 0x20 && c < 0x7f && c != '"' && c != '\'' && c != '\\' && c != '#' && c != '$' &&
         c != '`';
}

bool valid(const std::string& field, const std::string& v) {
  static const std::regex partition(R"([A-Za-z0-9_.-]+(,[A-Za-z0-9_.-]+)*)");
  static const std::regex account(R"([A-Za-z0-9_.-]+)");
  static const std::regex time(
      R"([0-9]+(:[0-9]+){0,2}|[0-9]+-[0-9]+(:[0-9]+){0,2}|UNLIMITED|unlimited|INFINITE|infinite)");
  static const std::regex mem(R"([0-9]+[KMGTkmgt]?)");
  static const std::regex extra_name(R"((--[A-Za-z][A-Za-z0-9-]*(=.*)?|-[A-Za-z].*))");
  if (field == "partition") return std::regex_match(v, partition);
  if (field == "account") return std::regex_match(v, account);
  if (field == "time") return std::regex_match(v, time);
  if (field == "mem") return std::regex_match(v, mem);
  if (field == "extra") {
    if (!std::regex_match(v, extra_name)) return false;
    for (unsigned char c : v)
      if (!extra_value_char(c)) return false;
    return true;
  }
  return false;
}

const char* expected(const std::string& field) {
  if (field == "partition") return "letters, digits, _ . - and , between partitions";
  if (field == "account") return "letters, digits, _ . -";
  if (field == "time") return "a Slurm time such as 90, 02:00:00 or 1-12:00:00, or UNLIMITED";
  if (field == "mem") return "a number with an optional unit K, M, G or T, such as 4G";
  if (field == "extra")
    return "one option per entry, --name=value with no spaces, quotes, backslashes, #, $ or `";
  return "?";
}

std::string job_name(const std::string& s) {
  std::string out;
  for (char c : s.substr(0, 128))
    out += (std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '+' || c == '-')
               ? c
               : '_';
  return out.empty() ? "sweep" : out;
}

}  // namespace

void check_slurm_value(const std::string& field, const std::string& value, const std::string& where) {
  if (value.empty() && field != "extra") return;
  if (has_control(value))
    throw core::UsageError(fmt::format("{}: slurm.{} '{}' holds a control character (expected {})",
                                       where, field, value, expected(field)));
  if (value.size() > kMaxField)
    throw core::UsageError(fmt::format("{}: slurm.{} is longer than {} characters", where, field,
                                       kMaxField));
  if (!valid(field, value))
    throw core::UsageError(
        fmt::format("{}: slurm.{} '{}' is not allowed (expected {})", where, field, value, expected(field)));
}

void check_slurm_options(const SlurmOptions& o, const std::string& where) {
  check_slurm_value("partition", o.partition, where);
  check_slurm_value("time", o.time, where);
  check_slurm_value("mem", o.mem, where);
  check_slurm_value("account", o.account, where);
  for (const auto& e : o.extra) check_slurm_value("extra", e, where);
  if (o.cpus_per_task < 1 || o.cpus_per_task > 4096)
    throw core::UsageError(fmt::format("{}: slurm.cpus_per_task {} is outside 1..4096", where,
                                       o.cpus_per_task));
}

std::string shell_quote(const std::string& word, const std::string& what) {
  if (has_control(word))
    throw core::UsageError(fmt::format(
        "{} '{}' holds a control character, which a Slurm job script cannot carry", what, word));
  std::string out = "'";
  for (char c : word) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

std::string slurm_script(const SlurmJob& job) {
  check_slurm_options(job.options, "slurm");
  if (job.indices.empty()) throw core::UsageError("slurm: a job array needs at least one run");
  if (job.command.empty()) throw core::UsageError("slurm: the task's command is empty");
  std::string indices;
  for (size_t i : job.indices) {
    if (!indices.empty()) indices += ',';
    indices += std::to_string(i);
  }
  const auto& o = job.options;
  std::string s = "#!/bin/bash\n";
  s += fmt::format("#SBATCH --job-name=seqbench-{}\n", job_name(job.name));
  s += fmt::format("#SBATCH --array={}\n", indices);
  s += fmt::format("#SBATCH --cpus-per-task={}\n", o.cpus_per_task);
  if (!o.partition.empty()) s += fmt::format("#SBATCH --partition={}\n", o.partition);
  if (!o.time.empty()) s += fmt::format("#SBATCH --time={}\n", o.time);
  if (!o.mem.empty()) s += fmt::format("#SBATCH --mem={}\n", o.mem);
  if (!o.account.empty()) s += fmt::format("#SBATCH --account={}\n", o.account);
  for (const auto& e : o.extra) s += fmt::format("#SBATCH {}\n", e);
  s += "exec";
  for (const auto& w : job.command) s += " " + shell_quote(w, "the task's command word");
  s += " --run-index \"$SLURM_ARRAY_TASK_ID\" --threads ";
  s += job.threads > 0 ? std::to_string(job.threads) : std::string("\"${SLURM_CPUS_PER_TASK:-1}\"");
  if (job.force_threads) s += " --force-threads";
  return s + "\n";
}

std::vector<std::string> slurm_submit_arguments(const std::string& output_dir, const std::string& cwd,
                                                const std::string& script) {
  return {"--parsable", "--output=" + output_dir + "/%A_%a.out", "--chdir=" + cwd, script};
}

}  // namespace seqbench::sweep

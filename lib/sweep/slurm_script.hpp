// The job script of a sweep's Slurm array, built so that no value can become shell code
// or a second Slurm option: every value that reaches the script is checked against its
// field's character set first (check_slurm_value), each #SBATCH option has its own line,
// and every word of the command line is single-quoted. docs/sweeps.md, "Slurm".
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "sweep/sweep.hpp"

namespace seqbench::sweep {

// The fields a user gives, with their character sets (a value outside its set is a
// core::UsageError naming `where` and the field, exit 2):
//   partition  letters, digits, _ . - and , (a list of partitions)
//   account    letters, digits, _ . -
//   time       Slurm's forms: M, M:S, H:M:S, D-H, D-H:M, D-H:M:S, or UNLIMITED / INFINITE
//   mem        digits with an optional unit K, M, G or T (either case)
//   extra      one option per entry: --name or --name=value (or -X / -Xvalue); the name is
//              letters, digits and -, the value printable ASCII without space, quotes,
//              backslash, #, $ or backtick
// Every field: at most 256 characters, and never a control character. An empty value is
// fine (the cluster's default) except for extra.
void check_slurm_value(const std::string& field, const std::string& value, const std::string& where);
// Checks every field of opts (where: the sweep file or the option that set them).
void check_slurm_options(const SlurmOptions& opts, const std::string& where);

// A word of the task's command line: the shell sees it as one quoted word, never as code.
// Refuses (core::UsageError) a word with a control character, such as a path with a
// line break.
std::string shell_quote(const std::string& word, const std::string& what);

struct SlurmJob {
  std::string name;              // the job name; characters outside [A-Za-z0-9._+-] become _
  std::vector<size_t> indices;   // the array indices
  SlurmOptions options;          // checked again here (check_slurm_options)
  std::vector<std::string> command;  // the task's command, program first; each word quoted
  int64_t threads = 0;           // --threads N; 0: the task's CPUs ($SLURM_CPUS_PER_TASK)
  bool force_threads = false;
};

// The script: "#!/bin/bash", one "#SBATCH" line per option (job name, array, CPUs per
// task, then partition, time, mem, account and the extra options when set), then
// `exec COMMAND --run-index "$SLURM_ARRAY_TASK_ID" --threads N`. The output file and
// the working directory are not in the script: they are paths, which may hold spaces,
// and go on sbatch's command line (slurm_submit_arguments).
std::string slurm_script(const SlurmJob& job);

// sbatch's arguments for the script: --parsable --output=DIR/%A_%a.out --chdir=CWD SCRIPT.
std::vector<std::string> slurm_submit_arguments(const std::string& output_dir, const std::string& cwd,
                                                const std::string& script);

}  // namespace seqbench::sweep

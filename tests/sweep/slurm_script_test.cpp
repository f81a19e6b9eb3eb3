// The Slurm job script: every value is checked against its field's characters, every
// #SBATCH option is one line, and the command line cannot be read as shell code.
#include "sweep/slurm_script.hpp"

#include <gtest/gtest.h>

#include <string>

#include "core/check.hpp"
#include "test_util.hpp"

using namespace seqbench;
using testutil::message_of;

namespace {

sweep::SlurmJob job() {
  sweep::SlurmJob j;
  j.name = "s";
  j.indices = {0, 2};
  j.command = {"/opt/seq bench/seqbench", "sweep", "/home/a b/it's.yaml"};
  return j;
}

int count(const std::string& s, const std::string& what) {
  int n = 0;
  for (size_t at = s.find(what); at != std::string::npos; at = s.find(what, at + 1)) ++n;
  return n;
}

}  // namespace

TEST(SlurmScript, EachOptionHasItsLineAndTheCommandIsQuoted) {
  auto j = job();
  j.options.partition = "gpu,cpu";
  j.options.time = "1-02:00:00";
  j.options.mem = "4G";
  j.options.account = "lab_1";
  j.options.extra = {"--qos=long", "--constraint=a100&ib", "-N1"};
  const std::string s = sweep::slurm_script(j);
  EXPECT_EQ(s,
            "#!/bin/bash\n"
            "#SBATCH --job-name=seqbench-s\n"
            "#SBATCH --array=0,2\n"
            "#SBATCH --cpus-per-task=1\n"
            "#SBATCH --partition=gpu,cpu\n"
            "#SBATCH --time=1-02:00:00\n"
            "#SBATCH --mem=4G\n"
            "#SBATCH --account=lab_1\n"
            "#SBATCH --qos=long\n"
            "#SBATCH --constraint=a100&ib\n"
            "#SBATCH -N1\n"
            "exec '/opt/seq bench/seqbench' 'sweep' '/home/a b/it'\\''s.yaml' --run-index "
            "\"$SLURM_ARRAY_TASK_ID\" --threads \"${SLURM_CPUS_PER_TASK:-1}\"\n");
  j.threads = 3;
  j.force_threads = true;
  EXPECT_NE(sweep::slurm_script(j).find("--threads 3 --force-threads\n"), std::string::npos);
  // A hostile job name (the sweep file's stem) keeps only harmless characters.
  j.name = "x\n#SBATCH --wrap=rm $(id)";
  const std::string t = sweep::slurm_script(j);
  EXPECT_EQ(count(t, "\n"), 12) << t;
  EXPECT_NE(t.find("#SBATCH --job-name=seqbench-x__SBATCH_--wrap_rm___id_\n"), std::string::npos) << t;
}

TEST(SlurmScript, AValueOutsideItsFieldsCharactersIsAUsageErrorNamingFieldAndPlace) {
  const std::vector<std::pair<std::string, std::string>> bad{
      {"partition", "gpu\necho pwned"}, {"partition", "gpu --wrap=x"}, {"partition", "a;b"},
      {"partition", ""},  // (empty is fine: checked below)
      {"time", "1:00\n"}, {"time", "$(id)"}, {"time", "1-2-3"}, {"time", "02:00:00 #"},
      {"mem", "4G\r"}, {"mem", "4 G"}, {"mem", "-1"}, {"mem", "4GB;x"},
      {"account", "lab x"}, {"account", "lab\x7f"}, {"account", "a,b"},
      {"extra", "--qos=long\necho pwned"}, {"extra", "--qos=long --wrap=x"}, {"extra", "qos=long"},
      {"extra", "--mail-user='a@b'"}, {"extra", "--comment=$(id)"}, {"extra", "--x=a\\b"},
      {"extra", "--x=#"}, {"extra", ""}, {"extra", "--"}, {"extra", "--x=`id`"}};
  for (const auto& [field, value] : bad) {
    if (field == "partition" && value.empty()) {
      EXPECT_NO_THROW(sweep::check_slurm_value(field, value, "here"));
      continue;
    }
    try {
      sweep::check_slurm_value(field, value, "spec.yaml:7");
      ADD_FAILURE() << field << " '" << value << "' was accepted";
    } catch (const core::UsageError& e) {
      const std::string msg = e.what();
      EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
      EXPECT_EQ(msg.rfind("spec.yaml:7: slurm." + field + " ", 0), 0u) << msg;
      EXPECT_EQ(e.exit_code(), 2);
    }
  }
  EXPECT_NE(message_of([] { sweep::check_slurm_value("mem", std::string(300, '1'), "x"); })
                .find("longer than 256"),
            std::string::npos);
  for (const char* ok : {"90", "30:00", "02:00:00", "2-0", "2-12:30", "1-02:03:04", "UNLIMITED"})
    EXPECT_NO_THROW(sweep::check_slurm_value("time", ok, "x")) << ok;
  for (const char* ok : {"0", "4096", "4G", "512m", "2T"})
    EXPECT_NO_THROW(sweep::check_slurm_value("mem", ok, "x")) << ok;
  // The script writer checks again, whoever filled the options.
  auto j = job();
  j.options.mem = "1G\nrm -rf ~";
  EXPECT_THROW(sweep::slurm_script(j), core::UsageError);
  j = job();
  j.options.extra = {"--qos=a b"};
  EXPECT_THROW(sweep::slurm_script(j), core::UsageError);
}

TEST(SlurmScript, ACommandWordWithAControlCharacterIsRefused) {
  auto j = job();
  j.command.push_back("--out");
  j.command.push_back("/tmp/a\nrm -rf ~");
  EXPECT_NE(message_of([&] { sweep::slurm_script(j); }).find("control character"), std::string::npos);
  EXPECT_EQ(sweep::shell_quote("a'b c$(x)", "w"), "'a'\\''b c$(x)'");
  const auto args = sweep::slurm_submit_arguments("/o u t", "/c w d", "/o u t/job-1.sh");
  const std::vector<std::string> want{"--parsable", "--output=/o u t/%A_%a.out", "--chdir=/c w d",
                                      "/o u t/job-1.sh"};
  EXPECT_EQ(args, want);
}

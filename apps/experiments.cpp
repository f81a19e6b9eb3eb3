#include "apps/experiments.hpp"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <filesystem>

#include "apps/char_ptb/char_ptb_experiment.hpp"
#include "apps/char_ptb/char_ptb_report.hpp"
#include "apps/copy/copy_experiment.hpp"
#include "apps/imagenet64/imagenet64_experiment.hpp"
#include "apps/imagenet64/imagenet64_report.hpp"
#include "apps/minigrid/minigrid_experiment.hpp"
#include "apps/minigrid/minigrid_report.hpp"
#include "apps/pmnist/pmnist_experiment.hpp"
#include "apps/pmnist/pmnist_report.hpp"
#include "apps/recall/recall_experiment.hpp"
#include "apps/stability/stability_main.hpp"
#include "apps/wikitext103/wikitext103_experiment.hpp"
#include "apps/wikitext103/wikitext103_report.hpp"
#include "core/check.hpp"
#include "core/fs.hpp"

namespace seqbench::apps {

namespace {

report::CsvTable minigrid_rows(const report::CsvTable& runs) { return minigrid_table(runs); }

const ReportTable kPmnistTables[] = {
    {"pmnist", "the sequential / permuted MNIST table beside the papers' numbers",
     "Sequential / permuted MNIST: test accuracy (%) at the best validation epoch.\n"
     "Paper numbers: Nguyen et al. 2020 (MomentumRNN; its code reported the best test "
     "epoch); (unchecked) = not checked against a named source.",
     pmnist_table},
};
const ReportTable kCharPtbTables[] = {
    {"char_ptb", "the LM table (char: test BPC, word: test perplexity) beside the papers'",
     "Language modelling: test bits per character (char_lm) or test perplexity (word_lm) at\n"
     "the best validation. Paper numbers are on char-PTB and Wikitext-2; a stand-in corpus\n"
     "gives different values. (unchecked) = not checked against a named source.",
     char_ptb_table},
};
const ReportTable kWikitext103Tables[] = {
    {"wikitext103", "the word-level LM table (test perplexity) beside the paper's",
     "Word-level language modelling: test perplexity at the best validation.\n"
     "Paper numbers: Roy et al. 2021 on Wikitext-103 (their full-size models; their baselines "
     "are in `seqbench report paper roy2021`); a stand-in corpus or a small preset gives different "
     "values. (unchecked) = not checked against a named source.",
     wikitext103_table},
};
const ReportTable kImagenet64Tables[] = {
    {"imagenet64", "the pixel-level image modelling table (test bits/dim) beside the paper's",
     "Pixel-level image modelling: test bits per dimension (subpixel) at the best validation.\n"
     "Paper numbers: Roy et al. 2021 on ImageNet64; a stand-in data set gives different "
     "values. (unchecked) = not checked against a named source.",
     imagenet64_table},
};
const ReportTable kMinigridTables[] = {
    {"minigrid", "frames to solve and final return per environment, core and seed",
     "MiniGrid (C++ reimplementation), PPO: frames until the mean return of the last "
     "episodes first reached 0.9, and the final / best mean return.",
     minigrid_rows},
};

// name, main, help line, sweepable, report tables, trained-LM loader.
const ExperimentEntry kExperiments[] = {
    {"copy", copy_main, "copy, denoise, adding tasks and transfer (synthetic, no data needed)",
     true, {}, nullptr},
    {"pmnist", pmnist_main,
     "sequential / permuted MNIST, test accuracy at the best validation (data/mnist)", true,
     kPmnistTables, nullptr},
    {"char_ptb", char_ptb_main,
     "character-level language modelling, bits per character (data/brown stand-in)", true,
     kCharPtbTables, nullptr},
    {"wikitext103", wikitext103_main,
     "word-level Transformer LM, full/local/routing/random/smyrf/lsh heads (Brown stand-in)",
     true, kWikitext103Tables, load_wikitext103_run},
    {"imagenet64", imagenet64_main,
     "pixel-level image Transformer, bits/dim, same head kinds (MNIST stand-in)", true,
     kImagenet64Tables, load_imagenet64_run},
    {"minigrid", minigrid_main,
     "MiniGrid RL: PPO with lstm / rel_lstm / momentum_lstm agents (C++ environments)", true,
     kMinigridTables, nullptr},
    {"recall", recall_main,
     "MQAR, selective copying, induction heads: attention vs mixers vs cells at equal state",
     true, {}, nullptr},
    {"stability", stability_main,
     "Miller & Hardt: gradient gap / weight gap vs truncation k (`stability --config ...`)",
     true, {}, nullptr},
};

// "a", "a and b", "a, b and c".
std::string and_list(const std::vector<std::string>& names) {
  std::string out;
  for (size_t i = 0; i < names.size(); ++i)
    out += (i == 0 ? "" : i + 1 == names.size() ? " and " : ", ") + names[i];
  return out;
}

std::vector<std::string> lm_experiments() {
  std::vector<std::string> names;
  for (const auto& e : kExperiments)
    if (e.load_lm_run) names.push_back(e.name);
  return names;
}

}  // namespace

std::span<const ExperimentEntry> experiments() { return kExperiments; }

const ExperimentEntry* find_experiment(std::string_view name) {
  for (const auto& e : kExperiments)
    if (name == e.name) return &e;
  return nullptr;
}

std::vector<std::string> sweepable_experiments() {
  std::vector<std::string> names;
  for (const auto& e : kExperiments)
    if (e.sweepable) names.push_back(e.name);
  return names;
}

TrainedLmRun load_trained_run(const std::string& dir, const std::string& command, const std::string& attention) {
  std::string run_dir = dir;
  while (run_dir.size() > 1 && run_dir.back() == '/') run_dir.pop_back();
  const std::vector<std::string> lms = lm_experiments();
  SB_CHECK(!lms.empty(), "load_trained_run: no experiment in the table has a load_lm_run");
  const std::string config_path = run_dir + "/config.yaml";
  if (!core::file_exists(config_path) || !core::file_exists(run_dir + "/checkpoint.sbck")) {
    std::vector<std::string> hints;
    for (const auto& name : lms)
      hints.push_back(fmt::format("`seqbench {} --config configs/{}/<preset>.yaml`", name, name));
    throw core::UsageError(fmt::format(
        "{}: no trained run at '{}' (config.yaml and checkpoint.sbck needed; hint: train one "
        "with {})",
        command, run_dir, fmt::join(hints, " or ")));
  }
  std::string experiment =
      std::filesystem::path(run_dir).lexically_normal().parent_path().filename().string();
  const ExperimentEntry* entry = find_experiment(experiment);
  // A run of another experiment would fail on its first foreign key with a message about
  // that key; say what the run is instead.
  if (entry && !entry->load_lm_run)
    throw core::UsageError(fmt::format(
        "{}: '{}' is a run of the {} experiment; this analysis reads {} runs (hint: train one "
        "with `seqbench {} --config configs/{}/routing_small.yaml`)",
        command, run_dir, experiment, and_list(lms), lms.front(), lms.front()));
  if (!entry) {
    bool image = false;
    try {
      const YAML::Node root = YAML::LoadFile(config_path);
      image = root.IsMap() && root["data"].IsMap() && root["data"]["image_side"].IsDefined();
    } catch (const YAML::Exception&) {
      // Not YAML: reading it as a wikitext103 config says where.
    }
    entry = find_experiment(image ? "imagenet64" : "wikitext103");
    SB_CHECK(entry && entry->load_lm_run, "load_trained_run: no {} entry to read '{}' with",
             image ? "imagenet64" : "wikitext103", run_dir);
  }
  return entry->load_lm_run(run_dir, attention);
}

}  // namespace seqbench::apps

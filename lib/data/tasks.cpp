#include "data/tasks.hpp"

#include <fmt/format.h>

#include "core/check.hpp"
#include "core/text.hpp"

namespace seqbench::data {

const char* metric_name(TaskMetric m) { return m == TaskMetric::kAccuracy ? "acc" : "mse"; }

bool higher_is_better(TaskMetric m) { return m == TaskMetric::kAccuracy; }

const std::vector<TaskEntry>& task_registry() {
  using F = TaskFamily;
  using M = TaskMetric;
  static const std::vector<TaskEntry> registry = {
      {"copy", "recall K symbols after a delay of T steps (Hochreiter & Schmidhuber 1997)",
       F::kCopy, "T, n_symbols, copy_len", M::kAccuracy, &kCopyTask},
      {"denoise",
       "recall, in order, K symbols scattered among T+K-1 blanks after a marker (Jing et al. "
       "2019)",
       F::kCopy, "T, n_symbols, copy_len", M::kAccuracy, &kDenoiseTask},
      {"adding", "the sum of the two marked values among T (Hochreiter & Schmidhuber 1997)",
       F::kCopy, "T", M::kMse, &kAddingTask},
      {"mqar",
       "multi-query associative recall: each key's value when it is queried (Zoology, Arora "
       "et al. 2023)",
       F::kRecall, "vocab, seq_len, n_pairs, power_a, random_non_queries", M::kAccuracy,
       nullptr, &kMqarTask},
      {"selective_copy",
       "the K data tokens scattered among noise, in order, at the copy markers (Mamba, Gu & "
       "Dao 2023)",
       F::kRecall, "vocab, seq_len, n_tokens", M::kAccuracy, nullptr, &kSelectiveCopyTask},
      {"induction",
       "the token after the trigger's first occurrence, at its second (Mamba, after Olsson "
       "et al. 2022)",
       F::kRecall, "vocab, seq_len", M::kAccuracy, nullptr, &kInductionTask},
      {"mad_recall",
       "MAD in-context recall: the value of every repeated key among random key-value pairs "
       "(Poli et al. 2024)",
       F::kRecall, "vocab, seq_len, noise_vocab, train_examples", M::kAccuracy, nullptr,
       &kMadRecallTask},
      {"mad_fuzzy_recall",
       "MAD fuzzy in-context recall: keys and values of 1 .. k_motif / v_motif tokens "
       "(Poli et al. 2024)",
       F::kRecall, "vocab, seq_len, k_motif, v_motif, noise_vocab, frac_noise, train_examples",
       M::kAccuracy, nullptr, &kMadFuzzyRecallTask},
      {"mad_noisy_recall",
       "MAD noisy in-context recall: in-context recall with noise tokens among the pairs "
       "(Poli et al. 2024)",
       F::kRecall, "vocab, seq_len, noise_vocab, frac_noise, train_examples", M::kAccuracy,
       nullptr, &kMadNoisyRecallTask},
      {"mad_selective_copy",
       "MAD selective copying: the K data tokens among blanks, in order, after the copy "
       "marker (Poli et al. 2024)",
       F::kRecall, "vocab, seq_len, n_tokens, train_examples", M::kAccuracy, nullptr,
       &kMadSelectiveCopyTask},
      {"mad_compression",
       "MAD compression, causal form: the first seq_len/2 - 1 tokens again after the "
       "compression token (Poli et al. 2024)",
       F::kRecall, "vocab, seq_len, train_examples", M::kAccuracy, nullptr,
       &kMadCompressionTask},
      {"mad_memorization",
       "MAD memorization: a fixed key-value map learnt in the weights (Poli et al. 2024)",
       F::kRecall, "vocab, seq_len, map_seed, train_examples", M::kAccuracy, nullptr,
       &kMadMemorizationTask},
  };
  return registry;
}

std::vector<std::string> task_names(TaskFamily family) {
  std::vector<std::string> names;
  for (const auto& e : task_registry())
    if (e.family == family) names.push_back(e.name);
  return names;
}

const TaskEntry& find_task(const std::string& name, TaskFamily family) {
  for (const auto& e : task_registry())
    if (name == e.name && e.family == family) return e;
  throw core::UsageError(
      fmt::format("task.name: {}", core::unknown_name("task", name, task_names(family))));
}

const std::string& task_name_doc(TaskFamily family) {
  static const std::string copy = "task: " + core::join(task_names(TaskFamily::kCopy), " | ");
  static const std::string recall = "task: " + core::join(task_names(TaskFamily::kRecall), " | ");
  return family == TaskFamily::kCopy ? copy : recall;
}

std::string tasks_markdown() {
  std::string out =
      "| task | experiment | reads (task.*) | metric | what it is |\n|---|---|---|---|---|\n";
  for (const auto& e : task_registry())
    out += fmt::format("| `{}` | {} | {} | {} | {} |\n", e.name,
                       e.family == TaskFamily::kCopy ? "copy" : "recall", e.keys,
                       metric_name(e.metric), e.doc);
  return out;
}

}  // namespace seqbench::data

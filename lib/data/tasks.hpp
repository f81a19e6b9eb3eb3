// The synthetic tasks, one entry each: name, one-line doc, the experiment that runs it, the
// task.* keys it reads, its metric and how it is drawn. Everything that names tasks reads
// it: task.name's allowed values and "did you mean", the task classes (SyntheticTask,
// RecallTask), the experiments' metric and `seqbench list tasks`.
//
// Adding a task: its generator beside the others of its family (synthetic.cpp for the copy
// experiment's one-hot sequences, recall.cpp or mad.cpp for the token tasks of the recall
// experiment, whose ops are in recall_ops.hpp), ending in a `const CopyTaskOps` or
// `const RecallTaskOps` declared below; one line in
// task_registry() (tasks.cpp); a test in tests/data/ (task_registry_test.cpp already runs
// every entry through a batch and its metric).
#pragma once

#include <string>
#include <vector>

namespace seqbench::data {

// Which experiment runs a task, and so its config section and batch.
enum class TaskFamily {
  kCopy,    // `seqbench copy`: TaskConfig, SeqBatch (one-hot inputs, time-major)
  kRecall,  // `seqbench recall`: RecallTaskConfig, RecallBatch (token ids, batch-major)
};

// What the experiment reports for the task (its metrics.csv column).
enum class TaskMetric {
  kAccuracy,  // "acc": share of the scored steps predicted right (higher is better)
  kMse,       // "mse": squared error of the output at the last step (lower is better)
};
const char* metric_name(TaskMetric m);
bool higher_is_better(TaskMetric m);

// How a task of each family is shaped and drawn; defined with the generators
// (synthetic.cpp, recall.cpp), opaque to everything else.
struct CopyTaskOps;
struct RecallTaskOps;
extern const CopyTaskOps kCopyTask, kDenoiseTask, kAddingTask;
extern const RecallTaskOps kMqarTask, kSelectiveCopyTask, kInductionTask;
extern const RecallTaskOps kMadRecallTask, kMadFuzzyRecallTask, kMadNoisyRecallTask,
    kMadSelectiveCopyTask, kMadCompressionTask, kMadMemorizationTask;

struct TaskEntry {
  const char* name;
  const char* doc;   // one line, for --help and `seqbench list tasks`
  TaskFamily family;
  const char* keys;  // the task.* keys it reads besides name, for docs ("T, copy_len")
  TaskMetric metric;
  const CopyTaskOps* copy = nullptr;      // with kCopy
  const RecallTaskOps* recall = nullptr;  // with kRecall
};

const std::vector<TaskEntry>& task_registry();
// The entry named `name` in `family`; throws core::UsageError
// "task.name: unknown task '<name>' (did you mean ...; have: <the family's names>)".
const TaskEntry& find_task(const std::string& name, TaskFamily family);
// Names of the family's tasks, in registry order.
std::vector<std::string> task_names(TaskFamily family);
// task.name's doc line: "task: copy | denoise | adding".
const std::string& task_name_doc(TaskFamily family);
// The docs table: | task | experiment | reads | metric | what it is |.
std::string tasks_markdown();

}  // namespace seqbench::data

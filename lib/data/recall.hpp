// Associative-recall tasks (no data files): MQAR, selective copying, induction heads, each
// an entry of the task registry (tasks.hpp).
// Token ids, batch-major (row b*N + t), next-token prediction: at position t the model
// has read ids[0..t] and predicts targets[t]. Only positions with mask 1 are scored (loss
// and accuracy); elsewhere target and mask are 0. V = vocab, N = seq_len, ids in [0, V).
//
// mqar (Arora et al. 2023, "Zoology", arXiv 2312.04927; after HazyResearch/zoology,
// zoology/data/multiquery_ar.py, formerly associative_recall.py, `multiquery_ar`):
//   P = n_pairs, H = floor(V / 2), a = power_a.
//   keys   k_1..k_P distinct, a uniformly random ordered draw from {1 .. H-1} (0 reserved);
//   values v_1..v_P distinct, a uniformly random ordered draw from {H .. V-1}.
//   positions 0 .. 2P-1:  k_1 v_1 k_2 v_2 .. k_P v_P   (unscored).
//   S = floor((N - 2P) / 2) query slots, at positions 2P + 2g for g = 0 .. S-1.
//   gaps g_1..g_P distinct, drawn in order by successive sampling from
//     p(g) ∝ (g + 1)^(a - 1), g = 0 .. S-1
//   (g_1 from p, g_2 from p renormalised over the remaining slots, ..., numpy's
//   choice(replace=False, p=p)); a = 0.01 makes small gaps (queries right after the pairs)
//   far more frequent, a = 1 is uniform.
//   key k_i is queried at position q_i = 2P + 2 g_i: ids[q_i] = k_i, targets[q_i] = v_i,
//   mask 1. The value is not repeated after the query.
//   every other position from 2P on holds filler: 0, or with random_non_queries (default)
//   a token uniform over {0 .. V-1} minus {k_1..k_P}.
//   So every key occurs exactly twice, once in its pair and once as its (scored) query.
//   Scored per sequence: P. Chance: 1 / (V - H), a uniform guess among the values.
// Where this differs from Zoology, and why:
//   - Zoology's random filler is uniform over all V tokens, keys included: a filler equal
//     to a key is an unscored repeat of a query (about P/V of the filler), so the scored
//     positions are not a function of the inputs. Here filler never equals a key of its
//     sequence: every key after the pairs is its query. (V = 8192, P = 4: 0.05% of filler.)
//   - Zoology asserts N even and V > N; neither is needed (an odd N leaves the last
//     position as filler; the ids need only V >= 2P + 2), so check_rules drops them and
//     keeps 4P <= N (S >= P query slots).
//   - Zoology's num_passes (JRT repeats of the pairs) is not offered (it is 1 here);
//     unscored targets are 0 with mask 0 instead of -100.
//   - Own random numbers (core::Rng), so not Zoology's sequences; the distributions are
//     the same (the gaps by Efraimidis-Spirakis keys u^(1/p(g)), which is successive
//     sampling; the keys and values by Floyd's subset sampling, then a shuffle).
//
// selective_copy (Gu & Dao 2023, "Mamba", arXiv 2312.00752, Section 4.1.1, Appendix E.1):
//   K = n_tokens, D = N - K; reserved ids 0 = noise, 1 = copy marker.
//   data tokens d_1..d_K uniform (with replacement) over {2 .. V-1};
//   K distinct positions chosen uniformly in 0 .. D-1 hold d_1..d_K in position order,
//   the other positions of 0 .. D-1 hold noise 0; positions D .. N-1 hold the marker 1.
//   targets[D + i] = d_{i+1} (i = 0 .. K-1), mask 1 there only: at the i-th marker the
//   model outputs the i-th data token.
//   Scored per sequence: K. Chance: 1 / (V - 2).
//   Mamba's setting: vocab 16, 16 tokens, length 4096. Mamba publishes no generator and
//   does not say whether its 16 counts noise and marker; here V counts them (V = 16 gives
//   14 data values). check_rules asks N > 2K: the K data tokens fit in D positions with
//   at least one noise token, so the spacing is random (N = 2K would be plain copying).
//
// induction (Mamba, Section 4.1.2, after Olsson et al. 2022):
//   reserved id 0 = trigger. Every position draws a token uniform over {1 .. V-1};
//   then a position p uniform in 0 .. N-3 gets the trigger (the token after it, at
//   p + 1, is the answer), and the last position N-1 gets the trigger again.
//   The trigger occurs exactly twice; targets[N-1] = ids[p+1], mask 1 there only.
//   Scored per sequence: 1. Chance: 1 / (V - 1).
//   Any N >= 3 works (Mamba trains at N = 256 and tests lengths 2^6 .. 2^20 with vocab
//   16): build a second RecallTask with another seq_len to test length extrapolation.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "config/field.hpp"
#include "core/rng.hpp"
#include "data/tasks.hpp"

namespace seqbench::data {

struct RecallTaskConfig {
  std::string name = "mqar";       // mqar | selective_copy | induction | mad_* (mad.hpp)
  int64_t vocab = 8192;            // V: all ids are < vocab
  int64_t seq_len = 64;            // N: the input length
  int64_t n_pairs = 4;             // mqar: key-value pairs
  int64_t n_tokens = 16;           // selective_copy: data tokens to memorise
  double power_a = 0.01;           // mqar: p(gap g) ∝ (g+1)^(power_a - 1)
  bool random_non_queries = true;  // mqar: filler after the pairs is random, not 0
  // The MAD tasks' keys (lib/data/mad.hpp).
  int64_t noise_vocab = 0;         // mad_*recall: ids set aside for noise (in vocab)
  double frac_noise = 0.0;         // mad_*recall: share of pairs replaced by noise
  int64_t k_motif = 1;             // mad_fuzzy_recall: keys of 1 .. k_motif tokens
  int64_t v_motif = 1;             // mad_fuzzy_recall: values of 1 .. v_motif tokens
  int64_t map_seed = 12345;        // mad_memorization: seed of the fixed key-value map
  int64_t train_examples = 0;      // > 0: train on a fixed set of this many sequences

  template <class V>
  void visit(V& v) {
    v("name", name, task_name_doc(TaskFamily::kRecall),
      config::one_of(task_names(TaskFamily::kRecall)));
    v("vocab", vocab, "vocabulary size, reserved ids included (all ids < vocab)",
      config::range(3, 2147483647).because("token ids are int32"));
    v("seq_len", seq_len, "input length N (induction: any N >= 3, e.g. to test extrapolation)",
      config::range(3, 1 << 30));
    v("n_pairs", n_pairs, "mqar: key-value pairs, each queried once (Zoology: 4 .. 64)",
      config::range(1, 1 << 28));
    v("n_tokens", n_tokens, "selective_copy: data tokens to copy (Mamba: 16)",
      config::range(1, 1 << 28));
    v("power_a", power_a, "mqar: query gaps g drawn with p(g) ∝ (g+1)^(power_a-1)",
      config::range_above(0.0, 1.0).because("Zoology's 0.01 favours short gaps, 1 is uniform"));
    v("random_non_queries", random_non_queries,
      "mqar: positions after the pairs that are not queries hold random tokens, else 0");
    v("noise_vocab", noise_vocab,
      "mad_*recall: the last noise_vocab ids of the vocabulary are noise tokens (MAD: 16)",
      config::range(0, 1 << 30));
    v("frac_noise", frac_noise,
      "mad_*recall: probability that a key-value pair is replaced by noise (MAD: 0.2 .. 0.8)",
      config::range_below(0.0, 1.0));
    v("k_motif", k_motif, "mad_fuzzy_recall: keys are 1 .. k_motif distinct tokens (MAD: 3)",
      config::range(1, 8));
    v("v_motif", v_motif, "mad_fuzzy_recall: values are 1 .. v_motif distinct tokens (MAD: 3)",
      config::range(1, 8));
    v("map_seed", map_seed, "mad_memorization: seed of the fixed key-value map to memorise",
      config::range(0, 9007199254740992.0));
    v("train_examples", train_examples,
      "> 0: training batches are drawn from a fixed set of this many sequences (MAD: 12800); "
      "0: fresh sequences every update",
      config::range(0, 1 << 24));
  }
};

// Cross-field rules (and the field constraints, config::check under "task"); throws
// core::UsageError with a one-line message naming the key and a hint.
void check_rules(const RecallTaskConfig& cfg);

// Which targets a batch carries. Training and evaluation differ only for the MAD recall
// tasks (mad.hpp): they train on every next token and score the recalled values.
enum class Split { kTrain, kEval };

// B sequences of N tokens, batch-major: element (b, t) at b*N + t.
struct RecallBatch {
  int64_t B = 0, N = 0;
  std::vector<int32_t> ids;      // (B N) inputs
  std::vector<int32_t> targets;  // (B N) the token to predict at each position (0 unscored)
  std::vector<float> mask;       // (B N) 1 at the scored positions only
};

class RecallTask {
 public:
  explicit RecallTask(const RecallTaskConfig& cfg);  // check_rules(cfg) first

  const TaskEntry& entry() const { return *entry_; }
  int64_t length() const { return cfg_.seq_len; }
  int64_t vocab() const { return cfg_.vocab; }
  // Scored positions per sequence (evaluation targets); 0 where the count varies from
  // sequence to sequence (mad_recall, mad_noisy_recall, mad_fuzzy_recall).
  int64_t scored_per_sequence() const;
  // Accuracy of guessing uniformly among the tokens a scored position can hold.
  double chance_accuracy() const;
  // The size of the task in runs.csv's "pairs" column: mqar's n_pairs, else n_tokens (the
  // column has always held it for induction too; reports ignore it there).
  int64_t pairs_column() const;
  const RecallTaskConfig& config() const { return cfg_; }

  // Fills out with B fresh sequences drawn from rng (buffers reused), with the targets of
  // `split`. const and free of shared scratch: tasks may generate from several threads
  // with their own Rngs.
  void generate(core::Rng& rng, int64_t B, RecallBatch& out, Split split = Split::kEval) const;
  // Whether training targets differ from the evaluation ones (the MAD recall tasks).
  bool trains_on_all_tokens() const;

 private:
  RecallTaskConfig cfg_;
  const TaskEntry* entry_;
  std::vector<double> table_;  // the task's precomputed table (mqar: its gap weights;
                               // mad_memorization: its key-value map)
};

}  // namespace seqbench::data

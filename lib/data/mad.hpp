// MAD's six synthetic tasks (Poli et al. 2024, "Mechanistic Design and Scaling of Hybrid
// Architectures", arXiv 2403.17844; after athms/mad-lab, mad/data/instances.py and
// configs/tasks/*.yml), each an entry of the task registry (tasks.hpp) run by the recall
// experiment: task.name mad_recall | mad_fuzzy_recall | mad_noisy_recall |
// mad_selective_copy | mad_compression | mad_memorization. The generators are in mad.cpp;
// the batch layout is recall.hpp's (ids, targets, mask; (b, t) at b*N + t; at position t
// the model has read ids[0..t] and predicts targets[t]). V = task.vocab, N = task.seq_len,
// n = task.noise_vocab, f = task.frac_noise. "Uniform" is uniform and independent.
//
// Training and evaluation targets. mad-lab trains its three recall tasks as language
// models, on every next token, and scores only the recalled values on its test set; the
// other three have one set of targets. So generate(..., Split::kTrain) gives the recall
// tasks every next token as target (mask 1 everywhere but the last position) and
// Split::kEval the recalled values only. task.train_examples (MAD: 12,800; memorization
// 256) makes the recall experiment draw its training batches from a fixed set of that
// many sequences, as MAD's fixed training set; evaluation uses fresh sequences from their
// own seed (MAD: a test set of 1,280).
//
// mad_recall (in-context recall; MAD's baseline: V 16, N 128, multi-query):
//   S = V - n ids for keys and values: keys K = {0 .. S/2-1}, values {S/2 .. S-1}; the
//   last n ids are noise (unused unless f > 0: that is mad_noisy_recall).
//   The sequence is P = N/2 pairs (N even). Pairs 1 .. P-1 in order: a key uniform over K,
//   then its value: the value the key already has in this sequence, else a value uniform
//   over the values (two keys may share a value). The last pair repeats a key: one uniform
//   over the distinct keys seen so far, with its value.
//   Scored (evaluation): every key that has occurred before in the sequence predicts its
//   value (the target at the key's position is the next token, the value); the last pair
//   is always scored. So the count varies, at least 1.
//   Chance: 1 / (S - S/2), a uniform guess among the values.
//
// mad_noisy_recall (MAD's baseline: V 32 with n = 16 noise ids, N 128, f = 0.2):
//   mad_recall with noise: before the pairs are drawn, one pair index z is drawn uniform
//   in 0 .. P-1; each of pairs 1 .. P-1 except the z-th is, with probability f, two noise
//   tokens uniform over the n noise ids (never scored) instead of a key and value. A
//   sequence without any key before its last pair (all noise; probability at most f^(P-2))
//   is drawn again. Needs n >= 1 and f > 0.
//
// mad_fuzzy_recall (MAD's baseline: V 16, N 128, keys and values of 1 .. 3 tokens):
//   the last id V-1 is padding; S = V - 1 - n: keys are built from the tokens
//   {0 .. S/2-1}, values from {S/2 .. S-1} (noise, if any, the n ids before the padding).
//   A key of size s is s distinct key tokens in a uniformly random order (a uniform
//   s-permutation); values likewise from the value tokens. A = task.k_motif, B = task.v_motif.
//   1. The probe: its key size is uniform in 1 .. A when training and always A when
//      evaluating, its value size uniform in 1 .. B; its key and value are drawn so. Let
//      m = its size (key + value) and p uniform in 0 .. N - 2m - 1.
//   2. While the sequence is shorter than N - m - (A + B): draw a key size (as the probe's)
//      and a value size. If the sequence has reached length p and the probe pair is not in
//      yet, append the probe key and value (unscored) and go on. Else, with probability f,
//      append key size + value size noise tokens. Else draw a key of that size: if it
//      equals the probe key its value is the probe value (the probe now counts as in);
//      else the value it already has in this sequence, else a fresh value of the drawn
//      size. Append key and value; the value's tokens are scored if the key has occurred
//      before in the sequence.
//   3. Append the probe key and value, the value scored; pad the front with the padding
//      id to N + 1 tokens (at least one pad). The inputs are the first N of them; the
//      target at t is token t + 1 (scored where that token is).
//   As in mad-lab, the probe pair can be missing from the context when p falls past the
//   loop's end; the final value is still scored (it is then a guess).
//   Chance: 1 / (S - S/2) per value token.
//
// mad_selective_copy (MAD's baseline: V 16, N 256, 16 tokens to copy):
//   ids V-1 = copy marker, V-2 = blank; data tokens uniform over {0 .. V-3}. K = task.n_tokens.
//   The K data tokens in order with N - 2K - 1 blanks among them: each blank goes, uniform
//   and independently, just before one of the K data tokens (so the last data token is
//   always right before the marker); then the copy marker; then K blanks. The target at the
//   i-th of those last blanks (position N - K + i) is the i-th data token.
//   Scored: K. Chance: 1 / (V - 2). Needs N > 2K + 1.
//
// mad_compression (MAD's baseline: V 16 and 32 tokens, here N = 64):
//   L = N/2 (N even). Id V-1 = compression token; data tokens uniform over {0 .. V-2}.
//   ids: L - 1 data tokens, the compression token, then L more compression tokens; the
//   target at position L + i is the i-th data token (i = 0 .. L-2). Scored: L - 1.
//   Chance: 1 / (V - 1).
//   mad-lab scores this with an encoder-decoder: its model reads the L tokens, keeps only
//   the last position's vector, and an MLP decodes every token from that vector plus a
//   position embedding. The recall experiment trains causal language models, so here the
//   model decodes after the compression token instead. A model with a fixed state (a
//   recurrent mixer) must carry the L - 1 tokens through the same bottleneck; attention can
//   look back at them, so its number is not MAD's compression (see docs/experiments/mad.md).
//   MAD also scores the compression token itself (always right); here it is not scored.
//
// mad_memorization (MAD's baseline: V 256, N 32, 256 training sequences):
//   id V-1 = insert token; S = V - 1: keys {0 .. S/2-1}, values {S/2 .. S-1}. One map,
//   fixed for the task by task.map_seed: each key gets a distinct value, uniformly at
//   random (a random injection of the keys into the values). The sequence is N/2 pairs
//   (N even) of a key uniform over the keys and the insert token; the target at the insert
//   token is the key's value. Nothing in the sequence tells the value: it is learnt in the
//   weights. Scored: N/2. Chance: 1 / (S/2), a uniform guess among the mapped values.
//
// Where this differs from mad-lab, and why:
//   - Own random numbers (core::Rng), so not mad-lab's sequences or map; the distributions
//     are the ones above. mad-lab places selective copying's blanks with numpy's global,
//     unseeded generator, so its own data sets are not reproducible from its seed.
//   - Only MAD's multi-query form of the recall tasks (its benchmark's setting): no copy
//     prefix token.
//   - mad_recall and mad_noisy_recall keep the last value as an input position (unscored,
//     no target); mad-lab cuts it off, giving N - 1 inputs. The other tasks have mad-lab's
//     lengths, except mad_compression (2L, above).
//   - Noise options that MAD's benchmark never uses (noise in memorization and compression)
//     are not offered; mad-lab has no check that a noisy sequence keeps a key (it would fail
//     on an all-noise sequence), here such a sequence is drawn again.
//   - Unscored targets are 0 with mask 0 instead of -100; accuracy is the share of scored
//     tokens predicted right (mad-lab's torchmetrics MulticlassAccuracy averages per class
//     by default, "macro").
#pragma once

#include <cstdint>
#include <vector>

#include "data/recall.hpp"

namespace seqbench::data {

// mad_memorization's map: element k is key k's value (size (vocab - 1) / 2).
std::vector<int32_t> mad_memorization_map(const RecallTaskConfig& cfg);

}  // namespace seqbench::data

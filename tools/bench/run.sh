#!/usr/bin/env bash
# make bench: one training step (forward, backward, clip, Adam, projection) of seqbench's
# recurrent models and of PyTorch references, side by side in one run on this machine,
# for the workloads of docs/performance.md. Every side runs at its own best setting on the
# machine at hand: before each implementation is timed, a short probe (an eighth of the
# sequence, 1 warm-up + 2 timed steps) tries its candidate settings and the fastest wins:
#   ours, onednn  OpenMP threads 1 or nproc (a row with @N keeps N)
#   torch         torch.set_num_threads 1 or nproc; OPENBLAS_NUM_THREADS=1 or unset (then
#                 OpenBLAS uses the OpenMP team); OPENBLAS_CORETYPE / OPENBLAS_L2_SIZE as
#                 inherited or unset (OpenBLAS detects the CPU), when the environment sets
#                 them: the setting with the higher sgemm peak (BENCH_PROBE=2: probed too)
# The run starts with the environment (CPU, compiler and flags, oneDNN, OpenBLAS and its
# kernel set, torch and its BLAS, the OPENBLAS_* OMP_* MKL_* ATEN_* variables) and the
# machine's sgemm peak (seqbench_bench_sgemm: OpenBLAS and oneDNN, n = 2048, 1 and nproc
# threads, each OpenBLAS setting). Prints a Markdown table (ms/step, the winning setting,
# peak RSS, LSTM-equivalent GFLOP/s and, for plain LSTM rows, % of the sgemm peak at the
# row's thread count) and the speed ratios the performance targets are stated in.
# The workload group `attention` times one forward + backward of every attention core
# (and of PyTorch's full causal attention) for n = 256 ... 16384, one process per (kind, n),
# and fits log-log slopes (docs/bench.md, "Attention scaling").
# The workload group `mixers` times one training step of each sequence mixer alone
# (lib/nn/mixers: forward from the zero state, loss sum(w ⊙ y), backward, Adam) beside the
# same mixer in PyTorch (tools/bench/torch_mixers.py), each at its own probed setting, at
# two shapes, and checks both sides on the same weights (docs/bench.md, "Sequence mixers").
# Every run also checks the recurrent cells that have a PyTorch reference against it on
# the same weights (seqbench_bench_cell --dump, torch_cells.py --check; docs/bench.md).
# Writes results/bench/latest.md, results/bench/latest.csv,
# results/bench/attention_scaling.{csv,png} and results/bench/bench-<UTC time>.json (one
# file per run, kept for history: environment, sgemm, probes, rows).
#
# usage: tools/bench/run.sh [BUILD_DIR]     (BUILD_DIR defaults to build)
# Environment (defaults in brackets):
#   BENCH_THREADS [probed]  fixes the thread count of every implementation without @N
#                         (PyTorch's OpenBLAS settings are still probed)
#   BENCH_PROBE [1]       0: no probing; every side runs at BENCH_THREADS (else nproc)
#                         threads in the environment as it is. 2: PyTorch also probes
#                         both OpenBLAS kernel settings (1 takes the sgemm step's winner)
#   BENCH_QUICK [0]       1: fewer steps, no char-PTB shape, the mixers at the small shape
#                         only (a smoke run, a few minutes)
#   BENCH_ONLY [all]      space-separated workload ids to run (see WORKLOADS below;
#                         `attention` is the attention scaling group, `mixers` the mixers)
#   BENCH_ATTN_NS [256 512 1024 2048 4096 8192 16384]   the attention group's lengths n
#   BENCH_ATTN_TORCH_MAX_N [16384]   PyTorch's full attention only up to this n (its
#                         (n, n) matrices take ~4.5 GB at 16384)
#   BENCH_PYTHON [/usr/bin/python3]   the interpreter that has Debian's python3-torch
#   BENCH_OUT [results/bench]         where the files go
# OMP_WAIT_POLICY and friends pass through to every implementation unchanged; the
# OPENBLAS_* variables are changed only as the probe's candidates say (tests never see it).
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
build=${1:-build}
case $build in /*) ;; *) build=$PWD/$build ;; esac
cd "$root"

fixed_threads=${BENCH_THREADS:-}
probe=${BENCH_PROBE:-1}
quick=${BENCH_QUICK:-0}
py=${BENCH_PYTHON:-/usr/bin/python3}
out_dir=${BENCH_OUT:-results/bench}
cell_bin=$build/tools/bench/seqbench_bench_cell
attn_scaling_bin=$build/tools/bench/seqbench_bench_attention
sgemm_bin=$build/tools/bench/seqbench_bench_sgemm
mixer_bin=$build/tools/bench/seqbench_bench_mixer

die() { echo "bench: $*" >&2; exit 1; }
torch_version=$("$py" -c 'import torch; print(torch.__version__)' 2>/dev/null) ||
  die "cannot import torch with $py (hint: make deps-bench installs Debian's python3-torch; set BENCH_PYTHON to another interpreter)"

# What runs comes from the registries (`seqbench list --format json`, read by
# bench_names.py); the PyTorch scripts say which names they have a reference for
# (--references). A registered name without one is named in the report, never dropped
# silently: a mixer is timed on our side only, a cell is left out of pmnist-cells.
front=$build/apps/seqbench
[[ -x $front ]] || die "no $front (hint: build first: cmake --build $build --target seqbench, or make bench)"
names() { "$py" "$root/tools/bench/bench_names.py" "$front" "$@" || die "cannot list the registered $1"; }
refs() { "$py" "$root/tools/bench/$1" --references || die "$1 --references failed"; }
cell_refs=" $(refs torch_cells.py) " mixer_refs=" $(refs torch_mixers.py) "
# pmnist-cells: each registered bench cell (not a mixer; lstm has workloads of its own)
# that has a PyTorch reference, ours then PyTorch's.
bench_cells=$(names cells --use bench --no-mixers)
cells_ours= cells_torch= cells_no_ref=
for c in $bench_cells; do
  [[ $c == lstm ]] && continue
  if [[ $cell_refs == *" $c "* ]]; then cells_ours+="ours:$c " cells_torch+="torch:$c "; else cells_no_ref+="$c "; fi
done
MIXERS=$(names mixers)
mixers_no_ref=
for m in $MIXERS; do [[ $mixer_refs == *" $m "* ]] || mixers_no_ref+="$m "; done
ATTN_KINDS=$(names attention)
[[ -z $cells_no_ref ]] || echo "bench: no PyTorch reference for the cells ${cells_no_ref% } (not in pmnist-cells)" >&2
[[ -z $mixers_no_ref ]] || echo "bench: no PyTorch reference for the mixers ${mixers_no_ref% } (timed on our side only)" >&2

# Workloads: id | task | B | T | I | H | classes | implementations (SIDE:CELL[@threads]) |
# extra flags. One training step of the recurrent layer over the sequence (the embedding
# is not part of the step) and the head (pmnist: on the last step; copy: on every step).
WORKLOADS=(
  "pmnist-h128|pmnist|100|784|1|128|10|onednn:lstm ours:lstm torch:nn.LSTM torch:lstm"
  "pmnist-cells|pmnist|100|784|1|128|10|$cells_ours$cells_torch|--nu 10 --rho 10"
  "pmnist-h256|pmnist|100|784|1|256|10|onednn:lstm@1 onednn:lstm@2 ours:lstm@1 ours:lstm@2 torch:nn.LSTM"
  "copy-t100|copy|10|100|10|128|9|ours:lstm onednn:lstm ours:rel_lstm torch:rel_lstm torch:lstm|--nu 10 --rho 15"
  "copy-t1000|copy|10|1000|10|128|9|ours:rel_lstm|--nu 10 --rho 15"
  "charptb|pmnist|128|150|200|1024|50|onednn:lstm ours:lstm torch:nn.LSTM"
)
# Targets: label | workload | A | B | kind | bound. kind speedup: B's ms / A's ms >= bound;
# kind ratio: A's ms / B's ms <= bound; kind ms: A's ms <= bound.
TARGETS=(
  "lstm (oneDNN path) vs PyTorch nn.LSTM, pMNIST shape|pmnist-h128|onednn:lstm|torch:nn.LSTM|speedup|8"
  "lstm (oneDNN path) vs PyTorch nn.LSTM, H=256|pmnist-h256|onednn:lstm@2|torch:nn.LSTM|speedup|5"
  "lstm (oneDNN path) vs PyTorch nn.LSTM, char-PTB shape|charptb|onednn:lstm|torch:nn.LSTM|speedup|5"
  "lstm (ours, on oneDNN's sgemm) vs PyTorch nn.LSTM, pMNIST shape|pmnist-h128|ours:lstm|torch:nn.LSTM|speedup|8"
  "lstm (ours) vs PyTorch nn.LSTM, H=256|pmnist-h256|ours:lstm@2|torch:nn.LSTM|speedup|5"
  "lstm (ours) vs PyTorch nn.LSTM, char-PTB shape|charptb|ours:lstm|torch:nn.LSTM|speedup|5"
  "ours lstm / oneDNN lstm, pMNIST shape|pmnist-h128|ours:lstm|onednn:lstm|ratio|1.5"
  "momentum_lstm / oneDNN lstm|pmnist-cells|ours:momentum_lstm|pmnist-h128/onednn:lstm|ratio|1.5"
  "adam_lstm / oneDNN lstm|pmnist-cells|ours:adam_lstm|pmnist-h128/onednn:lstm|ratio|1.5"
  "stable_lstm / oneDNN lstm|pmnist-cells|ours:stable_lstm|pmnist-h128/onednn:lstm|ratio|1.5"
  "rel_lstm / oneDNN lstm|pmnist-cells|ours:rel_lstm|pmnist-h128/onednn:lstm|ratio|1.5"
  "ours lstm vs PyTorch LSTMCell loop|pmnist-h128|ours:lstm|torch:lstm|speedup|4"
  "momentum_lstm vs its PyTorch loop|pmnist-cells|ours:momentum_lstm|torch:momentum_lstm|speedup|4"
  "adam_lstm vs its PyTorch loop|pmnist-cells|ours:adam_lstm|torch:adam_lstm|speedup|4"
  "stable_lstm vs its PyTorch loop|pmnist-cells|ours:stable_lstm|torch:stable_lstm|speedup|4"
  "rel_lstm vs its PyTorch loop|pmnist-cells|ours:rel_lstm|torch:rel_lstm|speedup|4"
  "rel_lstm copy T=100 vs its PyTorch loop|copy-t100|ours:rel_lstm|torch:rel_lstm|speedup|4"
  "rel_lstm copy T=100, B=10, H=128 (ms/update)|copy-t100|ours:rel_lstm|-|ms|25"
  "rel_lstm copy T=1000, B=10, H=128 (ms/update)|copy-t1000|ours:rel_lstm|-|ms|250"
  "oneDNN lstm 2 threads vs 1, H=256|pmnist-h256|onednn:lstm@2|onednn:lstm@1|speedup|1.6"
  "ours lstm 2 threads vs 1, H=256|pmnist-h256|ours:lstm@2|ours:lstm@1|speedup|1.6"
)

[[ -x $cell_bin ]] || die "no $cell_bin (hint: build first: cmake --build $build --target seqbench_bench_cell, or make bench)"
[[ -x $attn_scaling_bin ]] || die "no $attn_scaling_bin (hint: build first: cmake --build $build --target seqbench_bench_attention, or make bench)"
[[ -x $sgemm_bin ]] || die "no $sgemm_bin (hint: build first: cmake --build $build --target seqbench_bench_sgemm, or make bench)"
[[ -z $fixed_threads || $fixed_threads =~ ^[1-9][0-9]*$ ]] || die "BENCH_THREADS='$fixed_threads' is not a thread count (hint: 1, 2, ...)"
[[ $probe == [012] ]] || die "BENCH_PROBE='$probe' is not 0, 1 or 2 (hint: 0 = no probe, 1 = the default, 2 = also each PyTorch row's OpenBLAS kernels)"

if [[ $quick == 1 ]]; then
  ours_warmup=1 ours_steps=2 torch_warmup=1 torch_steps=1 probe_div=16 probe_steps=1
  sgemm_reps=3 attn_warmup=1 attn_steps=1 attn_ns=${BENCH_ATTN_NS:-256 512 1024}
else
  ours_warmup=2 ours_steps=5 torch_warmup=1 torch_steps=5 probe_div=8 probe_steps=2
  sgemm_reps=5 attn_warmup=1 attn_steps=3 attn_ns=${BENCH_ATTN_NS:-256 512 1024 2048 4096 8192 16384}
fi
sgemm_n=2048
attn_torch_max_n=${BENCH_ATTN_TORCH_MAX_N:-16384}
only=${BENCH_ONLY:-}
[[ -z $only && $quick == 1 ]] && only="pmnist-h128 copy-t100 copy-t1000 attention mixers"

# The `mixers` group: every sequence mixer of lib/nn/mixers, ours (seqbench_bench_mixer) and
# PyTorch's (torch_mixers.py), one training step of the mixer alone at each shape:
#   id | B | N | E | heads | d_state (mamba: N per channel) | d_state of lru (complex units) | chunk
# The first is the recall sweep's shape (docs/experiments/recall.md), the second a longer
# sequence; a quick run times the first only. The numerical check runs every mixer once on
# MIXER_CHECK's small shape (a partial last chunk) in float64 on PyTorch's side.
MIXER_SHAPES=(
  "mixers-recall|64|64|64|2|16|64|64"
  "mixers-long|8|512|128|2|16|64|64"
)
((quick == 1)) && MIXER_SHAPES=("${MIXER_SHAPES[0]}")
MIXER_CHECK="2|50|32|2|8|16"  # B | N | E | heads | d_state | chunk
MIXER_CHECK_TOL=1e-4
# The cells' numerical check (every bench cell with a PyTorch reference, each `make bench`):
CELL_CHECK="3|8|5|6|2|2|4"  # B | T | I | H | nu | rho (rel_lstm) | the weights' scale
CELL_CHECK_TOL=1e-4
run_mixers=0
[[ -z $only || " $only " == *" mixers "* ]] && run_mixers=1
[[ $run_mixers == 0 || -x $mixer_bin ]] || die "no $mixer_bin (hint: build first: cmake --build $build --target seqbench_bench_mixer, or make bench)"

cpu=$(grep -m1 '^model name' /proc/cpuinfo | sed 's/^model name[[:space:]]*:[[:space:]]*//' || true)
cpu=${cpu:-unknown}
ncpu=$(nproc)
date_utc=$(date -u '+%Y-%m-%d %H:%M UTC')
stamp=$(date -u '+%Y%m%dT%H%M%SZ')
commit=$(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown)
git -C "$root" diff --quiet HEAD -- lib tools/bench 2>/dev/null || commit="$commit+local changes"
load_start=$(cut -d' ' -f1 /proc/loadavg)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# The candidate settings. Threads: nproc and 1 (BENCH_THREADS fixes one). OpenBLAS kernel
# set: "env" keeps OPENBLAS_CORETYPE / OPENBLAS_L2_SIZE as inherited, "auto" unsets them
# (tried only when the environment sets one): the sgemm step measures both, and PyTorch
# runs with the one that gave the higher sgemm peak (BENCH_PROBE=2: each PyTorch
# implementation probes both). OpenBLAS threads inside PyTorch: "1"
# (OPENBLAS_NUM_THREADS=1) or "team" (unset: the OpenMP team's size); "inherit" leaves
# the variable as it is (BENCH_PROBE=0).
if [[ $probe == 0 ]]; then
  thread_cands=("${fixed_threads:-$ncpu}") core_cands=(env) bt_cands=(inherit)
else
  if [[ -n $fixed_threads ]]; then thread_cands=("$fixed_threads")
  elif ((ncpu > 1)); then thread_cands=("$ncpu" 1)
  else thread_cands=(1)
  fi
  core_cands=(env)
  [[ -n ${OPENBLAS_CORETYPE:-}${OPENBLAS_L2_SIZE:-} ]] && core_cands+=(auto)
  bt_cands=(1 team)
fi

# blas_env CORE BT -> the arguments of env(1) that make that OpenBLAS setting, one per line
blas_env() {
  local args=()
  [[ $1 == auto ]] && args+=(-u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE)
  case $2 in 1) args+=(OPENBLAS_NUM_THREADS=1) ;; team) args+=(-u OPENBLAS_NUM_THREADS) ;; esac
  ((${#args[@]} == 0)) || printf '%s\n' "${args[@]}"
}
# in_blas_env CORE BT CMD... -> runs CMD with that OpenBLAS setting
in_blas_env() {
  local ea=()
  mapfile -t ea < <(blas_env "$1" "$2")
  shift 2
  env "${ea[@]}" "$@"
}
core_desc() { [[ $1 == auto ]] && echo "OPENBLAS_CORETYPE/L2_SIZE unset" || echo "environment as inherited"; }

# The environment: libraries as seqbench_bench_sgemm loads them under each kernel setting,
# the rest from bench_env.py (CPU, compiler and flags, torch, variables).
info_args=()
for core in "${core_cands[@]}"; do
  in_blas_env "$core" inherit "$sgemm_bin" --info >"$tmp/info-$core" ||
    die "$sgemm_bin --info failed (hint: run it by hand to see why)"
  info_args+=(--info "$core=$tmp/info-$core")
done
env_header=$("$py" "$root/tools/bench/bench_env.py" collect --build "$build" --out "$tmp/env.json" \
  --load-start "$load_start" "${info_args[@]}") || die "bench_env.py failed (hint: run it by hand)"
declare -A core_name
for core in "${core_cands[@]}"; do
  core_name[$core]=$(sed -n 's/^openblas_core=//p' "$tmp/info-$core")
done
# The ISA oneDNN dispatches to (ONEDNN_MAX_CPU_ISA lowers it): in the title of latest.md and
# a column of every CSV, since docs/performance.md keeps one table per ISA.
onednn_isa=$(sed -n 's/^onednn_isa=//p' "$tmp/info-${core_cands[0]}")
onednn_isa=${onednn_isa:-unknown}

if [[ $probe == 0 ]]; then
  setting_line="settings: not probed (BENCH_PROBE=0): ${thread_cands[0]} threads, environment as it is"
else
  setting_line="settings: probed per implementation (a 1/$probe_div-length step, 1 warm-up + $probe_steps timed, fastest wins): threads ${thread_cands[*]}"
  setting_line+="; PyTorch also OPENBLAS_NUM_THREADS=1 or unset"
  if ((${#core_cands[@]} > 1)); then
    if [[ $probe == 2 ]]; then setting_line+=", OPENBLAS_CORETYPE/L2_SIZE inherited or unset"
    else setting_line+=", OpenBLAS kernels of the higher sgemm peak (OPENBLAS_CORETYPE/L2_SIZE inherited or unset)"
    fi
  fi
fi
header="$env_header
$setting_line; OMP_WAIT_POLICY=${OMP_WAIT_POLICY:-<unset>}
steps: seqbench $ours_warmup warmup + $ours_steps timed, PyTorch $torch_warmup + $torch_steps (median reported); Adam lr 1e-3, clip 1.0
attention group: 1 thread, $attn_warmup warmup + at least $attn_steps timed steps (more until 300 ms), n = $attn_ns
mixers group: one step of a mixer alone (forward, loss sum(w*y), backward, Adam lr 1e-3, no clip), steps as above
date: $date_utc, commit $commit"
echo "$header"
echo "load average (1 min) at start: $load_start on $ncpu cores"
awk -v l="$load_start" 'BEGIN { exit !(l > 0.5) }' &&
  echo "warning: other jobs are running on this machine; the numbers will be noisy"
echo

# field KEY LINE -> the value of KEY=... in a key=value line
field() { tr ' ' '\n' <<<"$2" | sed -n "s/^$1=//p"; }

# The sgemm peak: C = A B at n = 2048 with OpenBLAS (each kernel setting) and oneDNN, at
# every thread count a row may use. peak[TH] is the best of them at TH threads, each
# library's best product (a peak; the median is printed beside it). Measured before the
# workloads and again after them (the load of a shared machine changes in between), the
# higher one counts.
sg_threads=$(
  {
    echo 1
    echo "$ncpu"
    printf '%s\n' "${thread_cands[@]}"
    printf '%s\n' "${WORKLOADS[@]}" | grep -o '@[0-9]*' | tr -d @
  } | sort -n -u | paste -sd, -
)
declare -A peak peak_by blas_best blas_best_core
sgemm_rows=()
sgemm_csv_lines=()
# measure_sgemm WHEN -> updates peak, peak_by, blas_best(_core) and the table rows
measure_sgemm() {
  local when=$1 src lib core out line th gf who
  echo "running sgemm peak ($when; n=$sgemm_n, threads $sg_threads) ..." >&2
  for src in "${core_cands[@]/#/openblas:}" onednn:-; do
    lib=${src%%:*} core=${src#*:}
    if [[ $lib == openblas ]]; then
      out=$(in_blas_env "$core" team "$sgemm_bin" --lib openblas --n "$sgemm_n" --threads "$sg_threads" --reps "$sgemm_reps") || out=
    else
      out=$("$sgemm_bin" --lib onednn --n "$sgemm_n" --threads "$sg_threads" --reps "$sgemm_reps") || out=
    fi
    [[ -n $out ]] || { echo "  sgemm $src failed" >&2; continue; }
    while read -r line; do
      echo "  $line" >&2
      th=$(field threads "$line") gf=$(field gflops_best "$line")
      if [[ $lib == openblas ]]; then
        who="OpenBLAS $(field core "$line") ($core)"
        sgemm_rows+=("| $when | OpenBLAS | $(field core "$line") ($(core_desc "$core")) | $th | $(field gflops "$line") | $gf |")
      else
        who="oneDNN"
        sgemm_rows+=("| $when | oneDNN | - | $th | $(field gflops "$line") | $gf |")
      fi
      sgemm_csv_lines+=("$when,$lib,$(field core "$line"),$core,$th,$sgemm_n,$(field reps "$line"),$(field ms "$line"),$(field gflops "$line"),$gf")
      if awk -v a="$gf" -v b="${peak[$th]:-0}" 'BEGIN { exit !(a > b) }'; then
        peak[$th]=$gf peak_by[$th]="$who, $when"
      fi
      if [[ $lib == openblas ]] && awk -v a="$gf" -v b="${blas_best[$th]:-0}" 'BEGIN { exit !(a > b) }'; then
        blas_best[$th]=$gf blas_best_core[$th]=$core
      fi
    done <<<"$out"
  done
}
measure_sgemm start
peak_text() { echo "sgemm peak (n=$sgemm_n): ${peak[$ncpu]:-?} GFLOP/s on $ncpu threads (${peak_by[$ncpu]:-?}), ${peak[1]:-?} on 1 (${peak_by[1]:-?})"; }
# PyTorch's OpenBLAS kernel candidates: those of the best OpenBLAS sgemm at 1 and at nproc
# threads (one setting unless they disagree), or all of them with BENCH_PROBE=2.
if [[ $probe == 2 ]]; then
  torch_core_cands=("${core_cands[@]}")
else
  mapfile -t torch_core_cands < <(printf '%s\n' "${blas_best_core[1]:-${core_cands[0]}}" \
    "${blas_best_core[$ncpu]:-${core_cands[0]}}" | awk '!seen[$0]++')
fi
peak_text
echo

# run_one TASK B T I H C IMPL TH CORE BT WARMUP STEPS [EXTRA FLAGS...] -> the
# implementation's key=value line(s); TH may be a list (1,2) for torch (one line per count).
# TASK mixer (the mixers group): B batch, T tokens N, I width E, H heads, C d_state, IMPL
# ours:MIXER or torch:MIXER, and the extra flags pass --chunk.
# run_prefix (e.g. timeout 30) goes before the program; torch_probe_args after PyTorch's flags.
run_prefix=() torch_probe_args=()
run_one() {
  local task=$1 B=$2 T=$3 I=$4 H=$5 C=$6 impl=$7 th=$8 core=$9 bt=${10} warm=${11} steps=${12}
  shift 12
  local what=${impl%%:*} rest=${impl#*:}
  local cell=${rest%@*}
  local io=()
  if [[ $task == mixer ]]; then
    case $what in
      ours)
        "${run_prefix[@]}" "$mixer_bin" --mixer "$cell" --B "$B" --N "$T" --E "$I" --heads "$H" \
          --d-state "$C" --threads "$th" --warmup "$warm" --steps "$steps" "$@" ;;
      torch)
        in_blas_env "$core" "$bt" "${run_prefix[@]}" "$py" "$root/tools/bench/torch_mixers.py" --mixer "$cell" \
          --B "$B" --N "$T" --E "$I" --heads "$H" --d-state "$C" --threads "$th" \
          --warmup "$warm" --steps "$steps" "${torch_probe_args[@]}" "$@" ;;
      *) die "unknown mixer implementation '$impl' (hint: ours:MIXER or torch:MIXER)" ;;
    esac
    return
  fi
  [[ $task == copy ]] || io=(--input "$I" --classes "$C")
  case $what in
    ours | onednn)
      "${run_prefix[@]}" "$cell_bin" --cell "$cell" --backend "$what" --task "$task" --batch "$B" \
        --T "$T" "${io[@]}" --hidden "$H" --threads "$th" --warmup "$warm" --steps "$steps" "$@" ;;
    torch)
      in_blas_env "$core" "$bt" "${run_prefix[@]}" "$py" "$root/tools/bench/torch_cells.py" --cell "$cell" --task "$task" \
        --batch "$B" --T "$T" "${io[@]}" --hidden "$H" --threads "$th" \
        --warmup "$warm" --steps "$steps" "${torch_probe_args[@]}" "$@" ;;
    *) die "unknown implementation '$impl' (hint: ours:CELL, onednn:lstm or torch:CELL)" ;;
  esac
}

# setting_label WHAT TH CORE BT -> how the table names a setting
setting_label() {
  if [[ $1 == torch ]]; then
    local bt=$4
    [[ $bt == inherit ]] && bt=${OPENBLAS_NUM_THREADS:-team}
    echo "th=$2, blas_th=$bt, ${core_name[$3]:-?} ($3)"
  else
    echo "th=$2"
  fi
}

# choose TASK B T I H C IMPL [EXTRA...] -> sets ch_th ch_core ch_bt: the fastest candidate
# setting of IMPL in a short probe (a 1/probe_div-length sequence, min of probe_steps steps);
# every candidate's time goes to probe_lines. PyTorch's thread counts run in one process per
# OpenBLAS setting, fewest threads first. Once one candidate has a time, the others get
# 6 s + 4x that per step they run (an oversubscribed setting can be 50x slower on a busy
# machine), and what they printed before the limit still counts; PyTorch stops timing a
# thread count after a step 3x slower than the best so far.
probe_lines=()
probe_md=()
choose() {
  local task=$1 B=$2 T=$3 I=$4 H=$5 C=$6 impl=$7
  shift 7
  local what=${impl%%:*} rest=${impl#*:}
  local pT=$((T / probe_div))
  [[ $task == copy ]] && pT=$T  # the copy rows are short already (L = T + 20)
  # the mixers: at least one chunk of 64 tokens (the whole sequence when it is shorter)
  [[ $task == mixer ]] && ((pT < 64)) && pT=$((T < 64 ? T : 64))
  ((pT >= 2)) || pT=2
  ch_core=${torch_core_cands[0]} ch_bt=${bt_cands[0]} ch_ms='' ch2_ms='' ch_pT=$pT
  if [[ $rest == *@* ]]; then
    ch_th=${rest#*@}
    [[ $what == torch ]] || return 0
    local ths=("$ch_th")
  else
    ch_th=${thread_cands[0]}
    local ths=("${thread_cands[@]}")
  fi
  local cands=() core bt t
  if [[ $what == torch ]]; then
    for core in "${torch_core_cands[@]}"; do
      for bt in "${bt_cands[@]}"; do
        local list=()
        for t in $(printf '%s\n' "${ths[@]}" | sort -n); do
          # at 1 thread OpenBLAS runs 1 thread either way: probe it once (with bt 1)
          [[ $bt == team && $t == 1 && " ${bt_cands[*]} " == *" 1 "* ]] && continue
          list+=("$t")
        done
        ((${#list[@]} > 0)) && cands+=("$core $bt $(IFS=,; echo "${list[*]}")")
      done
    done
  else
    for t in "${ths[@]}"; do cands+=("- - $t"); done
  fi
  # one candidate process with one thread count: nothing to choose
  ((${#cands[@]} == 1)) && [[ ${cands[0]} != *,* ]] && return 0
  local best_ms='' summary='' c out line ms th n res=()
  for c in "${cands[@]}"; do
    read -r core bt t <<<"$c"
    run_prefix=() torch_probe_args=(--stop-factor 3)
    if [[ -n $best_ms ]]; then
      n=$(tr ',' '\n' <<<"$t" | wc -l)
      run_prefix=(timeout "$(awk -v b="$best_ms" -v s=$((1 + n * probe_steps)) 'BEGIN { printf "%d", 6 + 4 * b * s / 1000 }')")
      torch_probe_args+=(--stop-above-ms "$(awk -v b="$best_ms" 'BEGIN { printf "%.0f", 3 * b }')")
    fi
    [[ $what == torch ]] || torch_probe_args=()
    out=$(run_one "$task" "$B" "$pT" "$I" "$H" "$C" "$impl" "$t" "$core" "$bt" 1 "$probe_steps" "$@") || {
      summary+="$(setting_label "$what" "$t" "$core" "$bt"): stopped (failed or over the time limit); "
    }
    run_prefix=() torch_probe_args=()
    while read -r line; do
      ms=$(field ms_min "$line")
      [[ -n $ms ]] || continue
      th=$(field threads "$line")
      probe_lines+=("$id,$impl,$pT,$th,$core,$bt,$ms")
      summary+="$(setting_label "$what" "$th" "$core" "$bt"): $ms ms; "
      res+=("$ms $th $core $bt")
      if [[ -z $best_ms ]] || awk -v a="$ms" -v b="$best_ms" 'BEGIN { exit !(a < b) }'; then
        best_ms=$ms
      fi
    done <<<"$out"
  done
  ((${#res[@]} > 0)) || { echo "  probe of $impl failed; running the first candidate" >&2; return 0; }
  # the fastest, and the runner-up in case the fastest collapses in the timed run
  mapfile -t res < <(printf '%s\n' "${res[@]}" | sort -g -k1,1)
  read -r ch_ms ch_th ch_core ch_bt <<<"${res[0]}"
  ((${#res[@]} > 1)) && read -r ch2_ms ch2_th ch2_core ch2_bt <<<"${res[1]}"
  ch_pT=$pT
  echo "  probe (T=$pT): ${summary%; } -> $(setting_label "$what" "$ch_th" "$ch_core" "$ch_bt")" >&2
  probe_md+=("| $id | $impl | $pT | ${summary%; } | $(setting_label "$what" "$ch_th" "$ch_core" "$ch_bt") |")
}

# plain_lstm IMPL -> true for the rows whose flop count is an LSTM's (the GEMM-bound ones)
plain_lstm() { local c=${1#*:}; c=${c%@*}; [[ $c == lstm || $c == nn.LSTM ]]; }

# time_impl TASK B T I H C IMPL [EXTRA FLAGS...] -> line: IMPL's timed key=value line ("" when
# it failed), at the setting its probe chose (ch_th ch_core ch_bt); uses id and key (the
# row's workload id and id/IMPL) for the probe table and the notes.
time_impl() {
  local task=$1 B=$2 T=$3 I=$4 H=$5 C=$6 impl=$7
  shift 7
  local extra="$*" what=${impl%%:*} warm steps got got2 line2 note
  # shellcheck disable=SC2086 # extra is a list of flags
  choose "$task" "$B" "$T" "$I" "$H" "$C" "$impl" $extra
  if [[ $what == torch ]]; then warm=$torch_warmup steps=$torch_steps; else warm=$ours_warmup steps=$ours_steps; fi
  # shellcheck disable=SC2086
  line=$(run_one "$task" "$B" "$T" "$I" "$H" "$C" "$impl" "$ch_th" "$ch_core" "$ch_bt" "$warm" "$steps" $extra | tail -n 1) || line=
  # On a busy machine the probe's pick can collapse in the timed run (an oversubscribed
  # OpenMP team): above 4x what the probe predicted (the probe's sequence is 1/probe_div
  # as long; PyTorch's step grows faster than its length), the runner-up is timed too
  # and the faster of the two is kept (the runner-up is stopped once it is slower).
  got=$(field ms_per_step "$line")
  if [[ -n $got && -n $ch_ms && -n $ch2_ms ]] &&
     awk -v m="$got" -v p="$ch_ms" -v r="$((T / ch_pT))" 'BEGIN { exit !(m > 4 * p * r) }'; then
    echo "  $(setting_label "$what" "$ch_th" "$ch_core" "$ch_bt") took $got ms, over 4x the probe's prediction; timing the runner-up" >&2
    # bounded by the pick's own time: a runner-up slower than the pick is stopped
    run_prefix=(timeout "$(awk -v m="$got" -v n=$((warm + steps)) 'BEGIN { printf "%d", 10 + 1.2 * m * n / 1000 }')")
    [[ $what == torch ]] && torch_probe_args=(--stop-above-ms "$got")
    # shellcheck disable=SC2086
    line2=$(run_one "$task" "$B" "$T" "$I" "$H" "$C" "$impl" "$ch2_th" "$ch2_core" "$ch2_bt" "$warm" "$steps" $extra | tail -n 1) || line2=
    run_prefix=() torch_probe_args=()
    got2=$(field ms_per_step "$line2")
    note="$key: the probe's pick $(setting_label "$what" "$ch_th" "$ch_core" "$ch_bt") took $got ms/step (about $(awk -v p="$ch_ms" -v r="$((T / ch_pT))" 'BEGIN { printf "%.0f", p * r }') predicted)"
    if [[ -n $got2 ]] && awk -v a="$got2" -v b="$got" 'BEGIN { exit !(a < b) }'; then
      echo "  $line2" >&2
      line=$line2 ch_th=$ch2_th ch_core=$ch2_core ch_bt=$ch2_bt
      notes+=("$note; the runner-up's $got2 ms is reported")
    else
      notes+=("$note; the runner-up took ${got2:-longer} ms, so the pick's is reported")
    fi
  fi
}

declare -A ms best rss gflops setting row_th row_core row_bt pct floor_ms
rows=()
notes=()
declare -A row_flop  # a step's LSTM-eq. GFLOP
floor_ids=()         # workloads with plain LSTM rows: "id gflop"
failed=0
for w in "${WORKLOADS[@]}"; do
  IFS='|' read -r id task B T I H C impls extra <<<"$w"
  [[ -n $only && " $only " != *" $id "* ]] && continue
  [[ $task == copy ]] && L=$((T + 20)) || L=$T
  # LSTM-equivalent work: forward 2*L*B*4H*(I+H) flops, backward twice that.
  gflop=$(awk -v L="$L" -v B="$B" -v H="$H" -v I="$I" 'BEGIN { printf "%.4f", 6 * L * B * 4 * H * (I + H) / 1e9 }')
  [[ " $impls " == *":lstm"* || " $impls " == *":nn.LSTM"* ]] && floor_ids+=("$id $gflop")
  for impl in $impls; do
    key=$id/$impl
    what=${impl%%:*}
    echo "running $key ..." >&2
    # shellcheck disable=SC2086 # extra is a list of flags
    time_impl "$task" "$B" "$T" "$I" "$H" "$C" "$impl" $extra
    if [[ -n $(field ms_per_step "$line") ]]; then
      echo "  $line" >&2
      ms[$key]=$(field ms_per_step "$line")
      best[$key]=$(field ms_min "$line")
      rss[$key]=$(field peak_rss_mb "$line")
      row_th[$key]=$(field threads "$line")
      setting[$key]=$(setting_label "$what" "${row_th[$key]}" "$ch_core" "$ch_bt")
      if [[ $what == torch ]]; then row_core[$key]=$ch_core row_bt[$key]=$ch_bt; fi
      row_flop[$key]=$gflop
      gflops[$key]=$(awk -v g="$gflop" -v m="${ms[$key]}" 'BEGIN { printf "%.1f", g * 1e3 / m }')
    else
      echo "  $key failed" >&2
      failed=1
    fi
    rows+=("$key|$task|$B|$T|$I|$H")
  done
done

# The mixers group (MIXER_SHAPES): each mixer at each shape, ours then PyTorch's, each at the
# setting its probe chose (probe: at least 64 tokens), then every mixer once on the same
# weights in both (seqbench_bench_mixer --dump, torch_mixers.py --check).
declare -A mix_val   # KEY/FIELD -> fwd_ms, bwd_ms, held_mb, loss0, y_rms0 of a mixer row
mix_rows=()          # "key|B|N|E|heads|d_state|chunk" per implementation
mix_pairs=()         # "id|mixer|B|N|E|heads|d_state|chunk" per table row
mix_check=()         # "mixer|worst_rel|on|ok"
mix_notes=()         # the notes of time_impl about mixer rows
if ((run_mixers)); then
  for shape in "${MIXER_SHAPES[@]}"; do
    IFS='|' read -r id B N E heads dstate lru_dstate chunk <<<"$shape"
    for mixer in $MIXERS; do
      ds=$dstate
      [[ $mixer == lru ]] && ds=$lru_dstate
      mix_pairs+=("$id|$mixer|$B|$N|$E|$heads|$ds|$chunk")
      mix_impls=("ours:$mixer")
      [[ $mixer_refs == *" $mixer "* ]] && mix_impls+=("torch:$mixer")
      for impl in "${mix_impls[@]}"; do
        key=$id/$impl
        what=${impl%%:*}
        echo "running $key ..." >&2
        n_notes=${#notes[@]}
        time_impl mixer "$B" "$N" "$E" "$heads" "$ds" "$impl" --chunk "$chunk"
        if ((${#notes[@]} > n_notes)); then  # at most one: it goes under the mixers table
          mix_notes+=("${notes[-1]}")
          unset 'notes[-1]'
        fi
        if [[ -n $(field ms_per_step "$line") ]]; then
          echo "  $line" >&2
          ms[$key]=$(field ms_per_step "$line")
          best[$key]=$(field ms_min "$line")
          rss[$key]=$(field peak_rss_mb "$line")
          row_th[$key]=$(field threads "$line")
          setting[$key]=$(setting_label "$what" "${row_th[$key]}" "$ch_core" "$ch_bt")
          if [[ $what == torch ]]; then row_core[$key]=$ch_core row_bt[$key]=$ch_bt; fi
          for f in fwd_ms bwd_ms held_mb loss0 y_rms0; do mix_val[$key/$f]=$(field "$f" "$line"); done
        else
          echo "  $key failed" >&2
          failed=1
        fi
        mix_rows+=("$key|$B|$N|$E|$heads|$ds|$chunk")
      done
    done
  done
  IFS='|' read -r cB cN cE cheads cds cchunk <<<"$MIXER_CHECK"
  for mixer in $MIXERS; do
    [[ $mixer_refs == *" $mixer "* ]] || continue
    echo "running mixers check $mixer (same weights, B=$cB N=$cN E=$cE) ..." >&2
    ck=$tmp/mixer-check-$mixer.txt
    size_args=(--mixer "$mixer" --B "$cB" --N "$cN" --E "$cE" --heads "$cheads" --d-state "$cds" --chunk "$cchunk")
    line=
    if "$mixer_bin" "${size_args[@]}" --dump "$ck" >/dev/null; then
      line=$("$py" "$root/tools/bench/torch_mixers.py" "${size_args[@]}" --check "$ck" \
        --tol "$MIXER_CHECK_TOL" | tail -n 1) || true
    fi
    if [[ -n $(field worst_rel "$line") ]]; then
      echo "  $line" >&2
      mix_check+=("$mixer|$(field worst_rel "$line")|$(field on "$line")|$(field ok "$line")")
      [[ $(field ok "$line") == yes ]] || failed=1
    else
      echo "  mixers check of $mixer failed" >&2
      mix_check+=("$mixer|-|-|failed")
      failed=1
    fi
  done
fi

# The plain LSTM rows against the sgemm peak at their thread count (measured again now,
# the higher of the two), and each workload's GEMM floor at the machine's peak.
floor_lines=()
over_peak=0
if ((${#rows[@]} > 0)); then
  measure_sgemm end
  for r in "${rows[@]}"; do
    key=${r%%|*}
    p=${peak[${row_th[$key]:-}]:-}
    if plain_lstm "${key#*/}" && [[ -n $p && -n ${row_flop[$key]:-} ]]; then
      pct[$key]=$(awk -v g="${gflops[$key]}" -v p="$p" 'BEGIN { printf "%.0f", 100 * g / p }')
      floor_ms[$key]=$(awk -v g="${row_flop[$key]}" -v p="$p" 'BEGIN { printf "%.1f", g * 1e3 / p }')
      ((pct[$key] <= 100)) || over_peak=1
    fi
  done
  machine_peak=0 machine_peak_th=
  for th in "${!peak[@]}"; do
    if awk -v a="${peak[$th]}" -v b="$machine_peak" 'BEGIN { exit !(a > b) }'; then
      machine_peak=${peak[$th]} machine_peak_th=$th
    fi
  done
  for f in "${floor_ids[@]}"; do
    floor_lines+=("$(awk -v id="${f% *}" -v g="${f#* }" -v p="$machine_peak" \
      'BEGIN { printf "%s %.1f GFLOP -> %.1f ms", id, g, g * 1e3 / p }')")
  done
  echo "$(peak_text) (the higher of the two measurements)" >&2
fi

# Attention scaling (workload group `attention`; issue 6, analysis 2): one causal forward +
# backward of each attention core (B=1, H=1, D=64, window w=128: every sparse kind at the
# same per-query budget) at each n, one process per (kind, n) so that each peak RSS is that
# shape's alone, and PyTorch's plain causal softmax(QK^T/sqrt(D)) V with autograd beside
# ours. Always 1 thread: the slopes describe the algorithms, not the thread scaling.
# PyTorch's OpenBLAS runs with the kernel setting that won the 1-thread sgemm probe.
ATTN_WINDOW=128
# Slopes fit n >= this: below 1024 fixed costs flatten the curves (a quick run has no
# two lengths that large, so it fits all of them).
ATTN_FIT_MIN_N=1024
[[ $quick == 1 ]] && ATTN_FIT_MIN_N=256
# Targets at n = 8192 (issue 6): label | A | B | kind | bound. speedup: B's ms / A's ms >
# bound; memory: A's memory / B's < bound, where memory is held_bytes() for our cores and
# peak - base RSS for PyTorch. Our full core never forms the n x n matrix (it holds
# O(n D) caches and a 64 x n score block), so "less than 1/4 of full attention's memory"
# is checked against both: our full core and PyTorch's dense one.
ATTN_TARGET_N=8192
ATTN_TARGETS=(
  "routing vs full attention, fwd+bwd speed|ours:routing|ours:full|speedup|1"
  "smyrf vs full attention, fwd+bwd speed|ours:smyrf|ours:full|speedup|1"
  "routing / our full attention (no n×n), memory|ours:routing|ours:full|memory|0.25"
  "smyrf / our full attention (no n×n), memory|ours:smyrf|ours:full|memory|0.25"
  "routing / PyTorch full attention (n×n), memory|ours:routing|torch:full|memory|0.25"
  "smyrf / PyTorch full attention (n×n), memory|ours:smyrf|torch:full|memory|0.25"
)
declare -A attn
attn_impls=()
attn_done_ns=()
if [[ -z $only || " $only " == *" attention "* ]]; then
  for kind in $ATTN_KINDS; do attn_impls+=("ours:$kind"); done
  attn_impls+=("torch:full")
  attn_core=${blas_best_core[1]:-${core_cands[0]}}
  attn_torch_setting="th=1, blas_th=1, ${core_name[$attn_core]:-?} ($attn_core)"
  for n in $attn_ns; do
    attn_done_ns+=("$n")
    for impl in "${attn_impls[@]}"; do
      kind=${impl#*:}
      echo "running attention/$impl n=$n ..." >&2
      if [[ $impl == torch:* ]]; then
        ((n <= attn_torch_max_n)) || continue
        line=$(OMP_NUM_THREADS=1 in_blas_env "$attn_core" 1 "$py" "$root/tools/bench/torch_attention_scaling.py" \
          --n "$n" --threads 1 --warmup "$attn_warmup" --steps "$attn_steps" | tail -n 1) || line=
      else
        line=$(OMP_NUM_THREADS=1 "$attn_scaling_bin" --kind "$kind" --n "$n" --window "$ATTN_WINDOW" \
          --threads 1 --warmup "$attn_warmup" --steps "$attn_steps" | tail -n 1) || line=
      fi
      if [[ -n $(field ms "$line") ]]; then
        echo "  $line" >&2
        attn[$impl/$n]=$line
      else
        echo "  attention/$impl n=$n failed" >&2
        failed=1
      fi
    done
  done
fi

# attn_get IMPL N KEY -> a field of that run's line ("" when it did not run); mem is the
# memory the plot and the targets use: held_mb for ours, peak - base RSS for PyTorch.
attn_get() {
  local line=${attn[$1/$2]:-}
  [[ -z $line ]] && return 0
  if [[ $3 == mem ]]; then
    if [[ $1 == torch:* ]]; then
      awk -v p="$(field peak_rss_mb "$line")" -v b="$(field base_rss_mb "$line")" 'BEGIN { printf "%.1f", p - b }'
    else
      field held_mb "$line"
    fi
  else
    field "$3" "$line"
  fi
}

# attn_slope IMPL KEY -> least-squares slope of log(KEY) against log(n) over n >= ATTN_FIT_MIN_N
attn_slope() {
  local n pts=()
  for n in "${attn_done_ns[@]}"; do
    ((n >= ATTN_FIT_MIN_N)) || continue
    local y
    y=$(attn_get "$1" "$n" "$2")
    [[ -n $y ]] && pts+=("$n $y")
  done
  ((${#pts[@]} >= 2)) || { echo "-"; return 0; }
  printf '%s\n' "${pts[@]}" | awk '$2 > 0 { x = log($1); y = log($2); sx += x; sy += y; sxx += x * x; sxy += x * y; m++ }
    END { d = m * sxx - sx * sx; if (m < 2 || d == 0) print "-"; else printf "%.2f", (m * sxy - sx * sy) / d }'
}

attn_md=()
attn_target_lines=()
if ((${#attn_done_ns[@]} > 0)); then
  head_ms="| n |" head_mem="| n |" rule="|---:|"
  for impl in "${attn_impls[@]}"; do
    head_ms+=" $impl |" head_mem+=" $impl |" rule+="---:|"
  done
  attn_md+=("Time of one forward + backward, ms (median; 1 thread, B=1, H=1, D=64, w=$ATTN_WINDOW; PyTorch: $attn_torch_setting):" ""
    "$head_ms ours full / PyTorch |" "$rule---:|")
  for n in "${attn_done_ns[@]}"; do
    row="| $n |"
    for impl in "${attn_impls[@]}"; do row+=" $(attn_get "$impl" "$n" ms) |"; done
    a=$(attn_get ours:full "$n" ms) b=$(attn_get torch:full "$n" ms)
    r=-
    [[ -n $a && -n ${ms[$kt]:-} ]] && r=$(awk -v a="$a" -v b="$b" 'BEGIN { printf "%.2f", a / b }')
    attn_md+=("$row $r |")
  done
  attn_md+=("" "Memory, MB: held_bytes() of our cores after backward; PyTorch: peak minus base RSS (what its step added); n×n: one dense float score matrix:" ""
    "$head_mem n×n |" "$rule---:|")
  for n in "${attn_done_ns[@]}"; do
    row="| $n |"
    for impl in "${attn_impls[@]}"; do row+=" $(attn_get "$impl" "$n" mem) |"; done
    attn_md+=("$row $(awk -v n="$n" 'BEGIN { printf "%.1f", n * n * 4 / 1048576 }') |")
  done
  attn_md+=("" "Log-log slopes (least squares over n >= $ATTN_FIT_MIN_N; ~2 = quadratic, ~1 = linear):" ""
    "| implementation | time slope | memory slope |" "|---|---:|---:|")
  for impl in "${attn_impls[@]}"; do
    attn_md+=("| $impl | $(attn_slope "$impl" ms) | $(attn_slope "$impl" mem) |")
  done
  for tg in "${ATTN_TARGETS[@]}"; do
    IFS='|' read -r label a b kind bound <<<"$tg"
    if [[ $kind == speedup ]]; then
      va=$(attn_get "$a" "$ATTN_TARGET_N" ms) vb=$(attn_get "$b" "$ATTN_TARGET_N" ms)
    else
      va=$(attn_get "$a" "$ATTN_TARGET_N" mem) vb=$(attn_get "$b" "$ATTN_TARGET_N" mem)
    fi
    [[ -z $va || -z $vb ]] && continue
    if [[ $kind == speedup ]]; then
      value=$(awk -v a="$va" -v b="$vb" 'BEGIN { printf "%.2f", b / a }') goal="> ${bound}x"
      ok=$(awk -v v="$value" -v t="$bound" 'BEGIN { print (v > t) ? "yes" : "no" }')
    else
      value=$(awk -v a="$va" -v b="$vb" 'BEGIN { printf "%.3f", a / b }') goal="< ${bound}x"
      ok=$(awk -v v="$value" -v t="$bound" 'BEGIN { print (v < t) ? "yes" : "no" }')
    fi
    attn_target_lines+=("| $label, n=$ATTN_TARGET_N | ${value}x | $goal | $ok |")
  done
fi

load_end=$(cut -d' ' -f1 /proc/loadavg)

# lookup WORKLOAD IMPL_OR_PATH -> ms of IMPL in WORKLOAD (a path "w/impl" names another)
lookup() { if [[ $2 == */* ]]; then echo "${ms[$2]:-}"; else echo "${ms[$1/$2]:-}"; fi; }

target_lines=()
for tg in "${TARGETS[@]}"; do
  IFS='|' read -r label wid a b kind bound <<<"$tg"
  ma=$(lookup "$wid" "$a")
  [[ -z $ma ]] && continue
  if [[ $kind == ms ]]; then
    value=$ma unit=" ms" ok=$(awk -v v="$ma" -v t="$bound" 'BEGIN { print (v <= t) ? "yes" : "no" }')
    goal="<= $bound ms"
  else
    mb=$(lookup "$wid" "$b")
    [[ -z $mb ]] && continue
    if [[ $kind == speedup ]]; then
      value=$(awk -v a="$ma" -v b="$mb" 'BEGIN { printf "%.2f", b / a }') goal=">= ${bound}x"
      ok=$(awk -v v="$value" -v t="$bound" 'BEGIN { print (v >= t) ? "yes" : "no" }')
    else
      value=$(awk -v a="$ma" -v b="$mb" 'BEGIN { printf "%.2f", a / b }') goal="<= ${bound}x"
      ok=$(awk -v v="$value" -v t="$bound" 'BEGIN { print (v <= t) ? "yes" : "no" }')
    fi
    unit="x"
  fi
  target_lines+=("| $label | $value$unit | $goal | $ok |")
done

# Numerical check of the recurrent cells: every bench cell with a PyTorch reference runs one
# forward and backward on CELL_CHECK's small shape (seqbench_bench_cell --dump), which
# torch_cells.py --check recomputes in float64 from the same weights: y, dx and every
# parameter gradient, failing above CELL_CHECK_TOL. rel_lstm's small nu and rho, and the
# weights times 4 (--dump-scale: peaked attention), make its relevant set fill and then
# swap members within T steps (the check's line counts the swaps).
cell_check=()
IFS='|' read -r kB kT kI kH knu krho kscale <<<"$CELL_CHECK"
# oneDNN's LSTM primitive (onednn:lstm) is checked against the same reference as ours.
check_cells=
for c in $bench_cells; do [[ $cell_refs == *" $c "* ]] && check_cells+="$c "; done
[[ " $check_cells" == *" lstm "* ]] && check_cells+="onednn:lstm"
for cb in $check_cells; do
  c=${cb#*:} backend=ours
  [[ $cb == *:* ]] && backend=${cb%%:*}
  echo "running cells check $cb (same weights, B=$kB T=$kT I=$kI H=$kH) ..." >&2
  ck=$tmp/cell-check-$backend-$c.txt
  size_args=(--cell "$c" --batch "$kB" --T "$kT" --input "$kI" --hidden "$kH" --nu "$knu" --rho "$krho")
  line=
  if "$cell_bin" "${size_args[@]}" --backend "$backend" --dump "$ck" --dump-scale "$kscale" >/dev/null; then
    line=$("$py" "$root/tools/bench/torch_cells.py" "${size_args[@]}" --check "$ck" \
      --tol "$CELL_CHECK_TOL" | tail -n 1) || true
  fi
  if [[ -n $(field worst_rel "$line") ]]; then
    echo "  $line" >&2
    cell_check+=("$cb|$(field worst_rel "$line")|$(field on "$line")|$(field ok "$line")|$(field swaps "$line")")
    [[ $(field ok "$line") == yes ]] || failed=1
  else
    echo "  cells check of $cb failed" >&2
    cell_check+=("$cb|-|-|failed|")
    failed=1
  fi
done
cell_chk=
for c in "${cell_check[@]}"; do
  IFS='|' read -r cell worst on ok swaps <<<"$c"
  [[ -n $swaps ]] && worst+=" ($swaps relevant-set swaps)"
  [[ $ok == yes ]] && cell_chk+="$cell $worst, " || cell_chk+="$cell $worst ($on: $ok), "
done
cell_chk=${cell_chk%, }

# Numerical check: seqbench's multi-head attention block (full, causal) against PyTorch on
# the same weights, through a checkpoint (tools/bench/torch_attention_check.py).
attn_bin=$build/tools/bench/seqbench_attention_export
attn_check="not run (no $attn_bin)"
if [[ -x $attn_bin ]]; then
  echo "running attention check against PyTorch ..." >&2
  attn_ck=$(mktemp --suffix=.sbck)
  if "$attn_bin" "$attn_ck" --attention full --B 2 --N 256 --E 64 --heads 4 >/dev/null &&
     attn_check=$("$py" "$root/tools/bench/torch_attention_check.py" "$attn_ck" | tail -n 1); then
    :
  else
    attn_check="FAILED: ${attn_check:-the export or the check did not run}"
    failed=1
  fi
  rm -f "$attn_ck"
fi

# The mixers table: one row per (shape, mixer), ours beside PyTorch's.
mix_md=()
if ((${#mix_pairs[@]} > 0)); then
  mix_md+=("One training step of one mixer alone: forward of x (B, N, E) from the zero state, loss = sum(w ⊙ y),"
    "backward (dx and every parameter gradient), Adam (lr 1e-3). ms/step is the median; each side at the setting its"
    "probe chose. torch/ours is PyTorch's ms over ours (above 1: ours is faster). fwd and bwd: the forward with the loss,"
    "and the backward (the rest of a step is Adam). y_rms: the output's RMS at init (the weights differ, the equations"
    "do not)." ""
    "| mixer | shape | ours ms/step | torch ms/step | torch/ours | ours peak RSS MB | torch peak RSS MB | ours fwd / bwd ms | torch fwd / bwd ms | y_rms ours / torch | setting ours; torch |"
    "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---|")
  for pr in "${mix_pairs[@]}"; do
    IFS='|' read -r id mixer B N E heads ds chunk <<<"$pr"
    ko=$id/ours:$mixer kt=$id/torch:$mixer
    a=${ms[$ko]:-} b=${ms[$kt]:-}
    [[ $mixer_refs == *" $mixer "* ]] || b="no reference"
    r=-
    [[ -n $a && -n ${ms[$kt]:-} ]] && r=$(awk -v a="$a" -v b="$b" 'BEGIN { printf "%.2f", b / a }')
    case $mixer in
      lru | mamba) sh="B=$B N=$N E=$E, d_state $ds" ;;
      *) sh="B=$B N=$N E=$E, $heads heads" ;;
    esac
    mix_md+=("| $mixer | $sh | ${a:-failed} | ${b:-failed} | $r | ${rss[$ko]:--} | ${rss[$kt]:--} | ${mix_val[$ko/fwd_ms]:--} / ${mix_val[$ko/bwd_ms]:--} | ${mix_val[$kt/fwd_ms]:--} / ${mix_val[$kt/bwd_ms]:--} | ${mix_val[$ko/y_rms0]:--} / ${mix_val[$kt/y_rms0]:--} | ${setting[$ko]:--}; ${setting[$kt]:--} |")
  done
  IFS='|' read -r cB cN cE cheads cds cchunk <<<"$MIXER_CHECK"
  chk=
  for c in "${mix_check[@]}"; do
    IFS='|' read -r mixer worst on ok <<<"$c"
    [[ $ok == yes ]] && chk+="$mixer $worst, " || chk+="$mixer $worst ($on: $ok), "
  done
  ((${#mix_notes[@]} == 0)) || mix_md+=("" "${mix_notes[@]/#/- }")
  mix_md+=("" "Chunk 64 everywhere; mamba expands to 2E inside (conv 4, dt rank ceil(E/16)). Same weights (B=$cB, N=$cN, E=$cE, $cheads heads, d_state $cds, chunk $cchunk; ours float32, PyTorch float64; the worst of max|ours - torch| / max|torch| over y, dx and every gradient; fails above $MIXER_CHECK_TOL): ${chk%, }.")
  [[ -z $mixers_no_ref ]] || mix_md+=("" "No PyTorch reference (tools/bench/torch_mixers.py) for: ${mixers_no_ref% }; timed on our side only, not checked.")
fi

mkdir -p "$out_dir"
md=$out_dir/latest.md
csv=$out_dir/latest.csv
attn_csv=$out_dir/attention_scaling.csv
sgemm_csv=$out_dir/sgemm.csv
probes_csv=$out_dir/probes.csv
json=$out_dir/bench-$stamp.json
{
  echo "# Training-step benchmark ($onednn_isa)"
  echo
  echo "    ${header//$'\n'/$'\n'    }"
  echo "    load average (1 min): $load_start at start, $load_end at end, on $ncpu cores"
  echo
  echo "## sgemm peak"
  echo
  echo "$(peak_text). C = A B, n × n floats, row-major; GFLOP/s = 2n³ / the product's time; the peak is the best product, measured before and after the workloads."
  echo
  echo "| when | library | OpenBLAS kernels | threads | GFLOP/s (median) | best |"
  echo "|---|---|---|---:|---:|---:|"
  printf '%s\n' "${sgemm_rows[@]}"
  if ((${#floor_lines[@]} > 0)); then
    echo
    echo "A step's LSTM-eq. work (6·L·B·4H·(I+H) flop) at the machine's peak ($machine_peak GFLOP/s, $machine_peak_th threads):"
    printf '%s; ' "${floor_lines[@]}" | sed 's/; $/./'
    echo
  fi
  if ((${#rows[@]} > 0)); then
    echo
    echo "## Training step"
    echo
    echo "| workload | implementation | setting | B | T | I | H | ms/step (median) | best ms | peak RSS MB | LSTM-eq. GFLOP/s | % of sgemm peak | ms at peak |"
    echo "|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
    for r in "${rows[@]}"; do
      IFS='|' read -r key task B T I H <<<"$r"
      pc=${pct[$key]:+${pct[$key]}%}
      echo "| ${key%%/*} | ${key#*/} | ${setting[$key]:--} | $B | $T | $I | $H | ${ms[$key]:-failed} | ${best[$key]:--} | ${rss[$key]:--} | ${gflops[$key]:--} | ${pc:--} | ${floor_ms[$key]:--} |"
    done
    echo
    echo "setting: th = OpenMP threads (torch.set_num_threads for PyTorch); blas_th = PyTorch's"
    echo "OPENBLAS_NUM_THREADS (team: unset, OpenBLAS uses the OpenMP team); then the OpenBLAS"
    echo "kernel set, (env) with OPENBLAS_CORETYPE/L2_SIZE as inherited, (auto) with them unset."
    echo "% of sgemm peak and ms at peak (plain LSTM rows): the row's LSTM-eq. GFLOP/s against"
    echo "the sgemm peak at the row's thread count, and the step's GFLOP at that peak."
    if ((over_peak)); then
      echo "Above 100%: the row ran while the machine was less busy than during both sgemm"
      echo "measurements (a shared machine's load changes during a run), so the peak at that"
      echo "thread count is underestimated there, and its % and ms at peak overstated."
    fi
    if ((${#notes[@]} > 0)); then
      echo
      printf -- '- %s\n' "${notes[@]}"
    fi
  fi
  if ((${#mix_md[@]} > 0)); then
    echo
    echo "## Sequence mixers"
    echo
    printf '%s\n' "${mix_md[@]}"
  fi
  if ((${#probe_md[@]} > 0)); then
    echo
    echo "## Settings probed"
    echo
    echo "Best of $probe_steps timed step(s) after 1 warm-up, on a sequence 1/$probe_div as long (copy: full length; mixers: at least 64 tokens):"
    echo
    echo "| workload | implementation | probe T | candidates (best ms) | chosen |"
    echo "|---|---|---:|---|---|"
    printf '%s\n' "${probe_md[@]}"
  fi
  if ((${#attn_md[@]} > 0)); then
    echo
    echo "## Attention scaling"
    echo
    printf '%s\n' "${attn_md[@]}"
  fi
  echo
  echo "## Targets"
  echo
  echo "| target | measured | goal | met |"
  echo "|---|---:|---|---|"
  printf '%s\n' "${target_lines[@]}" "${attn_target_lines[@]}"
  echo
  echo "Full causal multi-head attention, seqbench vs PyTorch on the same weights: $attn_check"
  echo
  echo "Recurrent cells, seqbench vs PyTorch on the same weights (one forward of the cell alone and the backward of sum(w ⊙ y); B=$kB, T=$kT, I=$kI, H=$kH, the weights of PyTorch's default init times $kscale, rel_lstm nu $knu rho $krho; ours float32, PyTorch float64; the worst of max|ours - torch| / max|torch| over y, dx and every parameter gradient; fails above $CELL_CHECK_TOL): ${cell_chk:-none run}."
  echo
  echo "ours = seqbench's own cell, onednn = seqbench on oneDNN's LSTM primitive, torch = PyTorch"
  echo "(torch:nn.LSTM fused, torch:CELL a Python step loop as the papers' code runs custom cells);"
  echo "@N = N threads. Speedup = the other's ms / this one's, each at its own best setting."
  echo "Attention: ours:KIND = seqbench's core, torch:full = PyTorch's softmax(QK^T/sqrt(D)) V"
  echo "with autograd. Mixers: ours:MIXER = seqbench's mixer (lib/nn/mixers), torch:MIXER = the same"
  echo "equations in PyTorch as the papers' reference code writes them (tools/bench/torch_mixers.py)."
  [[ -z $cells_no_ref ]] || echo "Registered cells with no PyTorch reference (tools/bench/torch_cells.py), so not in pmnist-cells: ${cells_no_ref% }."
} >"$md"
{
  echo "date,commit,nproc,cpu,torch,workload,impl,setting,threads,openblas_core_setting,openblas_threads,task,B,T,I,H,ms_per_step,ms_min,peak_rss_mb,gflops,pct_sgemm_peak,ms_at_peak,load_start,load_end,heads,d_state,chunk,fwd_ms,bwd_ms,held_mb,loss0,y_rms0,onednn_isa"
  for r in "${rows[@]}"; do
    IFS='|' read -r key task B T I H <<<"$r"
    echo "$date_utc,$commit,$ncpu,\"$cpu\",$torch_version,${key%%/*},${key#*/},\"${setting[$key]:-}\",${row_th[$key]:-},${row_core[$key]:-},${row_bt[$key]:-},$task,$B,$T,$I,$H,${ms[$key]:-},${best[$key]:-},${rss[$key]:-},${gflops[$key]:-},${pct[$key]:-},${floor_ms[$key]:-},$load_start,$load_end,,,,,,,,,$onednn_isa"
  done
  # the mixers: task mixer, T = N tokens, I = H = the width E
  for r in "${mix_rows[@]}"; do
    IFS='|' read -r key B N E heads ds chunk <<<"$r"
    echo "$date_utc,$commit,$ncpu,\"$cpu\",$torch_version,${key%%/*},${key#*/},\"${setting[$key]:-}\",${row_th[$key]:-},${row_core[$key]:-},${row_bt[$key]:-},mixer,$B,$N,$E,$E,${ms[$key]:-},${best[$key]:-},${rss[$key]:-},,,,$load_start,$load_end,$heads,$ds,$chunk,${mix_val[$key/fwd_ms]:-},${mix_val[$key/bwd_ms]:-},${mix_val[$key/held_mb]:-},${mix_val[$key/loss0]:-},${mix_val[$key/y_rms0]:-},$onednn_isa"
  done
} >"$csv"
{
  echo "when,lib,core,core_setting,threads,n,reps,ms,gflops,gflops_best,onednn_isa"
  printf '%s\n' "${sgemm_csv_lines[@]/%/,$onednn_isa}"
} >"$sgemm_csv"
{
  echo "workload,impl,probe_T,threads,core_setting,blas_threads,ms_min"
  ((${#probe_lines[@]} == 0)) || printf '%s\n' "${probe_lines[@]}"
} >"$probes_csv"
outputs="$md, $csv, $sgemm_csv, $probes_csv"
if ((${#attn_done_ns[@]} > 0)); then
  attn_keys="B H N D window clusters rounds threads ms ms_min ms_max fwd_ms bwd_ms peak_rss_mb base_rss_mb held_mb nxn_mb"
  {
    echo "date,commit,nproc,cpu,torch,impl,kind,${attn_keys// /,},mem_mb,load_start,load_end"
    for n in "${attn_done_ns[@]}"; do
      for impl in "${attn_impls[@]}"; do
        line=${attn[$impl/$n]:-}
        [[ -z $line ]] && continue
        vals=
        for k in $attn_keys; do vals+=$(field "$k" "$line"),; done
        echo "$date_utc,$commit,$ncpu,\"$cpu\",$torch_version,$impl,${impl#*:},$vals$(attn_get "$impl" "$n" mem),$load_start,$load_end"
      done
    done
  } >"$attn_csv"
  outputs+=", $attn_csv"
  # The figure: gnuplot data (one block per implementation: n, ms, memory MB) and script
  # beside the PNG, so the figure can be restyled and redrawn with `gnuplot NAME.gp`.
  {
    for impl in "${attn_impls[@]}"; do
      echo "# $impl: n ms mem_mb"
      for n in "${attn_done_ns[@]}"; do
        [[ -n ${attn[$impl/$n]:-} ]] && echo "$n $(attn_get "$impl" "$n" ms) $(attn_get "$impl" "$n" mem)"
      done
      printf '\n\n'
    done
  } >"$out_dir/attention_scaling.dat"
  {
    echo "set terminal pngcairo size 1400,560 font ',11'"
    echo "set output 'attention_scaling.png'"
    echo "set multiplot layout 1,2 title 'One causal attention forward + backward (1 thread, B=1, H=1, D=64, w=$ATTN_WINDOW)'"
    echo "set logscale xy; set autoscale xfix; set xlabel 'n'; set grid; set key top left"
    echo "set title 'time'; set ylabel 'ms (median)'"
    plot=
    for i in "${!attn_impls[@]}"; do plot+="'attention_scaling.dat' index $i using 1:2 with linespoints title '${attn_impls[$i]}', "; done
    echo "plot ${plot%, }"
    echo "set title 'memory (ours: held\\_bytes(); PyTorch: peak - base RSS)'; set ylabel 'MB'"
    plot=
    for i in "${!attn_impls[@]}"; do plot+="'attention_scaling.dat' index $i using 1:(\$3 > 0 ? \$3 : NaN) with linespoints title '${attn_impls[$i]}', "; done
    echo "plot ${plot}(x * x * 4 / 1048576) with lines dashtype 2 lc 'gray' title 'n×n floats'"
    echo "unset multiplot"
  } >"$out_dir/attention_scaling.gp"
  # Drawn in the house style (lib/report: literal labels, the palette, the n^1.5 and n^2
  # guides) by `seqbench report scaling`, which replaces the plain script above with its own.
  if command -v gnuplot >/dev/null; then
    if "$front" report scaling "$out_dir" >/dev/null; then
      outputs+=", $out_dir/attention_scaling.png"
    elif (cd "$out_dir" && gnuplot attention_scaling.gp); then
      outputs+=", $out_dir/attention_scaling.png"
      echo "bench: seqbench report scaling failed; $out_dir/attention_scaling.png is the plain figure" >&2
    else
      echo "bench: gnuplot failed on $out_dir/attention_scaling.gp (the CSV is written)" >&2
    fi
  else
    echo "bench: no gnuplot on PATH, no attention_scaling.png (hint: apt-get install gnuplot-nox)" >&2
  fi
fi
outputs+=" and $json"
# attention_scaling.csv goes into the JSON only when this run wrote it.
attn_json_csv=
((${#attn_done_ns[@]} > 0)) && attn_json_csv=$attn_csv
"$py" "$root/tools/bench/bench_env.py" write --env "$tmp/env.json" --csv "$csv" --out "$json" \
  --sgemm "$sgemm_csv" --probes "$probes_csv" --attention "$attn_json_csv" --load-end "$load_end" \
  --meta "date=$date_utc" --meta "commit=$commit" --meta "probe=$probe" --meta "probe_div=$probe_div" \
  --meta "probe_steps=$probe_steps" --meta "threads_probed=${thread_cands[*]}" \
  --meta "openblas_core_settings=${core_cands[*]}" --meta "torch_openblas_core_candidates=${torch_core_cands[*]}" \
  --meta "quick=$quick" --meta "only=$only" \
  --meta "attention_torch_setting=${attn_torch_setting:-}" \
  --meta "mixer_check=$(printf '%s ' "${mix_check[@]}" | sed 's/ $//')" \
  --meta "cell_check=$(printf '%s ' "${cell_check[@]}" | sed 's/ $//')" ||
  die "bench_env.py write failed"

echo
awk 'f; /^    load average/ { f = 1 }' "$md"
echo "load average (1 min) at end: $load_end"
echo "wrote $outputs"
[[ $failed == 0 ]] || die "some implementations failed (see above)"

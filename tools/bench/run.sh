#!/usr/bin/env bash
# make bench: one training step (forward, backward, clip, Adam, projection) of seqbench's
# recurrent models and of PyTorch references, side by side in one run on this machine,
# for the workloads of docs/performance.md. Prints a Markdown table (ms/step, peak RSS,
# LSTM-equivalent GFLOP/s) and the speed ratios the performance targets are stated in.
# The workload group `attention` times one forward + backward of every attention core
# (and of PyTorch's full causal attention) for n = 256 ... 16384, one process per (kind, n),
# and fits log-log slopes (docs/bench.md, "Attention scaling").
# Writes results/bench/latest.md, results/bench/latest.csv,
# results/bench/attention_scaling.{csv,png} and results/bench/bench-<UTC time>.json (one
# file per run, kept for history).
#
# usage: tools/bench/run.sh [BUILD_DIR]     (BUILD_DIR defaults to build)
# Environment (defaults in brackets):
#   BENCH_THREADS [2]     threads of every implementation (the scaling rows use 1 and 2)
#   BENCH_QUICK [0]       1: fewer steps, no char-PTB shape (a smoke run, ~1 minute)
#   BENCH_ONLY [all]      space-separated workload ids to run (see WORKLOADS below;
#                         `attention` is the attention scaling group)
#   BENCH_ATTN_NS [256 512 1024 2048 4096 8192 16384]   the attention group's lengths n
#   BENCH_ATTN_TORCH_MAX_N [16384]   PyTorch's full attention only up to this n (its
#                         (n, n) matrices take ~4.5 GB at 16384)
#   BENCH_PYTHON [/usr/bin/python3]   the interpreter that has Debian's python3-torch
#   BENCH_OUT [results/bench]         where the files go
# OMP_WAIT_POLICY and friends pass through to every implementation unchanged.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
build=${1:-build}
case $build in /*) ;; *) build=$PWD/$build ;; esac
cd "$root"

threads=${BENCH_THREADS:-2}
quick=${BENCH_QUICK:-0}
py=${BENCH_PYTHON:-/usr/bin/python3}
out_dir=${BENCH_OUT:-results/bench}
cell_bin=$build/tools/bench/seqbench_bench_cell
attn_scaling_bin=$build/tools/bench/seqbench_bench_attention

die() { echo "bench: $*" >&2; exit 1; }

# id | task | B | T | I | H | classes | implementations (what:cell[@threads]) | extra flags
# (passed to every implementation of the workload, e.g. rel_lstm's --nu/--rho)
#   what: ours (seqbench's own cell), onednn (seqbench on oneDNN's LSTM primitive),
#   torch (tools/bench/torch_cells.py; torch:nn.LSTM is PyTorch's fused LSTM)
# pmnist: T steps of I inputs, head on the last step; copy: T is the delay (T+20 steps,
# I=10, 9 classes, loss on every step); charptb: the char-PTB shape with dense inputs
# (the embedding is not part of the step) and the head on the last step.
WORKLOADS=(
  "pmnist-h128|pmnist|100|784|1|128|10|onednn:lstm ours:lstm torch:nn.LSTM torch:lstm"
  "pmnist-cells|pmnist|100|784|1|128|10|ours:momentum_lstm ours:adam_lstm ours:stable_lstm ours:rel_lstm torch:momentum_lstm torch:adam_lstm torch:stable_lstm torch:rel_lstm|--nu 10 --rho 10"
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
torch_version=$("$py" -c 'import torch; print(torch.__version__)' 2>/dev/null) ||
  die "cannot import torch with $py (hint: make deps-bench installs Debian's python3-torch; set BENCH_PYTHON to another interpreter)"

if [[ $quick == 1 ]]; then
  ours_warmup=1 ours_steps=2 torch_warmup=1 torch_steps=1
  attn_warmup=1 attn_steps=1 attn_ns=${BENCH_ATTN_NS:-256 512 1024}
else
  ours_warmup=2 ours_steps=5 torch_warmup=1 torch_steps=5
  attn_warmup=1 attn_steps=3 attn_ns=${BENCH_ATTN_NS:-256 512 1024 2048 4096 8192 16384}
fi
attn_torch_max_n=${BENCH_ATTN_TORCH_MAX_N:-16384}
only=${BENCH_ONLY:-}
[[ -z $only && $quick == 1 ]] && only="pmnist-h128 copy-t100 copy-t1000 attention"

cpu=$(grep -m1 '^model name' /proc/cpuinfo | sed 's/^model name[[:space:]]*:[[:space:]]*//' || true)
cpu=${cpu:-unknown}
ncpu=$(nproc)
date_utc=$(date -u '+%Y-%m-%d %H:%M UTC')
stamp=$(date -u '+%Y%m%dT%H%M%SZ')
commit=$(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown)
git -C "$root" diff --quiet HEAD -- lib tools/bench 2>/dev/null || commit="$commit+local changes"
load_start=$(cut -d' ' -f1 /proc/loadavg)

header="machine: $ncpu cores (nproc), $cpu
torch: $torch_version ($py), OPENBLAS_NUM_THREADS=1 for PyTorch; threads: $threads unless a row says; OMP_WAIT_POLICY=${OMP_WAIT_POLICY:-<unset>}
steps: seqbench $ours_warmup warmup + $ours_steps timed, PyTorch $torch_warmup + $torch_steps (median reported); Adam lr 1e-3, clip 1.0
attention group: 1 thread, $attn_warmup warmup + at least $attn_steps timed steps (more until 300 ms), n = $attn_ns
date: $date_utc, commit $commit"
echo "$header"
echo "load average (1 min) at start: $load_start on $ncpu cores"
awk -v l="$load_start" 'BEGIN { exit !(l > 0.5) }' &&
  echo "warning: other jobs are running on this machine; the numbers will be noisy"
echo

# field KEY LINE -> the value of KEY=... in a key=value line
field() { tr ' ' '\n' <<<"$2" | sed -n "s/^$1=//p"; }

# run_one TASK B T I H C IMPL [EXTRA FLAGS...] -> the implementation's key=value line
run_one() {
  local task=$1 B=$2 T=$3 I=$4 H=$5 C=$6 impl=$7
  shift 7
  local what=${impl%%:*} rest=${impl#*:}
  local cell=${rest%@*} th=$threads
  [[ $rest == *@* ]] && th=${rest#*@}
  local io=()
  [[ $task == copy ]] || io=(--input "$I" --classes "$C")
  case $what in
    ours | onednn)
      "$cell_bin" --cell "$cell" --backend "$what" --task "$task" --batch "$B" --T "$T" "${io[@]}" \
        --hidden "$H" --threads "$th" --warmup "$ours_warmup" --steps "$ours_steps" "$@" ;;
    torch)
      OPENBLAS_NUM_THREADS=1 "$py" "$root/tools/bench/torch_cells.py" --cell "$cell" --task "$task" \
        --batch "$B" --T "$T" "${io[@]}" --hidden "$H" --threads "$th" \
        --warmup "$torch_warmup" --steps "$torch_steps" "$@" ;;
    *) die "unknown implementation '$impl' (hint: ours:CELL, onednn:lstm or torch:CELL)" ;;
  esac
}

declare -A ms best rss gflops
rows=()
failed=0
for w in "${WORKLOADS[@]}"; do
  IFS='|' read -r id task B T I H C impls extra <<<"$w"
  [[ -n $only && " $only " != *" $id "* ]] && continue
  [[ $task == copy ]] && L=$((T + 20)) || L=$T
  for impl in $impls; do
    key=$id/$impl
    echo "running $key ..." >&2
    # shellcheck disable=SC2086 # extra is a list of flags
    if line=$(run_one "$task" "$B" "$T" "$I" "$H" "$C" "$impl" $extra | tail -n 1) &&
       [[ -n $(field ms_per_step "$line") ]]; then
      echo "  $line" >&2
      ms[$key]=$(field ms_per_step "$line")
      best[$key]=$(field ms_min "$line")
      rss[$key]=$(field peak_rss_mb "$line")
      # LSTM-equivalent work: forward 2*L*B*4H*(I+H) flops, backward twice that.
      gflops[$key]=$(awk -v L="$L" -v B="$B" -v H="$H" -v I="$I" -v m="${ms[$key]}" \
        'BEGIN { printf "%.1f", 6 * L * B * 4 * H * (I + H) / (m * 1e6) }')
    else
      echo "  $key failed" >&2
      failed=1
    fi
    rows+=("$key|$task|$B|$T|$I|$H")
  done
done
# Attention scaling (workload group `attention`; issue 6, analysis 2): one causal forward +
# backward of each attention core (B=1, H=1, D=64, window w=128: every sparse kind at the
# same per-query budget) at each n, one process per (kind, n) so that each peak RSS is that
# shape's alone, and PyTorch's plain causal softmax(QK^T/sqrt(D)) V with autograd beside
# ours. Always 1 thread: the slopes describe the algorithms, not the thread scaling.
ATTN_KINDS="full local routing random smyrf lsh"
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
  for n in $attn_ns; do
    attn_done_ns+=("$n")
    for impl in "${attn_impls[@]}"; do
      kind=${impl#*:}
      echo "running attention/$impl n=$n ..." >&2
      if [[ $impl == torch:* ]]; then
        ((n <= attn_torch_max_n)) || continue
        line=$(OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 "$py" "$root/tools/bench/torch_attention_scaling.py" \
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
  attn_md+=("Time of one forward + backward, ms (median; 1 thread, B=1, H=1, D=64, w=$ATTN_WINDOW):" ""
    "$head_ms ours full / PyTorch |" "$rule---:|")
  for n in "${attn_done_ns[@]}"; do
    row="| $n |"
    for impl in "${attn_impls[@]}"; do row+=" $(attn_get "$impl" "$n" ms) |"; done
    a=$(attn_get ours:full "$n" ms) b=$(attn_get torch:full "$n" ms)
    r=-
    [[ -n $a && -n $b ]] && r=$(awk -v a="$a" -v b="$b" 'BEGIN { printf "%.2f", a / b }')
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

mkdir -p "$out_dir"
md=$out_dir/latest.md
csv=$out_dir/latest.csv
attn_csv=$out_dir/attention_scaling.csv
json=$out_dir/bench-$stamp.json
{
  echo "# Training-step benchmark"
  echo
  echo "    ${header//$'\n'/$'\n'    }"
  echo "    load average (1 min): $load_start at start, $load_end at end, on $ncpu cores"
  if ((${#rows[@]} > 0)); then
    echo
    echo "| workload | implementation | B | T | I | H | ms/step (median) | best ms | peak RSS MB | LSTM-eq. GFLOP/s |"
    echo "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|"
    for r in "${rows[@]}"; do
      IFS='|' read -r key task B T I H <<<"$r"
      echo "| ${key%%/*} | ${key#*/} | $B | $T | $I | $H | ${ms[$key]:-failed} | ${best[$key]:--} | ${rss[$key]:--} | ${gflops[$key]:--} |"
    done
  fi
  if ((${#attn_md[@]} > 0)); then
    echo
    echo "## Attention scaling"
    echo
    printf '%s\n' "${attn_md[@]}"
  fi
  echo
  echo "| target | measured | goal | met |"
  echo "|---|---:|---|---|"
  printf '%s\n' "${target_lines[@]}" "${attn_target_lines[@]}"
  echo
  echo "Full causal multi-head attention, seqbench vs PyTorch on the same weights: $attn_check"
  echo
  echo "ours = seqbench's own cell, onednn = seqbench on oneDNN's LSTM primitive, torch = PyTorch"
  echo "(torch:nn.LSTM fused, torch:CELL a Python step loop as the papers' code runs custom cells);"
  echo "@N = N threads. Speedup = the other's ms / this one's. Attention: ours:KIND = seqbench's"
  echo "core, torch:full = PyTorch's softmax(QK^T/sqrt(D)) V with autograd."
} >"$md"
{
  echo "date,commit,nproc,cpu,torch,workload,impl,task,B,T,I,H,ms_per_step,ms_min,peak_rss_mb,gflops,load_start,load_end"
  for r in "${rows[@]}"; do
    IFS='|' read -r key task B T I H <<<"$r"
    echo "$date_utc,$commit,$ncpu,\"$cpu\",$torch_version,${key%%/*},${key#*/},$task,$B,$T,$I,$H,${ms[$key]:-},${best[$key]:-},${rss[$key]:-},${gflops[$key]:-},$load_start,$load_end"
  done
} >"$csv"
outputs="$md, $csv"
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
  if command -v gnuplot >/dev/null; then
    if (cd "$out_dir" && gnuplot attention_scaling.gp); then
      outputs+=", $out_dir/attention_scaling.png"
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
"$py" - "$csv" "$json" "$attn_json_csv" <<'EOF'
import csv, json, sys
doc = {"rows": list(csv.DictReader(open(sys.argv[1])))}
if sys.argv[3]:
    doc["attention_scaling"] = list(csv.DictReader(open(sys.argv[3])))
json.dump(doc, open(sys.argv[2], "w"), indent=1)
EOF

echo
awk 'f; /^    load average/ { f = 1 }' "$md"
echo "load average (1 min) at end: $load_end"
echo "wrote $outputs"
[[ $failed == 0 ]] || die "some implementations failed (see above)"

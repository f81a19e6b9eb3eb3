#!/usr/bin/env bash
# make bench: one LSTM training step on the pMNIST shape (B=100, T=784, I=1, H=128,
# 10 classes, Adam), seqbench (ours, onednn) and PyTorch (nn.LSTM, LSTMCell loop) in
# turn on this machine, then a Markdown table with ms/step, peak RSS and speed ratios.
# Writes results/bench/lstm_pmnist.md and results/bench/lstm_pmnist.csv.
#
# usage: tools/bench/run.sh [BUILD_DIR]     (BUILD_DIR defaults to build)
# Environment overrides (defaults in brackets):
#   BENCH_B [100] BENCH_T [784] BENCH_I [1] BENCH_H [128] BENCH_CLASSES [10]
#   BENCH_THREADS [2]            threads for every implementation
#   BENCH_OURS_WARMUP [3] BENCH_OURS_STEPS [5]    seqbench untimed / timed steps
#   BENCH_TORCH_WARMUP [1] BENCH_TORCH_STEPS [3]  PyTorch untimed / timed steps
#   BENCH_IMPLS ["seqbench-ours seqbench-onednn pytorch-nn.LSTM pytorch-LSTMCell-loop"]
#   BENCH_PYTHON [/usr/bin/python3]   the interpreter that has Debian's python3-torch
#   BENCH_OUT [results/bench]         where the .md and .csv go
# OMP_WAIT_POLICY and friends pass through to every implementation unchanged.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
build=${1:-build}
case $build in /*) ;; *) build=$PWD/$build ;; esac
cd "$root"

B=${BENCH_B:-100} T=${BENCH_T:-784} I=${BENCH_I:-1} H=${BENCH_H:-128} C=${BENCH_CLASSES:-10}
threads=${BENCH_THREADS:-2}
ours_warmup=${BENCH_OURS_WARMUP:-3} ours_steps=${BENCH_OURS_STEPS:-5}
torch_warmup=${BENCH_TORCH_WARMUP:-1} torch_steps=${BENCH_TORCH_STEPS:-3}
all_impls="seqbench-ours seqbench-onednn pytorch-nn.LSTM pytorch-LSTMCell-loop"
impls=${BENCH_IMPLS:-$all_impls}
py=${BENCH_PYTHON:-/usr/bin/python3}
out_dir=${BENCH_OUT:-results/bench}
bench_bin=$build/tools/bench/seqbench_bench_lstm

die() { echo "bench: $*" >&2; exit 1; }

for impl in $impls; do
  [[ " $all_impls " == *" $impl "* ]] || die "unknown implementation '$impl' in BENCH_IMPLS (have: $all_impls)"
done

[[ -x $bench_bin ]] || die "no $bench_bin (hint: build first: cmake --build $build --target seqbench_bench_lstm, or make bench)"
torch_version=$("$py" -c 'import torch; print(torch.__version__)' 2>/dev/null) ||
  die "cannot import torch with $py (hint: make deps-bench installs Debian's python3-torch; set BENCH_PYTHON to another interpreter)"

cpu=$(grep -m1 '^model name' /proc/cpuinfo | sed 's/^model name[[:space:]]*:[[:space:]]*//' || true)
cpu=${cpu:-unknown}
ncpu=$(nproc)
date_utc=$(date -u '+%Y-%m-%d %H:%M UTC')
commit=$(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown)
git -C "$root" diff --quiet HEAD -- lib tools/bench 2>/dev/null || commit="$commit+local changes"
load_start=$(cut -d' ' -f1 /proc/loadavg)

header=$(cat <<EOT
machine: $ncpu cores (nproc), $cpu
torch: $torch_version ($py), OPENBLAS_NUM_THREADS=1 for PyTorch; threads: $threads for every implementation; OMP_WAIT_POLICY=${OMP_WAIT_POLICY:-<unset>}
shape: B=$B T=$T I=$I H=$H classes=$C, Adam, clip 1.0; steps: seqbench $ours_warmup warmup + $ours_steps timed, PyTorch $torch_warmup + $torch_steps (median reported)
date: $date_utc, commit $commit
EOT
)
echo "$header"
echo "load average (1 min) at start: $load_start on $ncpu cores"
awk -v l="$load_start" -v n="$ncpu" 'BEGIN { exit !(l > 0.5) }' &&
  echo "warning: other jobs are running on this machine; the numbers will be noisy (OpenMP threads that spin-wait suffer most; BENCH_THREADS=1 or OMP_WAIT_POLICY=passive give steadier figures)"
echo

# run_impl NAME -> prints the implementation's key=value line (or fails).
run_impl() {
  case $1 in
    seqbench-ours | seqbench-onednn)
      "$bench_bin" --backend "${1#seqbench-}" --batch "$B" --T "$T" --input "$I" --hidden "$H" \
        --classes "$C" --threads "$threads" --warmup "$ours_warmup" --steps "$ours_steps" ;;
    pytorch-nn.LSTM | pytorch-LSTMCell-loop)
      OPENBLAS_NUM_THREADS=1 "$py" "$root/tools/bench/torch_lstm.py" --impl "${1#pytorch-}" \
        --batch "$B" --T "$T" --input "$I" --hidden "$H" --classes "$C" --threads "$threads" \
        --warmup "$torch_warmup" --steps "$torch_steps" ;;
  esac
}

# field KEY LINE -> the value of KEY=... in a key=value line
field() { tr ' ' '\n' <<<"$2" | sed -n "s/^$1=//p"; }

declare -A ms best rss
names=()
failed=0
for impl in $impls; do
  echo "running $impl ..." >&2
  if line=$(run_impl "$impl" | tail -n 1) && [[ -n $(field ms_per_step "$line") ]]; then
    echo "  $line" >&2
    ms[$impl]=$(field ms_per_step "$line")
    best[$impl]=$(field ms_min "$line")
    rss[$impl]=$(field peak_rss_mb "$line")
  else
    echo "  $impl failed" >&2
    failed=1
  fi
  names+=("$impl")
done
load_end=$(cut -d' ' -f1 /proc/loadavg)

# speedup REF IMPL -> REF's ms/step over IMPL's (> 1: IMPL is faster), or "-" when missing
speedup() {
  local r=${ms[$1]:-} m=${ms[$2]:-}
  if [[ -n $r && -n $m ]]; then awk -v r="$r" -v m="$m" 'BEGIN { printf "%.2f", r / m }'; else echo -; fi
}

mkdir -p "$out_dir"
md=$out_dir/lstm_pmnist.md
csv=$out_dir/lstm_pmnist.csv
{
  echo "# LSTM training step, pMNIST shape"
  echo
  echo "    ${header//$'\n'/$'\n'    }"
  echo "    load average (1 min): $load_start at start, $load_end at end, on $ncpu cores"
  echo
  echo "| implementation | ms/step (median) | best ms | peak RSS MB | speedup vs pytorch-nn.LSTM | speedup vs pytorch-LSTMCell-loop |"
  echo "|---|---:|---:|---:|---:|---:|"
  for impl in "${names[@]}"; do
    echo "| $impl | ${ms[$impl]:-failed} | ${best[$impl]:--} | ${rss[$impl]:--} | $(speedup pytorch-nn.LSTM "$impl") | $(speedup pytorch-LSTMCell-loop "$impl") |"
  done
  echo
  echo "speedup vs X = X's median ms/step / this row's (> 1: this row is faster than X)."
} >"$md"
{
  echo "date,commit,nproc,cpu,torch,impl,B,T,I,H,classes,threads,ms_per_step,ms_min,peak_rss_mb,speedup_vs_nn_lstm,speedup_vs_lstmcell_loop,load_start,load_end"
  for impl in "${names[@]}"; do
    echo "$date_utc,$commit,$ncpu,\"$cpu\",$torch_version,$impl,$B,$T,$I,$H,$C,$threads,${ms[$impl]:-},${best[$impl]:-},${rss[$impl]:-},$(speedup pytorch-nn.LSTM "$impl" | tr -d -),$(speedup pytorch-LSTMCell-loop "$impl" | tr -d -),$load_start,$load_end"
  done
} >"$csv"

echo
sed -n '/^| implementation/,$p' "$md"
echo "load average (1 min) at end: $load_end"
echo "wrote $md and $csv"
[[ $failed == 0 ]] || die "some implementations failed (see above)"

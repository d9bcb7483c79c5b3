#!/usr/bin/env bash
# On a CUDA host (nvcc, /usr/include/nccl.h, NCCL's library; no network needed): builds nccl-tests from
# a source copy in a git-ignored folder and runs all_reduce_perf, all_gather_perf and reduce_scatter_perf
# beside flexlink-perf --baseline with the same flags, writing both outputs and a side-by-side summary.
#
#   bash scripts/nccl-tests-compare.sh                 # nccl-tests' source in .nccl-tests/ (git-ignored)
#   NCCL_TESTS_SRC=/path/to/nccl-tests bash scripts/nccl-tests-compare.sh
#   FLAGS="-b 1M -e 1G -f 4 -n 20 -w 5 -c 1" NGPUS=2 OUT=nccl-tests-results bash scripts/nccl-tests-compare.sh
#
# flexlink-perf runs through .gpu/run (../shared/gpu-host/pack) when present, else the JDK on the PATH
# (PERF="java -jar ..." overrides). Its raw baseline is NCCL called directly through bytedeco on the same
# buffers and streams; summary.txt sets that baseline's busbw (FlexLink's busbw / vs) beside nccl-tests'
# own busbw at each size, which checks the baseline against nccl-tests on this machine.
set -euo pipefail
cd "$(dirname "$0")/.."
src=${NCCL_TESTS_SRC:-.nccl-tests}
out=${OUT:-nccl-tests-results}
flags=${FLAGS:--b 1M -e 1G -f 4 -n 20 -w 5 -c 1}
ngpus=${NGPUS:-$(nvidia-smi -L | wc -l)}
collectives=${COLLECTIVES:-all_reduce all_gather reduce_scatter}
if [[ ! -f $src/src/common.cu ]]; then
  echo "nccl-tests-compare: no nccl-tests source in $src (copy it there, or set NCCL_TESTS_SRC)" >&2
  exit 2
fi
nvcc=$(command -v nvcc || true)
[[ -n $nvcc ]] || { echo "nccl-tests-compare: nvcc is not on the PATH" >&2; exit 2; }
cuda_home=${CUDA_HOME:-$(dirname "$(dirname "$(readlink -f "$nvcc")")")}
build=$PWD/$out/nccl-tests-build
mkdir -p "$out/nccl-tests" "$out/flexlink-perf" "$build"

# sm_90 is the H200's; override NVCC_GENCODE for other GPUs
echo "== building nccl-tests from $src (CUDA $cuda_home, NCCL ${NCCL_HOME:-/usr})"
make -C "$src" -j"$(nproc)" MPI=0 CUDA_HOME="$cuda_home" NCCL_HOME="${NCCL_HOME:-/usr}" BUILDDIR="$build" \
  NVCC_GENCODE="${NVCC_GENCODE:--gencode=arch=compute_90,code=sm_90}" > "$out/nccl-tests-build.log" 2>&1 \
  || { tail -30 "$out/nccl-tests-build.log" >&2; exit 1; }

if [[ -n ${PERF:-} ]]; then
  perf=$PERF
elif [[ -f .gpu/run ]]; then
  perf="bash .gpu/run java io.flexlink.bench.PerfMain"
else
  perf="java -jar flexlink-bench/target/flexlink-perf.jar"
fi
export NCCL_NVLS_ENABLE=${NCCL_NVLS_ENABLE:-0} CUDA_DEVICE_MAX_CONNECTIONS=${CUDA_DEVICE_MAX_CONNECTIONS:-32}

summary=$out/summary.txt
: > "$summary"
for c in $collectives; do
  echo "== $c on $ngpus GPUs: nccl-tests ${c}_perf $flags -g $ngpus"
  # shellcheck disable=SC2086
  "$build/${c}_perf" $flags -g "$ngpus" > "$out/nccl-tests/$c.txt" 2>&1 || echo "   (${c}_perf exited $?)"
  echo "== $c on $ngpus GPUs: flexlink-perf $c $flags -g $ngpus --backend cuda --baseline"
  # shellcheck disable=SC2086
  $perf "$c" $flags -g "$ngpus" --backend cuda --baseline --json "$out/flexlink-perf/$c.json" \
    > "$out/flexlink-perf/$c.txt" 2>&1 || echo "   (flexlink-perf exited $?)"
  {
    # one GPU has no bus traffic (busbw 0): compare algbw there, busbw otherwise
    col=8; metric=busbw; [[ $ngpus -eq 1 ]] && { col=7; metric=algbw; }
    echo "# $c, $ngpus GPUs, flags: $flags (out of place, $metric in GB/s)"
    printf '# %12s  %14s  %18s  %8s  %14s\n' size nccl-tests "raw NCCL in perf" ratio "FlexLink"
    awk -v col="$col" 'FNR == NR { if ($1 ~ /^[0-9]+$/) nt[$1] = $col; next }
         $1 ~ /^[0-9]+$/ && $(NF-1) + 0 > 0 {
           raw = $col / $(NF-1)
           printf "  %12s  %14s  %18.2f  %8.3f  %14s\n", $1, nt[$1], raw, (nt[$1] > 0 ? raw / nt[$1] : 0), $col }' \
      "$out/nccl-tests/$c.txt" "$out/flexlink-perf/$c.txt"
    echo
  } >> "$summary"
done
cat "$summary"
echo "outputs: $out/nccl-tests/*.txt, $out/flexlink-perf/*.txt (+ .json), $summary"

#!/usr/bin/env bash
# On the GPU host: one selection of GPU tests (JUnit console options) under a deadline; a run still going at the
# deadline gets a thread dump (SIGQUIT, into its log) and is then killed, so that a hang names where it waits.
# Logs under $OUT (or ./gpu-results).
#   bash scripts/gpu-diagnose.sh NAME SECONDS --select-method CLASS#METHOD --include-tag gpu
set -uo pipefail
OUT=${OUT:-gpu-results}; mkdir -p "$OUT"
export CUDA_DEVICE_MAX_CONNECTIONS=${CUDA_DEVICE_MAX_CONNECTIONS:-32}
name=${1:?name}; limit=${2:?seconds}; shift 2
bash .gpu/run test "$@" --details=testfeed > "$OUT/$name.log" 2>&1 &
pid=$! # .gpu/run execs the JVM: the same process
for ((t = 0; t < limit; t++)); do kill -0 "$pid" 2>/dev/null || break; sleep 1; done
if kill -0 "$pid" 2>/dev/null; then
  kill -3 "$pid"; sleep 3; kill -9 "$pid"
  echo "$name: still running after ${limit} s; thread dump in $OUT/$name.log"
fi
wait "$pid"; echo "$name exit $?"
sed 's/\x1b\[[0-9;]*m//g' "$OUT/$name.log" | grep -E "tests (successful|failed|aborted|found)|:: (FAILED|ABORTED)$"

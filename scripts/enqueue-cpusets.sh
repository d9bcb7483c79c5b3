#!/usr/bin/env bash
# On the GPU host: #15's call (scripts/enqueue-call.sh) in JVMs pinned to one CPU set each (taskset -c; the sets of
# SETS, four CPUs each by default, so that the JIT's threads keep room beside the calling thread), the sets in turns,
# TURNS times: whether a JVM's slow enqueue follows the CPUs its thread runs on.
#   SETS="0-3 4-7 8-11 12-15" TURNS=3 REPS=60 bash scripts/enqueue-cpusets.sh
set -uo pipefail
source "$(dirname "$0")/enqueue-call.sh"
export CUDA_DEVICE_MAX_CONNECTIONS=${CUDA_DEVICE_MAX_CONNECTIONS:-32}
for t in $(seq "${TURNS:-3}"); do
  for s in ${SETS:-0-3 4-7 8-11 12-15}; do
    enqueue_call "cpus $s turn $t" off taskset -c "$s" bash .gpu/run java
  done
done

#!/usr/bin/env bash
# On the GPU host: #15's call (AllReduce 26214K per rank, 8 ranks on GPU 0, the PCIe path alone, auto chunk, one
# thread) in JVMs that alternate between the plain call and the call held on a host gate until the whole group
# is enqueued (`-Dgated=true`): whether the path work running during the enqueue slows CUDA's enqueue. THREAD=1
# adds, in each turn, a JVM with the enqueue thread on (`flexlink.enqueueThread=on`); GATE=1 one with the library's
# own hold on the group (`flexlink.groupGate=on`, a build that has it); TIMED=1 a JVM of each kind with every path
# stream operation timed.
#   TURNS=3 REPS=60 bash scripts/enqueue-gated.sh
set -uo pipefail
source "$(dirname "$0")/enqueue-call.sh"
export CUDA_DEVICE_MAX_CONNECTIONS=${CUDA_DEVICE_MAX_CONNECTIONS:-32}
kinds=(false true); [[ -n ${THREAD:-} ]] && kinds+=(thread); [[ -n ${GATE:-} ]] && kinds+=(library)
for t in $(seq "${TURNS:-3}"); do
  for g in "${kinds[@]}"; do
    if [[ $g == thread ]]; then
      enqueue_call "gated=$g $t" on bash .gpu/run java -Dgated=false
    elif [[ $g == library ]]; then
      enqueue_call "gated=$g $t" off bash .gpu/run java -Dgated=false -Dflexlink.groupGate=on
    else
      enqueue_call "gated=$g $t" off bash .gpu/run java -Dgated="$g"
    fi
  done
done
if [[ -n ${TIMED:-} ]]; then
  for g in false true; do
    echo "[timed, gated=$g]"
    enqueue_call_timed bash .gpu/run java -Dgated="$g"
  done
fi

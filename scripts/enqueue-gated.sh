#!/usr/bin/env bash
# On the GPU host: #15's call (AllReduce 26214K per rank, 8 ranks on GPU 0, the PCIe path alone, auto chunk, one
# thread) in JVMs that alternate between the plain call and the call held on a host gate until the whole group
# is enqueued (`-Dgated=true`): whether the path work running during the enqueue slows CUDA's enqueue. THREAD=1
# adds, in each turn, a JVM with the enqueue thread on (`flexlink.enqueueThread=on`); TIMED=1 a JVM of each kind
# with every path stream operation timed.
#   TURNS=3 REPS=60 bash scripts/enqueue-gated.sh
set -uo pipefail
export CUDA_DEVICE_MAX_CONNECTIONS=${CUDA_DEVICE_MAX_CONNECTIONS:-32}
rows=(all_reduce:4M:8:x:1500 all_reduce:26214K:8:x:20 all_reduce:26214K:8:x:300)
call=(io.flexlink.cuda.bench.SplitEnqueueCost "${REPS:-60}" auto off "${rows[@]}")
kinds=(false true); [[ -n ${THREAD:-} ]] && kinds+=(thread)
for t in $(seq "${TURNS:-3}"); do
  for g in "${kinds[@]}"; do
    if [[ $g == thread ]]; then
      run=(-Dgated=false io.flexlink.cuda.bench.SplitEnqueueCost "${REPS:-60}" auto on "${rows[@]}")
    else
      run=(-Dgated=$g "${call[@]}")
    fi
    bash .gpu/run java "${run[@]}" 2>&1 | grep -E '^ALL_REDUCE +26214K|Exception|Error' \
      | awk -v g="$g" -v t="$t" '{ print "[gated=" g " " t " row " NR "] " $0 }'
  done
done
if [[ -n ${TIMED:-} ]]; then
  for g in false true; do
    echo "[timed, gated=$g]"
    bash .gpu/run java -Dtimed=true -Dgated=$g "${call[@]}" 2>&1 | grep -v DEBUG | tail -30
  done
fi

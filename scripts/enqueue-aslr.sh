#!/usr/bin/env bash
# On the GPU host: #15's call (AllReduce 26214K per rank, 8 ranks on GPU 0, the PCIe path alone, auto chunk, one
# thread) in JVMs started in turns with the address space laid out at random (Linux's default) and fixed
# (`setarch -R`), to see whether the JVM-to-JVM scatter of the enqueue cost follows the layout. TIMED=1 adds a
# JVM of each kind with every path stream operation timed (`-Dtimed=true`).
#   TURNS=4 REPS=60 bash scripts/enqueue-aslr.sh
set -uo pipefail
export CUDA_DEVICE_MAX_CONNECTIONS=${CUDA_DEVICE_MAX_CONNECTIONS:-32}
call=(io.flexlink.cuda.bench.SplitEnqueueCost "${REPS:-60}" auto off all_reduce:4M:8:x:1500
  all_reduce:26214K:8:x:20 all_reduce:26214K:8:x:300)
for t in $(seq "${TURNS:-4}"); do
  for layout in random fixed; do
    case $layout in fixed) pre=(setarch "$(uname -m)" -R) ;; *) pre=() ;; esac
    "${pre[@]}" bash .gpu/run java "${call[@]}" 2>&1 | grep -E '^ALL_REDUCE +26214K|Exception|Error' \
      | awk -v l="$layout" -v t="$t" '{ print "[" l " " t " row " NR "] " $0 }'
  done
done
if [[ -n ${TIMED:-} ]]; then
  for layout in random fixed; do
    case $layout in fixed) pre=(setarch "$(uname -m)" -R) ;; *) pre=() ;; esac
    echo "[timed $layout]"
    "${pre[@]}" bash .gpu/run java -Dtimed=true "${call[@]}" 2>&1 | tail -40
  done
fi

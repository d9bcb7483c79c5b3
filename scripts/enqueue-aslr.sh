#!/usr/bin/env bash
# On the GPU host: #15's call (AllReduce 26214K per rank, 8 ranks on GPU 0, the PCIe path alone, auto chunk, one
# thread) in JVMs started in turns with the address space laid out at random (Linux's default) and fixed
# (`setarch -R`), to see whether the JVM-to-JVM scatter of the enqueue cost follows the layout. TIMED=1 adds a
# JVM of each kind with every path stream operation timed (`-Dtimed=true`).
#   TURNS=4 REPS=60 bash scripts/enqueue-aslr.sh
set -uo pipefail
source "$(dirname "$0")/enqueue-call.sh"
export CUDA_DEVICE_MAX_CONNECTIONS=${CUDA_DEVICE_MAX_CONNECTIONS:-32}
for t in $(seq "${TURNS:-4}"); do
  for layout in random fixed; do
    case $layout in fixed) pre=(setarch "$(uname -m)" -R) ;; *) pre=() ;; esac
    enqueue_call "$layout $t" off "${pre[@]}" bash .gpu/run java
  done
done
if [[ -n ${TIMED:-} ]]; then
  for layout in random fixed; do
    case $layout in fixed) pre=(setarch "$(uname -m)" -R) ;; *) pre=() ;; esac
    echo "[timed $layout]"
    enqueue_call_timed "${pre[@]}" bash .gpu/run java
  done
fi

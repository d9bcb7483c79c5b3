#!/usr/bin/env bash
# On the GPU host: #15's call (AllReduce 26214K per rank, 8 ranks on GPU 0, the PCIe path alone, auto chunk, one
# thread) in TURNS JVMs for each placement of the calling JVM: on the CPUs of GPU 0's NUMA node (near), on the
# other CPUs (far, where the host has them), and unpinned (any), in turns, so that the machine's drift shows in all.
# Each JVM warms the JIT with 1500 calls at 4 MB per rank, then times the call after 20 warm-up calls of its own
# (row 1, the harness of earlier figures) and again after 300 more (row 2). SETS (CPU lists, space-separated) pins
# to those sets in turns instead, each a `taskset -c` list (four CPUs or more, so that the JIT's threads keep room).
#   TURNS=3 REPS=60 bash scripts/enqueue-placement.sh
#   SETS="0-3 4-7 8-11 12-15" TURNS=3 REPS=60 bash scripts/enqueue-placement.sh
set -uo pipefail
source "$(dirname "$0")/enqueue-call.sh"
export CUDA_DEVICE_MAX_CONNECTIONS=${CUDA_DEVICE_MAX_CONNECTIONS:-32}
expand() { tr ',' '\n' <<< "$1" | awk -F- '{ if (NF == 2) for (i = $1; i <= $2; i++) print i; else print $1 }'; }
bus=$(nvidia-smi --query-gpu=pci.bus_id --format=csv,noheader -i 0 | tr 'A-F' 'a-f' | sed 's/^0000//')
near=$(cat "/sys/bus/pci/devices/$bus/local_cpulist")
online=$(cat /sys/devices/system/cpu/online)
far=$(comm -23 <(expand "$online" | sort) <(expand "$near" | sort) | sort -n | paste -sd,)
echo "GPU 0 at $bus: near CPUs $near, far CPUs ${far:-none}, online $online, NUMA node $(cat /sys/bus/pci/devices/$bus/numa_node)"
places=(near any); [[ -n $far ]] && places=(near far any)
[[ -n ${SETS:-} ]] && read -r -a places <<< "$SETS"
for t in $(seq "${TURNS:-3}"); do
  for p in "${places[@]}"; do
    case $p in near) pin=(taskset -c "$near") ;; far) pin=(taskset -c "$far") ;; any) pin=() ;; *) pin=(taskset -c "$p") ;; esac
    enqueue_call "$p $t" off "${pin[@]}" bash .gpu/run java
  done
done

#!/usr/bin/env bash
# On the GPU host: #15's matrix of host enqueue time per call and rank (SplitEnqueueCost, median of 20 calls,
# streams synchronized between calls, untimed): AllReduce, AllGather, ReduceScatter and AlltoAll of 64 MB,
# 256 MB and 1 GB with a PCIe share of 0.1 and 0.2, on 1 rank (NCCL + PCIe) and on 2, 4 and 8 ranks of GPU 0
# (the PCIe path alone, carrying the share's bytes). Sizes as nccl-tests counts them. One JVM per chunk
# setting: the first rows warm the JIT up (1500 calls of each collective), the others take 20 warm-up calls.
#   bash scripts/enqueue-matrix.sh [CHUNK [RANKS...]]    (default: auto, then 8M on 8 ranks)
set -uo pipefail
export CUDA_DEVICE_MAX_CONNECTIONS=${CUDA_DEVICE_MAX_CONNECTIONS:-32}
colls=(all_reduce all_gather reduce_scatter all_to_all)
rows() { # rows RANKS...: the matrix's row specs
  local c s f n
  for c in "${colls[@]}"; do echo "$c:4M:8:x:1500"; done
  for c in "${colls[@]}"; do for s in 64 256 1024; do for f in 0.1 0.2; do for n in "$@"; do
    if [[ $n == 1 ]]; then echo "$c:${s}M:1:$f:20"
    else echo "$c:$(awk -v s="$s" -v f="$f" 'BEGIN { printf "%d", s * 1024 * f } ')K:$n:x:20"; fi
  done; done; done; done
}
run() { # run CHUNK RANKS...
  local chunk=$1; shift
  bash .gpu/run java io.flexlink.cuda.bench.SplitEnqueueCost 20 "$chunk" off $(rows "$@") 2>&1 | grep -v '^SLF4J'
}
if [[ $# -gt 0 ]]; then run "$@"; else run auto 1 2 4 8; run 8M 8; fi

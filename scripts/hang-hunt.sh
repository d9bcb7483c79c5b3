#!/usr/bin/env bash
# On the GPU host: the experiments on the rare hang of two ranks sharing a GPU (docs/benchmarks.md, session from 18:56
# of 2026-12-05), each bounded, in one call. First StreamAliasProbe at 32 and 8 hardware queues (does a copy out sit
# behind another stream's wait?), then TrainingLoop until its first hang or LOOP_SECONDS (120 s), at 32 queues, at 8,
# and at 32 with modules loaded eagerly. Each loop's output goes to $OUT/loop-LABEL.txt; a hang ends the loop with
# exit 3, after printing the handshake words, the streams with work and every thread's stack.
#   bash scripts/hang-hunt.sh
set -uo pipefail
out=${OUT:-.}; mkdir -p "$out"
for c in 32 8; do
  echo "== StreamAliasProbe, CUDA_DEVICE_MAX_CONNECTIONS=$c"
  CUDA_DEVICE_MAX_CONNECTIONS=$c timeout 90 bash .gpu/run java io.flexlink.cuda.bench.StreamAliasProbe 70 2>&1 \
    | grep -v '^\[' | tail -5
done
loop() { # a label, then the environment of the run
  local label=$1; shift
  echo "== TrainingLoop, $label ($*)"
  env "$@" timeout -s KILL "${LOOP_SECONDS:-120}" bash .gpu/run java io.flexlink.bench.ddp.TrainingLoop 100000 120s 30 \
    > "$out/loop-$label.txt" 2>&1
  echo "exit $? after $(grep -c '^iteration [0-9]*:' "$out/loop-$label.txt") runs"
  grep -E "^(area|streams with work)" "$out/loop-$label.txt" | head -3
}
loop q32 CUDA_DEVICE_MAX_CONNECTIONS=32
loop q8 CUDA_DEVICE_MAX_CONNECTIONS=8
loop eager CUDA_DEVICE_MAX_CONNECTIONS=32 CUDA_MODULE_LOADING=EAGER

#!/usr/bin/env bash
# On the GPU host: #15's call (scripts/enqueue-call.sh) in TURNS JVMs, one after another, each with the share of
# the guest's CPU time that its hypervisor gave to others while the JVM ran ("steal", /proc/stat's eighth
# column), over all CPUs, beside the JVM's two rows; a per-second log of steal and busy time goes to
# $OUT/steal.log. A host whose figures follow steal is one whose CPUs are shared with other guests.
#   TURNS=6 REPS=60 bash scripts/enqueue-steal.sh
set -uo pipefail
source "$(dirname "$0")/enqueue-call.sh"
export CUDA_DEVICE_MAX_CONNECTIONS=${CUDA_DEVICE_MAX_CONNECTIONS:-32}
out=${OUT:-.}; mkdir -p "$out"
cpu_line() { awk '/^cpu / { busy = $2 + $3 + $4 + $7 + $8; print busy, $9, busy + $5 + $6 + $9 }' /proc/stat; }
( prev=$(cpu_line)
  while sleep 1; do
    now=$(cpu_line)
    read -r b0 s0 t0 <<< "$prev"; read -r b1 s1 t1 <<< "$now"
    echo "$(date +%T) busy $(( (b1 - b0) * 100 / (t1 - t0 + 1) ))% steal $(( (s1 - s0) * 100 / (t1 - t0 + 1) ))%"
    prev=$now
  done ) >> "$out/steal.log" &
sampler=$!
trap 'kill $sampler 2>/dev/null' EXIT
for turn in $(seq "${TURNS:-6}"); do
  read -r b0 s0 t0 <<< "$(cpu_line)"
  rows=$(enqueue_call "turn $turn" off bash .gpu/run java)
  read -r b1 s1 t1 <<< "$(cpu_line)"
  echo "$rows"
  awk -v s=$((s1 - s0)) -v t=$((t1 - t0)) -v n="$turn" \
    'BEGIN { printf "[turn %s] steal %.2f %% of all CPU time while the JVM ran (%d of %d ticks)\n", n, 100 * s / t, s, t }'
done

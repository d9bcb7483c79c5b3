#!/usr/bin/env bash
# On the GPU host: #15's call (scripts/enqueue-call.sh) in TURNS pairs of JVMs, the health watchdog on and off
# (FLEXLINK_TIMEOUT=0) in turns, each JVM's threads sampled every 0.2 s while it runs: which CPU the calling thread
# (the Java main thread) ran on. Whether a JVM's slow enqueue follows the calling thread's CPU or the watchdog's
# queries. (Which threads are busy second by second: scripts/enqueue-spinners.sh.)
#   TURNS=4 REPS=60 bash scripts/enqueue-threads.sh
set -uo pipefail
source "$(dirname "$0")/enqueue-call.sh"
export CUDA_DEVICE_MAX_CONNECTIONS=${CUDA_DEVICE_MAX_CONNECTIONS:-32}
tmp=$(mktemp -d)
sample() { # sample FILE: until the JVM of the call ends, "pid tid psr pcpu comm" of its threads, one block per sample
  local pid
  pid=$(enqueue_call_pid)
  [[ -n $pid ]] || return
  while kill -0 "$pid" 2>/dev/null; do
    ps -L -o tid=,psr=,pcpu=,comm= -p "$pid" | awk -v p="$pid" '{ print p, $0 }' >> "$1"
    sleep 0.2
  done
}
report() { # report FILE: the CPUs the main thread was seen on, with the samples on each
  awk '$5 == "java" && $2 != $1 { n[$3]++ } END { s = "calling thread on CPU"; for (c in n) s = s " " c "(" n[c] ")"; print s }' "$1"
}
for t in $(seq "${TURNS:-4}"); do
  for w in on off; do
    f=$tmp/$t-$w; : > "$f"
    sample "$f" & s=$!
    if [[ $w == off ]]; then
      FLEXLINK_TIMEOUT=0 enqueue_call "watchdog $w $t" off bash .gpu/run java
    else
      enqueue_call "watchdog $w $t" off bash .gpu/run java
    fi
    wait "$s"
    report "$f"
  done
done
rm -rf "$tmp"

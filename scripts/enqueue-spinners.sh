#!/usr/bin/env bash
# On the GPU host: which threads of the JVM that runs #15's call (scripts/enqueue-call.sh) take CPU time, second
# by second: each thread's CPU ticks over the last second (/proc, 100 per CPU-second; threads with 20 or more),
# its state, CPU and name; a Java thread dump (SIGQUIT) at DUMP_AT seconds, with the dump's entry of every thread
# that was busy then (a thread the dump does not list is a native one: CUDA's, a library's, named after the thread
# that created it). Logs under $OUT/spinners.
#   DUMP_AT="6 10" REPS=60 bash scripts/enqueue-spinners.sh
set -uo pipefail
source "$(dirname "$0")/enqueue-call.sh"
export CUDA_DEVICE_MAX_CONNECTIONS=${CUDA_DEVICE_MAX_CONNECTIONS:-32}
out=${OUT:-.}/spinners; mkdir -p "$out"
bash .gpu/run java ${JAVA_OPTS:-} io.flexlink.cuda.bench.SplitEnqueueCost "${REPS:-60}" auto off "${ENQUEUE_ROWS[@]}" \
  > "$out/jvm.log" 2>&1 &
pid=$(enqueue_call_pid)
[[ -n $pid ]] || { echo "no JVM found"; exit 1; }
snap() { # tid ticks(utime+stime) cpu state name, one line per thread
  local t s rest
  for t in /proc/"$pid"/task/*; do
    s=$(cat "$t/stat" 2>/dev/null) || continue
    rest=${s##*) }
    # shellcheck disable=SC2086
    set -- $rest
    echo "${t##*/} $((${12} + ${13})) ${37} $1 $(cat "$t/comm" 2>/dev/null | tr ' ' '_')"
  done
}
declare -A before
sec=0; busy_at_dump=""
while kill -0 "$pid" 2>/dev/null; do
  now=$(snap)
  line=""
  while read -r tid ticks cpu state name; do
    d=$(( ticks - ${before[$tid]:-$ticks} ))
    before[$tid]=$ticks
    (( d >= 20 )) && line+=" $tid:$name:cpu$cpu:$state:$d"
  done <<< "$now"
  echo "t=${sec}s threads=$(wc -l <<< "$now") busy:${line:- none}" | tee -a "$out/busy.log"
  for at in ${DUMP_AT:-6 10}; do
    if (( sec == at )); then
      kill -QUIT "$pid" 2>/dev/null
      busy_at_dump+="${line} "
      for x in $line; do t=${x%%:*}; echo "  $t wchan=$(cat /proc/$pid/task/$t/wchan 2>/dev/null) syscall=$(cut -d' ' -f1 /proc/$pid/task/$t/syscall 2>/dev/null)"; done
    fi
  done
  sleep 1; sec=$((sec + 1))
done
wait
grep -E '^ALL_REDUCE +26214K|Exception|Error' "$out/jvm.log"
echo "== the dump's entries of the threads busy at the dumps"
for x in $busy_at_dump; do
  t=${x%%:*}; hex=$(printf '0x%x' "$t")
  if grep -q "nid=$hex " "$out/jvm.log"; then
    echo "-- $x"; grep -A8 "nid=$hex " "$out/jvm.log" | head -9
  else
    echo "-- $x: not in the Java thread dump (a native thread)"
  fi
done | awk '!seen[$0]++'

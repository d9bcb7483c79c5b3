# Sourced by the scripts that time #15's call on the GPU host (enqueue-placement.sh, enqueue-aslr.sh,
# enqueue-gated.sh, host-cost-ab.sh's auto part), so that all of them time the same call the same way: AllReduce
# 26214K per rank, 8 ranks on GPU 0, the PCIe path alone, auto chunk, one thread; the JVM warms up with 1500 calls at
# 4 MB per rank, then times the call after 20 calls of its own (row 1) and after 300 more (row 2), median of REPS.
ENQUEUE_ROWS=(all_reduce:4M:8:x:1500 all_reduce:26214K:8:x:20 all_reduce:26214K:8:x:300)

# enqueue_call LABEL THREAD COMMAND...: COMMAND (a java launcher and its options, `bash .gpu/run java -Dgated=true`)
# runs the call with the enqueue thread THREAD (off|on); prints its two rows as "[LABEL row N] ...", and failures.
enqueue_call() {
  local label=$1 thread=$2
  shift 2
  "$@" io.flexlink.cuda.bench.SplitEnqueueCost "${REPS:-60}" auto "$thread" "${ENQUEUE_ROWS[@]}" 2>&1 \
    | grep -E '^ALL_REDUCE +26214K|Exception|Error' | awk -v l="$label" '{ print "[" l " row " NR "] " $0 }'
}

# enqueue_call_timed COMMAND...: the same call with every path stream operation timed (-Dtimed=true); the whole
# report of each row.
enqueue_call_timed() {
  "$@" -Dtimed=true io.flexlink.cuda.bench.SplitEnqueueCost "${REPS:-60}" auto off "${ENQUEUE_ROWS[@]}" 2>&1 \
    | grep -v DEBUG | tail -40
}

# enqueue_call_pid: the process id of the JVM of the call once it runs (waits up to 20 s for it); empty if none came.
enqueue_call_pid() {
  local pid=""
  for _ in $(seq 400); do pid=$(pgrep -f 'java .*SplitEnqueueCost' | head -1); [[ -n $pid ]] && break; sleep 0.05; done
  echo "$pid"
}

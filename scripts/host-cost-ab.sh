#!/usr/bin/env bash
# On the GPU host: host-cost figures of two builds on one machine, A (.gpu, the working tree's build) and B
# (.gpu-b, from scripts/ab-pack.sh REV, or the folder AB_DIR names), alternated A B A B so that drift of the
# machine shows in both.
# Parts (any of, in this order): small  - EightByteLayers, watchdog off then on (8-byte call vs raw NCCL);
#   auto   - #15's call as it runs by default (auto chunk; AllReduce 26214K per rank, 8 ranks, PCIe path alone), as
#            scripts/enqueue-placement.sh times it: rows after 20 and after 300 more calls, three turns A B;
#   split  - SplitEnqueueCost at #15's call (AllReduce 256 MB at a 0.1 PCIe share: 26843545 B per rank, 8 ranks)
#            and at 32 MB per rank, 8M chunks; ceiling - CudaMeasurements part (a) at 8M chunks (PCIe path vs
#            concurrent copies, 2 ranks, 256 MB); jmh - SteadyStateCallBenchmark with -prof gc;
#   enqueue - EnqueueMeasurements (CudaMeasurements' parts (c) and (d)), watchdog off: an 8-byte AllReduce
#            through the Communicator, the facade and raw bytedeco NCCL, median of 10^5 calls each, and heap
#            bytes per call (the harness of the first round's +0.22 us). SMALL_TURNS (default 2) sets the turns
#            of small, SMALL_ON=0 leaves out its watchdog-on half.
#   path   - PathRate, three turns A B: the copy ceiling, then the PCIe path's AllGather and AllReduce (2 ranks,
#            256 MB, 8M x 4 slots), in turns inside each JVM; a B older than PathRate needs it added:
#            scripts/ab-pack.sh REV flexlink-native/src/test/java/io/flexlink/cuda/bench/{PathRate,HostGate}.java
#   probe  - PcieGapProbe on A alone: the same bytes by copy patterns between the ceiling and the path.
#   A B from before PathRate and EnqueueMeasurements' own main (the first round's 7412700, say) needs both added:
#     scripts/ab-pack.sh 7412700 flexlink-native/src/test/java/io/flexlink/cuda/bench/{PathRate,HostGate,EnqueueMeasurements}.java
#   bash scripts/host-cost-ab.sh small split ceiling jmh
set -uo pipefail
source "$(dirname "$0")/enqueue-call.sh"
export CUDA_DEVICE_MAX_CONNECTIONS=${CUDA_DEVICE_MAX_CONNECTIONS:-32}
export AB_DIR=${AB_DIR:-.gpu-b}
[[ -f $AB_DIR/REV ]] || { echo "host-cost-ab: no $AB_DIR/ (scripts/ab-pack.sh REV, then carry it)" >&2; exit 2; }
on() { # on a|b COMMAND...: the command on build A or B
  local b=$1; shift
  if [[ $b == a ]]; then bash .gpu/run "$@"; else bash scripts/ab-run.sh "$@"; fi
}
label() { sed "s/^/[$1 $2] /"; }
echo "A: the working tree's build (.gpu); B: $(cat "$AB_DIR/REV") ($AB_DIR)"
for part in "$@"; do
  case $part in
    small)
      for t in $(seq "${SMALL_TURNS:-2}"); do for b in a b; do
        FLEXLINK_TIMEOUT=0 on $b java io.flexlink.cuda.EightByteLayers 0.25 16 2>&1 | tail -2 | label $b "off"
        [[ ${SMALL_ON:-1} == 0 ]] || on $b java io.flexlink.cuda.EightByteLayers 0.25 8 2>&1 | tail -2 | label $b "on"
      done; done ;;
    enqueue)
      for t in 1 2; do for b in a b; do
        FLEXLINK_TIMEOUT=0 on $b java io.flexlink.cuda.bench.EnqueueMeasurements 2>&1 \
          | grep -E '^(call|bytedeco|FlexLink|FlexNccl)|Exception|Error' | label $b "c,d"
      done; done ;;
    auto)
      for t in 1 2 3; do for b in a b; do
        REPS=60 enqueue_call "$b auto $t" off on $b java
      done; done ;;
    split)
      for t in 1 2; do for b in a b; do
        on $b java io.flexlink.cuda.bench.SplitEnqueueCost 30 8M off all_reduce:26843545:8:x 2>&1 | tail -2 | label $b "26843545x8"
        on $b java io.flexlink.cuda.bench.SplitEnqueueCost 30 8M off all_reduce:32M:8:x 2>&1 | tail -2 | label $b "32Mx8"
      done; done ;;
    ceiling)
      for b in a b; do
        on $b java -Dparts=a -Dchunks=8M io.flexlink.cuda.bench.CudaMeasurements 10 2>&1 | grep -v '^#' | tail -12 | label $b ceiling
      done ;;
    path)
      for t in 1 2 3; do for b in a b; do
        on $b java io.flexlink.cuda.bench.PathRate 10 2 2>&1 | grep -E '^ +[0-9]|Exception|Error' | label $b "path $t"
      done; done ;;
    probe)
      on a java io.flexlink.cuda.bench.PcieGapProbe 10 3 2>&1 | grep -v -E 'DEBUG|INFO|^\s+at ' | label a probe ;;
    jmh)
      for b in a b; do # the benchmark's own timeout parameter covers the watchdog on (10m) and off (0)
        on $b java org.openjdk.jmh.Main SteadyStateCallBenchmark -p backend=cuda -prof gc -f 1 -wi 2 -i 5 2>&1 \
          | grep -E '^SteadyState|gc.alloc.rate.norm' | label $b jmh
      done ;;
    *) echo "host-cost-ab: unknown part $part" >&2; exit 2 ;;
  esac
done

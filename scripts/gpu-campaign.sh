#!/usr/bin/env bash
# The measurements of docs/benchmarks.md, in one go, on a CUDA host with the project bundled by
# ../shared/gpu-host/pack (run from the project root there; results under $OUT, or ./gpu-results).
#   bash scripts/gpu-campaign.sh [figures|perf|multi|all]
set -uo pipefail
OUT=${OUT:-gpu-results}; R=$OUT/r; mkdir -p "$R"
export CUDA_DEVICE_MAX_CONNECTIONS=${CUDA_DEVICE_MAX_CONNECTIONS:-32}
what=${1:-all}
J="bash .gpu/run java"
P="$J io.flexlink.bench.PerfMain"
ngpu=$(nvidia-smi -L | wc -l)
step() { echo "== $(date +%T) $*" | tee -a "$R/campaign.log"; }

if [[ $what == figures || $what == all ]]; then
  step topology
  { nvidia-smi; nvidia-smi topo -m; nvidia-smi nvlink --status;
    nvidia-smi --query-gpu=index,name,pci.bus_id,pcie.link.gen.current,pcie.link.gen.max,pcie.link.width.current,pcie.link.width.max --format=csv;
    lscpu | grep -iE "numa|model name|socket"; } > "$R/topology.txt" 2>&1
  step copy ceiling
  timeout 120 $J io.flexlink.cuda.bench.CopyCeiling 256 10 > "$R/copy-ceiling.txt" 2>&1
  step gpu tests
  timeout 240 bash .gpu/run test --scan-class-path --include-tag gpu \
    --config=junit.jupiter.execution.timeout.default=150s > "$R/gpu-tests.log" 2>&1
  step cuda measurements
  timeout 180 $J io.flexlink.cuda.bench.CudaMeasurements > "$R/measure.log" 2>&1
  step multi-process PCIe path, 2 JVMs on GPU 0 vs one JVM with both ranks
  CUDA_VISIBLE_DEVICES=0 timeout 150 $J io.flexlink.cuda.bench.MultiProcessMeasurement 256M 20 > "$R/multiprocess.txt" 2>&1
  step jmh gc profile
  timeout 120 $J org.openjdk.jmh.Main SteadyStateCallBenchmark -p backend=cuda -prof gc -f 1 -wi 2 -i 3 -w 1s -r 1s \
    > "$R/jmh-gc.txt" 2>&1
fi
if [[ $what == perf || $what == all ]]; then
  common="-b 1M -e 1G -f 4 -n 20 -w 5 -c 1"
  if (( ngpu >= 2 )); then
    for c in all_reduce all_gather reduce_scatter; do
      step "$c on $ngpu GPUs, NCCL + PCIe vs NCCL"
      timeout 200 $P $c $common -g "$ngpu" --baseline --history --json "$R/$c-${ngpu}gpu.json" \
        --plot "$R/$c-${ngpu}gpu.png" > "$R/$c-${ngpu}gpu.txt" 2>&1
    done
  fi
  for c in all_reduce all_gather; do
    step "$c, 2 ranks on GPU 0 (PCIe path)"
    CUDA_VISIBLE_DEVICES=0 timeout 200 $P $c $common -g 2 --baseline --json "$R/$c-2ranks-1gpu.json" \
      --plot "$R/$c-2ranks-1gpu.png" > "$R/$c-2ranks-1gpu.txt" 2>&1
    step "$c, 1 rank (NCCL + PCIe) vs NCCL"
    CUDA_VISIBLE_DEVICES=0 timeout 150 $P $c $common -g 1 --baseline --history --json "$R/$c-1rank.json" \
      --plot "$R/$c-1rank.png" > "$R/$c-1rank.txt" 2>&1
  done
fi
if [[ $what == multi || $what == all ]]; then
  for c in all_gather all_reduce; do
    step "$c, 2 processes on GPU 0 (--from-env, PCIe path)"
    for r in 0 1; do
      CUDA_VISIBLE_DEVICES=0 RANK=$r WORLD_SIZE=2 LOCAL_RANK=$r MASTER_ADDR=127.0.0.1 MASTER_PORT=29517 \
        timeout 150 $P $c -b 1M -e 256M -f 4 --from-env --backend cuda > "$R/$c-2proc-1gpu.r$r.txt" 2>&1 &
    done
    wait
  done
  if (( ngpu >= 2 )); then
    step "all_reduce, one process per GPU (--from-env, NCCL + PCIe vs NCCL)"
    for r in 0 1; do
      RANK=$r WORLD_SIZE=2 LOCAL_RANK=$r MASTER_ADDR=127.0.0.1 MASTER_PORT=29518 \
        timeout 200 $P all_reduce -b 1M -e 1G -f 4 --from-env --backend cuda --baseline > "$R/all_reduce-2proc-2gpu.r$r.txt" 2>&1 &
    done
    wait
  fi
fi
step done
tar czf "$OUT/results-$what.tgz" -C "$OUT" r

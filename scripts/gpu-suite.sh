#!/usr/bin/env bash
# The GPU-tagged tests on a CUDA host with the project bundled by ../shared/gpu-host/pack (run from the
# project root there), in two JVMs so that one crash cannot hide the rest: the classes that make
# communicators of their own (captures, NVSHMEM, the facade's registrations) first, then every other class.
# Logs under $OUT (or ./gpu-results); the summary lines of both runs on stdout. A JVM still running at its limit gets
# SIGQUIT first (its thread dump goes into its log: where a hang waits) and is killed 5 s later.
#   bash scripts/gpu-suite.sh
set -uo pipefail
OUT=${OUT:-gpu-results}; mkdir -p "$OUT"
export CUDA_DEVICE_MAX_CONNECTIONS=${CUDA_DEVICE_MAX_CONNECTIONS:-32}
first=(cuda.PreMulSumGpuTest cuda.LifecycleGpuTest cuda.FlexNcclGpuTest cuda.GraphCaptureGpuTest
       nvshmem.NvshmemGpuTest bench.ddp.DataParallelTrainingGpuTest cuda.FacadeRegistrationGpuTest
       cuda.FacadeWindowsGpuTest)
select=(); names=()
for c in "${first[@]}"; do select+=(--select-class "io.flexlink.$c"); names+=("${c##*.}"); done
excluded=$(IFS='|'; echo "${names[*]}")
# each test's start and end stream as they happen (--details=testfeed), so that a JVM killed at its limit still
# names the tests it was in; it comes last: after it, a --config option left the console launcher without the
# class path (every class "not found", 0 tests; seen with the bundle's JUnit console 1.14.4)
summary() { sed 's/\x1b\[[0-9;]*m//g' "$1" | grep -E -A1 "tests (successful|failed|aborted|found)|:: (FAILED|ABORTED)$" | grep -v '^--$'; }
unfinished() {
  sed 's/\x1b\[[0-9;]*m//g' "$1" | awk -F' :: ' '/ :: STARTED$/ {open[$1] = 1; next}
    / :: (SUCCESSFUL|FAILED|ABORTED|SKIPPED)$/ {delete open[$1]} END {for (t in open) print "unfinished: " t}'
}
echo "== first JVM: ${names[*]}"
# the bundle's logging shows WARN and up; NvshmemGpuTest counts the one INFO line of a path left out of a capture
JAVA_TOOL_OPTIONS="${JAVA_TOOL_OPTIONS:-} -Dorg.slf4j.simpleLogger.log.io.flexlink.launch.Launcher=info" \
timeout -s QUIT -k 5 240 bash .gpu/run test "${select[@]}" --include-tag gpu \
  --config=junit.jupiter.execution.timeout.default=120s --details=testfeed > "$OUT/gpu-tests-a.log" 2>&1
echo "exit $?"; summary "$OUT/gpu-tests-a.log"; unfinished "$OUT/gpu-tests-a.log"
echo "== second JVM: every other class"
timeout -s QUIT -k 5 330 bash .gpu/run test --scan-class-path --include-tag gpu --exclude-classname ".*($excluded)\$" \
  --config=junit.jupiter.execution.timeout.default=180s --details=testfeed > "$OUT/gpu-tests-b.log" 2>&1
echo "exit $?"; summary "$OUT/gpu-tests-b.log"; unfinished "$OUT/gpu-tests-b.log"

#!/bin/bash
# racecheck on the concurrency tests with one hardware work queue (CUDA_DEVICE_MAX_CONNECTIONS=1): do the stalls go?
mkdir -p /tmp/dc && tar xJf .devcarry-packed/bundle.tar.xz -C /tmp/dc
export CHS_RELIABILITY_ROUNDS=2 CUDA_DEVICE_MAX_CONNECTIONS=1
for i in 1 2 3 4; do
  s=$(date +%s)
  timeout 85 /tmp/dc/run.sh compute-sanitizer --tool racecheck --error-exitcode 3 /tmp/dc/build/bin/CudaHierarchicalSegmentationGTestDriver --gtest_filter="Reliability.GPUSharedAndSeparateStreams:Reliability.EightAlgorithms*" > $OUT/race-$i.log 2>&1
  rc=$?
  pkill -9 -f compute-sanitizer; pkill -9 -f CudaHierarchicalSegmentationGTestDriver; sleep 1
  echo "run $i rc $rc in $(( $(date +%s) - s )) s: $(grep -E 'RACECHECK SUMMARY|ERROR SUMMARY' $OUT/race-$i.log | tail -1); last: $(grep '^\[ RUN' $OUT/race-$i.log | tail -1)" | tee -a $OUT/summary.txt
done

#!/bin/bash
# The submitted code on the GPU: every GTest, the IFT above 2^32 voxels, racecheck on the concurrency tests.
set -o pipefail
T0=$(date +%s)
mkdir -p /tmp/dc && tar xJf .devcarry-packed/bundle.tar.xz -C /tmp/dc
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader | tee $OUT/device.txt
compute-sanitizer --version | tail -1 >> $OUT/device.txt
/tmp/dc/run.sh build/bin/CudaHierarchicalSegmentationGTestDriver > $OUT/gtest.log 2>&1; echo "gtest rc $? at $(( $(date +%s) - T0 )) s"
grep -E "^\[  (PASSED|FAILED|SKIPPED) |OVERRUN|FAILED TEST|^\[  FAILED" $OUT/gtest.log | tail -12
CHS_LARGE_TESTS=1 /usr/bin/time -v /tmp/dc/run.sh build/bin/CudaHierarchicalSegmentationGTestDriver --gtest_filter='CudaImageForestingTransformImageFilter.GPUVolumeAbove2To32Voxels' > $OUT/gtest-large-ift.log 2>&1; echo "large rc $? at $(( $(date +%s) - T0 )) s"
grep -E "rounds|OK|FAILED|Failure|Expected|Which is|Elapsed|Maximum resident" $OUT/gtest-large-ift.log | head -12
export CHS_RELIABILITY_ROUNDS=2
clean=0
for i in 1 2 3 4; do
  [ $(( $(date +%s) - T0 )) -gt 420 ] && break
  s=$(date +%s)
  timeout 80 /tmp/dc/run.sh compute-sanitizer --tool racecheck --error-exitcode 3 /tmp/dc/build/bin/CudaHierarchicalSegmentationGTestDriver --gtest_filter="Reliability.GPUSharedAndSeparateStreams:Reliability.EightAlgorithms*" > $OUT/racecheck-$i.log 2>&1
  rc=$?
  pkill -9 -f compute-sanitizer; pkill -9 -f CudaHierarchicalSegmentationGTestDriver; sleep 1
  echo "racecheck $i rc $rc in $(( $(date +%s) - s )) s: $(grep -E 'RACECHECK SUMMARY|ERROR SUMMARY' $OUT/racecheck-$i.log | tail -1); $(grep -cE '^\[       OK' $OUT/racecheck-$i.log) tests OK; last: $(grep '^\[ RUN' $OUT/racecheck-$i.log | tail -1)" | tee -a $OUT/racecheck-summary.txt
  [ $rc -eq 0 ] && clean=$((clean + 1))
  [ $clean -ge 2 ] && break
done
echo "done at $(( $(date +%s) - T0 )) s"

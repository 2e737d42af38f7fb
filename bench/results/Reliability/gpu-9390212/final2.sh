#!/bin/bash
# The submitted code: memcheck and synccheck on the concurrency tests, racecheck once more, the hostile large inputs.
mkdir -p /tmp/dc && tar xJf .devcarry-packed/bundle.tar.xz -C /tmp/dc
export CHS_RELIABILITY_ROUNDS=2
F='Reliability.EightAlgorithms*:Reliability.GPUSharedAndSeparateStreams'
for tool in memcheck synccheck racecheck; do
  s=$(date +%s)
  timeout 80 /tmp/dc/run.sh compute-sanitizer --tool $tool --error-exitcode 3 /tmp/dc/build/bin/CudaHierarchicalSegmentationGTestDriver --gtest_filter="$F" > $OUT/$tool.log 2>&1
  rc=$?
  pkill -9 -f compute-sanitizer; pkill -9 -f CudaHierarchicalSegmentationGTestDriver; sleep 1
  echo "$tool rc $rc in $(( $(date +%s) - s )) s: $(grep -E 'SUMMARY' $OUT/$tool.log | tail -1); $(grep -cE '^\[       OK' $OUT/$tool.log) tests OK" | tee -a $OUT/sanitizers-summary.txt
done
s=$(date +%s)
CHS_LARGE_TESTS=1 /tmp/dc/run.sh build/bin/CudaHierarchicalSegmentationGTestDriver --gtest_filter='Reliability.*OneAxis*:*Infinite*:*BadInput*:Reliability.LabelTypesTooSmallAreRefused' > $OUT/gtest-hostile-large.log 2>&1
echo "hostile rc $? in $(( $(date +%s) - s )) s"; grep -E "^\[  (PASSED|FAILED)|FAILED TEST|tests ran" $OUT/gtest-hostile-large.log

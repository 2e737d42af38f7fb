#!/usr/bin/env bash
# 716cb7f (the canonicalisation's pixel count in the id type): the GTest driver; memcheck on the 64-bit tree tests;
# the alpha-tree's spanning tree and the dendrograms before (f9ed81f's CI build, its module library included) and
# after, in turn, twice.
rm -rf /tmp/dc && mkdir -p /tmp/dc && tar xJf .devcarry-packed/bundle.tar.xz -C /tmp/dc
rm -rf /tmp/db && mkdir -p /tmp/db && tar xJf .devcarry-before/bundle.tar.xz -C /tmp/db
O=$OUT/v37; mkdir -p $O
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv > $O/gpu.txt 2>&1
md5sum /tmp/db/lib/libCudaHierarchicalSegmentation.so > $O/before-lib.md5
/tmp/dc/run.sh build/bin/CudaHierarchicalSegmentationGTestDriver > $O/gtest.log 2>&1; echo "rc $?" >> $O/gtest.log
grep -E "^\[  PASSED|^\[  FAILED|^rc" $O/gtest.log
timeout 200 /tmp/dc/run.sh compute-sanitizer --tool memcheck /tmp/dc/build/bin/CudaHierarchicalSegmentationGTestDriver --gtest_filter='AlphaTreeCUDA.WideParentsGiveTheSameTree:AlphaTreeCUDA.SizeLimitsOfEachPixelTypeAndConstruction:CudaDendrogramAttributeFilter.*' > $O/memcheck.log 2>&1; echo "rc $?" >> $O/memcheck.log
grep -E "ERROR SUMMARY|PASSED|FAILED|^rc" $O/memcheck.log | head
A=/tmp/dc/run.sh; B=/tmp/db/run.sh
at="--reps 7 --cpu-max-pixels 0 --no-queries --algorithm spanning-tree --type uint8 --type rgb8 --side 4096 --volume 256"
sl="--no-cpu --sizes 1000000 --reps 7"
for round in 1 2; do
  echo "== round $round before"; $B .devcarry-bb/build/bin/CudaAlphaTreeBenchmark --json $O/at_before_$round.json $at 2>&1 | grep -v "^$"
  $B .devcarry-bb/build/bin/CudaDendrogramBenchmark --json $O/sl_before_$round.json $sl 2>&1 | grep -v "^$"
  echo "== round $round after";  $A build/bin/CudaAlphaTreeBenchmark --json $O/at_after_$round.json $at 2>&1 | grep -v "^$"
  $A build/bin/CudaDendrogramBenchmark --json $O/sl_after_$round.json $sl 2>&1 | grep -v "^$"
done > $O/bench-same-run.log
grep -E "==|image|spanning" $O/bench-same-run.log | cut -c1-160
cd $OUT && tar czf v37.tgz v37 && rm -rf v37

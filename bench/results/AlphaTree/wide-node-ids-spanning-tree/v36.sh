#!/usr/bin/env bash
# 3a5549c (64-bit node ids for the float alpha-tree's spanning tree; the dendrogram headers in C++11):
#   v36.sh        the GTest driver, memcheck on the 64-bit tree tests, the device memory report;
#   v36.sh bench  the alpha-tree's spanning tree and the dendrograms before (f9ed81f's CI build) and after, in turn.
rm -rf /tmp/dc && mkdir -p /tmp/dc && tar xJf .devcarry-packed/bundle.tar.xz -C /tmp/dc
O=$OUT/v36; mkdir -p $O
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv > $O/gpu.txt 2>&1
if [ "${1:-}" = bench ]; then
  rm -rf /tmp/db && mkdir -p /tmp/db && tar xJf .devcarry-before/bundle.tar.xz -C /tmp/db
  A=/tmp/dc/run.sh; B=/tmp/db/run.sh
  at="--reps 7 --cpu-max-pixels 0 --no-queries --algorithm spanning-tree --type uint8 --type rgb8 --side 4096 --volume 256"
  sl="--no-cpu --sizes 1000000 --reps 7"
  for round in 1 2; do
    echo "== round $round before"; $B .devcarry-bb/build/bin/CudaAlphaTreeBenchmark --json $O/at_before_$round.json $at 2>&1 | grep -v "^$"
    $B .devcarry-bb/build/bin/CudaDendrogramBenchmark --json $O/sl_before_$round.json $sl 2>&1 | grep -v "^$"
    echo "== round $round after";  $A build/bin/CudaAlphaTreeBenchmark --json $O/at_after_$round.json $at 2>&1 | grep -v "^$"
    $A build/bin/CudaDendrogramBenchmark --json $O/sl_after_$round.json $sl 2>&1 | grep -v "^$"
  done > $O/bench-same-run.log
  grep -E "==|image|spanning" $O/bench-same-run.log | cut -c1-200
  /tmp/db/run.sh true; md5sum /tmp/db/lib/libCudaHierarchicalSegmentation.so > $O/before-lib.md5; cd $OUT && tar czf v36b.tgz v36 && rm -rf v36; exit 0
fi
/tmp/dc/run.sh build/bin/CudaHierarchicalSegmentationGTestDriver > $O/gtest.log 2>&1; echo "rc $?" >> $O/gtest.log
grep -E "^\[  PASSED|^\[  FAILED|^rc" $O/gtest.log
timeout 300 /tmp/dc/run.sh compute-sanitizer --tool memcheck /tmp/dc/build/bin/CudaHierarchicalSegmentationGTestDriver --gtest_filter='AlphaTreeCUDA.WideParentsGiveTheSameTree:AlphaTreeCUDA.SizeLimitsOfEachPixelTypeAndConstruction:CudaImageToSingleLinkageDendrogramFilter.WideNodeIds*:CudaDendrogramAttributeFilter.*' > $O/memcheck.log 2>&1; echo "rc $?" >> $O/memcheck.log
grep -E "ERROR SUMMARY|PASSED|FAILED|^rc" $O/memcheck.log | head
/tmp/dc/run.sh build/bin/CudaDeviceMemoryReport > $O/report.log 2>&1; echo "rc $?" >> $O/report.log
grep -E "alpha-tree \(float|single-linkage dendrogram \(float|within|^rc" $O/report.log
cd $OUT && tar czf v36.tgz v36 && rm -rf v36

#!/usr/bin/env bash
# Overlapped transfers: every GPU test, the new tests under memcheck, the 2D watershed before (HEAD) and after in turn.
set -x
rm -rf /tmp/dc /tmp/db; mkdir -p /tmp/dc /tmp/db && tar xJf .devcarry-packed/bundle.tar.xz -C /tmp/dc && tar xJf .devcarry-before/bundle.tar.xz -C /tmp/db
mkdir -p $OUT/v1; cd $OUT/v1
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader > gpu.txt; nproc >> gpu.txt
cd - >/dev/null
/tmp/dc/run.sh build/bin/CudaHierarchicalSegmentationGTestDriver --gtest_filter='*Overlapped*' > $OUT/v1/gtest-overlap.log 2>&1; echo "rc $?" >> $OUT/v1/gtest-overlap.log
tail -3 $OUT/v1/gtest-overlap.log
/tmp/dc/run.sh build/bin/CudaHostLinkBenchmark --mib 64 > $OUT/v1/link.log 2>&1
for r in 1 2; do
  /tmp/db/run.sh build/bin/CudaWatershedBenchmark --only 2d --itk-max-voxels 0 --cpu-max-voxels 0 --reps 15 > $OUT/v1/ws2d-before-$r.log 2>&1
  /tmp/dc/run.sh build/bin/CudaWatershedBenchmark --only 2d --itk-max-voxels 0 --cpu-max-voxels 0 --reps 15 --json $OUT/v1/ws2d-after-$r.json > $OUT/v1/ws2d-after-$r.log 2>&1
done
timeout 200 /tmp/dc/run.sh compute-sanitizer --tool memcheck /tmp/dc/build/bin/CudaHierarchicalSegmentationGTestDriver --gtest_filter='CudaWatershedImageFilter.OverlappedTransfersEqualCpu' > $OUT/v1/memcheck.log 2>&1; echo "rc $?" >> $OUT/v1/memcheck.log
tail -3 $OUT/v1/memcheck.log
/tmp/dc/run.sh build/bin/CudaHierarchicalSegmentationGTestDriver > $OUT/v1/gtest.log 2>&1; echo "rc $?" >> $OUT/v1/gtest.log
tail -4 $OUT/v1/gtest.log
cd $OUT && tar czf v1.tgz v1 && rm -rf v1

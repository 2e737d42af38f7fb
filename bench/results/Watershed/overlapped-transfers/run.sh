#!/usr/bin/env bash
# The code as submitted (3ed8f8f): every GPU test; memcheck on the overlap tests; the 2D watershed with its peers and
# the CPU reference (host-cache fix in); the 2D watershed alone; the scale rows up to 512^3, after and before (6f645bf).
set -x
rm -rf /tmp/dc /tmp/db; mkdir -p /tmp/dc /tmp/db && tar xJf .devcarry-packed/bundle.tar.xz -C /tmp/dc && tar xJf .devcarry-before/bundle.tar.xz -C /tmp/db
O=$OUT/v3; mkdir -p $O
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader > $O/gpu.txt; nproc >> $O/gpu.txt
/tmp/dc/run.sh build/bin/CudaHierarchicalSegmentationGTestDriver > $O/gtest.log 2>&1; echo "rc $?" >> $O/gtest.log
grep -E "PASSED|FAILED|SKIPPED \] [0-9]|^rc" $O/gtest.log
/tmp/dc/run.sh build/bin/CudaHostLinkBenchmark --mib 64 --json $O/link.json > $O/link.log 2>&1
CHS_BUILD=/tmp/dc/build bench/Watershed/run.sh $O/peers /tmp/dc/run.sh --only 2d --itk-max-voxels 0 --reps 15 > $O/peers-run.log 2>&1
python3 bench/Common/link_report.py $O/link.json $O/peers/ws_module.json > $O/link_report.md 2>&1
/tmp/dc/run.sh build/bin/CudaWatershedBenchmark --only 2d --itk-max-voxels 0 --cpu-max-voxels 0 --reps 15 --json $O/ws2d-after.json > $O/ws2d-after.log 2>&1
/tmp/dc/run.sh build/bin/CudaWatershedBenchmark --scale --only watershed --max-voxels 140000000 --reps 5 > $O/scale-after.log 2>&1
/tmp/db/run.sh build/bin/CudaWatershedBenchmark --scale --only watershed --max-voxels 140000000 --reps 5 > $O/scale-before.log 2>&1
timeout 150 /tmp/dc/run.sh compute-sanitizer --tool memcheck /tmp/dc/build/bin/CudaHierarchicalSegmentationGTestDriver --gtest_filter='WatershedCUDA.OverlappedTransfersEqualReference:HostCachedContainers.PinnedOutputsOfCudaUpdatesGpu' > $O/memcheck.log 2>&1; echo "rc $?" >> $O/memcheck.log
tail -3 $O/memcheck.log
grep -E "4096\^2 .*PRUF  balanced  " $O/ws2d-after.log $O/peers/ws_module.log | cut -c1-150
cd $OUT && tar czf v3.tgz v3 && rm -rf v3

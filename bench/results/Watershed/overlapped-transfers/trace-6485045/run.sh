#!/usr/bin/env bash
set -x
rm -rf /tmp/dt; mkdir -p /tmp/dt && tar xJf .devcarry-packed/bundle.tar.xz -C /tmp/dt
mkdir -p $OUT/t1
CHS_TRACE=1 /tmp/dt/run.sh build/bin/CudaWatershedBenchmark --only 2d --itk-max-voxels 0 --cpu-max-voxels 0 --reps 15 > $OUT/t1/ws2d.log 2> $OUT/t1/trace.log
CHS_TRACE=1 /tmp/dt/run.sh build/bin/CudaWatershedBenchmark --only 2d --itk-max-voxels 0 --cpu-max-voxels 0 --reps 15 --staging 1024,16,8,0 > $OUT/t1/ws2d-1m.log 2> $OUT/t1/trace-1m.log
CHS_TRACE=1 /tmp/dt/run.sh build/bin/CudaWatershedBenchmark --only 2d --itk-max-voxels 0 --cpu-max-voxels 0 --reps 15 --staging 2048,8,16,0 > $OUT/t1/ws2d-2m16.log 2> $OUT/t1/trace-2m16.log
cd $OUT && tar czf t1.tgz t1 && rm -rf t1

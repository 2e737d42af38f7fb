#!/usr/bin/env bash
# Where the 2D watershed's end-to-end time goes: host link, progress-report times, kernel times under ncu.
set -x
rm -rf /tmp/dc; mkdir -p /tmp/dc && tar xJf .devcarry-packed/bundle.tar.xz -C /tmp/dc
R=/tmp/dc/run.sh
mkdir -p $OUT/m1; cd $OUT/m1
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader > gpu.txt; nproc >> gpu.txt
which nsys ncu >> gpu.txt 2>&1
cd - >/dev/null
$R build/bin/CudaHostLinkBenchmark --mib 64 > $OUT/m1/link.log 2>&1
$R build/bin/CudaWatershedBenchmark --only 2d --itk-max-voxels 0 --cpu-max-voxels 0 --reps 15 > $OUT/m1/ws2d.log 2>&1
$R build/bin/CudaWatershedBenchmark --only 2d --itk-max-voxels 0 --cpu-max-voxels 0 --reps 15 > $OUT/m1/ws2d-2.log 2>&1
if which nsys; then
  $R nsys profile -o $OUT/m1/ws --force-overwrite true /tmp/dc/build/bin/CudaWatershedBenchmark --only 2d --itk-max-voxels 0 --cpu-max-voxels 0 --reps 3 > $OUT/m1/nsys.log 2>&1
  nsys stats --report cuda_gpu_trace --format csv -o $OUT/m1/trace $OUT/m1/ws.nsys-rep >> $OUT/m1/nsys.log 2>&1
  xz -9 $OUT/m1/trace*.csv; rm -f $OUT/m1/ws.sqlite
fi
$R ncu --metrics gpu__time_duration.sum --csv /tmp/dc/build/bin/CudaWatershedBenchmark --only 2d --itk-max-voxels 0 --cpu-max-voxels 0 --reps 1 > $OUT/m1/ncu.csv 2> $OUT/m1/ncu.err
xz -9 $OUT/m1/ncu.csv
cd $OUT && tar czf m1.tgz m1 && rm -rf m1

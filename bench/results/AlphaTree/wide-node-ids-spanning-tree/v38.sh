#!/usr/bin/env bash
# 716cb7f against f9ed81f built here (same compiler and flags as "after"): the alpha-tree's spanning tree and the
# dendrograms, before and after in turn, twice, the order swapped in round 2 (no tests: v37.sh ran them on 716cb7f).

rm -rf /tmp/dc && mkdir -p /tmp/dc && tar xJf .devcarry-packed/bundle.tar.xz -C /tmp/dc
rm -rf /tmp/db && mkdir -p /tmp/db && tar xJf .devcarry-before/bundle.tar.xz -C /tmp/db
O=$OUT/v38; mkdir -p $O
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv > $O/gpu.txt 2>&1
md5sum /tmp/db/lib/libCudaHierarchicalSegmentation.so > $O/before-lib.md5
A=/tmp/dc/run.sh; B=/tmp/db/run.sh
at="--reps 7 --cpu-max-pixels 0 --no-queries --algorithm spanning-tree --type uint8 --type rgb8 --side 4096 --volume 256"
sl="--no-cpu --sizes 1000000 --reps 7"
run() { # side runner folder round
  echo "== round $4 $1"; $2 $3/bin/CudaAlphaTreeBenchmark --json $O/at_$1_$4.json $at 2>&1 | grep -v "^$"
  $2 $3/bin/CudaDendrogramBenchmark --json $O/sl_$1_$4.json $sl 2>&1 | grep -v "^$"
}
# Round 1 runs "before" first, round 2 "after" first.
for round in 1 2; do
  if [ $round = 1 ]; then run before $B .devcarry-bb/build $round; run after $A build $round
  else run after $A build $round; run before $B .devcarry-bb/build $round; fi
done > $O/bench-same-run.log
grep -E "==|image|spanning" $O/bench-same-run.log | cut -c1-160
cd $OUT && tar czf v38.tgz v38 && rm -rf v38

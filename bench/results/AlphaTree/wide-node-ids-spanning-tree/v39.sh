#!/usr/bin/env bash
# The dendrogram's 1M-edge trees and the 4096^2 image, 716cb7f against f9ed81f built here, four alternations (the order
# swapped each time), 15 repetitions: the spread between processes of one binary against the difference between them.
rm -rf /tmp/dc && mkdir -p /tmp/dc && tar xJf .devcarry-packed/bundle.tar.xz -C /tmp/dc
rm -rf /tmp/db && mkdir -p /tmp/db && tar xJf .devcarry-before/bundle.tar.xz -C /tmp/db
O=$OUT/v39; mkdir -p $O
A=/tmp/dc/run.sh; B=/tmp/db/run.sh
sl="--no-cpu --no-3d --sizes 1000000 --reps 15"
for k in 1 2 3 4; do
  if [ $((k % 2)) = 1 ]; then order="before after"; else order="after before"; fi
  for side in $order; do
    if [ $side = before ]; then r=$B; d=.devcarry-bb/build; else r=$A; d=build; fi
    echo "== $k $side"; $r $d/bin/CudaDendrogramBenchmark --json $O/sl_${side}_$k.json $sl 2>&1 | grep -v "^$"
  done
done > $O/bench.log
grep -E "==|tree-random|image" $O/bench.log | cut -c1-110
cd $OUT && tar czf v39.tgz v39 && rm -rf v39

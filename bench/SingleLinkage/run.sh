#!/usr/bin/env bash
# Runs the single-linkage benchmark on the GPU machine: bench/SingleLinkage/peers.py writes the graph inputs and times SciPy,
# CudaDendrogramBenchmark times the module and the sequential union-find dendrogram on the same inputs, then
# bench/SingleLinkage/peers.py compares the module's linkage matrix with SciPy's.
#   bench/SingleLinkage/run.sh OUTDIR [RUNNER] [BENCHMARK OPTIONS...]   (RUNNER: e.g. /tmp/dc/run.sh for a packed build)
set -euo pipefail
out=${1:?output folder}
runner=${2:-}
shift $(( $# >= 2 ? 2 : 1 ))
data=${CHS_BENCH_DATA:-/tmp/chs-sl-bench}
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out" "$data"
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader > "$out/gpu.txt" || true
nproc > "$out/cpus.txt"
python3 "$here/peers.py" prepare "$data" | tee "$out/sl_peers.log"
$runner ${CHS_BUILD:-build}/bin/CudaDendrogramBenchmark --json "$out/sl_module.json" "$@" \
  --graph "points-10k:$data/points-10k.bin:$data/points-10k-module-z.bin" --graph "knn-3M:$data/knn-3M.bin" \
  | tee "$out/sl_module.log"
python3 "$here/peers.py" compare "$data" | tee -a "$out/sl_peers.log"
cp "$data/sl_peers.json" "$out/"
python3 "$here/report.py" "$out" | tee "$out/sl_report.md"

#!/usr/bin/env bash
# Runs the alpha-tree benchmark on the GPU machine: CudaAlphaTreeBenchmark times the module (both CUDA algorithms)
# and its CPU reference and writes the images, bench/AlphaTree/peers.py times Higra on the same images, bench/AlphaTree/report.py
# writes the table.
#   bench/AlphaTree/run.sh OUTDIR [RUNNER] [BENCHMARK OPTIONS...]   (RUNNER: e.g. /tmp/dc/run.sh for a packed build)
# Higra: CHS_HIGRA_MAX_PIXELS (default 4096^2) bounds the images it runs on.
set -euo pipefail
out=${1:?output folder}
runner=${2:-}
shift $(( $# >= 2 ? 2 : 1 ))
data=${CHS_BENCH_DATA:-/tmp/chs-at-bench}
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out" "$data"
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader > "$out/gpu.txt" || true
nproc > "$out/cpus.txt"
$runner ${CHS_BUILD:-build}/bin/CudaAlphaTreeBenchmark --json "$out/at_module.json" --write-inputs "$data" "$@" \
  | tee "$out/at_module.log"
python3 "$here/peers.py" "$data" "$out/at_higra.json" --max-pixels "${CHS_HIGRA_MAX_PIXELS:-16777216}" \
  | tee "$out/at_higra.log"
python3 "$here/report.py" "$out" | tee "$out/at_report.md"

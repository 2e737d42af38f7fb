#!/usr/bin/env bash
# Runs the watershed benchmark on the GPU machine: CudaWatershedBenchmark times the module (watershed and waterfall),
# its CPU reference and ITK's MorphologicalWatershedImageFilter and writes the 2D input, bench/Watershed/peers.py times
# scikit-image and OpenCV on it, bench/Watershed/report.py writes the table.
#   bench/Watershed/run.sh OUTDIR [RUNNER] [BENCHMARK OPTIONS...]   (RUNNER: e.g. /tmp/dc/run.sh for a packed build)
set -euo pipefail
out=${1:?output folder}
runner=${2:-}
shift $(( $# >= 2 ? 2 : 1 ))
data=${CHS_BENCH_DATA:-/tmp/chs-ws-bench}
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out" "$data"
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader > "$out/gpu.txt" || true
nproc > "$out/cpus.txt"
$runner ${CHS_BUILD:-build}/bin/CudaWatershedBenchmark --json "$out/ws_module.json" --write-inputs "$data" "$@" \
  | tee "$out/ws_module.log"
python3 "$here/peers.py" "$data" "$out/ws_peers.json" | tee "$out/ws_peers.log"
python3 "$here/report.py" "$out" | tee "$out/ws_report.md"

#!/usr/bin/env bash
# Runs the waterpixel benchmark on the GPU machine: bench/Waterpixels/peers.py makes the inputs and times scikit-image, then
# CudaWaterpixelBenchmark times the module and the sequential IFT on the same files; bench/Waterpixels/report.py merges them.
#   bench/Waterpixels/run.sh OUTDIR [RUNNER]      (RUNNER: e.g. /tmp/dc/run.sh for a packed build)
set -euo pipefail
out=${1:?output folder}
runner=${2:-}
data=${CHS_BENCH_DATA:-/tmp/chs-wp-bench}
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out" "$data"
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader > "$out/gpu.txt" || true
nproc > "$out/cpus.txt"
python3 "$here/peers.py" "$data" | tee "$out/wp_peers.log"
cp "$data/wp_peers.json" "$out/"
mapfile -t cases < "$data/cases.txt"
$runner ${CHS_BUILD:-build}/bin/CudaWaterpixelBenchmark --json "$out/wp_module.json" --reps 10 "${cases[@]}" | tee "$out/wp_module.log"
python3 "$here/report.py" "$out" | tee "$out/wp_report.md"

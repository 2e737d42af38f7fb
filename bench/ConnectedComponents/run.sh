#!/usr/bin/env bash
# Runs the connected-components benchmark on the GPU machine: the Python peers (CuPy, OpenCV) make the inputs and
# time themselves, then the module and ITK's filter are timed on the same files; bench/ConnectedComponents/report.py merges both.
#   bench/ConnectedComponents/run.sh OUTDIR [RUNNER]      (RUNNER: e.g. .devcarry/run.sh for a packed build)
set -euo pipefail
out=${1:?output folder}
runner=${2:-}
data=${CHS_BENCH_DATA:-/tmp/chs-ccl-bench}
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out" "$data"
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader > "$out/gpu.txt" || true
python3 "$here/peers.py" "$data" | tee "$out/ccl_peers.log"
cp "$data/ccl_peers.json" "$out/"
mapfile -t cases < "$data/cases.txt"
small=(); large=()
for c in "${cases[@]}"; do [[ $c == *noitk ]] && large+=("$c") || small+=("$c"); done
$runner ${CHS_BUILD:-build}/bin/CudaConnectedComponentBenchmark --json "$out/ccl_module.json" --reps 20 "${small[@]}" | tee "$out/ccl_module.log"
if [ ${#large[@]} -gt 0 ]; then
  $runner ${CHS_BUILD:-build}/bin/CudaConnectedComponentBenchmark --json "$out/ccl_module_large.json" --reps 3 "${large[@]}" | tee -a "$out/ccl_module.log"
fi
python3 "$here/report.py" "$out" | tee "$out/ccl_report.md"

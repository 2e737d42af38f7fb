#!/bin/bash
# The submitted code: the soak (2,000 rounds of the eight algorithms), then chseg's Python tests.
set -o pipefail
mkdir -p /tmp/dc && tar xJf .devcarry-packed/bundle.tar.xz -C /tmp/dc
CHS_SOAK_RUNS=2000 CHS_SOAK_REPORT=$OUT/soak.jsonl /tmp/dc/run.sh build/bin/CudaHierarchicalSegmentationGTestDriver --gtest_filter='Reliability.GPUSoak*' > $OUT/soak.log 2>&1; echo "soak rc $?"
grep -E "OK \]|FAILED|Failure|median|RSS|->" $OUT/soak.log | head -20
bash .devcarry-run/py.sh

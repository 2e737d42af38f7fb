#!/bin/bash
set -o pipefail
rm -rf /tmp/pk && python3 -m pip install -q --no-index --no-deps --target /tmp/pk .devcarry-chseg/*.whl .devcarry-higra/*.whl
cp python/chseg/*.py /tmp/pk/chseg/
PYTHONPATH=/tmp/pk timeout 550 python3 -m pytest -q -p no:cacheprovider python/tests --ignore=python/tests/test_dask.py > $OUT/pytest.log 2>&1; echo "pytest rc $?"
tail -8 $OUT/pytest.log

#!/usr/bin/env bash
# chseg's tests with the wheel of 716cb7f's package (64-bit node ids of the dendrograms and of the float alpha-tree's spanning tree), every module of python/tests.
O=$OUT/v40; mkdir -p $O
pip install -q --no-deps --no-index --target /tmp/pylib .devcarry-wheels/*.whl > $O/pip.log 2>&1; echo "pip rc $?"
PYTHONPATH=/tmp/pylib python3 -m pytest -q -rs -p no:cacheprovider python/tests > $O/pytest.log 2>&1; echo "rc $?" >> $O/pytest.log
PYTHONPATH=/tmp/pylib python3 -m pytest -v -p no:cacheprovider python/tests/test_trees.py -k wide > $O/pytest-wide.log 2>&1
grep -E "passed|failed|^rc|SKIPPED" $O/pytest.log | tail -12
grep -c PASSED $O/pytest-wide.log
cd $OUT && tar czf v40.tgz v40 && rm -rf v40

"""The installed package as a wheel ships it: on CPython 3.12 and later the extension uses the stable ABI only (one
abi3 wheel serves every later CPython), and the GPU check reports a reason whenever it finds no usable device."""

import sys

import chseg
from chseg import _chseg


def test_extension_is_abi3_from_python_312():
    name = _chseg.__file__.rsplit("/", 1)[-1]
    if sys.version_info >= (3, 12):
        assert name.endswith(".abi3.so"), name
    else:
        assert f"cpython-{sys.version_info[0]}{sys.version_info[1]}" in name, name


def test_no_device_has_a_reason():
    assert (chseg.device_count() == 0) == (chseg.no_device_reason() != "")

"""Helpers of chseg.slabs and chseg._slab_hierarchy: argument checks and the image edges between two layers."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import Any, Callable, Iterator, Sequence

import numpy as np

from ._dask_chunks import _lateral_offsets, _shifted, _to_xp
from .dask import _SL_TYPES, _after_offsets, _difference


def _check(volume: Any, slab: Any) -> int:
    if getattr(volume, "ndim", None) not in (2, 3) or 0 in tuple(volume.shape):
        raise ValueError(f"volume must be a non-empty 2D or 3D array, not of shape {getattr(volume, 'shape', None)}")
    if np.dtype(volume.dtype).newbyteorder("=") not in _SL_TYPES:
        raise ValueError(f"volume must hold 8-, 16-, 32-bit integers, float32 or float64, not {volume.dtype}")
    if isinstance(slab, (bool, np.bool_)) or not isinstance(slab, (int, np.integer)) or int(slab) < 1:
        raise ValueError(f"slab must be a whole number of layers, at least 1, not {slab!r}")
    return int(slab)


def _read_ahead(read: Callable[[Any], Any], items: Sequence[Any]) -> Iterator[Any]:
    """read(x) for x in items, in order, the next one read on a thread while the caller works on this one (a Zarr
    store's decoding overlaps the device's work; one read ahead at most)."""
    if not len(items):
        return
    with ThreadPoolExecutor(1) as pool:
        coming = pool.submit(read, items[0])
        for i in range(len(items)):
            value = coming.result()
            if i + 1 < len(items):
                coming = pool.submit(read, items[i + 1])
            yield value


def _crossing(low, high, layer, shape, fully_connected, xp=np):
    """The edges between layer `layer` (values `low`) and layer `layer` + 1 (values `high`), arrays of `xp` (NumPy, or
    CuPy: made on the device, where the partial trees take them)."""
    ndim = len(shape)
    offsets = _after_offsets(ndim, fully_connected)
    slot_of = {o: s for s, o in enumerate(offsets)}
    plane = int(np.prod(shape[1:]))
    index = xp.arange(plane, dtype=np.int64).reshape(shape[1:])
    low, high = _to_xp(xp, low), _to_xp(xp, high)
    us, vs, ws, es = [], [], [], []
    for offset in _lateral_offsets(ndim, 0, fully_connected):
        src, dst = _shifted(index, offset[1:])
        p = layer * plane + index[src].ravel()
        q = (layer + 1) * plane + index[dst].ravel()
        us.append(p)
        vs.append(q)
        ws.append(_difference(low[src].ravel(), high[dst].ravel()))
        es.append(p * len(offsets) + slot_of[offset])  # the earlier voxel's edge, offset (1, ...) from it
    return xp.concatenate(us), xp.concatenate(vs), xp.concatenate(ws), xp.concatenate(es)


def _ends(edge, shape, fully_connected):
    """The two voxels of image edges: the earlier one and its neighbour at the edge's slot."""
    offsets = _after_offsets(len(shape), fully_connected)
    strides = np.array([int(np.prod(shape[k + 1 :])) for k in range(len(shape))], np.int64)
    step = np.array([int(np.dot(o, strides)) for o in offsets], np.int64)
    first = edge // len(offsets)
    return first, first + step[edge % len(offsets)]


def _find(sorted_values, x, xp=np):
    """Where each x is in a sorted array, and whether it is there."""
    at = xp.searchsorted(sorted_values, x)
    if sorted_values.size == 0:
        return at, xp.zeros(x.shape, bool)
    return at, (at < sorted_values.size) & (sorted_values[xp.minimum(at, sorted_values.size - 1)] == x)

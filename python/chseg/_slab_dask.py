"""The hierarchies over slabs as Dask tasks (chseg.dask.hierarchy, and chseg.dask.filter_regions's passes): each
slab's tree, each closure step and each slab's output are tasks; the slabs are the array's chunks along its first
axis (python/chseg/_slab_hierarchy.py has the steps)."""

from __future__ import annotations

from typing import Any, List

import numpy as np

from . import _slab_store as _store
from ._dask_chunks import _to_numpy
from ._slab_hierarchy import (
    SlabHierarchy,
    _border_step,
    _check_attribute,
    _Closure,
    _finish,
    _left_step,
    _owned,
    _right_step,
    _slab_tree,
    _Spec,
)


def _first(block):
    return _to_numpy(block[0])


def _last(block):
    return _to_numpy(block[-1])


def _owned_task(spec: _Spec, s, tree, before, after, prev_last, first_layer, last_layer, next_first, store):
    """A Dask task: slab s's owned edges, written to the store (returning their count) or returned; and the larger
    closure's bytes."""
    owned = _owned(spec, s, tree, before, after, prev_last, first_layer, last_layer, next_first)
    size = max(before.nbytes(), after.nbytes())
    if store is None:
        return owned, size
    _store.write(store, f"{spec.prefix}-{s:06d}", owned)
    return None, size


def _dask_passes(spec: _Spec, trees, firsts, lasts, store):
    """The two passes as Dask tasks over each slab's tree and first and last layers (delayed objects): each slab's
    border closure B(s) from its tree, R(s) in a chain from the last slab, C(s) in a chain from the first (both on
    the borders' closures), each slab's output from its partial tree."""
    from .dask import _dask

    delayed = _dask()[0].delayed
    n = len(spec.bounds)
    right: List[Any] = [None] * (n + 1)
    right[n] = _Closure.empty()
    borders = [delayed(_border_step)(spec, s, trees[s]) for s in range(n)] if n > 1 else []
    for s in reversed(range(1, n)):
        nxt = firsts[s + 1] if s + 1 < n else None
        right[s] = delayed(_right_step)(spec, s, borders[s], right[s + 1], lasts[s], nxt)
    left: List[Any] = [_Closure.empty()]  # left[s] = C(s - 1)
    for s in range(n - 1):
        left.append(delayed(_left_step)(spec, s, borders[s], left[s], lasts[s - 1] if s else None, firsts[s]))
    return [
        delayed(_owned_task)(
            spec,
            s,
            trees[s],
            left[s],
            right[s + 1],
            lasts[s - 1] if s else None,
            firsts[s],
            lasts[s],
            firsts[s + 1] if s + 1 < n else None,
            store,
        )
        for s in range(n)
    ]


def _dask_array(array):
    """A 2D or 3D Dask array of a pixel type the slabs take, rechunked whole along every axis but the first, and its
    slabs' bounds."""
    from .dask import _SL_TYPES, _dask

    _, da = _dask()
    if not isinstance(array, da.Array):
        array = da.from_array(array)
    if array.ndim not in (2, 3) or array.size == 0:
        raise ValueError(f"array must be a non-empty 2D or 3D array, not of shape {array.shape}")
    if np.dtype(array.dtype).newbyteorder("=") not in _SL_TYPES:
        raise ValueError(f"array must hold 8-, 16-, 32-bit integers, float32 or float64, not {array.dtype}")
    array = array.rechunk({a: -1 for a in range(1, array.ndim)})
    edges = np.concatenate([[0], np.cumsum(array.chunks[0])]).astype(int)
    return array, [(int(edges[i]), int(edges[i + 1])) for i in range(len(edges) - 1)]


def dask_hierarchy(array: Any, attribute=None, fully_connected=False, store=None, backend="auto") -> SlabHierarchy:
    """chseg.dask.hierarchy: the slabs are the array's chunks along its first axis (the other axes rechunked whole);
    each slab's tree, each closure step and each slab's owned edges are tasks (module docstring)."""
    from .dask import _dask

    dask = _dask()[0]
    array, bounds = _dask_array(array)
    _check_attribute(attribute, array.dtype)
    shape = tuple(int(x) for x in array.shape)
    spec = _Spec(shape, bounds, fully_connected, attribute, backend)
    group, store = _store.opened(store)
    delayed = dask.delayed
    blocks = array.to_delayed().ravel()
    n = len(bounds)
    trees = [delayed(_slab_tree)(spec, s, blocks[s]) for s in range(n)]
    firsts = [delayed(_first)(blocks[s]) for s in range(n)]
    lasts = [delayed(_last)(blocks[s]) for s in range(n)]
    return _dask_finish(_dask_passes(spec, trees, firsts, lasts, store), spec, attribute, group, store)


def _dask_finish(tasks, spec: _Spec, attribute, group, store, after=None) -> SlabHierarchy:
    """Computes the slabs' output tasks (then `after`), removing what they wrote where they fail, and gives their
    SlabHierarchy (its attribute `attribute`), marked complete in the store."""
    from .dask import _dask

    with _store.undone_on_failure(group):
        results = _dask()[0].compute(*tasks)
        if after is not None:
            after()
    parts = None if store else [r[0] for r in results]
    h = SlabHierarchy(spec.shape, spec.bounds, spec.fully_connected, attribute, parts=parts)
    h.closure_bytes = max(r[1] for r in results)
    return _finish(h, group, store)

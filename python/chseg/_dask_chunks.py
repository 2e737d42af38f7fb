"""What chseg.dask's chunked functions (dask.py, _dask_watershed.py) share: Dask and CuPy on use, the chunks'
starts and faces, the neighbours across a plane between chunk layers, and the union-find of labels joined across it.
A module of its own so that neither of the two imports the other."""

from __future__ import annotations

import itertools
from typing import List, Sequence

import numpy as np


def _dask():
    import dask
    import dask.array as da

    return dask, da


def _is_cupy(x) -> bool:
    return hasattr(x, "__cuda_array_interface__")


def _to_numpy(x) -> np.ndarray:
    return x.get() if _is_cupy(x) else np.asarray(x)


def _to_xp(xp, x):
    """`x` as an array of `xp` (NumPy, or CuPy): a host array goes to the device by a plain copy from its own memory.
    CuPy's asarray stages a NumPy array through a pinned buffer that its pinned-memory pool keeps afterwards for the
    next request of exactly that size: the parts of a slab store, each of its own size, would each leave one there
    (page-locked host memory that only the pool's free_all_blocks returns)."""
    if xp is np:
        return _to_numpy(x)
    if _is_cupy(x):
        return xp.asarray(x)
    host = np.ascontiguousarray(x)
    if not host.dtype.isnative:
        host = host.astype(host.dtype.newbyteorder("="))
    out = xp.empty(host.shape, host.dtype)
    if host.size:
        out.set(host)
    return out


def _starts(chunks: Sequence[Sequence[int]]) -> List[np.ndarray]:
    return [np.concatenate([[0], np.cumsum(c)]).astype(np.int64) for c in chunks]


def _layers(array) -> dict:
    """An array's first and last layers along every axis, keyed (axis, "low" / "high"), as NumPy arrays."""
    out = {}
    for axis in range(array.ndim):
        for side, index in (("low", 0), ("high", -1)):
            out[(axis, side)] = _to_numpy(array[tuple(index if a == axis else slice(None) for a in range(array.ndim))])
    return out


def _lateral_offsets(ndim, axis, fully_connected):
    """Offsets (full vectors) of the neighbours across the plane normal to `axis`, from the low side to the high."""
    out = []
    for lateral in itertools.product((-1, 0, 1), repeat=ndim - 1):
        if not fully_connected and any(lateral):
            continue
        offset = list(lateral)
        offset.insert(axis, 1)
        out.append(tuple(offset))
    return out


def _assemble(rows: dict, other: List[int], nblocks: List[int]):
    """One face layer of the volume from the chunks' faces, keyed by the chunks' indices along the `other` axes."""
    if not other:
        return rows[()]
    nested = np.empty([nblocks[a] for a in other], dtype=object)
    for key, value in rows.items():
        nested[key] = value
    return np.block(nested.tolist())


def _shifted(x, lateral):
    """Views of x and of its neighbour at `lateral` offset (the lateral part of an offset; arrays of ndim - 1)."""
    src = tuple(slice(max(0, -d), s - max(0, d)) for d, s in zip(lateral, x.shape))
    dst = tuple(slice(max(0, d), s - max(0, -d)) for d, s in zip(lateral, x.shape))
    return src, dst


def _groups(a, b, first_of):
    """Union-find of items joined in pairs (a[i], b[i]) (SciPy's connected components over the items that are
    paired): the paired items (sorted) and for each the member of its group with the smallest first_of(item)."""
    from scipy import sparse
    from scipy.sparse import csgraph

    if not a.size:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    touched, inverse = np.unique(np.concatenate([a, b]), return_inverse=True)
    m = touched.size
    graph = sparse.coo_matrix((np.ones(a.size, np.int8), (inverse[: a.size], inverse[a.size :])), shape=(m, m))
    _, group = csgraph.connected_components(graph, directed=False)
    order = np.lexsort((first_of(touched), group))
    leaders = order[np.concatenate([[True], group[order][1:] != group[order][:-1]])]
    representative = np.empty(group.max() + 1, np.int64)
    representative[group[leaders]] = touched[leaders]
    return touched, representative[group]


def _roots(total, a, b, first):
    """Each of `total` items' root after joining the pairs (a[i], b[i]): the member of its group with the smallest
    `first`."""
    root = np.arange(total, dtype=np.int64)
    touched, leader = _groups(a, b, lambda items: first[items])
    root[touched] = leader
    return root

"""How a chseg.slabs.SlabHierarchy keeps each slab's owned edges (and, while a run lasts, the closures of its first
pass): coded small, held in memory or written to a Zarr group.

The code, lossless: a slab's image edge indices (increasing) as their differences from the slab's base (the first
edge a slab may own: the first of the layer before it) and from each other; the weights and hierarchy weights in the
narrowest dtype holding every value exactly (unsigned 8, 16, 32 or 64-bit integers where they are whole and not
negative, float32 where it holds them, else as they came). Decoded: int64 edges, float64 weights. A uint8 volume's
hierarchy by area takes 9 bytes a voxel so (4 + 1 + 4), and the store compresses them (Blosc, LZ4 on bit-shuffled
chunks of 2^20 items: about 1.5 to 4 bytes a voxel on CT-like volumes; bench/results/SlabHierarchy/).

The store: a Zarr group (zarr 3) at a path; a subgroup ``slab-NNNNNN`` per slab with the arrays ``edge``, ``weight``
and ``altitude``; the group's attribute ``chseg_slab_hierarchy`` (shape, slabs, connectivity, attribute), written
last, marks it complete. Before each write the store's disk is checked for the slab's uncoded bytes (OSError naming the
path and the bytes where it lacks them); a run that fails leaves no mark (and removes what it wrote).
"""

from __future__ import annotations

import contextlib
import errno
import importlib
import os
import shutil
from typing import Any, Dict

import numpy as np

from ._dask_chunks import _to_numpy, _to_xp

_MARK = "chseg_slab_hierarchy"
_NODES = "chseg_slab_nodes"  # the names of the node attributes (SlabHierarchy.node_attributes), written after them
_CHUNK = 1 << 20
_FIELDS = ("edge", "weight", "altitude")


def _narrow(a, xp=None):
    """`a` in the narrowest dtype that holds every value exactly (module docstring); xp: `a`'s array module."""
    if a.size == 0:
        return a
    if xp is None:
        xp = np if isinstance(a, np.ndarray) else importlib.import_module("cupy")
    lo, hi = float(a.min()), float(a.max())
    if lo >= 0 and hi < 2.0**64 and (a.dtype.kind in "ui" or bool((a == xp.floor(a)).all())):
        for t in (np.uint8, np.uint16, np.uint32, np.uint64):
            if hi <= np.iinfo(t).max:
                return a.astype(t)
    if a.dtype.kind == "f" and a.dtype.itemsize > 4 and bool((a.astype(np.float32) == a).all()):
        return a.astype(np.float32)
    return a


def base_edge(h: Any, s: int) -> int:
    """The first image edge index slab s may own (its own and those from the layer before it)."""
    plane = int(np.prod(h.shape[1:]))
    return max(h.bounds[s][0] - 1, 0) * plane * h.slots


def encode(owned: Dict[str, Any], base: int, xp=np) -> Dict[str, np.ndarray]:
    """A slab's owned edges (arrays of xp, edges increasing) coded on xp's side, as NumPy arrays."""
    edge = owned["edge"].astype(np.int64)
    delta = xp.diff(edge, prepend=xp.asarray([base], dtype=np.int64)) if edge.size else edge
    coded = {"edge": _narrow(delta, xp), "weight": _narrow(owned["weight"], xp)}
    coded["altitude"] = _narrow(owned["altitude"], xp)
    return {k: _to_numpy(a) for k, a in coded.items()}


def decode(coded: Dict[str, Any], base: int, xp=np) -> Dict[str, Any]:
    """The arrays of a slab's owned edges (int64 edges, float64 weights and hierarchy weights), on xp's side."""
    edge = _to_xp(xp, coded["edge"]).astype(np.int64)
    return {
        "edge": base + xp.cumsum(edge) if edge.size else edge,
        "weight": _to_xp(xp, coded["weight"]).astype(np.float64),
        "altitude": _to_xp(xp, coded["altitude"]).astype(np.float64),
    }


def _zarr():
    try:
        import zarr
    except ImportError as exc:  # pragma: no cover - the [dask] and [test] extras install it
        raise ImportError("a store needs zarr 3 (pip install zarr)") from exc
    return zarr


def open_store(store: Any):
    """The store's Zarr group, made where there is none, with no completion mark and none of an earlier run's slabs."""
    zarr = _zarr()
    path = os.fspath(store)
    group = zarr.open_group(path, mode="a")
    for key in (_MARK, _NODES):
        if key in group.attrs:
            del group.attrs[key]  # complete only once this run ends
    discard(group)
    return group


def opened(store: Any):
    """(the store's group from open_store, its path), or (None, None) without a store."""
    return (None, None) if store is None else (open_store(store), os.fspath(store))


@contextlib.contextmanager
def undone_on_failure(group):
    """Removes what a run wrote to the store's group where the run fails (nothing without a store)."""
    try:
        yield
    except BaseException:
        if group is not None:
            discard(group)
        raise


def discard(group) -> None:
    """Removes the slabs and closures a run wrote."""
    for name in list(group.group_keys()):
        if name.startswith(("slab-", "right-", "border-", "saliency-", "node-")):
            del group[name]


def discard_nodes(store: Any) -> None:
    """Removes the node attributes of a hierarchy's store (their mark first) and a run's closures."""
    group = _zarr().open_group(os.fspath(store), mode="a")
    if _NODES in group.attrs:
        del group.attrs[_NODES]
    for name in list(group.group_keys()):
        if name.startswith(("node-", "right-", "border-")):
            del group[name]


def mark_nodes(store: Any, names) -> None:
    _zarr().open_group(os.fspath(store), mode="a").attrs[_NODES] = list(names)


def node_names(store: Any) -> tuple:
    """The node attributes a complete store holds (none where they were not computed or not finished)."""
    return tuple(_zarr().open_group(os.fspath(store), mode="r").attrs.get(_NODES, ()))


def read_mark(store: Any) -> Dict[str, Any]:
    """The completion mark of the store at `store` (ValueError where there is none)."""
    zarr = _zarr()
    path = os.fspath(store)
    try:
        group = zarr.open_group(path, mode="r")
    except (FileNotFoundError, ValueError, zarr.errors.GroupNotFoundError) as exc:
        raise ValueError(f"store {path!r} holds no complete hierarchy (no Zarr group)") from exc
    if _MARK not in group.attrs:
        raise ValueError(f"store {path!r} holds no complete hierarchy (no {_MARK} mark: an unfinished run?)")
    return dict(group.attrs[_MARK])


def mark(group, meta: Dict[str, Any]) -> None:
    group.attrs[_MARK] = meta


def write(store: Any, name: str, arrays: Dict[str, np.ndarray]) -> None:
    """Arrays (NumPy) into the subgroup `name` of the store at `store`, each compressed in chunks; the disk is checked
    for their uncompressed bytes first."""
    zarr = _zarr()
    from zarr.codecs import BloscCodec

    path = os.fspath(store)
    need = sum(int(a.nbytes) for a in arrays.values())
    if os.path.isdir(path):
        free = shutil.disk_usage(path).free
        if free < need:
            raise OSError(errno.ENOSPC, f"store {path!r} has {free} bytes free; {name} needs up to {need}")
    codec = BloscCodec(cname="lz4", clevel=5, shuffle="bitshuffle")
    try:
        group = zarr.open_group(path, mode="a").require_group(name)
        for key, a in arrays.items():
            chunks = (min(max(int(a.size), 1), _CHUNK),)
            group.create_array(key, data=np.ascontiguousarray(a), chunks=chunks, compressors=[codec], overwrite=True)
    except OSError as exc:
        if exc.errno == errno.ENOSPC:
            raise OSError(errno.ENOSPC, f"store {path!r} ran out of room writing {name} ({need} bytes)") from exc
        raise


def read(store: Any, name: str, keys=None) -> Dict[str, np.ndarray]:
    """The arrays of the subgroup `name` (those named in `keys`, or all)."""
    group = _zarr().open_group(os.fspath(store), mode="r")[name]
    return {key: a[:] for key, a in group.arrays() if keys is None or key in keys}


def remove(store: Any, name: str) -> None:
    del _zarr().open_group(os.fspath(store), mode="a")[name]

"""How a chseg.slabs.SlabHierarchy keeps each slab's owned edges (and, while a run lasts, the closures of its first
pass): coded small, held in memory or written to a Zarr group.

The code, lossless: a slab's image edge indices (increasing) as their differences from the slab's base (the first
edge a slab may own: the first of the layer before it) and from each other, one byte each, 255 standing for a
difference of 255 or more whose value follows in order in ``edge_escapes``; the hierarchy weights likewise where they
are whole and not negative (``altitude_escapes``), else in the narrowest dtype holding every value exactly, as the
weights are (unsigned 8, 16, 32 or 64-bit integers where they are whole and not negative, float32 where it holds
them, else as they came). Decoded: int64 edges, float64 weights. A uint8 volume's hierarchy by area takes about 3
bytes a voxel so (it took 4 to 9 with every difference and hierarchy weight as wide as its slab's largest), and the
store compresses them (Blosc, LZ4 on bit-shuffled chunks of 2^20 items: about 1.2 bytes a voxel on CT-like volumes;
bench/results/SlabHierarchy/).

The store: a Zarr group (zarr 3) at a path; a subgroup ``slab-NNNNNN`` per slab with the arrays ``edge``, ``weight``
and ``altitude`` and the escapes (a store written before them, without, reads as it was written); the group's
attribute ``chseg_slab_hierarchy`` (shape, slabs, connectivity, attribute), written last, marks it complete. Before
each write the store's disk is checked for the slab's uncoded bytes (OSError naming the path and the bytes where it
lacks them); a run that fails leaves no mark (and removes what it wrote).
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
_ESCAPE = 255  # the one-byte code of a value that its part's escapes array holds


def _narrow(a, xp=None):
    """`a` in the narrowest dtype that holds every value exactly (module docstring); xp: `a`'s array module."""
    if a.size == 0:
        return a
    if xp is None:
        xp = np if isinstance(a, np.ndarray) else importlib.import_module("cupy")
    if _whole(a, xp):
        hi = float(a.max())
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


def _whole(a, xp) -> bool:
    """Whether every value of `a` is a whole number in 0 .. 2^64 - 1."""
    if a.size == 0:
        return True
    lo, hi = float(a.min()), float(a.max())
    return lo >= 0 and hi < 2.0**64 and (a.dtype.kind in "ui" or bool((a == xp.floor(a)).all()))


def _escaped(a, xp):
    """Whole numbers >= 0 as one byte each, _ESCAPE standing for those of _ESCAPE and above, whose values follow in
    order in a second array (narrowest dtype): a slab's edge differences and hierarchy weights are mostly small, and
    one large value no longer widens all of them."""
    small = a < _ESCAPE
    large = a[~small]
    return xp.where(small, a, _ESCAPE).astype(np.uint8), _narrow(large, xp) if large.size else large.astype(np.uint8)


def _unescaped(codes, escapes, dtype, xp):
    out = _to_xp(xp, codes).astype(dtype)
    if escapes is not None and escapes.size:
        out[out == _ESCAPE] = _to_xp(xp, escapes).astype(dtype)
    return out


def encode(owned: Dict[str, Any], base: int, xp=np) -> Dict[str, np.ndarray]:
    """A slab's owned edges (arrays of xp, edges increasing) coded on xp's side, as NumPy arrays."""
    edge = owned["edge"].astype(np.int64)
    delta = xp.diff(edge, prepend=xp.asarray([base], dtype=np.int64)) if edge.size else edge
    coded = {"weight": _narrow(owned["weight"], xp)}
    coded["edge"], coded["edge_escapes"] = _escaped(delta, xp)
    altitude = owned["altitude"]
    if _whole(altitude, xp):
        coded["altitude"], coded["altitude_escapes"] = _escaped(altitude, xp)
    else:
        coded["altitude"] = _narrow(altitude, xp)
    return {k: _to_numpy(a) for k, a in coded.items()}


def decode(coded: Dict[str, Any], base: int, xp=np) -> Dict[str, Any]:
    """The arrays of a slab's owned edges (int64 edges, float64 weights and hierarchy weights), on xp's side (parts
    coded before the escapes, without the ``*_escapes`` arrays, decode as they were written)."""
    edge = _unescaped(coded["edge"], coded.get("edge_escapes"), np.int64, xp)
    return {
        "edge": base + xp.cumsum(edge) if edge.size else edge,
        "weight": _to_xp(xp, coded["weight"]).astype(np.float64),
        "altitude": _unescaped(coded["altitude"], coded.get("altitude_escapes"), np.float64, xp),
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

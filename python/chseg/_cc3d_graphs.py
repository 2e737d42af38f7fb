"""chseg.cc3d's functions of label images and graphs (each, contacts, region_graph, voxel_connectivity_graph,
color_connectivity_graph, DisjointSet; chseg.cc3d exports them) and their neighbourhood tables, as cc3d 4.1
implements them.

Arrays here are indexed [x, y, z] as cc3d indexes them (x = the first NumPy axis; 2D and 1D arrays padded with axes of
extent 1). cc3d's voxel connectivity graph is a bitfield per voxel, one bit a direction; the tables give, for each
backward neighbour offset, the bit of the voxel toward it and the bit of the neighbour back toward the voxel.
"""

from __future__ import annotations

from typing import Any, Dict, Iterator, List, Optional, Sequence, Set, Tuple, Union

import numpy as np

from . import _chseg
from ._arrays import host, resolve
from ._cc3d_common import (
    DimensionError,
    _as_array,
    _check_connectivity,
    _label,
    _module,
    _to_backend,
    _unsigned_view,
)

# (dx, dy, dz, bit of the voxel toward the neighbour, bit of the neighbour toward the voxel): cc3d's 32-bit layout
# (bit 0 +x, 1 -x, 2 +y, 3 -y, 4 +z, 5 -z, 6-17 the edges, 18-25 the corners).
_PAIRS_3D: List[Tuple[int, int, int, int, int]] = [
    (-1, 0, 0, 1, 0),
    (0, -1, 0, 3, 2),
    (0, 0, -1, 5, 4),
    (-1, -1, 0, 9, 6),
    (1, -1, 0, 8, 7),
    (-1, -1, -1, 25, 18),
    (0, -1, -1, 17, 12),
    (1, -1, -1, 24, 19),
    (-1, 0, -1, 15, 10),
    (1, 0, -1, 14, 11),
    (-1, 1, -1, 23, 20),
    (0, 1, -1, 16, 13),
    (1, 1, -1, 22, 21),
]
# The 8-bit 2D layout (bit 0 +x, 1 -x, 2 +y, 3 -y, 4 +x+y, 5 -x+y, 6 +x-y, 7 -x-y).
_PAIRS_2D: List[Tuple[int, int, int, int, int]] = [
    (-1, 0, 0, 1, 0),
    (0, -1, 0, 3, 2),
    (-1, -1, 0, 7, 4),
    (1, -1, 0, 6, 5),
]


def _window(shape: Sequence[int], dx: int, dy: int, dz: int) -> Tuple[Tuple[slice, ...], Tuple[slice, ...]]:
    """The slices of the voxels whose neighbour at (dx, dy, dz) is inside, and of those neighbours."""
    here, there = [], []
    for d, n in zip((dx, dy, dz), shape):
        here.append(slice(max(0, -d), n - max(0, d)))
        there.append(slice(max(0, d), n - max(0, -d)))
    return tuple(here), tuple(there)


def voxel_connectivity_graph_of(labels: Any, connectivity: int, out_type) -> Any:
    """cc3d's voxel connectivity graph of a 3D [x, y, z] array (NumPy or CuPy; the result of the same kind): every
    bit set, then, for each pair of neighbours of different values, the bits between them cleared; masked to the
    connectivity's bits."""
    xp = _module(labels)
    two_d = connectivity in (4, 8)
    pairs = _PAIRS_2D if two_d else _PAIRS_3D
    full = np.uint32(0xFF if two_d else 0x3FFFFFF)
    graph = xp.full(labels.shape, full, dtype=np.uint32)
    for dx, dy, dz, bit_here, bit_there in pairs:
        here, there = _window(labels.shape, dx, dy, dz)
        differ = labels[here] != labels[there]
        graph[here] &= xp.where(differ, np.uint32(~(1 << bit_here) & 0xFFFFFFFF), np.uint32(0xFFFFFFFF))
        graph[there] &= xp.where(differ, np.uint32(~(1 << bit_there) & 0xFFFFFFFF), np.uint32(0xFFFFFFFF))
    masks = {4: 0b1111, 8: 0xFF, 6: 0b111111, 18: 0x3FFFF, 26: 0x3FFFFFF}
    graph &= np.uint32(masks[connectivity])
    return graph.astype(out_type)


def color_graph_permissions(vcg: np.ndarray, full: bool) -> np.ndarray:
    """For cc3d.color_connectivity_graph: per voxel of a 3D [x, y, z] bitfield, bit o set when the voxel is joined to
    its o-th backward neighbour in the order of chseg's core (chsConnectedComponentsRules.h: dz, dy, dx ascending),
    read from the voxel's own bit toward that neighbour, as cc3d reads it."""
    xp = _module(vcg)
    planar = vcg.shape[2] == 1
    wide = vcg.dtype == np.uint32
    if planar and full:
        # (-1,-1), (0,-1), (+1,-1), (-1,0)
        bits = [9, 3, 8, 1] if wide else [7, 3, 6, 1]
    elif planar:
        bits = [3, 1]  # (0,-1), (-1,0)
    elif full:
        # dz = -1: (dx, dy) = (-1,-1) .. (+1,+1); dz = 0: (-1,-1), (0,-1), (+1,-1), (-1,0)
        bits = [25, 17, 24, 15, 5, 14, 23, 16, 22, 9, 3, 8, 1]
    else:
        bits = [5, 3, 1]  # (0,0,-1), (0,-1,0), (-1,0,0)
    v = vcg.astype(np.uint32)
    out = xp.zeros(vcg.shape, dtype=np.uint16)
    for o, b in enumerate(bits):
        out |= (((v >> np.uint32(b)) & np.uint32(1)).astype(np.uint16)) << np.uint16(o)
    return out


def _contact_neighbours_3d(connectivity: int) -> List[Tuple[int, dict, tuple]]:
    """cc3d's 3D region-graph neighbourhood as it computes it: (entry, condition on (x, y, z), offset) for the
    first connectivity/2 entries. Where an entry's condition fails cc3d's offset falls back to another neighbour
    (or to the voxel itself, which adds nothing); those cases are listed as they occur."""
    # Conditions: 'x>0', 'x<' (x < sx-1), 'x0' (x == 0), 'xN' (x == sx-1), and the same for y, z.
    table = [
        (0, {"x": ">0"}, (-1, 0, 0)),
        (1, {"y": ">0"}, (0, -1, 0)),
        (2, {"z": ">0"}, (0, 0, -1)),
        (3, {"x": ">0", "y": ">0"}, (-1, -1, 0)),
        (4, {"x": "<", "y": ">0"}, (1, -1, 0)),
        (5, {"x": ">0", "z": ">0"}, (-1, 0, -1)),
        (6, {"x": "<", "z": ">0"}, (1, 0, -1)),
        (7, {"y": ">0", "z": ">0"}, (0, -1, -1)),
        (8, {"y": "<", "z": ">0"}, (0, 1, -1)),
        # The corners test only y and z; x falls back to 0 at the border.
        (9, {"x": ">0", "y": ">0", "z": ">0"}, (-1, -1, -1)),
        (9, {"x": "=0", "y": ">0", "z": ">0"}, (0, -1, -1)),
        (10, {"x": "<", "y": ">0", "z": ">0"}, (1, -1, -1)),
        (10, {"x": "=N", "y": ">0", "z": ">0"}, (0, -1, -1)),
        (11, {"x": ">0", "y": "<", "z": ">0"}, (-1, 1, -1)),
        (11, {"x": "=0", "y": "<", "z": ">0"}, (0, 1, -1)),
        (12, {"x": "<", "y": "<", "z": ">0"}, (1, 1, -1)),
        (12, {"x": "=N", "y": "<", "z": ">0"}, (0, 1, -1)),
    ]
    return [(entry, cond, off) for entry, cond, off in table if entry < connectivity // 2]


def _contact_neighbours_2d(connectivity: int) -> List[Tuple[int, dict, tuple]]:
    """cc3d's 2D region-graph neighbourhood as it computes it (its diagonal entries do not test both axes)."""
    table = [
        (0, {"x": ">0"}, (-1, 0, 0)),
        (1, {"y": ">0"}, (0, -1, 0)),
        (2, {"x": ">0", "y": ">0"}, (-1, -1, 0)),
        (2, {"x": ">0", "y": "=0"}, (-1, 0, 0)),
        (2, {"x": "=0", "y": ">0"}, (0, -1, 0)),
        (3, {"x": "<", "y": ">0"}, (1, -1, 0)),
        (3, {"x": "<", "y": "=0"}, (1, 0, 0)),
        (3, {"x": "=N", "y": ">0"}, (0, -1, 0)),
    ]
    return [(entry, cond, off) for entry, cond, off in table if entry < connectivity // 2]


def _condition_ranges(cond: dict, shape: Sequence[int]) -> Tuple[slice, ...]:
    out = []
    for axis, n in zip("xyz", shape):
        c = cond.get(axis)
        if c is None:
            out.append(slice(0, n))
        elif c == ">0":
            out.append(slice(1, n))
        elif c == "<":
            out.append(slice(0, n - 1))
        elif c == "=0":
            out.append(slice(0, min(1, n)))
        else:  # "=N"
            out.append(slice(n - 1, n))
    return tuple(out)


def _pair_counts(low: Any, high: Any) -> List[Tuple[Tuple[int, int], int]]:
    """The distinct pairs (low[i], high[i]) and how often each occurs, by increasing pair. Labels below 2^32 are
    packed into one 64-bit key and counted where they are (NumPy or CuPy); wider ones counted on the host."""
    xp = _module(low)
    if low.dtype.itemsize < 8 or int(high.max()) <= 0xFFFFFFFF:
        keys = (low.astype(np.uint64) << np.uint64(32)) | high.astype(np.uint64)
        unique, counts = xp.unique(keys, return_counts=True)
        unique, counts = host(unique), host(counts)
        return [((int(k) >> 32, int(k) & 0xFFFFFFFF), int(c)) for k, c in zip(unique.tolist(), counts.tolist())]
    pairs = np.stack([host(low).astype(np.uint64), host(high).astype(np.uint64)], axis=1)
    unique, counts = np.unique(pairs, axis=0, return_counts=True)
    return [((int(p), int(q)), int(c)) for (p, q), c in zip(unique.tolist(), counts.tolist())]


def contacts_of(
    labels: np.ndarray, connectivity: int, surface_area: bool, anisotropy: Sequence[float]
) -> Dict[Tuple[int, int], float]:
    """cc3d.contacts of a 3D [x, y, z] array of unsigned labels (NumPy, or CuPy: the pairs found on the device)."""
    xp = _module(labels)
    shape = labels.shape
    wx, wy, wz = (float(a) for a in anisotropy[:3])
    if connectivity in (4, 8):
        neighbours = _contact_neighbours_2d(connectivity)
        areas = [wy, wx, 0.0, 0.0] if surface_area else [1.0] * 4
    else:
        neighbours = _contact_neighbours_3d(connectivity)
        areas = ([wy * wz, wx * wz, wx * wy] + [0.0] * 10) if surface_area else [1.0] * 13
    totals: Dict[Tuple[int, int], float] = {}
    for entry, cond, (dx, dy, dz) in neighbours:
        region = _condition_ranges(cond, shape)
        if any(s.stop <= s.start for s in region):
            continue
        cur = labels[region]
        nb_region = tuple(slice(s.start + d, s.stop + d) for s, d in zip(region, (dx, dy, dz)))
        nb = labels[nb_region]
        keep = (cur != 0) & (nb != 0) & (cur != nb)
        a = cur[keep]
        if a.size == 0:
            continue
        b = nb[keep]
        for (p, q), c in _pair_counts(xp.minimum(a, b), xp.maximum(a, b)):
            key = (int(p), int(q))
            totals[key] = totals.get(key, 0.0) + areas[entry] * c
    return {k: float(np.float32(v)) for k, v in totals.items()}


def each(labels: Any, binary: bool = False, in_place: bool = False) -> Any:
    """Iterate over (label, image of that label alone) for every non-zero label (cc3d.each), by increasing label.

    Parameters
    ----------
    labels : array_like
        A label image.
    binary : bool, optional
        Bool images instead of images of the label's value.
    in_place : bool, optional
        Yield one read-only array rewritten for each label (faster; keep a copy to hold one).

    Returns
    -------
    iterator
        Of ``(label, image)``, with ``len()``; images of the input's shape and memory order.

    Examples
    --------
    >>> import numpy as np
    >>> from chseg import cc3d
    >>> [(int(k), im.tolist()) for k, im in cc3d.each(np.array([[0, 3, 3, 5]], np.uint8))]
    [(3, [[0, 3, 3, 0]]), (5, [[0, 0, 0, 5]])]
    """
    arr, _ = _as_array(labels)
    xp = _module(arr)
    order = "F" if arr.flags.f_contiguous else "C"
    dtype = np.dtype(bool) if binary else arr.dtype
    values = [int(v) for v in host(xp.unique(arr)) if v != 0]

    class _Images:
        def __len__(self) -> int:
            return len(values)

        def __iter__(self) -> Iterator[Tuple[int, Any]]:
            for v in values:
                img = xp.zeros(arr.shape, dtype=dtype, order=order)
                where = arr == v
                img[where] = True if binary else v
                yield v, img

    class _InPlace(_Images):
        def __iter__(self) -> Iterator[Tuple[int, Any]]:
            img = xp.zeros(arr.shape, dtype=dtype, order=order)
            for v in values:
                where = arr == v
                img[where] = True if binary else v
                if xp is np:
                    img.setflags(write=False)
                yield v, img
                if xp is np:
                    img.setflags(write=True)
                img[where] = 0

    return _InPlace() if in_place else _Images()


def contacts(
    labels: Any,
    connectivity: int = 26,
    surface_area: bool = True,
    anisotropy: Union[Tuple[float, float, float], Tuple[float, float]] = (1, 1, 1),
) -> Dict[Tuple[int, int], float]:
    """The pairs of touching non-zero labels and their contact (cc3d.contacts).

    Parameters
    ----------
    labels : array_like
        A 2D or 3D label image.
    connectivity : int, optional
        (2D) 4 or 8, (2D and 3D) 6, 18 or 26 (default).
    surface_area : bool, optional
        The contact's area (faces only, weighted by ``anisotropy``) instead of the number of neighbouring voxel
        pairs.
    anisotropy : tuple of float, optional
        The voxel's extent along each axis (NumPy order).

    Returns
    -------
    dict
        ``{(a, b): contact}`` with a < b. The counts follow cc3d's neighbourhood as it is implemented (see
        docs/connected-components.md).

    Examples
    --------
    >>> import numpy as np
    >>> from chseg import cc3d
    >>> sorted(cc3d.contacts(np.array([[1, 1, 2], [3, 3, 2]], np.uint8), connectivity=4).items())
    [((1, 2), 1.0), ((1, 3), 2.0), ((2, 3), 1.0)]
    """
    arr, _ = _as_array(labels)
    while arr.ndim < 3:
        arr = arr[..., None]
    weights = tuple(float(a) for a in anisotropy)
    while len(weights) < 3:
        weights = weights + (1.0,)
    if connectivity not in (4, 8, 6, 18, 26):
        raise ValueError(f"Only (2d) 4, 8, (3d) 6, 18, and 26 connectivities are supported. Got: {connectivity}")
    if connectivity in (4, 8) and arr.shape[2] != 1:
        raise RuntimeError("z thickness must be 1 for 2d region graph extraction.")
    return contacts_of(_unsigned_view(arr), connectivity, bool(surface_area), weights)


def region_graph(labels: Any, connectivity: int = 26) -> Set[Tuple[int, int]]:
    """The pairs (a, b), a < b, of touching non-zero labels (cc3d.region_graph).

    Examples
    --------
    >>> import numpy as np
    >>> from chseg import cc3d
    >>> sorted(cc3d.region_graph(np.array([[1, 1, 2], [3, 3, 2]], np.uint8), connectivity=4))
    [(1, 2), (1, 3), (2, 3)]
    """
    return set(contacts(labels, connectivity=connectivity).keys())


def voxel_connectivity_graph(data: Any, connectivity: int = 26) -> np.ndarray:
    """Per voxel, a bit for each direction toward a neighbour of the same value (cc3d.voxel_connectivity_graph).

    Parameters
    ----------
    data : array_like
        1 to 3 axes.
    connectivity : int, optional
        2D: 4 or 8 (and 6, 18, 26); 3D: 6, 18 or 26 (default).

    Returns
    -------
    ndarray
        uint8 for 4, 8 and 6, uint32 for 18 and 26, Fortran-ordered, of the input's shape and kind (CuPy for a
        CuPy input, computed on its device), with cc3d's bit layout
        (bit 0 +x, 1 -x, 2 +y, 3 -y, 4 +z, 5 -z, then the edges and corners; x is the first NumPy axis). A bit is
        set for a direction that leads out of the image, as in cc3d.

    Examples
    --------
    >>> import numpy as np
    >>> from chseg import cc3d
    >>> cc3d.voxel_connectivity_graph(np.array([[1, 1], [2, 1]], np.uint8), connectivity=4).tolist()
    [[14, 15], [9, 7]]
    """
    arr, _ = _as_array(data)
    xp = _module(arr)
    dims = arr.ndim
    if dims not in (1, 2, 3):
        raise DimensionError("Only 1D, 2D, and 3D arrays supported. Got: " + str(dims))
    _check_connectivity(dims, connectivity)
    out_type = np.uint8 if connectivity in (4, 8, 6) else np.uint32
    if arr.size == 0:
        return xp.zeros((0,), dtype=out_type)
    if arr.dtype.kind not in "biu" or arr.dtype.itemsize > 8:
        raise TypeError(f"Type {arr.dtype} not currently supported.")
    shape = arr.shape
    while arr.ndim < 3:
        arr = arr[..., None]
    graph = voxel_connectivity_graph_of(_unsigned_view(arr), connectivity, out_type)
    return xp.asfortranarray(graph.reshape(shape, order="F"))


def color_connectivity_graph(
    vcg: Any,
    connectivity: int = 26,
    return_N: bool = False,
    *,
    backend: str = "auto",
    device: Optional[int] = None,
) -> Any:
    """Components of a voxel connectivity graph (cc3d.color_connectivity_graph): every voxel belongs to one.

    A voxel is joined to its neighbour in a direction when its bit for that direction is set (the bits of
    :func:`voxel_connectivity_graph`; the graph is taken as undirected, as cc3d takes it: each voxel's own bits
    toward the voxels before it in Fortran order decide).

    Parameters
    ----------
    vcg : array_like
        uint8 (4, 8 and 6-connectivity) or uint32, 2D or 3D.
    connectivity : int, optional
        2D: 4 or 8 (6 and 26 accepted as 4 and 8); 3D: 6 or 26 (default; needs uint32).
    return_N : bool, optional
        Also return the number of components.
    backend, device
        As in :func:`chseg.label`.

    Returns
    -------
    labels : ndarray
        uint32, Fortran-ordered, components 1..N in the order of their first voxel in Fortran order; of the input's
        kind (NumPy or CuPy).
    N : int
        With ``return_N``.

    Examples
    --------
    >>> import numpy as np
    >>> from chseg import cc3d
    >>> vcg = cc3d.voxel_connectivity_graph(np.array([[1, 1], [2, 1]], np.uint8), connectivity=4)
    >>> cc3d.color_connectivity_graph(vcg, connectivity=4, backend="cpu").tolist()
    [[1, 1], [2, 1]]
    """
    arr, _ = _as_array(vcg)
    xp = _module(arr)
    dims = arr.ndim
    if dims not in (2, 3):
        raise DimensionError("Only 2D, and 3D arrays supported. Got: " + str(dims))
    if dims == 2 and connectivity not in (4, 8, 6, 26):
        raise ValueError(f"Only 4 and 8 connectivity is supported for 2D images. Got: {connectivity}")
    if dims != 2 and connectivity not in (6, 26):
        raise ValueError(f"Only 6 and 26 connectivity are supported for 3D images. Got: {connectivity}")
    if arr.dtype not in (np.uint8, np.uint32):
        raise ValueError(f"Only uint8 and uint32 are supported. Got: {arr.dtype}")
    if arr.size == 0:
        return xp.zeros([0] * dims, dtype=np.uint32, order="F")
    shape = arr.shape
    while arr.ndim < 3:
        arr = arr[..., None]
    if connectivity in (18, 26) and arr.shape[2] > 1 and arr.dtype != np.uint32:
        raise ValueError(f"Only uint32 is supported for 18 and 26 connected. Got: {arr.dtype}")
    full = connectivity in (8, 26) if arr.shape[2] == 1 else connectivity == 26
    # The core's graph mode: each voxel's permissions toward its backward neighbours, in the core's grid (the
    # Fortran order's x fastest), from the vcg's bits.
    permissions = color_graph_permissions(arr, full)
    c = xp.ascontiguousarray(permissions.transpose(2, 1, 0))
    run = resolve(backend, device, c)
    grid = _to_backend(run, c)
    grid = grid.reshape(c.shape[1], c.shape[2]) if c.shape[0] == 1 else grid
    labels = run.empty(grid.shape, np.uint32)
    r = _label(run, grid, labels, mode=_chseg.ConnectedComponentMode.GRAPH, connectivity=26 if full else 6)
    out = xp.asarray(labels).reshape(c.shape).transpose(2, 1, 0)
    out = xp.asfortranarray(out).reshape(shape, order="F")
    n = int(r["count"])
    return (out, n) if return_N else out


class DisjointSet:
    """A union-find of hashable values whose root is the smallest of its set (cc3d.DisjointSet)."""

    def __init__(self) -> None:
        self.data: Dict[Any, Any] = {}

    def makeset(self, x: Any) -> Any:
        self.data[x] = x
        return x

    def find(self, x: Any) -> Any:
        if x not in self.data:
            return None
        i = self.data[x]
        while i != self.data[i]:
            self.data[i] = self.data[self.data[i]]
            i = self.data[i]
        return i

    def union(self, x: Any, y: Any) -> None:
        i = self.find(x)
        j = self.find(y)
        if i is None:
            i = self.makeset(x)
        if j is None:
            j = self.makeset(y)
        if i < j:
            self.data[j] = i
        else:
            self.data[i] = j

"""The neighbourhood tables of chseg.cc3d's graph functions, as cc3d 4.1 implements them.

Arrays here are indexed [x, y, z] as cc3d indexes them (x = the first NumPy axis; 2D and 1D arrays padded with axes of
extent 1). cc3d's voxel connectivity graph is a bitfield per voxel, one bit a direction; the tables give, for each
backward neighbour offset, the bit of the voxel toward it and the bit of the neighbour back toward the voxel.
"""

from __future__ import annotations

from typing import Dict, List, Sequence, Tuple

import numpy as np

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


def voxel_connectivity_graph_of(labels: np.ndarray, connectivity: int, out_type) -> np.ndarray:
    """cc3d's voxel connectivity graph of a 3D [x, y, z] array: every bit set, then, for each pair of neighbours of
    different values, the bits between them cleared; masked to the connectivity's bits."""
    two_d = connectivity in (4, 8)
    pairs = _PAIRS_2D if two_d else _PAIRS_3D
    full = np.uint32(0xFF if two_d else 0x3FFFFFF)
    graph = np.full(labels.shape, full, dtype=np.uint32)
    for dx, dy, dz, bit_here, bit_there in pairs:
        here, there = _window(labels.shape, dx, dy, dz)
        differ = labels[here] != labels[there]
        graph[here][differ] &= np.uint32(~(1 << bit_here) & 0xFFFFFFFF)
        view = graph[there]
        view[differ] &= np.uint32(~(1 << bit_there) & 0xFFFFFFFF)
    masks = {4: 0b1111, 8: 0xFF, 6: 0b111111, 18: 0x3FFFF, 26: 0x3FFFFFF}
    graph &= np.uint32(masks[connectivity])
    return graph.astype(out_type)


def color_graph_permissions(vcg: np.ndarray, full: bool) -> np.ndarray:
    """For cc3d.color_connectivity_graph: per voxel of a 3D [x, y, z] bitfield, bit o set when the voxel is joined to
    its o-th backward neighbour in the order of chseg's core (chsConnectedComponentsRules.h: dz, dy, dx ascending),
    read from the voxel's own bit toward that neighbour, as cc3d reads it."""
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
    out = np.zeros(vcg.shape, dtype=np.uint16)
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


def contacts_of(
    labels: np.ndarray, connectivity: int, surface_area: bool, anisotropy: Sequence[float]
) -> Dict[Tuple[int, int], float]:
    """cc3d.contacts of a 3D [x, y, z] array of unsigned labels."""
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
        if not keep.any():
            continue
        a = cur[keep].astype(np.uint64)
        b = nb[keep].astype(np.uint64)
        pairs = np.stack([np.minimum(a, b), np.maximum(a, b)], axis=1)
        unique, counts = np.unique(pairs, axis=0, return_counts=True)
        for (p, q), c in zip(unique.tolist(), counts.tolist()):
            key = (int(p), int(q))
            totals[key] = totals.get(key, 0.0) + areas[entry] * c
    return {k: float(np.float32(v)) for k, v in totals.items()}

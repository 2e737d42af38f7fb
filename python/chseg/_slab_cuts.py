"""Cuts of a chseg.slabs.SlabHierarchy written slab by slab: each slab's regions by its own kept edges (SciPy on the
host, union-find on the device), the merges across slab faces, the numbering in raster order of each region's first
voxel; and the key of the m-th lightest merge for SlabHierarchy.clusters."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import Any, List

import numpy as np

from . import _slab_hierarchy, _slab_kernels
from ._dask_chunks import _to_numpy, _to_xp
from ._slab_common import _find, _read_ahead
from .dask import _after_offsets


def _components(u, v, count, xp):
    """Each vertex's smallest vertex id in its connected component of the graph (u, v) on `count` vertices: hooking
    of roots to smaller roots and pointer jumping (Shiloach-Vishkin), the way for device arrays (CuPy's: a union-find
    kernel, python/chseg/_slab_kernels.py)."""
    if xp is not np:
        return _slab_kernels.components(u, v, count)
    p = xp.arange(count, dtype=np.int64)
    while u.size:
        pu, pv = p[u], p[v]
        differ = pu != pv
        if not bool(differ.any()):
            break
        key = xp.sort(xp.maximum(pu, pv)[differ] * count + xp.minimum(pu, pv)[differ])
        high, low = key // count, key % count
        first = xp.concatenate([xp.ones(1, bool), high[1:] != high[:-1]])  # each root's smallest new parent
        p[high[first]] = xp.minimum(p[high[first]], low[first])
        while True:
            pp = p[p]
            if bool((pp == p).all()):
                break
            p = pp
    return p


def _slab_labels(h, s: int, coded, threshold, xp):
    """Slab s's regions by its own kept edges (`coded`: h._coded(s)): labels 0 .. k-1 in order of first voxel, the
    sorted first voxels (slab ids); and the kept edges that come into it from the slab before (global voxel ids)."""
    plane = int(np.prod(h.shape[1:]))
    a, b = h.bounds[s]
    part = h._decoded(s, coded, xp)  # decoded on the device where the regions are found
    edge, altitude, weight = part["edge"], part["altitude"], part["weight"]
    a_max, w_max, e_max = threshold  # the largest (altitude, weight, edge) kept
    kept = edge[(altitude < a_max) | ((altitude == a_max) & ((weight < w_max) | ((weight == w_max) & (edge <= e_max))))]
    offsets = _after_offsets(len(h.shape), h.fully_connected)
    strides = [int(np.prod(h.shape[k + 1 :])) for k in range(len(h.shape))]
    step = xp.asarray([int(np.dot(o, strides)) for o in offsets], dtype=np.int64)
    p = kept // len(offsets)  # the edge's voxel, and its neighbour at the edge's slot
    q = p + step[kept % len(offsets)]
    inside = p >= a * plane
    count = (b - a) * plane
    pi, qi = p[inside] - a * plane, q[inside] - a * plane
    if xp is np and not _slab_hierarchy._DEVICE_WAYS_ON_HOST:
        from scipy import sparse
        from scipy.sparse import csgraph

        graph = sparse.csr_matrix((np.ones(pi.size, np.int8), (pi, qi)), shape=(count, count))
        _, labels = csgraph.connected_components(graph, directed=False)
        first_of, where = np.unique(labels, return_index=True)
        smallest = np.empty(first_of.size, np.int64)
        smallest[first_of] = where
        comp = smallest[labels]
    else:
        comp = _components(pi, qi, count, xp)
    first = xp.unique(comp)
    return xp.searchsorted(first, comp), first, p[~inside], q[~inside]


def _mapped(keys, values, x):
    """values[i] where x is keys[i] (keys sorted), x itself elsewhere."""
    if not keys.size:
        return x
    at, found = _find(keys, x)
    return np.where(found, values[np.minimum(at, keys.size - 1)], x)


class _FaceMerges:
    """The regions that join an earlier one across the slab faces, met face by face in order: for each slab, the
    names (first voxels) of its regions that join an earlier region, sorted, and the name of that whole region's first
    voxel, the smallest name of its class.

    The face before slab s joins regions of slab s - 1 (named a) with regions of slab s (named b, larger than every
    name of the slabs before). What the faces before did to an a is known from the face before alone (the names of
    slab s - 1 join earlier regions only there), so a face's classes come from its own pairs: the components of the
    graph between the a's roots and the b's, each rooted at its smallest name, which is an a's root. So every b of a
    pair joins, at that face and once, a name that is a root then; a root may join a smaller one at a later face (a
    late root: a region met again lower down), and the names that point to it follow it at the end. Host memory: a
    face's pairs, and 16 bytes a joining name, held slab by slab (the second pass takes one slab's at a time)."""

    def __init__(self, num_slabs: int):
        self.joined: List[Any] = [None] * num_slabs  # slab s: (its names that joined at the face before it, parents)
        self.late: List[Any] = []  # (roots that joined a smaller root at a later face, that root)

    def add(self, s: int, a: np.ndarray, b: np.ndarray, first_b: int) -> None:
        """The pairs (a, b) of regions joined across the face before slab s (whose first voxel is `first_b`)."""
        from scipy import sparse
        from scipy.sparse import csgraph

        joined, root = self.joined[s - 1] if s > 0 and self.joined[s - 1] is not None else (a[:0], a[:0])
        ra = _mapped(joined, root, a)  # a's root now
        nodes, inverse = np.unique(np.concatenate([ra, b]), return_inverse=True)
        inverse = inverse.ravel()
        graph = sparse.csr_matrix(
            (np.ones(a.size, np.int8), (inverse[: a.size], inverse[a.size :])), shape=(nodes.size,) * 2
        )
        count, comp = csgraph.connected_components(graph, directed=False)
        low = np.full(count, np.iinfo(np.int64).max, np.int64)
        np.minimum.at(low, comp, nodes)
        new_root = low[comp]
        moved = new_root != nodes  # every b (its a's root is smaller), and the a's roots that join a smaller one
        is_b = nodes >= first_b
        self.joined[s] = (nodes[moved & is_b], new_root[moved & is_b])
        if bool((moved & ~is_b).any()):
            self.late.append((nodes[moved & ~is_b], new_root[moved & ~is_b]))

    def resolve(self, bounds, plane: int):
        """Every slab's (sorted names that joined an earlier region, that region's first voxel), and the sorted names
        of the regions that others join."""
        late = np.concatenate([x for x, _ in self.late]) if self.late else np.zeros(0, np.int64)
        late_root = np.concatenate([r for _, r in self.late]) if self.late else np.zeros(0, np.int64)
        order = np.argsort(late)
        late, late_root = late[order], late_root[order]

        def follow(parents):  # through the late roots (a late root's parent may be one as well; parents are smaller)
            while True:
                after = _mapped(late, late_root, parents)
                if np.array_equal(after, parents):
                    return parents
                parents = after

        late_root = follow(late_root)
        out, roots = [], [late_root]
        for s, (a, b) in enumerate(bounds):
            names, parents = self.joined[s] if self.joined[s] is not None else (late[:0], late[:0])
            lo, hi = np.searchsorted(late, [a * plane, b * plane])  # this slab's late roots
            names = np.concatenate([names, late[lo:hi]])
            parents = np.concatenate([follow(parents), late_root[lo:hi]])
            order = np.argsort(names)
            out.append((names[order], parents[order]))
            roots.append(parents)
            self.joined[s] = None
        return out, np.unique(np.concatenate(roots))


def _write_cut(h: Any, threshold: Any, out: Any, xp: Any) -> Any:
    plane = int(np.prod(h.shape[1:]))
    # Pass 1: each slab's regions (named by their first voxel), and the merges across slab faces.
    counts: List[int] = []
    faces = _FaceMerges(h.num_slabs)
    previous = None  # the slab before's labels and region names
    slabs = range(h.num_slabs)
    for s, coded in zip(slabs, _read_ahead(h._coded, slabs)):
        a = h.bounds[s][0]
        labels, first, p, q = _slab_labels(h, s, coded, threshold, xp)
        names = first + a * plane  # global first voxel of each region
        counts.append(int(first.size))
        if previous is not None and p.size:
            prev_labels, prev_names, prev_a = previous
            lp, lq = prev_labels[p - prev_a * plane], labels[q - a * plane]
            if prev_names.size * first.size < 2**63:  # each pair of regions once (a face's edges: up to a layer)
                key = xp.unique(lp * first.size + lq)
                lp, lq = key // first.size, key % first.size
            faces.add(s, _to_numpy(prev_names[lp]), _to_numpy(names[lq]), a * plane)
        previous = (labels, names, a)
    joined, root_names = faces.resolve(h.bounds, plane)  # per slab: names not their region's first, and that first
    offsets = np.concatenate([[0], np.cumsum(counts)])
    joined_before = np.concatenate([[0], np.cumsum([names.size for names, _ in joined])])
    # the labels of the regions that other names join, found in pass 2 as they come (a region's first voxel comes
    # before every other name of it)
    root_labels = np.zeros(root_names.size, np.int64)
    root_names_x = _to_xp(xp, root_names)

    def final_labels(s, coded):
        """Slab s's labels (a host array of the slab's shape, out's dtype)."""
        a, b = h.bounds[s]
        labels, first, _, _ = _slab_labels(h, s, coded, threshold, xp)  # again: pass 1 keeps no slab's labels
        names = first + a * plane
        # 1 + the regions whose first voxel comes before: those of the slabs before, this slab's before it, less the
        # names before it that joined an earlier region
        merged, root = joined[s]
        merged_x = _to_xp(xp, merged)
        final = 1 + int(offsets[s] - joined_before[s]) + xp.arange(names.size, dtype=np.int64)
        final -= xp.searchsorted(merged_x, names)
        at, is_root = _find(root_names_x, names, xp)
        root_labels[_to_numpy(at[is_root])] = _to_numpy(final[is_root])
        # the slab's names that joined an earlier region (each one of its names) take that region's label
        final[xp.searchsorted(names, merged_x)] = _to_xp(xp, root_labels[np.searchsorted(root_names, root)])
        return _to_numpy(final[labels].astype(out.dtype, copy=False)).reshape((b - a,) + h.shape[1:])

    with ThreadPoolExecutor(1) as writer:  # slab s written while slab s + 1 is labelled
        written = None
        for s, coded in zip(slabs, _read_ahead(h._coded, slabs)):
            block = final_labels(s, coded)
            if written is not None:
                written.result()
            written = writer.submit(out.__setitem__, slice(*h.bounds[s]), block)
        if written is not None:
            written.result()
    return out


def _merge_key(h, m: int):
    """The key (hierarchy weight, weight, edge) of the m-th lightest merge (below every key for m = 0): the
    hierarchy weights' and weights' counts over the slabs, then the edges of the last tie."""
    if m == 0:
        return (-np.inf, -np.inf, -1)
    key: List[Any] = []
    for field in ("altitude", "weight"):
        values, counts = [], []
        for s in range(h.num_slabs):
            part = h.part(s)
            mask = np.ones(part["edge"].size, bool)
            for name, value in zip(("altitude", "weight"), key):
                mask &= part[name] == value
            v, c = np.unique(part[field][mask], return_counts=True)
            values.append(v)
            counts.append(c)
        v, inverse = np.unique(np.concatenate(values), return_inverse=True)
        total = np.bincount(inverse, weights=np.concatenate(counts)).astype(np.int64)
        before = np.concatenate([[0], np.cumsum(total)])
        i = int(np.searchsorted(before[1:], m))  # the group that holds the m-th merge
        key.append(v[i])
        m -= int(before[i])
    ties = []
    for s in range(h.num_slabs):
        part = h.part(s)
        ties.append(part["edge"][(part["altitude"] == key[0]) & (part["weight"] == key[1])])
    edges = np.concatenate(ties)
    return (key[0], key[1], int(np.partition(edges, m - 1)[m - 1]))

"""The area filter of a volume's alpha-tree or single-linkage tree, read slab by slab (chseg.slabs.filter_regions):
partial trees as python/chseg/_slab_hierarchy.py builds them, with the filter's weights.

The filter (include/chs/AttributeHierarchy.h, "Attribute filtering"): in a binary partition tree, the tree edge of
node x keeps alt(x) when both children have an area of at least the threshold, and gets 0 otherwise; the result is the
single-linkage dendrogram of the minimum spanning tree with those weights, edges ordered by (new weight, weight, image
edge index). The partial tree of slab s holds every ancestor of its voxels with its area, so the filter's weight of
each edge slab s owns is read there.

- Of the single-linkage tree (``Dendrogram.filter_regions``): one hierarchy over slabs, filtered.
- Of the alpha-tree (``AlphaTree.filter_regions``, as Higra filters a tree that is not binary): the binary partition
  tree is that of the image graph weighted by the alpha-tree's saliency (the level of each edge's ends' lowest common
  ancestor), which differs from the single-linkage tree inside the alpha-tree's flat zones. Two hierarchies over
  slabs: the first (single linkage) gives every image edge of slab s, and those from the layer before it, its
  saliency in slab s's partial tree, which holds the lowest common ancestor of both ends: in the in-order of a binary
  tree whose altitudes increase upwards, the largest altitude strictly between two leaves is their lowest common
  ancestor's (a range maximum over the in-order, all edges together). The second runs over the saliency-weighted
  graph (slab s's own minimum spanning tree from its saliencies, the crossing edges from the first run's) and filters.
  The saliencies are held, coded (python/chseg/_slab_store.py), or written to the store until the second run ends.
"""

from __future__ import annotations

import os

import numpy as np

import chseg

from . import _slab_store as _store
from ._dask_chunks import _to_numpy
from ._slab_common import _check, _crossing
from ._slab_hierarchy import (
    _INTO,
    SlabHierarchy,
    _as,
    _engine,
    _finish,
    _passes,
    _range_max,
    _Spec,
    _tour_sums,
    _Tree,
)
from .dask import _after_offsets


def _inside_edges(spec: _Spec, s: int, xp):
    """Every image edge inside slab s: (p, q, e) in the volume's voxel ids and image edge indices, e increasing."""
    a, b = spec.bounds[s]
    shape = (b - a,) + tuple(spec.shape[1:])
    count = int(np.prod(shape))
    offsets = _after_offsets(len(shape), spec.fully_connected)
    index = xp.arange(count, dtype=np.int64).reshape(shape)
    q = xp.full((count, len(offsets)), -1, np.int64)
    for k, o in enumerate(offsets):
        src = tuple(slice(max(0, -d), n - max(0, d)) for d, n in zip(o, shape))
        dst = tuple(slice(max(0, d), n - max(0, -d)) for d, n in zip(o, shape))
        q[index[src].ravel(), k] = index[dst].ravel()
    q = q.ravel()
    e = xp.flatnonzero(q >= 0)  # p * slots + slot, in the slab's own ids
    offset = a * spec.plane
    return e // len(offsets) + offset, q[e] + offset, e + offset * len(offsets)


def _into_edges(spec: _Spec, s: int):
    """The image edges between the layer before slab s and its first (host arrays, in _crossing's order)."""
    z = spec.bounds[s][0] - 1
    plane = np.zeros(spec.shape[1:], np.uint8)
    p, q, _, e = _crossing(plane, plane, z, spec.shape, spec.fully_connected)
    return p, q, e


def _inorder(tree: _Tree):
    """Each node's position in the in-order of the binary tree (first child, node, second child)."""
    xp, n, kids = tree.xp, tree.n, tree.kids
    nodes = 2 * n - 1
    flags = xp.zeros(2 * nodes + 1, np.int64)
    flags[:n] = 1  # a leaf is visited at its enter
    flags[nodes + kids[:, 0]] = 1  # an internal node between its first child's exit and its second child's enter
    suffix, _ = _tour_sums(kids, n, xp, flags, xp.zeros_like(flags))
    out = xp.empty(nodes, np.int64)
    out[:n] = nodes - suffix[:n]
    out[n:] = nodes - suffix[nodes + kids[:, 0]]
    return out


class _SaliencySpec(_Spec):
    """The first run: single linkage; slab s gives the saliency of its image edges and of those from the layer
    before it."""

    prefix = "saliency"

    def emit(self, s, whole: _Tree):
        xp = whole.xp
        position = _inorder(whole)
        values = xp.full(position.size, -np.inf)
        values[position[whole.n :]] = whole.w  # internal node n + r has the altitude of tree edge r
        out = {}
        edges = {"inside": _inside_edges(self, s, xp)}
        if s > 0:
            edges["into"] = tuple(xp.asarray(x) for x in _into_edges(self, s)[:2])
        for name, (p, q, *_) in edges.items():
            i = position[xp.searchsorted(whole.vertices, p)]
            j = position[xp.searchsorted(whole.vertices, q)]
            out[name] = _store._narrow(_range_max(values, xp.minimum(i, j) + 1, xp.maximum(i, j), xp), xp)
        return {k: _to_numpy(a) for k, a in out.items()}


class _FilterSpec(_Spec):
    """The run that filters: over the volume (single-linkage tree) or over the first run's saliencies (alpha-tree)."""

    def __init__(self, shape, bounds, fully_connected, threshold, backend, alpha, saliency=None, store=None):
        super().__init__(shape, bounds, fully_connected, "area", backend)
        self.threshold, self.alpha, self.saliency, self.store = threshold, alpha, saliency, store

    def _saliency(self, s):
        return self.saliency[s] if self.saliency is not None else _store.read(self.store, f"saliency-{s:06d}")

    def read(self, volume, s):
        if not self.alpha:
            return super().read(volume, s)
        xp = self.xp
        p, q, e = _inside_edges(self, s, xp)
        w = xp.asarray(self._saliency(s)["inside"]).astype(np.float64)
        offset = self.bounds[s][0] * self.plane
        count = (self.bounds[s][1] - self.bounds[s][0]) * self.plane
        if count == 1:
            tree = tuple(xp.zeros(0, t) for t in (np.int64, np.int64, np.float64, np.int64))
        else:
            d = _engine(xp, chseg.single_linkage_graph, p - offset, q - offset, w, count, backend=self.backend)
            rank = _as(xp, d.edges).astype(np.int64)  # the input edge (in e order) of each tree edge
            tree = (p[rank], q[rank], w[rank], e[rank])
        a, b = self.bounds[s]
        return tree, np.array([a]), np.array([b - 1])  # layers stand for themselves: the crossings are stored

    def layer(self, volume, z):
        return np.array([z]) if self.alpha else super().layer(volume, z)

    def crossing(self, low, high, z, tag):
        if not self.alpha:
            return super().crossing(low, high, z, tag)
        s = next(i for i, (a, _) in enumerate(self.bounds) if a == z + 1)
        p, q, e = _into_edges(self, s)
        w = self._saliency(s)["into"].astype(np.float64)
        return p, q, w, e, np.full(p.size, tag, np.int8)

    def emit(self, s, whole: _Tree):
        xp = whole.xp
        mine = whole.origin <= _INTO
        kids = whole.kids[mine]
        keep = xp.minimum(whole.area[kids[:, 0]], whole.area[kids[:, 1]]) >= self.threshold
        altitude = xp.where(keep, whole.w[mine], 0.0)
        order = xp.argsort(whole.e[mine])
        owned = {"edge": whole.e[mine][order], "weight": whole.w[mine][order], "altitude": altitude[order]}
        return _store.encode(owned, _store.base_edge(self, s), xp)


def filter_regions(
    volume, slab, threshold, attribute="area", tree="alpha_tree", fully_connected=False, store=None, backend="auto"
) -> SlabHierarchy:
    """chseg.slabs.filter_regions (module docstring)."""
    slab = _check(volume, slab)
    if attribute != "area":
        raise ValueError(f"attribute must be 'area' over slabs, not {attribute!r}")
    if tree not in ("alpha_tree", "single_linkage"):
        raise ValueError(f"tree must be 'alpha_tree' or 'single_linkage', not {tree!r}")
    if isinstance(threshold, (bool, np.bool_)) or not isinstance(threshold, (int, float, np.integer, np.floating)):
        raise ValueError(f"threshold must be a number, not {threshold!r}")
    if np.isnan(threshold):
        raise ValueError("threshold must be a number, not NaN")
    shape = tuple(int(x) for x in volume.shape)
    bounds = [(a, min(shape[0], a + slab)) for a in range(0, shape[0], slab)]
    meta = {"filter_regions": {"tree": tree, "attribute": attribute, "threshold": float(threshold)}}
    group = _store.open_store(store) if store is not None else None
    store = None if store is None else os.fspath(store)
    alpha = tree == "alpha_tree" and int(np.prod(shape)) > 1
    try:
        saliency = None
        if alpha:
            first = _SaliencySpec(shape, bounds, fully_connected, None, backend)
            held = SlabHierarchy(shape, bounds, fully_connected, None, parts=[] if store is None else None)
            _passes(first, volume, held, store)
            saliency = held._parts  # None: in the store
        spec = _FilterSpec(shape, bounds, fully_connected, float(threshold), backend, alpha, saliency, store)
        h = SlabHierarchy(shape, bounds, fully_connected, meta, parts=[] if store is None else None)
        _passes(spec, volume, h, store)
        if alpha and store is not None:
            for s in range(len(bounds)):
                _store.remove(store, f"saliency-{s:06d}")
    except BaseException:
        if group is not None:
            _store.discard(group)
        raise
    return _finish(h, group, store)

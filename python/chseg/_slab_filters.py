"""The area filter of a volume's alpha-tree or single-linkage tree by slabs (chseg.slabs and chseg.dask.filter_regions):
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

import numpy as np

import chseg

from . import _slab_store as _store
from ._dask_chunks import _to_numpy
from ._slab_arrays import _range_max, _tour_sums
from ._slab_common import _check, _crossing
from ._slab_hierarchy import _INTO, SlabHierarchy, _as, _engine, _finish, _Spec, _Tree
from ._slab_passes import _passes
from ._trees import _filter_threshold
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
    suffix = _tour_sums(kids, n, xp, flags)
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
            edges["into"] = tuple(_as(xp, x) for x in _into_edges(self, s)[:2])
        for name, (p, q, *_) in edges.items():
            i = position[xp.searchsorted(whole.vertices, p)]
            j = position[xp.searchsorted(whole.vertices, q)]
            out[name] = _store._narrow(_range_max(values, xp.minimum(i, j) + 1, xp.maximum(i, j), xp), xp)
        return {k: _to_numpy(a) for k, a in out.items()}


def _saliency_tree(spec: _Spec, s, coded):
    """Slab s's own minimum spanning tree of its image edges weighted by their saliencies (`coded`: the first run's
    output of slab s), as _slab_tree gives the volume's."""
    xp = spec.xp
    p, q, e = _inside_edges(spec, s, xp)
    w = _as(xp, coded["inside"]).astype(np.float64)
    offset = spec.bounds[s][0] * spec.plane
    count = (spec.bounds[s][1] - spec.bounds[s][0]) * spec.plane
    if count == 1:
        return tuple(xp.zeros(0, t) for t in (np.int64, np.int64, np.float64, np.int64))
    d = _engine(xp, chseg.single_linkage_graph, p - offset, q - offset, w, count, backend=spec.backend)
    rank = _as(xp, d.edges).astype(np.int64)  # the input edge (in e order) of each tree edge
    return p[rank], q[rank], w[rank], e[rank]


def _into(s, coded):
    """What stands for slab s's first layer in the second run: the saliencies of the edges into it (none for the first
    slab), from which the crossing into it is made."""
    return coded["into"] if s > 0 else np.zeros(0, np.uint8)


def _last_token(spec: _Spec, s):
    """What stands for slab s's last layer in the second run (the crossing out of it needs the next slab's)."""
    return np.array([spec.bounds[s][1] - 1])


class _FilterSpec(_Spec):
    """The run that filters: over the volume (single-linkage tree) or over the first run's saliencies (alpha-tree:
    a slab's first layer is then the saliencies of the edges into it)."""

    def __init__(self, shape, bounds, fully_connected, threshold, backend, alpha, saliency=None, store=None):
        super().__init__(shape, bounds, fully_connected, "area", backend)
        self.threshold, self.alpha, self.saliency, self.store = threshold, alpha, saliency, store

    def coded(self, s, held=None, keys=None):
        """The first run's output of slab s: `held`, or in the list given, or in the store (its `keys` only)."""
        if held is not None:
            return held
        if self.saliency is not None:
            return self.saliency[s]
        return _store.read(self.store, f"saliency-{s:06d}", keys)

    def fetch(self, volume, s):
        return None if self.alpha else super().fetch(volume, s)

    def read(self, volume, s, block=None):
        if not self.alpha:
            return super().read(volume, s, block)
        coded = self.coded(s)
        return _saliency_tree(self, s, coded), _into(s, coded), _last_token(self, s)

    def layer(self, volume, z):
        if not self.alpha:
            return super().layer(volume, z)
        s = next(i for i, (a, _) in enumerate(self.bounds) if a == z)
        return _into(s, self.coded(s, keys=("into",)))  # the next slab's: only its crossing's saliencies

    def crossing(self, low, high, z, tag):
        if not self.alpha:
            return super().crossing(low, high, z, tag)
        p, q, e = _into_edges(self, next(i for i, (a, _) in enumerate(self.bounds) if a == z + 1))
        return p, q, np.asarray(high).astype(np.float64), e, np.full(p.size, tag, np.int8)

    def emit(self, s, whole: _Tree):
        xp = whole.xp
        mine = whole.origin <= _INTO
        kids = whole.kids[mine]
        keep = xp.minimum(whole.area[kids[:, 0]], whole.area[kids[:, 1]]) >= self.threshold
        altitude = xp.where(keep, whole.w[mine], 0.0)
        order = xp.argsort(whole.e[mine])
        owned = {"edge": whole.e[mine][order], "weight": whole.w[mine][order], "altitude": altitude[order]}
        return _store.encode(owned, _store.base_edge(self, s), xp)


def _check_filter(attribute, tree, threshold):
    if attribute != "area":
        raise ValueError(f"attribute must be 'area' over slabs, not {attribute!r}")
    if tree not in ("alpha_tree", "single_linkage"):
        raise ValueError(f"tree must be 'alpha_tree' or 'single_linkage', not {tree!r}")
    if isinstance(threshold, (bool, np.bool_)) or not isinstance(threshold, (int, float, np.integer, np.floating)):
        raise ValueError(f"threshold must be a number, not {threshold!r}")
    threshold = _filter_threshold(threshold, attribute)  # the whole-volume filters' check (NaN refused)
    return {"filter_regions": {"tree": tree, "attribute": attribute, "threshold": threshold}}


def filter_regions(
    volume, slab, threshold, attribute="area", tree="alpha_tree", fully_connected=False, store=None, backend="auto"
) -> SlabHierarchy:
    """chseg.slabs.filter_regions (module docstring)."""
    slab = _check(volume, slab)
    meta = _check_filter(attribute, tree, threshold)
    shape = tuple(int(x) for x in volume.shape)
    bounds = [(a, min(shape[0], a + slab)) for a in range(0, shape[0], slab)]
    group, store = _store.opened(store)
    alpha = tree == "alpha_tree" and int(np.prod(shape)) > 1
    with _store.undone_on_failure(group):
        saliency = None
        if alpha:
            first = _SaliencySpec(shape, bounds, fully_connected, None, backend)
            held = SlabHierarchy(shape, bounds, fully_connected, None, parts=[] if store is None else None)
            _passes(first, volume, held, store)
            saliency = held._parts  # None: in the store
        spec = _FilterSpec(shape, bounds, fully_connected, float(threshold), backend, alpha, saliency, store)
        h = SlabHierarchy(shape, bounds, fully_connected, meta, parts=[] if store is None else None)
        _passes(spec, volume, h, store)
        _drop_saliencies(alpha, store, len(bounds))
    return _finish(h, group, store)


def _drop_saliencies(alpha, store, count):
    if alpha and store is not None:
        for s in range(count):
            _store.remove(store, f"saliency-{s:06d}")


def _stage_tree(spec: _FilterSpec, s, result):
    """A Dask task: slab s's tree of the second run from its first-run task's result (held or in the store)."""
    return _saliency_tree(spec, s, spec.coded(s, result[0]))


def _stage_into(spec: _FilterSpec, s, result):
    return _into(s, spec.coded(s, result[0], keys=("into",)))


def dask_filter_regions(array, threshold, attribute, tree, fully_connected, store, backend) -> SlabHierarchy:
    """chseg.dask.filter_regions: the slabs are the array's chunks along its first axis; both runs' steps are tasks,
    the second run's slab trees taking the first run's outputs on the workers."""
    from ._slab_dask import _dask_array, _dask_finish, _dask_passes, _first, _last
    from ._slab_hierarchy import _slab_tree
    from .dask import _dask

    dask = _dask()[0]
    array, bounds = _dask_array(array)
    meta = _check_filter(attribute, tree, threshold)
    shape = tuple(int(x) for x in array.shape)
    group, store = _store.opened(store)
    alpha = tree == "alpha_tree" and int(np.prod(shape)) > 1
    spec = _FilterSpec(shape, bounds, fully_connected, float(threshold), backend, alpha, None, store)
    delayed = dask.delayed
    blocks = array.to_delayed().ravel()
    n = len(bounds)
    source = _SaliencySpec(shape, bounds, fully_connected, None, backend) if alpha else spec
    trees = [delayed(_slab_tree)(source, s, blocks[s]) for s in range(n)]
    firsts = [delayed(_first)(blocks[s]) for s in range(n)]
    lasts = [delayed(_last)(blocks[s]) for s in range(n)]
    if alpha:
        saliency = _dask_passes(source, trees, firsts, lasts, store)
        trees = [delayed(_stage_tree)(spec, s, saliency[s]) for s in range(n)]
        firsts = [delayed(_stage_into)(spec, s, saliency[s]) for s in range(n)]
        lasts = [_last_token(spec, s) for s in range(n)]
    tasks = _dask_passes(spec, trees, firsts, lasts, store)
    return _dask_finish(tasks, spec, meta, group, store, lambda: _drop_saliencies(alpha, store, n))

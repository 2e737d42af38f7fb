"""The attributes of every node of a hierarchy over slabs (SlabHierarchy.node_attributes): area, volume, height and
dynamics as ``Dendrogram.attribute`` gives them for the gathered dendrogram (include/chs/AttributeHierarchy.h), each
slab's nodes computed from partial trees and kept beside its edges.

The hierarchy H is the single-linkage dendrogram of the minimum spanning tree with the hierarchy weights, edges
ordered by (hierarchy weight, weight, image edge index); its node of an edge is a region of H, which for a watershed
hierarchy is not a region of the volume's single-linkage tree. So a second run over slabs (the steps of
python/chseg/_slab_hierarchy.py) builds partial trees of H itself, from the hierarchy's own edges: the graph G is the
minimum spanning tree, each edge keyed by (hierarchy weight, weight, image edge index) (a closure edge carries the
second key as `t`), plus, inside each slab, an edge of infinite weight between consecutive voxels (keyed after every
finite one) so that a slab's graph is connected. G's minimum spanning tree is the hierarchy's (an infinite edge joins
nothing that finite ones do not), so the partial tree of slab s holds every ancestor of slab s's nodes of H; infinite
edges only sit in closures, above what they carry. A pseudo-vertex carries its region's area, volume (its own term
included), depth and, where the dynamics are asked for, key (for the deepest-child ties), all final inside its part
of the volume. Without the dynamics a closure's runs merge (areas and volumes summed, depths the least: every node
outside a run sees all of it or none). With them, a chain of deepest children that enters a run (through its bottom
member's side child, with depth d) leaves it, or stops in it at the run's weight whichever member stops it; so a run
merges where its members are next to each other among the closure's nodes (ordered by key: then no node of the whole
tree comes between two of them, and each member's side child is the member below), and its pseudo-vertex carries
the least depth D of what it absorbs and, for a chain with d = D, the outcome of the ties: the key -inf where a
member above the first stops it (an absorbed region of depth D whose key is below the member below's), else the
first member's absorbed key where its depth is D (compared in the tree with the side child there), else +inf. Runs
whose members are not next to each other stay apart: two-sided nodes of the same closure can come between them in
the whole tree once lower slabs join their regions (merging those lost ties: a 5 x 4 image, 8-connected, in slabs of
one row); so these closures are smaller than every node above the layer but still grow with the volume.

Per node x: area = leaves under x; volume = the sum over the internal nodes y under x (x included) of area(y) *
(alt(parent(y)) - alt(y)), exact in 64-bit integers (whole-number hierarchy weights whose range times the voxel count
stays below 2^62; others are refused); height = alt(parent(x)) - depth(x) (the root: alt(root) - depth(root)), depth
the lowest altitude of an internal node under x; dynamics = height at the top of the chain from x through deepest
children (the internal child of smaller depth, the smaller key on ties). The leaves, not stored: area 1, the others 0.
"""

from __future__ import annotations

import contextlib
from typing import Any, Sequence

import numpy as np

import chseg

from . import _slab_store as _store
from ._dask_chunks import _to_numpy
from ._slab_arrays import _jump, _range_max
from ._slab_hierarchy import _INTO, SlabHierarchy, _as, _engine, _Spec, _Tree
from ._slab_passes import _passes
from .dask import _after_offsets

NAMES = ("area", "volume", "height", "dynamics")


def _check_names(names) -> tuple:
    if isinstance(names, str):
        names = (names,)
    try:
        names = tuple(names)
    except TypeError:
        raise ValueError(f"names must be attribute names among {NAMES}, not {names!r}") from None
    unknown = [x for x in names if x not in NAMES]
    if not names or unknown:
        raise ValueError(f"names must be one or more of {NAMES}, not {names!r}")
    return tuple(x for x in NAMES if x in names)


class _NodeSpec(_Spec):
    """The run over the hierarchy's own graph: a slab's 'volume' is its part of the hierarchy, its first layer the
    hierarchy's edges into it (p, q, e, altitude, weight: a (5, k) array), its last layer a token."""

    prefix = "node"

    def __init__(self, h: SlabHierarchy, names, backend):
        super().__init__(h.shape, h.bounds, h.fully_connected, None, backend)
        self.names = names
        self.count = int(np.prod(h.shape))

    def _edges(self, h: SlabHierarchy, s, coded=None):
        """Slab s's edges of the hierarchy (`coded`: h._coded(s), read ahead, or None): ends, altitude, image edge,
        weight, and whether inside the slab."""
        xp = self.xp
        part = h._decoded(s, h._coded(s) if coded is None else coded, xp)
        e, alt, w = part["edge"], part["altitude"], part["weight"]
        if "volume" in self.names and e.size:
            top = float(xp.abs(alt).max())
            if not bool((alt == xp.floor(alt)).all()) or top * self.count * 2 >= 2.0**63:
                raise ValueError(
                    "the volume of nodes over slabs takes whole-number hierarchy weights whose range times the "
                    f"voxel count stays below 2^62 (exact in 64-bit integers); slab {s}'s are not"
                )
        offsets = _after_offsets(len(self.shape), self.fully_connected)
        strides = [int(np.prod(self.shape[k + 1 :])) for k in range(len(self.shape))]
        step = xp.asarray([int(np.dot(o, strides)) for o in offsets], dtype=np.int64)
        p = e // len(offsets)
        q = p + step[e % len(offsets)]
        return p, q, alt, e, w, p >= self.bounds[s][0] * self.plane

    def fetch(self, h, s):
        return h._coded(s)

    def read(self, h, s, block=None):
        p, q, alt, e, w, inside = edges = self._edges(h, s, block)
        tree = self._slab_tree(s, p[inside], q[inside], alt[inside], e[inside], w[inside])
        return tree, self._into(edges), np.array([s])

    def _into(self, edges):
        """The (5, k) host array of the edges into the slab: p, q, e, altitude, weight."""
        p, q, alt, e, w, inside = edges
        return _to_numpy(self.xp.stack([x[~inside].astype(np.float64) for x in (p, q, e, alt, w)]))

    def _slab_tree(self, s, p, q, alt, e, w):
        """Slab s's tree: its hierarchy edges (a forest) and the infinite edges between consecutive voxels that the
        minimum spanning tree keeps (u, v, w, e, t)."""
        xp = self.xp
        a, b = self.bounds[s]
        offset, count = a * self.plane, (b - a) * self.plane
        chain = xp.arange(offset, offset + count - 1, dtype=np.int64)
        inf = xp.full(chain.size, np.inf)
        u, v = xp.concatenate([p, chain]), xp.concatenate([q, chain + 1])
        w2, e2, t = xp.concatenate([alt, inf]), xp.concatenate([e, -1 - chain]), xp.concatenate([w, inf])
        if count == 1:
            return u, v, w2, e2, t
        order = xp.lexsort(xp.stack([e2, t]))
        u, v, w2, e2, t = u[order], v[order], w2[order], e2[order], t[order]
        d = _engine(xp, chseg.single_linkage_graph, u - offset, v - offset, w2, count, backend=self.backend)
        rank = _as(xp, d.edges).astype(np.int64)
        return u[rank], v[rank], w2[rank], e2[rank], t[rank]

    def first(self, h, s, block=None):
        return self._into(self._edges(h, s, block))

    def crossing(self, low, high, z, tag):
        p, q, e, alt, w = (np.asarray(x) for x in high)
        return p.astype(np.int64), q.astype(np.int64), alt, e.astype(np.int64), np.full(p.size, tag, np.int8), w

    def tree(self, parts, pseudo) -> _Tree:
        t = _Tree(parts, pseudo, None, self.backend, self.xp)
        _node_fields(t, self.names)
        return t

    def emit(self, s, whole: _Tree):
        xp = whole.xp
        rows = xp.flatnonzero((whole.origin <= _INTO) & xp.isfinite(whole.w))
        rows = rows[xp.argsort(whole.e[rows])]  # as the hierarchy's part orders its edges
        return {k: _to_numpy(_store._narrow(whole.nodes[k][whole.n + rows], xp)) for k in self.names}


def _node_fields(t: _Tree, names):
    """Every node's attributes (t.nodes) and what a pseudo-vertex carries (t.carry), as the module's docstring says."""
    xp, n = t.xp, t.n
    nodes = 2 * n - 1
    parents, kids = t.parents, t.kids
    alt = xp.concatenate([xp.zeros(n), t.w])
    area = t._subtree_sums(t.leaf("area", 1).astype(np.int64))
    t.nodes["area"] = area
    t.carry = {"area": area}
    if "volume" in names:
        terms = xp.zeros(nodes, np.int64)
        terms[:n] = t.leaf("volume", 0).astype(np.int64)
        with np.errstate(invalid="ignore"):  # infinity minus infinity: above the hierarchy's nodes
            rise = alt[parents[n:-1]] - t.w[:-1]
        finite = xp.isfinite(rise)  # under an infinite edge: not a node of the hierarchy, never carried
        terms[n:-1] = area[n:-1] * xp.where(finite, rise, 0).astype(np.int64)
        t.nodes["volume"] = t.carry["volume"] = t._subtree_sums(terms, every_node=True)
    if "height" not in names and "dynamics" not in names:
        return
    is_pseudo = t.vertices < 0
    assert t.t is not None  # every edge of this run has its second key
    low = xp.concatenate([t.leaf("depth", np.inf), t.w])
    depth = -_range_max(-low[t.preorder], t.position, t.position + t.size, xp)
    with np.errstate(invalid="ignore"):
        height = xp.concatenate([alt[parents[:-1]], alt[-1:]]) - depth
    height[:n][~is_pseudo] = 0  # a voxel's
    t.nodes["height"] = height
    t.carry["depth"] = depth  # a least: runs merge it (without the keys, which only the dynamics' chains need)
    if "dynamics" not in names:
        return
    internal = xp.concatenate([is_pseudo, xp.ones(nodes - n, bool)])  # pseudo-vertices stand for internal nodes
    keys = [depth] + [
        xp.concatenate([t.leaf(k, np.inf), x.astype(np.float64)]) for k, x in (("w", t.w), ("t", t.t), ("e", t.e))
    ]
    a, b = kids[:, 0], kids[:, 1]
    a_first, tied = xp.zeros(a.size, bool), xp.ones(a.size, bool)
    for k in keys:  # (depth, w, t, e) of a before b's
        a_first |= tied & (k[a] < k[b])
        tied &= k[a] == k[b]
    deepest_child = xp.where(internal[a] & (~internal[b] | a_first), a, xp.where(internal[b], b, -1))
    index = xp.arange(nodes, dtype=np.int64)
    deepest = xp.zeros(nodes, bool)
    deepest[:-1] = deepest_child[parents[:-1] - n] == index[:-1]
    up = xp.where(deepest, xp.concatenate([parents[:-1], index[-1:]]), index)  # chains climb deepest children
    t.nodes["dynamics"] = height[_jump(up, xp)]
    t.carry.update(w=keys[1], t=keys[2], e=keys[3])


@contextlib.contextmanager
def _removed_on_failure(store):
    try:
        yield
    except BaseException:
        if store is not None:
            _store.discard_nodes(store)
        raise


def node_attributes(h: SlabHierarchy, names: Sequence[str], backend: str, dask: bool = False) -> SlabHierarchy:
    """SlabHierarchy.node_attributes, and with `dask` chseg.dask.node_attributes (module docstring)."""
    names = _check_names(names)
    spec = _NodeSpec(h, names, backend)
    store = h.store
    if store is not None:
        _store.discard_nodes(store)  # an earlier run's nodes, and their mark
    h.node_names = ()
    with _removed_on_failure(store):
        if int(np.prod(h.shape)) == 1:
            parts: Any = [{k: np.zeros(0) for k in names}]
            if store is not None:
                _store.write(store, "node-000000", parts[0])
        elif dask:
            parts = _dask_run(spec, h, store)
        else:
            held = SlabHierarchy(h.shape, h.bounds, h.fully_connected, h.attribute, parts=[] if store is None else None)
            _passes(spec, h, held, store)
            parts = held._parts
        if store is not None:
            _store.mark_nodes(store, names)
    h._nodes, h.node_names = None if store is not None else parts, names
    return h


def _dask_run(spec: _NodeSpec, h: SlabHierarchy, store):
    """The run's steps as Dask tasks (python/chseg/_slab_dask.py), each slab's part read on its worker; the slabs'
    outputs (held: None where written to the store)."""
    from ._slab_dask import _dask_passes
    from .dask import _dask

    dask = _dask()[0]
    source = dask.delayed(h, traverse=False)
    reads = [dask.delayed(spec.read, nout=3)(source, s) for s in range(h.num_slabs)]
    trees, firsts, lasts = ([r[k] for r in reads] for k in range(3))
    tasks = _dask_passes(spec, trees, firsts, lasts, store)
    return [r[0] for r in dask.compute(*tasks)]

"""Hierarchies of volumes read slab by slab (chseg.slabs.hierarchy): the single-linkage hierarchy and the watershed
hierarchies by area, volume and dynamics as each slab's minimum-spanning-tree edges with their hierarchy weights (cuts
of them, written slab by slab: python/chseg/_slab_cuts.py).

The trees. T is the single-linkage dendrogram (binary partition tree) of the whole volume's graph; its internal nodes
are the minimum spanning tree's edges, keyed by (weight, image edge index). For a set S of vertices of a tree, the
*closure* of S is every node with a vertex of S below it. It is stored as edges: a node whose two children both hold
S-vertices becomes an edge between one S-vertex of each side (same key); a node with S-vertices under one child only
becomes an edge from an S-vertex of that side to a *pseudo-vertex* standing for the other child (a region that never
reaches S: its area and its corrected attribute ride on the pseudo-vertex). Kruskal's algorithm over those edges
rebuilds the closure with every node's key, parent and area.

Slabs split the volume along its first axis; L(s) and F(s) are slab s's last and first layers. Two passes:
- anti-causal (s = last .. 0): B(s) = the closure of F(s) and L(s) in the tree of slab s's own minimum spanning tree
  (chseg.single_linkage of the slab, on the GPU when there is one), which stands for the slab in the chains below;
  R(s) = the closure of F(s) in the tree of R(s + 1) + the edges between L(s) and F(s + 1) + B(s); R(s) stands for
  slabs s.. (a tree on F(s)'s voxels and pseudo-vertices);
- causal (s = 0 .. last): C(s) likewise from C(s - 1), the edges between L(s - 1) and F(s), and B(s); and the
  *partial tree* of slab s, the tree of C(s - 1) + those edges + slab s (every edge of its minimum spanning tree) +
  the edges to F(s + 1) + R(s + 1).
So a slab takes two trees of its size (B(s), its partial tree); the chains' steps take trees of its border's size.
Replacing a part of the volume by its closure keeps every minimax distance between the remaining vertices (cycle
property) and every node above them with its area (a region that leaves the part's border layer only through its
parent is a pseudo-vertex of that area), so the partial tree of slab s holds every ancestor of slab s's voxels with the
area, parent and key it has in T; its minimum spanning tree edges inside slab s or between L(s - 1) and F(s) are the
ones T has there, and slab s owns them. Each slab's owned edges get their hierarchy weight from its partial tree:
- single linkage: the edge's weight;
- watershed by area (include/chs/AttributeHierarchy.h): the smaller corrected area of the node's two children, where
  the corrected area of a child c of a node x is area(c) when alt(c) != alt(x), else the largest area of a node d
  under c with alt(d) < alt(x) whose parent has alt(x) (0 for leaves); pseudo-vertices carry the corrected value of
  the region they stand for, which lies inside one part of the volume;
- by volume: the same with volumes (pseudo-vertices also carry their region's volume, its own term included);
- by dynamics: max(0, alt(x) - max(depth(a), depth(b))) for the node x of children a and b, depth(c) the lowest
  altitude of an internal node under c (+inf for a voxel); a pseudo-vertex carries its region's depth. That local form
  equals the smaller corrected dynamics of the two children (include/chs/AttributeHierarchy.h's chains of deepest
  children and plateau maxima): the chain of the child that loses at x (the other is deepest) ends there, the chains
  of the nodes under it whose parent is in its plateau end there or lower, and none of them is deeper, so its
  corrected dynamics is alt(x) - its depth (0 where only voxels lie under the plateau); the winner's chain reaches x
  or beyond from a depth no larger, so its value is no smaller. Ties between children (which one is deepest) change
  neither; tested against the whole volume's hierarchy (python/tests/test_slab_hierarchy.py).
The hierarchy is the single-linkage dendrogram of the minimum spanning tree with the new weights, edges ordered by
(new weight, weight, image edge index), as chseg's watershed hierarchies order them.

Runs. A closure's one-sided nodes on one path between two-sided nodes (or a flagged leaf) that share a weight form a
run; the closure keeps it as one node (the top one's key) over one pseudo-vertex for all the run absorbs (areas and
volumes summed, corrected values: the largest). That is exact for what any other slab reads from the closure: a
closure R(s) holds edges of slabs s.. only, whose image edge indices (the earlier voxel's index times the slots, plus
the slot) exceed those of every edge of the slabs before and of the edges into slab s; a causal closure C(s) holds
edges of slabs ..s whose one-sided nodes lie below slab s's last layer (an edge inside that layer joins two of its
voxels: two-sided), so their indices are below those of the edges from it to the next slab and beyond; B(s) holds
edges of slab s whose one-sided nodes lie below L(s) likewise, so the edges into slab s (and C(s - 1)'s) come before
all of them and the edges out of it (and R(s + 1)'s) after. So a node
outside the run with the run's weight comes before all of it or after all of it (ties in weight break by index), and
a node of another weight sees all of it or none: only the run's own inner nodes, which other slabs own and weigh in
their own partial trees, would see it in part. The corrected value of a plateau at the run's weight takes the largest
corrected value below it, which the merged pseudo-vertex carries; a depth is a least, which it carries too. Where
edges carry a second key (the node attributes' run) a run also shares it.

Memory: one slab, its minimum spanning tree, the partial tree's graph (the slab plus the two closures) and the owned
edges (coded, python/chseg/_slab_store.py: about 3 bytes a voxel for a uint8 volume's hierarchy by area; to a Zarr store
with ``store``). The closures hold the border layers' voxels, a node for each merge of their regions and one for each
run: bounded by the layer's voxels times the weights a path through them takes (not by the volume beyond, which
single runs stand for: measured ``SlabHierarchy.closure_bytes``, the largest), the dynamics' as the others'.
"""

from __future__ import annotations

import hashlib
import importlib
import os
from typing import Any, Optional

import numpy as np

import chseg

from . import _slab_store as _store
from ._dask_chunks import _is_cupy, _to_numpy, _to_xp
from ._slab_arrays import _children, _euler_preorder, _jump, _range_max, _vertex_ids
from ._slab_common import _check, _crossing, _ends, _find
from .dask import _after_offsets

__all__ = ["SlabHierarchy", "hierarchy"]

_KEYS = ("w", "t", "e")  # the node attributes' dynamics: the keys a pseudo-vertex carries for deepest-child ties
_SLAB, _INTO, _OUT, _CARRIED = 0, 1, 2, 3  # where an edge of a partial tree's graph comes from
_C, _R, _B = 0, 1, 2  # the closures: C(s) (causal), R(s) (anti-causal), B(s) (a slab's border)
_DEVICE_WAYS_ON_HOST = False  # testing: NumPy arrays take the device's ways (Euler tour preorder, hooking components)
#: With a store, the first pass's closures are held (where they were made: on the device when the slabs run there)
#: while they take at most this many bytes in all, and written to the store beyond.
_HOLD_BYTES = 4 << 30


class _Closure:
    """Edges (u, v, w, e) over voxel ids (>= 0) and pseudo-vertex ids (< 0, sorted in `pid`), with what each
    pseudo-vertex carries (`fields`, one array each: area and corrected value; volume; depth for the dynamics; the
    node attributes' in python/chseg/_slab_nodes.py; see _Tree); `t`: the edges' second key where the run orders edges
    by (w, t, e) (else None)."""

    def __init__(self, u, v, w, e, pid, fields=None, t=None):
        self.edges = (u, v, w, e)
        self.pid, self.fields, self.t = pid, dict(fields or {}), t

    @staticmethod
    def empty():
        z = np.zeros(0, np.int64)
        return _Closure(z, z, np.zeros(0), z, z)

    @staticmethod
    def pseudo(pid, fields):
        """No edges; pseudo-vertices only."""
        z = np.zeros(0, np.int64)
        return _Closure(z, z, np.zeros(0), z, pid, fields)

    def nbytes(self) -> int:
        t = () if self.t is None else (self.t,)
        return sum(int(a.nbytes) for a in (*self.edges, *t, self.pid, *self.fields.values()))


class _Tree:
    """The single-linkage dendrogram of a graph over voxel and pseudo-vertex ids (edges keyed by (w, e), or by
    (w, t, e) where the parts carry a sixth array t), with the quantities the closures and the hierarchy weights need;
    arrays of `xp` (NumPy, or CuPy on the device)."""

    def __init__(self, parts, pseudo: _Closure, attribute, backend, xp=np, slab=None):
        """The tree of the graph `parts`; or, `slab` (a _SlabEdges whose dendrogram is held, and the slab's first voxel
        id), the tree of that slab's own minimum spanning tree, which is the engine's dendrogram of the slab (same
        edges, same order: the image edge indices are the slab's shifted by a constant), taken as it is."""
        self.xp, self.pseudo = xp, pseudo
        self.carry: Optional[dict] = None  # what the closures' pseudo-vertices take from each node (_build)
        self.nodes: dict = {}  # attributes of every node, where a run computes them (python/chseg/_slab_nodes.py)
        if slab is not None:
            edges, offset = slab
            dendrogram = edges.dendrogram
            self.n = n = (int(dendrogram.parents.size) + 1) // 2
            self.vertices = offset + xp.arange(n, dtype=np.int64)  # the slab's voxels, raster order
            self.w, self.e, self.t = edges[2], edges[3], None  # by rank, as the engine gives them
            self.origin = xp.full(int(self.w.size), _SLAB, np.int8)
            self._build(dendrogram, attribute)
            return
        u, v, w, e, origin = (xp.concatenate([_as(xp, p[k]) for p in parts]) for k in range(5))
        t = None
        if any(len(p) > 5 for p in parts):
            t = xp.concatenate([_as(xp, p[5]) if len(p) > 5 else xp.zeros(int(p[0].size)) for p in parts])
            order = xp.lexsort(xp.stack([e, t]))  # ties in w break by t, then by image edge index
            t = t[order]
        else:
            order = xp.argsort(e)  # ties in weight break by image edge index (unique), as in the whole volume
        u, v, w, e, origin = u[order], v[order], w[order], e[order], origin[order]
        self.vertices, inverse = _vertex_ids(xp.concatenate([u, v]), xp)
        n = self.n = int(self.vertices.size)
        dendrogram = _engine(
            xp, chseg.single_linkage_graph, inverse[: u.size], inverse[u.size :], w, n, backend=backend
        )
        rank = _as(xp, dendrogram.edges).astype(np.int64)  # the input edge of each tree edge, by rank
        self.w, self.e, self.origin = w[rank], e[rank], origin[rank]
        self.t = None if t is None else t[rank]
        self._build(dendrogram, attribute)

    def _build(self, dendrogram, attribute):
        """Parents, children, preorder and what the hierarchy weights and closures need, from the dendrogram."""
        xp, n = self.xp, self.n
        parents = self.parents = _as(xp, dendrogram.parents).astype(np.int64)
        nodes = parents.size
        self.kids = _children(parents, xp)
        if xp is np and not _DEVICE_WAYS_ON_HOST:
            from scipy import sparse
            from scipy.sparse import csgraph

            leaves = dendrogram.attribute("area").astype(np.int64)  # leaves under each node
            graph = sparse.csr_matrix(
                (np.ones(nodes - 1, np.int8), (parents[:-1], np.arange(nodes - 1))), shape=(nodes, nodes)
            )
            self.preorder = csgraph.depth_first_order(graph, nodes - 1, directed=True, return_predecessors=False)
            self.position = np.empty(nodes, np.int64)
            self.position[self.preorder] = np.arange(nodes)
            self.size = 2 * leaves - 1  # a subtree is a range of the preorder: 2a - 1 nodes for a leaves
        else:
            self.position, self.size = _euler_preorder(self.kids, n, xp)
            self.preorder = xp.empty(nodes, np.int64)
            self.preorder[self.position] = xp.arange(nodes, dtype=np.int64)
        if attribute is None:
            return
        self.alt = xp.concatenate([xp.full(n, -np.inf), self.w])  # leaves below everything
        self.parent_alt = self.alt[parents[:-1]]
        leaf = self.leaf
        if attribute == "dynamics":
            # depth: the lowest altitude of an internal node under each node (a pseudo-vertex: its region's), a range
            # minimum over the preorder; a child's corrected dynamics as its parent's merge weighs it (module docstring)
            low = xp.concatenate([leaf("depth", np.inf), self.w])
            depth = -_range_max(-low[self.preorder], self.position, self.position + self.size, xp)
            self.corr = xp.maximum(self.parent_alt - depth[:-1], 0.0)
            self.carry = {"depth": depth}
            return
        self.member = (xp.arange(nodes - 1) >= n) & (self.alt[:-1] == self.parent_alt)  # in its parent's plateau
        self.area = self._subtree_sums(leaf("area", 1).astype(np.int64))
        value = self.area
        if attribute == "volume":
            # each internal node's term area * (alt(parent) - alt) (the root's 0), a pseudo-vertex's volume as its
            # leaf's term, summed over every subtree: exact in 64-bit integers for 8- and 16-bit voxels
            terms = xp.zeros(nodes, np.int64)
            terms[:n] = leaf("volume", 0).astype(np.int64)
            rise = (self.parent_alt[n:] - self.alt[n:-1]).astype(np.int64)
            terms[n:-1] = self.area[n:-1] * rise
            value = self._subtree_sums(terms, every_node=True)
        # corrected values of every node but the root (as a child): a leaf its own (0 a voxel), a node out of its
        # parent's plateau its value, a member the largest of those below it in the plateau
        source = xp.concatenate([leaf("corr", 0), value[n:-1].astype(np.float64)])
        corr = xp.where(self.member, self._plateau_max(xp.where(self.member, -np.inf, source)), source)
        self.corr = corr
        self.carry = {"area": self.area, "corr": xp.concatenate([corr, xp.zeros(1)])}
        if attribute == "volume":
            self.carry["volume"] = value

    def leaf(self, name, default):
        """Per leaf: what its pseudo-vertex carries (field `name`), `default` for voxels."""
        xp = self.xp
        if not hasattr(self, "_where"):  # the leaves that are pseudo-vertices, and where they are in pseudo.pid
            is_pseudo = self.vertices < 0
            self._where = is_pseudo, xp.searchsorted(_as(xp, self.pseudo.pid), self.vertices[is_pseudo])
        is_pseudo, where = self._where
        out = xp.full(self.n, default, np.float64)
        if where.size:
            out[is_pseudo] = _as(xp, self.pseudo.fields[name])[where]
        return out

    def _plateau_max(self, items):
        """For every member c of its parent's plateau (self.member): the largest items[d] over the nodes d below c
        whose parent is in that plateau (altitude alt(c)); -inf for none. Those d are a range of the preorder once
        grouped by their parent's altitude: a range maximum each."""
        xp, nodes = self.xp, self.parents.size
        out = xp.full(nodes - 1, -np.inf)
        q = xp.flatnonzero(self.member)
        f = xp.flatnonzero(items > -np.inf)
        if not q.size or not f.size:
            return out
        levels = xp.unique(self.parent_alt[f])
        key = xp.searchsorted(levels, self.parent_alt[f]) * nodes + self.position[f]
        by = xp.argsort(key)
        key, values = key[by], items[f][by]
        at, found = _find(levels, self.alt[q], xp)
        level = at * nodes
        lo = xp.searchsorted(key, level + self.position[q] + 1)
        hi = xp.searchsorted(key, level + self.position[q] + self.size[q])
        out[q] = xp.where(found, _range_max(values, lo, hi, xp), -np.inf)
        return out

    def _subtree_sums(self, leaf_values, every_node=False):
        """Sums over every subtree of values given for the leaves (or, `every_node`, for every node)."""
        xp = self.xp
        if every_node:
            values = leaf_values
        else:
            values = xp.zeros(self.parents.size, np.int64)
            values[: self.n] = leaf_values
        prefix = xp.concatenate([xp.zeros(1, np.int64), xp.cumsum(values[self.preorder])])
        return prefix[self.position + self.size] - prefix[self.position]

    def new_weights(self, attribute):
        """The hierarchy weight of every tree edge (by rank)."""
        if attribute is None:
            return self.w
        return self.xp.minimum(self.corr[self.kids[:, 0]], self.corr[self.kids[:, 1]]).astype(np.float64)

    def sides(self, flags):
        """Whether each internal node's first and second child hold a flagged leaf, and a function giving, for
        nodes that hold one, the first flagged leaf of their preorder range (a vertex id)."""
        xp, kids = self.xp, self.kids
        counts = self._subtree_sums(flags.astype(np.int64))
        flagged_positions = xp.sort(self.position[: self.n][flags])

        def rep(c):
            return self.vertices[self.preorder[flagged_positions[xp.searchsorted(flagged_positions, self.position[c])]]]

        return counts[kids[:, 0]] > 0, counts[kids[:, 1]] > 0, rep

    def closure(self, flags, counter) -> _Closure:
        """The closure of the flagged leaves, as edges (see the module's docstring), its runs merged (_runs)."""
        xp, n, kids = self.xp, self.n, self.kids
        has0, has1, rep = self.sides(flags)
        both = xp.flatnonzero(has0 & has1)
        one = xp.flatnonzero(has0 ^ has1)
        side = xp.where(has0[one], kids[one, 0], kids[one, 1])
        other = xp.where(has0[one], kids[one, 1], kids[one, 0])
        one, side, other, fields = self._runs(one, side, other, has0 ^ has1, has0 | has1)
        ids = xp.empty(one.size, np.int64)
        leaf = (other >= 0) & (other < n)
        ids[leaf] = self.vertices[other[leaf]]  # a voxel or a pseudo-vertex stays itself
        fresh = xp.flatnonzero(~leaf)
        ids[fresh] = counter.take(int(fresh.size), xp)
        pseudo = _Closure.empty()
        if self.carry is not None:
            # the pseudo-vertices the closure keeps (old ones that stay leaves of it, and new ones), sorted by id; a
            # kept pseudo-vertex is a leaf here, with its own area and corrected area
            kept = xp.flatnonzero(ids < 0)
            by = kept[xp.argsort(ids[kept])]
            pseudo = _Closure.pseudo(ids[by], {k: a[by] for k, a in fields.items()})
        u = xp.concatenate([rep(kids[both, 0]), rep(side)])
        v = xp.concatenate([rep(kids[both, 1]), ids])
        rows = xp.concatenate([both, one])
        t = None if self.t is None else self.t[rows]
        return _Closure(u, v, self.w[rows], self.e[rows], pseudo.pid, pseudo.fields, t)

    def _runs(self, one, side, other, is_one, in_closure):
        """The closure's one-sided nodes merged into runs: nodes on one path between two-sided nodes (or flagged
        leaves) with one key weight (and second key), which become one node, the top one's key, over one
        pseudo-vertex for all they absorb (area and volume summed, corrected value the largest, depth the least; the
        module's docstring says why that is exact; for the node attributes' dynamics, only members next to each other
        among the closure's nodes, `in_closure`, with the keys of _run_keys: python/chseg/_slab_nodes.py). Returns
        per run its top row, side child, its single node's other child (-1 for several) and the merged fields; nodes
        of infinite weight stay alone."""
        xp, n = self.xp, self.n
        if one.size == 0:
            return one, side, other, {k: a[other] for k, a in (self.carry or {}).items()}
        follow = side >= n
        follow[follow] = is_one[side[follow] - n]
        # down the side child while it is one-sided: the run's path's bottom (rows of `one`, which is sorted)
        up = xp.arange(one.size, dtype=np.int64)
        up[follow] = xp.searchsorted(one, side[follow] - n)
        bottom = n + one[_jump(up, xp)]
        w = self.w[one]
        second = self.t[one] if self.t is not None else xp.zeros(one.size)
        bottom = xp.where(xp.isfinite(w), bottom, -1 - one)
        order = xp.lexsort(xp.stack([one.astype(np.float64), second, w, bottom.astype(np.float64)]))
        one, side, other, bottom, w, second = (a[order] for a in (one, side, other, bottom, w, second))
        start = xp.ones(one.size, bool)
        start[1:] = (bottom[1:] != bottom[:-1]) | (w[1:] != w[:-1]) | (second[1:] != second[:-1])
        carry = self.carry or {}
        if "w" in carry:  # the dynamics' keys: members next to each other among the closure's nodes (_run_keys)
            place = xp.cumsum(in_closure) - 1
            start[1:] |= place[one[1:]] != place[one[:-1]] + 1
        first = xp.flatnonzero(start)
        last = xp.concatenate([first[1:], xp.asarray([one.size], dtype=first.dtype)]) - 1
        fields = {}
        group = xp.cumsum(start) - 1
        for k, a in carry.items():
            values = a[other]
            if k in _KEYS:
                continue
            if k in ("corr", "depth"):  # the largest (least) of each run: its last (first) sorted by run and value
                ranked = values[xp.lexsort(xp.stack([values.astype(np.float64), group.astype(np.float64)]))]
                fields[k] = ranked[last] if k == "corr" else ranked[first]
            else:
                total = xp.concatenate([xp.zeros(1, values.dtype), xp.cumsum(values)])
                fields[k] = total[last + 1] - total[first]
        if "w" in carry:
            fields.update(self._run_keys(carry, other, group, start, first, fields["depth"], (w, second, self.e[one])))
        single = xp.where(last == first, other[first], -1)
        return one[last], side[last], single, fields

    def _run_keys(self, carry, other, group, start, first, least, own):
        """The key (w, t, e) that a run's pseudo-vertex carries for the node attributes' dynamics (python/chseg/
        _slab_nodes.py): -inf where a member above the first stops a chain that enters with the depth `least`, else
        the first member's absorbed key where its depth is `least`, else +inf."""
        xp = self.xp
        absorbed = [carry[k][other] for k in _KEYS]
        below = [xp.concatenate([x[:1], x[:-1]]).astype(np.float64) for x in own]  # the member below: the side child
        less, tied = xp.zeros(other.size, bool), xp.ones(other.size, bool)
        for a, b in zip(absorbed, below):
            less |= tied & (a < b)
            tied &= a == b
        stops = xp.zeros(first.size, bool)
        stops[group[xp.flatnonzero(~start & less & (carry["depth"][other] == least[group]))]] = True
        at_first = carry["depth"][other[first]] == least
        return {k: xp.where(stops, -np.inf, xp.where(at_first, a[first], np.inf)) for k, a in zip(_KEYS, absorbed)}


class _Counter:
    def __init__(self, start=-1):
        self.next = start

    def take(self, count, xp=np):
        out = xp.arange(self.next, self.next - count, -1, dtype=np.int64)
        self.next -= count
        return out


def _engine(xp, fn, *args, **kwargs):
    """A chseg engine's call; where the device lacks memory for it while CuPy's pool keeps blocks it freed (the
    engines allocate outside that pool), the pool's free blocks are handed back and the call made once more."""
    try:
        return fn(*args, **kwargs)
    except MemoryError:
        if xp is np:
            raise
        xp.get_default_memory_pool().free_all_blocks()
        return fn(*args, **kwargs)


_as = _to_xp  # an array of xp: copied from the device for NumPy, to it for CuPy (python/chseg/_dask_chunks.py)


def _merged(xp, *closures) -> _Closure:
    """The pseudo-vertices of several closures, sorted by id."""
    pid = xp.concatenate([_as(xp, c.pid) for c in closures])
    by = xp.argsort(pid)
    names = set().union(*(c.fields for c in closures))
    fields = {k: xp.concatenate([_as(xp, c.fields[k]) for c in closures if k in c.fields])[by] for k in names}
    return _Closure.pseudo(pid[by], fields)


def _closure_of(parts, pseudo, spec, layers, counter) -> _Closure:
    """The closure of the voxels of the layers `layers` in the tree of the graph `parts` (no edge: one vertex, an
    empty closure)."""
    if sum(int(p[0].size) for p in parts) == 0:
        return _Closure.empty()
    t = spec.tree(parts, pseudo)
    return t.closure(_layer_flags(t, spec, layers), counter)


def _layer_flags(t: "_Tree", spec, layers):
    """Whether each leaf of `t` is a voxel of one of the layers."""
    flags = t.xp.zeros(t.n, bool)
    for layer in set(layers):
        flags |= (t.vertices >= layer * spec.plane) & (t.vertices < (layer + 1) * spec.plane)
    return flags


def _carried(c: _Closure):
    return _tagged(c.edges + (() if c.t is None else (c.t,)), _CARRIED)


def _tagged(edges, tag):
    """(u, v, w, e[, t]) edges with their origin: (u, v, w, e, origin[, t])."""
    u, v, w, e = edges[:4]
    xp = importlib.import_module("cupy") if _is_cupy(u) else np
    return (u, v, w, e, xp.full(int(u.size), tag, np.int8)) + tuple(edges[4:])


def _digest(layer) -> str:
    layer = np.ascontiguousarray(layer)
    digest = hashlib.blake2b(layer.reshape(-1).view(np.uint8).data, digest_size=16)  # no copy of the layer's bytes
    digest.update(str(layer.dtype).encode())
    return digest.hexdigest()


class SlabHierarchy:
    """A hierarchy of a volume computed slab by slab (:func:`hierarchy`): per slab, the minimum spanning tree edges it
    owns with their weights and hierarchy weights, held or in a store directory. ``cut`` writes label volumes slab by
    slab; ``gather`` builds the whole dendrogram where it fits."""

    def __init__(self, shape, bounds, fully_connected, attribute, parts=None, store=None):
        self.shape, self.fully_connected, self.attribute = tuple(shape), fully_connected, attribute
        #: (first layer, end layer) of each slab.
        self.bounds = [tuple(int(x) for x in b) for b in bounds]
        self._parts, self.store = parts, store
        self.num_slabs = len(self.bounds)
        self.slots = len(_after_offsets(len(self.shape), fully_connected))
        #: The largest closure of a border layer that a chain (R(s), C(s)) carried, in bytes (set by :func:`hierarchy`).
        self.closure_bytes = 0
        #: The node attributes :meth:`node_attributes` computed (``part`` gives them).
        self.node_names: tuple = ()
        self._nodes = None

    def node_attributes(self, names=("area", "volume", "height", "dynamics"), backend: str = "auto"):
        """Computes the attributes ``names`` of every node of this hierarchy and keeps them with it (held, or in its
        store, marked complete after them); ``part(s)`` then gives them for slab s's nodes, one per edge: the values
        of ``gather().attribute(name)`` at those nodes (the leaves', not kept: area 1, the others 0). A second run
        over the slabs, on the hierarchy's own edges (python/chseg/_slab_nodes.py: memory as :func:`hierarchy`'s).

        Parameters
        ----------
        names : str or sequence of {'area', 'volume', 'height', 'dynamics'}, optional
            Default all four. The volume takes whole-number hierarchy weights (those of 8- and 16-bit integer
            volumes), exact in 64-bit integers.
        backend : {'auto', 'cuda', 'cpu'}, optional
            As for :func:`hierarchy`.

        Returns
        -------
        SlabHierarchy
            This hierarchy.

        Raises
        ------
        ValueError
            For another name, or the volume of hierarchy weights that are not whole numbers.

        Examples
        --------
        >>> import numpy as np, chseg, chseg.slabs
        >>> volume = np.random.default_rng(0).integers(0, 4, (8, 9, 10)).astype(np.uint8)
        >>> h = chseg.slabs.hierarchy(volume, 3, "area", backend="cpu").node_attributes(("area", "dynamics"))
        >>> whole = chseg.watershed_hierarchy(volume, "area", backend="cpu")
        >>> edges = whole.edges.astype(np.int64)
        >>> rank = np.argsort(edges)[np.searchsorted(np.sort(edges), h.part(1)["edge"])]  # slab 1's nodes in whole
        >>> bool((h.part(1)["dynamics"] == whole.attribute("dynamics")[volume.size + rank]).all())
        True
        """
        from ._slab_nodes import node_attributes

        return node_attributes(self, names, backend)

    @classmethod
    def open(cls, store) -> "SlabHierarchy":
        """The hierarchy written to ``store`` by :func:`hierarchy` (ValueError for a store that is not complete)."""
        meta = _store.read_mark(store)
        h = cls(meta["shape"], meta["bounds"], meta["fully_connected"], meta["attribute"], store=os.fspath(store))
        h.node_names = _store.node_names(store)
        return h

    def part(self, s: int, xp: Any = np):
        """Slab s's owned edges: ``edge`` (image edge indices, increasing, int64), ``weight`` and ``altitude`` (the
        hierarchy weight), float64, and the attributes of their nodes that :meth:`node_attributes` computed (float64,
        named after them); arrays of ``xp`` (NumPy, or CuPy to decode them on the device)."""
        return self._decoded(s, self._coded(s), xp)

    def _coded(self, s: int):
        """Slab s's part as held or stored (host arrays; what a thread reads ahead): edges, nodes' attributes."""
        coded = self._parts[s] if self._parts is not None else _store.read(self.store, f"slab-{s:06d}")
        nodes = None
        if self.node_names:
            nodes = self._nodes[s] if self._nodes is not None else _store.read(self.store, f"node-{s:06d}")
        return coded, nodes

    def _decoded(self, s: int, coded, xp: Any = np):
        """part(s) from _coded(s)."""
        edges, nodes = coded
        out = _store.decode(edges, _store.base_edge(self, s), xp)
        if nodes is not None:
            out.update({k: _as(xp, nodes[k]).astype(np.float64) for k in self.node_names})
        return out

    def gather(self, backend: str = "auto") -> Any:
        """The whole dendrogram: the arrays of ``chseg.single_linkage(volume)`` (no attribute) or of
        ``chseg.watershed_hierarchy(volume, attribute)``."""
        n = int(np.prod(self.shape))
        if n > 2**32 - 1:
            raise ValueError(f"the volume has {n} voxels: a dendrogram gathers at most 2^32 - 1 (cut streams more)")
        if n == 1:
            return chseg.single_linkage(np.zeros(self.shape, np.uint8), backend=backend)
        parts = [self.part(s) for s in range(self.num_slabs)]
        e, w, a = (np.concatenate([p[k] for p in parts]) for k in ("edge", "weight", "altitude"))
        order = np.lexsort((e, w, a))
        e, a = e[order], a[order]
        u, v = _ends(e, self.shape, self.fully_connected)
        tree = chseg.single_linkage_graph(u.astype(np.uint32), v.astype(np.uint32), a, n, is_tree=True, backend=backend)
        edges = e[_to_numpy(tree.edges).astype(np.int64)].astype(np.uint64)
        run = tree._run
        return chseg.Dendrogram(
            run, self.shape, tree.parents, tree.weights, run.array(edges) if run.on_device else edges, tree.u, tree.v
        )

    def cut(self, threshold: float, out: Any = None, backend: str = "auto") -> Any:
        """The regions joined by merges of hierarchy weight at most ``threshold``, labelled 1 .. K in raster order of
        each region's first voxel (as ``Dendrogram.cut`` numbers them), written slab by slab into ``out`` (any array
        of the volume's shape taking slab assignments: NumPy, a Zarr array; uint32 or wider) or a new uint32 array.
        Each slab's regions are found on the device (CuPy) unless ``backend`` is 'cpu' or there is none."""
        threshold = float(threshold)
        if np.isnan(threshold):
            raise ValueError("threshold must be a number, not NaN")
        return self._write((threshold, np.inf, np.iinfo(np.int64).max), out, backend)

    def clusters(self, k: int, out: Any = None, backend: str = "auto") -> Any:
        """The k regions left when the k - 1 heaviest merges are undone (merges in the gathered dendrogram's order:
        hierarchy weight, then weight, then image edge index), labelled and written as :meth:`cut` does; equal to
        ``gather().clusters(k)``. The ties at the k-th heaviest merge's hierarchy weight and weight are gathered
        on the host (8 bytes each)."""
        n = int(np.prod(self.shape))
        if isinstance(k, (bool, np.bool_)) or not isinstance(k, (int, np.integer)) or not 1 <= int(k) <= n:
            raise ValueError(f"k must be a whole number in 1..{n}, not {k!r}")
        from ._slab_cuts import _merge_key

        return self._write(_merge_key(self, n - int(k)), out, backend)

    def _write(self, threshold, out, backend):
        if out is None:
            out = np.zeros(self.shape, np.uint32)
        elif tuple(out.shape) != self.shape:
            raise ValueError(f"out must have the volume's shape {self.shape}, not {tuple(out.shape)}")
        from ._slab_cuts import _write_cut

        spec = _Spec(self.shape, self.bounds, self.fully_connected, self.attribute, backend)
        return _write_cut(self, threshold, out, spec.xp)


class _Spec:
    """What every step needs: the volume's shape, the slabs' first and last layers (`bounds`), the graph and the
    hierarchy."""

    def __init__(self, shape, bounds, fully_connected, attribute, backend):
        self.shape, self.bounds = shape, bounds
        self.fully_connected, self.attribute, self.backend = fully_connected, attribute, backend
        self.plane = int(np.prod(shape[1:]))
        self.slots = len(_after_offsets(len(shape), fully_connected))

    @property
    def xp(self):
        """CuPy where the slabs run on a device (every step between the engines stays there), else NumPy; decided
        where the step runs (a Dask worker may differ from the client)."""
        if self.backend == "cpu" or chseg._chseg.device_count() == 0:
            return np
        try:
            import cupy
        except ImportError:
            return np
        return cupy

    def crossing(self, low, high, z, tag):
        """The edges between layer z (values `low`) and z + 1 (values `high`)."""
        return _tagged(_crossing(low, high, z, self.shape, self.fully_connected, self.xp), tag)

    def counter(self, s, kind):
        """Pseudo-vertex ids of slab s's closure of `kind` (_C, _R or _B): a range of 2^36 of its own, so that steps
        run anywhere."""
        return _Counter(-1 - ((3 * s + kind) << 36))

    #: The name of each slab's output in a store (its index after a dash).
    prefix = "slab"

    def fetch(self, volume, s):
        """Slab s's voxels as `read` takes them (None: `read` reads what it needs itself)."""
        a, b = self.bounds[s]
        return volume[a:b]

    def read(self, volume, s, block=None):
        """Slab s's own minimum spanning tree and its first and last layers (the crossings' inputs); `block`: what
        fetch gave, read ahead."""
        block = self.fetch(volume, s) if block is None else block
        return _slab_tree(self, s, block, keep=True), _to_numpy(block[0]), _to_numpy(block[-1])

    def layer(self, volume, z):
        return _to_numpy(volume[z : z + 1])[0]

    def first(self, volume, s, block=None):
        """Slab s's first layer as `read` gives it, from what `fetch` gave (None: read on its own)."""
        return self.layer(volume, self.bounds[s][0]) if block is None else _to_numpy(block[0])

    def tree(self, parts, pseudo: _Closure) -> "_Tree":
        """The tree of a partial graph, with what its closures carry."""
        return _Tree(parts, pseudo, self.attribute, self.backend, self.xp)

    def emit(self, s, whole: "_Tree"):
        """What slab s gives from its partial tree: its owned edges with their hierarchy weights, coded."""
        mine = whole.origin <= _INTO
        altitude = whole.new_weights(self.attribute)[mine]
        order = whole.xp.argsort(whole.e[mine])
        owned = {"edge": whole.e[mine][order], "weight": whole.w[mine][order], "altitude": altitude[order]}
        return _store.encode(owned, _store.base_edge(self, s), whole.xp)  # coded on the device: less to copy


class _SlabEdges(tuple):
    """A slab's own minimum spanning tree (u, v, w, e), by rank, holding the engine's dendrogram of the slab while it
    stays in one process (B(s) takes it as its tree: _Tree's `slab`); pickled (a Dask task elsewhere) as a plain
    tuple."""

    dendrogram: Any = None

    def __reduce__(self):
        return tuple, (tuple(self),)


def _slab_tree(spec: _Spec, s, block, keep=False):
    """Slab s's own minimum spanning tree (chseg.single_linkage): (u, v, w, e) in the volume's voxel ids and image
    edge indices, arrays of spec.xp, by rank (a _SlabEdges; `keep`: holding the engine's dendrogram for B(s), as the
    passes in turn do; Dask's tasks do not, whose scheduler may run several slabs' trees before their B(s))."""
    xp = spec.xp
    d = _engine(xp, chseg.single_linkage, _as(xp, block), fully_connected=spec.fully_connected, backend=spec.backend)
    offset = spec.bounds[s][0] * spec.plane  # a slab is whole layers: its raster ids are the volume's, shifted
    u = _as(xp, d.u).astype(np.int64) + offset
    v = _as(xp, d.v).astype(np.int64) + offset
    edges = _SlabEdges((u, v, _as(xp, d.weights), _as(xp, d.edges).astype(np.int64) + offset * spec.slots))
    edges.dendrogram = d if keep else None
    return edges


def _border_step(spec: _Spec, s, tree):
    """B(s): the closure of slab s's first and last layers in the tree of slab s alone (the engine's dendrogram of the
    slab where `tree` holds it). It stands for the slab in the closures' chains (R(s) and C(s)), which then take a tree
    of the border's size instead of the slab's; the slab's own partial tree keeps every edge (_owned)."""
    a, b = spec.bounds[s]
    counter = spec.counter(s, _B)
    if getattr(tree, "dendrogram", None) is None or int(tree[0].size) == 0:
        return _closure_of([_tagged(tree, _SLAB)], _Closure.empty(), spec, (a, b - 1), counter)
    t = _Tree(None, _Closure.empty(), spec.attribute, spec.backend, spec.xp, slab=(tree, a * spec.plane))
    tree.dendrogram = None  # its arrays are the tree's now; the slab's edges need it no more
    return t.closure(_layer_flags(t, spec, (a, b - 1)), counter)


def _right_step(spec: _Spec, s, border, after, last_layer, next_first):
    """R(s): the closure of slab s's first layer in the tree of B(s), the edges to the next slab and R(s + 1)."""
    parts = [_carried(border), _carried(after)]
    if next_first is not None:
        parts.append(spec.crossing(last_layer, next_first, spec.bounds[s][1] - 1, _OUT))
    return _closure_of(parts, _merged(spec.xp, border, after), spec, (spec.bounds[s][0],), spec.counter(s, _R))


def _left_parts(spec: _Spec, s, slab, before, prev_last, first_layer):
    """Slab s's edges (`slab`: its tree's, or B(s)'s), C(s - 1)'s and those between them."""
    parts = [slab, _carried(before)]
    if prev_last is not None:
        parts.append(spec.crossing(prev_last, first_layer, spec.bounds[s][0] - 1, _INTO))
    return parts


def _left_step(spec: _Spec, s, border, before, prev_last, first_layer):
    """C(s): the closure of slab s's last layer in the tree of C(s - 1), the edges from the slab before and B(s)."""
    parts = _left_parts(spec, s, _carried(border), before, prev_last, first_layer)
    pseudo = _merged(spec.xp, border, before)
    return _closure_of(parts, pseudo, spec, (spec.bounds[s][1] - 1,), spec.counter(s, _C))


def _owned(spec: _Spec, s, tree, before, after, prev_last, first_layer, last_layer, next_first):
    """Slab s's owned edges with their hierarchy weights, from its partial tree."""
    parts = _left_parts(spec, s, _tagged(tree, _SLAB), before, prev_last, first_layer)
    if next_first is not None:
        parts += [spec.crossing(last_layer, next_first, spec.bounds[s][1] - 1, _OUT), _carried(after)]
    if sum(int(p[0].size) for p in parts) == 0:  # a one-voxel volume
        return _store.encode({"edge": np.zeros(0, np.int64), "weight": np.zeros(0), "altitude": np.zeros(0)}, 0)
    xp = spec.xp
    return spec.emit(s, spec.tree(parts, _merged(xp, before, after)))


def _check_attribute(attribute, dtype):
    if attribute not in (None, "area", "volume", "dynamics"):
        raise ValueError(f"attribute must be None, 'area', 'volume' or 'dynamics', not {attribute!r}")
    if attribute == "volume" and not (np.dtype(dtype).kind in "ui" and np.dtype(dtype).itemsize <= 2):
        raise ValueError(
            f"the volume over slabs takes 8- and 16-bit integer voxels (exact in 64-bit integers), not {dtype}"
        )


def hierarchy(
    volume: Any,
    slab: int,
    attribute: Optional[str] = None,
    *,
    fully_connected: bool = False,
    store: Any = None,
    backend: str = "auto",
) -> SlabHierarchy:
    """The single-linkage hierarchy (``attribute=None``) or a watershed hierarchy by attribute of a volume read
    slab by slab, as each slab's minimum spanning tree edges with their hierarchy weights (module docstring;
    docs/python-package.md, "Slabs").

    Parameters
    ----------
    volume : array_like, 2D or 3D
        NumPy, CuPy, a Zarr array or anything sliced along its first axis; as for :func:`chseg.slabs.spanning_tree`.
        Read twice, slab by slab (each slab's border layers are checked to be the same both times).
    slab : int
        Layers of the first axis in each slab (the last slab may have fewer).
    attribute : {None, 'area', 'volume', 'dynamics'}, optional
        None: single linkage; else the watershed hierarchy by that attribute (volume: 8- and 16-bit integer voxels).
    fully_connected : bool, optional
        As for :func:`chseg.single_linkage`.
    store : str or os.PathLike, optional
        A directory to write each slab's edges to, a Zarr group (python/chseg/_slab_store.py: a subgroup a slab, the
        mark that it is complete last; the closures of the first pass beyond 4 GiB go there too while it runs);
        None: held in memory (coded: about 3 bytes a voxel for a uint8 volume's hierarchy by area).
    backend : {'auto', 'cuda', 'cpu'}, optional
        As for :func:`chseg.single_linkage`.

    Returns
    -------
    SlabHierarchy

    Raises
    ------
    ValueError
        For what :func:`chseg.slabs.spanning_tree` refuses, another attribute, or a slab whose border layers changed
        between the two passes (named).
    """
    slab = _check(volume, slab)
    _check_attribute(attribute, volume.dtype)
    shape = tuple(int(x) for x in volume.shape)
    bounds = [(a, min(shape[0], a + slab)) for a in range(0, shape[0], slab)]
    spec = _Spec(shape, bounds, fully_connected, attribute, backend)
    group, store = _store.opened(store)
    h = SlabHierarchy(shape, bounds, fully_connected, attribute, parts=None if store is not None else [])
    with _store.undone_on_failure(group):
        from ._slab_passes import _passes

        _passes(spec, volume, h, store)
    return _finish(h, group, store)


def _finish(h: SlabHierarchy, group, store):
    if group is not None:
        _store.mark(
            group,
            {
                "shape": list(h.shape),
                "bounds": [list(b) for b in h.bounds],
                "fully_connected": bool(h.fully_connected),
                "attribute": h.attribute,
            },
        )
        h.store = store
    return h

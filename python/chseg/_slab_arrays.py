"""The array ways of chseg.slabs.hierarchy's trees (python/chseg/_slab_hierarchy.py), each on NumPy or CuPy
arrays alike (CuPy's in python/chseg/_slab_kernels.py where a loop of whole-array operations would copy back every
round): range maxima, a binary tree's children and preorder by its Euler tour, list ranking, pointer jumping, and a
partial graph's vertex ids."""

from __future__ import annotations

import math

import numpy as np

from . import _slab_kernels


def _range_max(values, lo, hi, xp=np):
    """max(values[lo[i]:hi[i]]) for every i (float64; -inf for an empty range): a segment tree, queries together."""
    size = 1
    while size < max(int(values.size), 1):
        size *= 2
    tree = xp.full(2 * size, -np.inf)
    tree[size : size + values.size] = values
    k = size // 2
    while k >= 1:
        tree[k : 2 * k] = xp.maximum(tree[2 * k : 4 * k : 2], tree[2 * k + 1 : 4 * k : 2])
        k //= 2
    if xp is not np:
        return _slab_kernels.range_max(tree, lo, hi, size)  # the loop below in one launch
    out = xp.full(lo.size, -np.inf)
    left, right = lo.astype(np.int64) + size, hi.astype(np.int64) + size
    while True:
        active = left < right
        if not bool(active.any()):
            return out
        m = active & (left % 2 == 1)
        out[m] = xp.maximum(out[m], tree[left[m]])
        left = left + m
        m = active & (right % 2 == 1)
        right = right - m
        out[m] = xp.maximum(out[m], tree[right[m]])
        left //= 2
        right //= 2


def _children(parents, xp):
    """The two children of every internal node (node n + r: row r), the smaller id first: each child written at its
    parent (one of two writes lands), then the other child next to it; no sort."""
    nodes = parents.size
    n = (nodes + 1) // 2
    index = xp.arange(nodes - 1, dtype=np.int64)
    row = parents[:-1] - n
    one = xp.empty(n - 1, np.int64)
    one[row] = index
    other = xp.empty(n - 1, np.int64)
    lost = one[row] != index
    other[row[lost]] = index[lost]
    return xp.stack([xp.minimum(one, other), xp.maximum(one, other)], axis=1)


def _euler_preorder(kids, n, xp):
    """Each node's preorder position and subtree size (nodes) of a binary tree given by its children (root last), by
    ranking its Euler tour (_tour_sums): the way for device arrays (SciPy's depth-first order is host only)."""
    nodes = 2 * n - 1
    end = 2 * nodes
    enters = xp.concatenate([xp.ones(nodes, np.int64), xp.zeros(nodes + 1, np.int64)])
    events = xp.concatenate([xp.ones(end, np.int64), xp.zeros(1, np.int64)])
    enters, events = _tour_sums(kids, n, xp, enters, events)
    position = nodes - enters[:nodes]
    size = (events[:nodes] - events[nodes:end] + 1) // 2
    return position, size


def _tour_sums(kids, n, xp, a, b=None):
    """Suffix sums of one or two counts (not negative) given on the events of the binary tree's Euler tour (enter(x) =
    x, exit(x) = nodes + x, then the end), ranked by pointer jumping in NumPy, by sublists in CuPy
    (python/chseg/_slab_kernels.py). Two counts of sums below 2^31 travel as one (b in the high 32 bits): half the
    reads and writes of a walk."""
    nodes = 2 * n - 1
    end = 2 * nodes
    nxt = xp.empty(end + 1, np.int64)
    nxt[:n] = nodes + xp.arange(n, dtype=np.int64)  # a leaf's enter: its exit
    nxt[n:nodes] = kids[:, 0]  # an internal node's enter: its first child's
    nxt[nodes + kids[:, 0]] = kids[:, 1]  # a first child's exit: its sibling's enter
    nxt[nodes + kids[:, 1]] = nodes + xp.arange(n, nodes, dtype=np.int64)  # a second child's exit: its parent's
    nxt[end - 1] = end  # the root's exit
    nxt[end] = end
    packed = b is not None and end + 1 < 2**31  # every sum is at most the tour's events
    if packed:
        a = a + (b << 32)
    elif b is not None:
        return _ranked(nxt, a, xp), _ranked(nxt, b, xp)
    a = _ranked(nxt, a, xp)
    if not packed:
        return a
    return a & 0xFFFFFFFF, a >> 32


def _ranked(nxt, a, xp):
    """Suffix sums of `a` along the lists of nxt (list ranking)."""
    if xp is not np:
        return _slab_kernels.rank(nxt, a)  # by sublists: linear work, where the loop below takes log rounds
    end = nxt.size - 1
    while bool((nxt[:end] != end).any()):
        a = a + a[nxt]
        nxt = nxt[nxt]
    return a


def _vertex_ids(ids, xp):
    """unique(ids) and each id's place in it (xp.unique's return_inverse). The voxels of a partial graph (ids >= 0)
    fill most of their range (a slab and its neighbours' layers): they are placed by a table of that range and its
    running count, linear work where a sort is not; pseudo-vertices (< 0, few) and sparse voxels by a sort."""
    voxel = ids >= 0
    voxels = ids[voxel]
    base = int(voxels.min()) if voxels.size else 0
    span = int(voxels.max()) - base + 1 if voxels.size else 0
    if not voxels.size or span > 2 * int(voxels.size):
        out, inverse = xp.unique(ids, return_inverse=True)
        return out, inverse.ravel()
    pseudo, below = xp.unique(ids[~voxel], return_inverse=True)
    offset = voxels - base
    present = xp.zeros(span, bool)
    present[offset] = True
    place = xp.cumsum(present, dtype=np.int64) - 1 + pseudo.size
    inverse = xp.empty(ids.size, np.int64)
    inverse[voxel] = place[offset]
    inverse[~voxel] = below.ravel()
    return xp.concatenate([pseudo, xp.flatnonzero(present) + base]), inverse


def _jump(up, xp):
    """Pointer jumping: each index's end of the chain up[i], up[up[i]], ... (up[end] = end). On the device, the
    ceil(log2(size)) rounds that reach the end of the longest chain there can be, with no test (a copy back) between
    them."""
    if xp is not np:
        for _ in range(max(1, math.ceil(math.log2(max(int(up.size), 2))))):
            up = up[up]
        return up
    while True:
        nxt = up[up]
        if bool((nxt == up).all()):
            return up
        up = nxt

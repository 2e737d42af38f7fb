"""CuPy kernels of the steps between the engines of chseg.slabs.hierarchy (python/chseg/_slab_hierarchy.py) and its
cuts (python/chseg/_slab_cuts.py), each doing in a few launches what the NumPy way does in a loop of whole-array
operations (a launch, and for the loop's end a copy back, per round):

- `rank`: list ranking (suffix sums of a count along linked lists) by sublists (Helman and JaJa's way): every
  K-th element, each list's head and its end start a sublist; a thread a sublist walks it and sums its counts
  (`rank_walk`), the short list of sublists is ranked by pointer jumping (`rank_round`, Wyllie: every element adds
  its successor's counts and jumps to its successor's successor), and a second walk writes each element's sum
  (`rank_fill`). Linear work, where pointer jumping over every element takes ceil(log2(length)) rounds over all of
  them (29 for the Euler tour of a partial tree of 67M voxels);
- `range_max`: the maxima of ranges of a segment tree, a thread a query walking up from both ends;
- `components`: connected components by union-find (a larger root hooked under a smaller one by compare-and-swap,
  then every vertex's root): each vertex's smallest vertex id in its component, whatever order the hooks land in.

Compiled by CuPy on first use (NVRTC); the results are those of the NumPy ways (tested against them on the device).
"""

from __future__ import annotations

import math

import numpy as np

_KERNELS: dict = {}


_SOURCES = {
    # a sublist from splitter s (sid[s] its index): the sum of its counts and the next sublist (itself at a list's end)
    "rank_walk": (
        "int64 s, raw int64 nxt, raw int64 a, raw int64 sid",
        "int64 nx, int64 sa",
        """
        long long j = s, ca = a[s], k = sid[s];
        if (nxt[s] != s) {
            while (true) {
                j = nxt[j];
                k = sid[j];
                if (k >= 0) break;
                ca += a[j];
            }
        }
        nx = k; sa = ca;
        """,
    ),
    # the sublist from splitter s again, given the sum ta from s to the list's end: each element's sum
    "rank_fill": (
        "int64 s, int64 ta, raw int64 nxt, raw int64 a, raw int64 sid",
        "raw int64 oa",
        """
        long long j = s, ca = ta;
        while (true) {
            oa[j] = ca;
            long long t = nxt[j];
            if (t == j || sid[t] >= 0) break;
            ca -= a[j];
            j = t;
        }
        """,
    ),
    # hook the roots of u and v, the larger under the smaller; volatile reads see the other threads' hooks
    "hook": (
        "int64 u, int64 v",
        "raw int64 p",
        """
        volatile long long * q = (volatile long long *)&p[0];
        long long x = u, y = v;
        while (true) {
            while (q[x] != x) x = q[x];
            while (q[y] != y) y = q[y];
            if (x == y) break;
            if (x < y) { long long t = x; x = y; y = t; }
            unsigned long long was = atomicCAS((unsigned long long *)&p[x], (unsigned long long)x,
                                               (unsigned long long)y);
            if (was == (unsigned long long)x) break;
        }
        """,
    ),
    "root": (
        "raw int64 p",
        "int64 out",
        "long long x = i; while (p[x] != x) x = p[x]; out = x;",
    ),
}


def _kernel(name):
    if name not in _KERNELS:
        import cupy

        if name in _SOURCES:
            _KERNELS[name] = cupy.ElementwiseKernel(*_SOURCES[name], f"chseg_slab_{name}")
        elif name == "rank_round":
            _KERNELS[name] = cupy.ElementwiseKernel(
                "raw int64 nxt, raw int64 a",
                "int64 nxt2, int64 a2",
                "long long j = nxt[i]; a2 = a[i] + a[j]; nxt2 = nxt[j];",
                "chseg_slab_rank_round",
            )
        else:
            _KERNELS[name] = cupy.ElementwiseKernel(
                "int64 lo, int64 hi, raw float64 tree, int64 size",
                "float64 out",
                """
                long long l = lo + size, r = hi + size;
                double m = out;
                while (l < r) {
                    if (l & 1) { m = fmax(m, tree[l]); ++l; }
                    if (r & 1) { --r; m = fmax(m, tree[r]); }
                    l >>= 1; r >>= 1;
                }
                out = m;
                """,
                "chseg_slab_range_max",
            )
    return _KERNELS[name]


#: One element in this many starts a sublist (besides every list's head and end).
_SUBLIST = 32


def rank(nxt, a):
    """Suffix sums of the counts a along the lists given by nxt (each list's last element pointing to itself, with
    count 0; no other cycle): a[i] + a[nxt[i]] + ... to the list's end (two counts: packed into one by the caller)."""
    import cupy

    size = int(nxt.size)
    index = cupy.arange(size, dtype=np.int64)
    headed = cupy.zeros(size, bool)
    headed[nxt] = True  # has a predecessor (an end: itself)
    start = cupy.flatnonzero((index % _SUBLIST == 0) | ~headed | (nxt == index))
    sid = cupy.full(size, -1, np.int64)
    sid[start] = cupy.arange(start.size, dtype=np.int64)
    del headed, index
    snext, sa = _kernel("rank_walk")(start, nxt, a, sid)
    ta = _wyllie(snext, sa)
    oa = cupy.empty_like(a)
    _kernel("rank_fill")(start, ta, nxt, a, sid, oa)
    return oa


def _wyllie(nxt, a):
    """rank's sums by pointer jumping (Wyllie): ceil(log2(length)) rounds over every element, no test between them."""
    import cupy

    rounds = max(1, math.ceil(math.log2(max(int(nxt.size), 2))))
    kernel = _kernel("rank_round")
    nxt2, a2 = cupy.empty_like(nxt), cupy.empty_like(a)
    for _ in range(rounds):
        kernel(nxt, a, nxt2, a2)
        nxt, nxt2, a, a2 = nxt2, nxt, a2, a
    return a


def range_max(tree, lo, hi, size):
    """max(tree's leaves lo[i] .. hi[i] - 1) for every i, -inf for an empty range (tree: 2 size nodes, root 1)."""
    import cupy

    out = cupy.full(lo.size, -np.inf)
    _kernel("range_max")(lo.astype(np.int64), hi.astype(np.int64), tree, np.int64(size), out)
    return out


def components(u, v, count):
    """Each vertex's smallest vertex id in its connected component of the graph (u, v) on `count` vertices."""
    import cupy

    p = cupy.arange(count, dtype=np.int64)
    if u.size:
        _kernel("hook")(u.astype(np.int64, copy=False), v.astype(np.int64, copy=False), p)
    return _kernel("root")(p, size=count)

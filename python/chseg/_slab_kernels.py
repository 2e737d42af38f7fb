"""Two CuPy kernels of the steps between the engines of chseg.slabs.hierarchy (python/chseg/_slab_hierarchy.py), each
doing in one launch what the NumPy way does in a loop of whole-array operations (a launch, and for the loop's end a
copy back, per round):

- `rank_round`: one round of list ranking by pointer jumping (Wyllie): every element adds its successor's two counts
  and jumps to its successor's successor, reading the round before's arrays;
- `range_max`: the maxima of ranges of a segment tree, a thread a query walking up from both ends.

Compiled by CuPy on first use (NVRTC); the results are those of the NumPy ways (tested against them on the device).
"""

from __future__ import annotations

import math

import numpy as np

_KERNELS: dict = {}


def _kernel(name):
    if name not in _KERNELS:
        import cupy

        if name == "rank_round":
            _KERNELS[name] = cupy.ElementwiseKernel(
                "raw int64 nxt, raw int64 a, raw int64 b",
                "int64 nxt2, int64 a2, int64 b2",
                "long long j = nxt[i]; a2 = a[i] + a[j]; b2 = b[i] + b[j]; nxt2 = nxt[j];",
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


def rank(nxt, a, b):
    """Suffix sums of the counts a and b along the lists given by nxt (the last element pointing to itself with
    counts 0): ceil(log2(length)) rounds, no test between them."""
    import cupy

    rounds = max(1, math.ceil(math.log2(max(int(nxt.size), 2))))
    kernel = _kernel("rank_round")
    nxt2, a2, b2 = cupy.empty_like(nxt), cupy.empty_like(a), cupy.empty_like(b)
    for _ in range(rounds):
        kernel(nxt, a, b, nxt2, a2, b2)
        nxt, nxt2, a, a2, b, b2 = nxt2, nxt, a2, a, b2, b
    return a, b


def range_max(tree, lo, hi, size):
    """max(tree's leaves lo[i] .. hi[i] - 1) for every i, -inf for an empty range (tree: 2 size nodes, root 1)."""
    import cupy

    out = cupy.full(lo.size, -np.inf)
    _kernel("range_max")(lo.astype(np.int64), hi.astype(np.int64), tree, np.int64(size), out)
    return out

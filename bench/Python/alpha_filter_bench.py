"""The stages of AlphaTree.filter_regions on the GPU machine (issue 64): the image graph's edges, the alpha-tree's
saliency on them, the graph's dendrogram, the image edge ids of its tree edges (timed here as NumPy's gather, the path
before 4959fcb; the call itself takes them with chseg._chseg.take_edge_ids since), the dendrogram's filter; and the
image dendrogram's own filter at the same size. Medians of 5 runs after a warm-up, NumPy in and out, relief() of
hierarchy_bench.py at 2048^2 and 4096^2. Usage: python alpha_filter_stages.py (from the repository root)."""

import statistics
import sys
import time

sys.path.insert(0, "bench/Python")
import chseg
import numpy as np
from chseg import _chseg
from chseg._arrays import to_caller
from chseg._trees import Dendrogram, _dendrogram_arrays
from hierarchy_bench import relief


def t(f, reps=5):
    f()
    ts = []
    for _ in range(reps):
        s = time.perf_counter()
        r = f()
        ts.append((time.perf_counter() - s) * 1e3)
    return statistics.median(ts), r


for side in (2048, 4096):
    image = relief(side)
    alpha = chseg.alpha_tree(image)
    run = alpha._run
    full, _ = t(lambda: alpha.filter_regions(100))
    g, (u, v, ids) = t(lambda: alpha._image_graph())
    parents, levels = alpha._backend_arrays

    def sal():
        s = run.empty((int(u.shape[0]),), np.float64)
        _chseg.alpha_tree_edge_saliency(parents, levels, u, v, s, run.context)
        return s

    ts, saliency = t(sal)

    def sl():
        out = _dendrogram_arrays(run, alpha.num_leaves, parents.dtype == np.uint64)
        r = _chseg.graph_single_linkage(u, v, saliency, alpha.num_leaves, False, *out, run.context)
        return out, r

    tl, (out, r) = t(sl)
    tg, _ = t(lambda: ids[out[2]])
    tree = Dendrogram(run, alpha.shape, *(to_caller(run, x) for x in out))
    tf, _ = t(lambda: tree.filter_regions(100))
    den = chseg.single_linkage(image)
    td, _ = t(lambda: den.filter_regions(100))
    print(
        f"{side}^2: AlphaTree.filter_regions {full:.1f} ms = image_graph_edges {g:.1f} + edge saliency {ts:.1f} "
        f"+ graph_single_linkage {tl:.1f} (kernel {r.get('kernel_ms', 0):.1f}, mst {r.get('mst_ms', 0):.1f}, "
        f"dendrogram {r.get('dendrogram_ms', 0):.1f}) + ids gather {tg:.1f} + Dendrogram.filter_regions {tf:.1f}; "
        f"the image dendrogram's own filter {td:.1f} ms; edges {u.shape[0]}",
        flush=True,
    )

"""AlphaTree.filter_regions against the image dendrogram's own filter at the same size (issue 64 asks for at most
2x), NumPy in and out and, where CuPy is installed, CuPy in and out; Higra's filter_small_nodes_from_tree on its
quasi-flat zone hierarchy in the same run at the smallest side, where Higra is installed, with the results compared
array by array. Medians of 5 runs after a warm-up (Higra: one run), area filter at 100, relief() of
hierarchy_bench.py, 4-connected. Usage: python bench/Python/alpha_filter_bench.py [sides...] (from the repository
root)."""

import statistics
import sys
import time

sys.path.insert(0, "bench/Python")
import chseg
import numpy as np
from hierarchy_bench import higra_graph, relief

try:
    import cupy
except ImportError:
    cupy = None
try:
    import higra as hg
except ImportError:
    hg = None


def timed(f, reps=5, sync=lambda: None):
    f()
    sync()
    ts = []
    for _ in range(reps):
        s = time.perf_counter()
        r = f()
        sync()
        ts.append((time.perf_counter() - s) * 1e3)
    return statistics.median(ts), r


sides = [int(a) for a in sys.argv[1:]] or [2048, 4096]
for side in sides:
    image = relief(side)
    alpha = chseg.alpha_tree(image)
    dendrogram = chseg.single_linkage(image)
    ta, ours = timed(lambda: alpha.filter_regions(100))
    td, _ = timed(lambda: dendrogram.filter_regions(100))
    line = (
        f"{side}^2, NumPy: AlphaTree.filter_regions {ta:.1f} ms, the image dendrogram's filter {td:.1f} ms, "
        f"ratio {ta / td:.2f}"
    )
    if cupy is not None and chseg.device_count():
        sync = cupy.cuda.Device().synchronize
        on_device = cupy.asarray(image)
        alpha_d, dendrogram_d = chseg.alpha_tree(on_device), chseg.single_linkage(on_device)
        ta_d, ours_d = timed(lambda: alpha_d.filter_regions(100), sync=sync)
        td_d, _ = timed(lambda: dendrogram_d.filter_regions(100), sync=sync)
        same = np.array_equal(cupy.asnumpy(ours_d.parents), ours.parents) and np.array_equal(
            cupy.asnumpy(ours_d.weights), ours.weights
        )
        line += f"; CuPy: {ta_d:.1f} ms, {td_d:.1f} ms, ratio {ta_d / td_d:.2f}, same arrays as NumPy's {same}"
    if hg is not None and side == min(sides):
        graph, weights = higra_graph(image)
        qfz, altitudes = hg.quasi_flat_zone_hierarchy(graph, weights)
        start = time.perf_counter()
        peer, peer_altitudes = hg.filter_small_nodes_from_tree(qfz, altitudes.copy(), 100, graph, canonize_tree=False)
        th = (time.perf_counter() - start) * 1e3
        same = np.array_equal(ours.parents, peer.parents()) and np.array_equal(
            ours.weights, peer_altitudes[image.size :]
        )
        line += f"; Higra {hg.__version__ if hasattr(hg, '__version__') else ''} {th:.0f} ms, identical {same}"
    print(line, flush=True)

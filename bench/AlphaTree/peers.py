#!/usr/bin/env python3
"""Higra's quasi-flat-zone hierarchy (the alpha-tree) on the images that CudaAlphaTreeBenchmark wrote with
--write-inputs: the same pixel graph (4/8/6/26-adjacency), the same dissimilarity (|a - b|, L2 for RGB), timed from
the NumPy image to the tree (graph, edge weights, hierarchy), one thread as Higra runs. Records the number of nodes,
which must equal the module's (the canonical alpha-tree is unique).

    bench/AlphaTree/peers.py DATA_DIR OUT_JSON [--max-pixels N]
"""

import itertools
import json
import sys
import time
from importlib import metadata

import higra as hg
import numpy as np


def graph_of(shape, connectivity):
    if connectivity == 4:
        return hg.get_4_adjacency_graph(shape)
    if connectivity == 8:
        return hg.get_8_adjacency_graph(shape)
    if connectivity == 6:
        return hg.get_6_adjacency_graph(shape)
    offsets = [o for o in itertools.product((-1, 0, 1), repeat=3) if any(o)]
    return hg.get_nd_regular_graph(shape, offsets)


def main():
    data, out = sys.argv[1], sys.argv[2]
    max_pixels = int(sys.argv[sys.argv.index("--max-pixels") + 1]) if "--max-pixels" in sys.argv else 4096 * 4096
    results = []
    for line in open(f"{data}/inputs.txt"):
        name, kind, nx, ny, nz, components, connectivity = line.split()
        nx, ny, nz, components, connectivity = map(int, (nx, ny, nz, components, connectivity))
        pixels = nx * ny * nz
        if pixels > max_pixels:
            print(f"{name} {connectivity}-conn: skipped ({pixels} pixels > {max_pixels})", flush=True)
            continue
        dtype = np.uint16 if kind == "uint16" else np.uint8
        shape = (ny, nx) if nz == 1 else (nz, ny, nx)
        values = np.fromfile(f"{data}/{name}.raw", dtype=dtype).reshape(
            shape + ((components,) if components > 1 else ())
        )
        start = time.perf_counter()
        graph = graph_of(shape, connectivity)
        weights = hg.weight_graph(
            graph, values.astype(np.float64), hg.WeightFunction.L2 if components > 1 else hg.WeightFunction.L1
        )
        tree, _ = hg.quasi_flat_zone_hierarchy(graph, weights)
        seconds = time.perf_counter() - start
        nodes = int(tree.num_vertices())
        print(
            f"{name:<22} {kind:<6} {connectivity:2d}-conn {pixels:11d} px  Higra {seconds * 1e3:10.1f} ms  "
            f"nodes {nodes}",
            flush=True,
        )
        results.append(
            {
                "name": name,
                "type": kind,
                "connectivity": connectivity,
                "pixels": pixels,
                "higra_ms": seconds * 1e3,
                "nodes": nodes,
            }
        )
        del graph, weights, tree
    with open(out, "w") as f:
        json.dump({"higra_version": metadata.version("higra"), "results": results}, f, indent=1)


if __name__ == "__main__":
    main()

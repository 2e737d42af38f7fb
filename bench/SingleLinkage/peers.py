#!/usr/bin/env python3
"""Peers of the single-linkage benchmark, on the GPU machine's CPU.

  bench/SingleLinkage/peers.py prepare DATA
    writes the graph inputs of CudaDendrogramBenchmark (--graph) and times SciPy:
      points-10k: the complete graph of 10,000 uniform 3D points, weights = scipy.spatial.distance.pdist (the same
                  doubles SciPy clusters), and scipy.cluster.hierarchy.linkage(pdist, 'single') on them;
      knn-3M:     a connected graph on 3,000,000 uniform 3D points: the 10 nearest neighbours of every point
                  (scipy.spatial.cKDTree) plus a chain through the points in x order, Euclidean weights.
  bench/SingleLinkage/peers.py compare DATA   compares the module's linkage matrix of points-10k with SciPy's.
Writes DATA/sl_peers.json."""

import json
import sys
import time

import numpy as np
from scipy.cluster.hierarchy import linkage
from scipy.spatial import cKDTree
from scipy.spatial.distance import pdist


def write_graph(path, n, u, v, w):
    with open(path, "wb") as f:
        np.array([n, len(u)], dtype=np.uint64).tofile(f)
        np.asarray(u, dtype=np.uint32).tofile(f)
        np.asarray(v, dtype=np.uint32).tofile(f)
        np.asarray(w, dtype=np.float64).tofile(f)


def prepare(data):
    rng = np.random.default_rng(5)
    out = {}
    n = 10000
    points = rng.random((n, 3))
    d = pdist(points)
    times = []
    for _ in range(3):
        t = time.perf_counter()
        z = linkage(d, method="single")
        times.append((time.perf_counter() - t) * 1e3)
    out["points-10k"] = {"vertices": n, "edges": int(d.size), "scipy_linkage_ms": sorted(times)[1]}
    np.save(f"{data}/points-10k-scipy-z.npy", z)
    u, v = np.triu_indices(n, 1)
    write_graph(f"{data}/points-10k.bin", n, u, v, d)
    del u, v, d

    n = 3000000
    points = rng.random((n, 3))
    t = time.perf_counter()
    dist, idx = cKDTree(points).query(points, k=11, workers=-1)
    knn_ms = (time.perf_counter() - t) * 1e3
    u = np.repeat(np.arange(n, dtype=np.uint32), 10)
    v = idx[:, 1:].reshape(-1).astype(np.uint32)
    w = dist[:, 1:].reshape(-1)
    order = np.argsort(points[:, 0], kind="stable")
    cu, cv = order[:-1], order[1:]
    cw = np.sqrt(((points[cu] - points[cv]) ** 2).sum(axis=1))
    write_graph(f"{data}/knn-3M.bin", n, np.concatenate([u, cu]), np.concatenate([v, cv]), np.concatenate([w, cw]))
    out["knn-3M"] = {"vertices": n, "edges": int(u.size + cu.size), "scipy_ckdtree_knn_ms": knn_ms}
    with open(f"{data}/sl_peers.json", "w") as f:
        json.dump(out, f, indent=1)
    print(json.dumps(out, indent=1))


def compare(data):
    with open(f"{data}/sl_peers.json") as f:
        out = json.load(f)
    ours = np.fromfile(f"{data}/points-10k-module-z.bin", dtype=np.float64).reshape(-1, 4)
    theirs = np.load(f"{data}/points-10k-scipy-z.npy")
    same_children = bool((np.sort(ours[:, :2], axis=1) == np.sort(theirs[:, :2], axis=1)).all())
    out["points-10k"]["linkage_children_equal"] = same_children
    out["points-10k"]["linkage_distances_equal"] = bool((ours[:, 2] == theirs[:, 2]).all())
    out["points-10k"]["linkage_sizes_equal"] = bool((ours[:, 3] == theirs[:, 3]).all())
    with open(f"{data}/sl_peers.json", "w") as f:
        json.dump(out, f, indent=1)
    print(json.dumps(out["points-10k"], indent=1))


if __name__ == "__main__":
    {"prepare": prepare, "compare": compare}[sys.argv[1]](sys.argv[2])

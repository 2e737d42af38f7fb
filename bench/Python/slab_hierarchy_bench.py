#!/usr/bin/env python3
"""The watershed hierarchy by area of a CT-like volume computed slab by slab from a Zarr store (chseg.slabs.hierarchy,
out of core on one device; chseg.dask.hierarchy on the threaded scheduler), with cuts at three thresholds written to
Zarr, after a warm-up on a small volume (CuPy compiling its kernels on a fresh machine), against
chseg.watershed_hierarchy of the whole volume in memory and Higra's watershed_hierarchy_by_area on the same graph, in
one process.

    slab_hierarchy_bench.py OUT.json --shape Z Y X --slab S [--work DIR] [--no-higra] [--cluster-gpus N] [--dynamics]
                            [--no-whole] [--no-dask] [--nodes]

With --nodes, also the area, volume, height and dynamics of every node of the hierarchy by area
(SlabHierarchy.node_attributes, into its store), checked node by node against Dendrogram.attribute of the whole
volume's hierarchy and against Higra's attribute_area / _volume / _height / _dynamics of its own hierarchy (timed).

With --cluster-gpus N, also chseg.dask.hierarchy on a local cluster of N worker processes, process i seeing only
GPU i (bench/Python/dask_bench.py's spread_cluster).

The volume: grains (balls of random grey levels 80..200) in a matrix of 40, with noise of +-6 on every voxel (uint8),
written to DIR/volume.zarr in chunks of one slab. Recorded per step: wall seconds, the process's peak resident memory
after it (ru_maxrss: the steps run in the order listed, so a step's figure includes the ones before), the device's
peak used memory sampled by nvidia-smi every 50 ms during it, and the bytes of the stores it wrote. Checks: the
gathered slab hierarchy equals chseg.watershed_hierarchy of the whole volume array by array, every cut equals that
dendrogram's cut, and Higra's hierarchy (canonize_tree=False, edges in the module's order) has its parents and
altitudes.
"""

import argparse
import json
import os
import resource
import shutil
import subprocess
import threading
import time

import numpy as np


def volume_of(shape, seed=65):
    rng = np.random.default_rng(seed)
    z, y, x = shape
    out = np.full(shape, 40, np.int16)
    count = max(4, int(np.prod(shape) / 6000))
    centres = rng.random((count, 3)) * np.array(shape)
    radii = rng.uniform(3, 9, count)
    levels = rng.integers(80, 200, count)
    for (cz, cy, cx), r, v in zip(centres, radii, levels):
        lo = [max(0, int(c - r)) for c in (cz, cy, cx)]
        hi = [min(s, int(c + r) + 1) for c, s in zip((cz, cy, cx), shape)]
        gz, gy, gx = np.ogrid[lo[0] : hi[0], lo[1] : hi[1], lo[2] : hi[2]]
        inside = (gz - cz) ** 2 + (gy - cy) ** 2 + (gx - cx) ** 2 <= r * r
        out[lo[0] : hi[0], lo[1] : hi[1], lo[2] : hi[2]][inside] = v
    out += rng.integers(-6, 7, shape).astype(np.int16)
    return np.clip(out, 0, 255).astype(np.uint8)


class DevicePeak:
    """The largest used memory (MiB) of the most loaded device while it runs, from nvidia-smi every 50 ms (None
    without it)."""

    def __enter__(self):
        self.peak, self.stop = None, threading.Event()
        if shutil.which("nvidia-smi"):
            self.thread = threading.Thread(target=self.poll, daemon=True)
            self.thread.start()
        return self

    def poll(self):
        while not self.stop.is_set():
            out = subprocess.run(
                ["nvidia-smi", "--query-gpu=memory.used", "--format=csv,noheader,nounits"],
                capture_output=True,
                text=True,
            ).stdout.strip()
            if out:
                self.peak = max([self.peak or 0] + [int(line) for line in out.splitlines()])
            self.stop.wait(0.05)

    def __exit__(self, *exc):
        self.stop.set()
        if hasattr(self, "thread"):
            self.thread.join()


def du(path):
    return sum(os.path.getsize(os.path.join(d, f)) for d, _, files in os.walk(path) for f in files)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--shape", type=int, nargs=3, default=[64, 128, 128])
    ap.add_argument("--slab", type=int, default=16)
    ap.add_argument("--work", default="/tmp/slab-bench")
    ap.add_argument("--no-higra", action="store_true")
    ap.add_argument("--cluster-gpus", type=int, default=0)
    ap.add_argument("--dynamics", action="store_true", help="also the watershed hierarchy by dynamics")
    ap.add_argument(
        "--no-whole",
        action="store_true",
        help="no whole-volume hierarchy, gather nor checks (sizes a device cannot hold whole)",
    )
    ap.add_argument("--no-dask", action="store_true", help="no chseg.dask.hierarchy on the threaded scheduler")
    ap.add_argument("--nodes", action="store_true", help="also the node attributes of the hierarchy by area")
    args = ap.parse_args()
    if args.no_whole and not args.no_higra:
        ap.error("--no-whole needs --no-higra (Higra's hierarchies are checked against the whole volume's)")

    import chseg
    import chseg.dask
    import chseg.slabs
    import zarr

    shape = tuple(args.shape)
    shutil.rmtree(args.work, ignore_errors=True)
    os.makedirs(args.work)
    volume = volume_of(shape)
    source = zarr.create_array(
        store=os.path.join(args.work, "volume.zarr"), shape=shape, chunks=(args.slab,) + shape[1:], dtype=np.uint8
    )
    source[:] = volume
    del volume
    source = zarr.open_array(os.path.join(args.work, "volume.zarr"), mode="r")
    n = int(np.prod(shape))
    results = {"shape": list(shape), "slab": args.slab, "voxels": n, "steps": {}}

    def step(name, fn, store=None):
        with DevicePeak() as dev:
            t = time.perf_counter()
            value = fn()
            seconds = time.perf_counter() - t
        results["steps"][name] = {
            "seconds": seconds,
            "voxels_per_second": n / seconds,
            "peak_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
            "device_peak_mib": dev.peak,
            "store_bytes": du(store) if store else None,
        }
        print(
            f"{name:28s} {seconds:9.2f} s  rss {results['steps'][name]['peak_rss_mib']:8.0f} MiB  "
            f"device {dev.peak} MiB",
            flush=True,
        )
        with open(args.out, "w") as f:  # after every step: a run cut short keeps what it measured
            json.dump(results, f, indent=1)
        return value

    def warm_up():
        # CuPy compiles its kernels (and the module's) on their first use on a machine: a small volume takes that
        small = volume_of((2 * 8, 64, 64))
        for attribute in ("area", "dynamics"):
            w = chseg.slabs.hierarchy(small, 8, attribute, store=os.path.join(args.work, "warm-up"))
            w.cut(50)
            w.clusters(10)
        chseg.dask.hierarchy(small, "area")
        chseg.watershed_hierarchy(small, "area").cut(50)
        if args.nodes:
            w.node_attributes()

    step("warm-up (16 x 64 x 64)", warm_up)
    store = os.path.join(args.work, "hierarchy")
    h = step(
        "slabs.hierarchy area",
        lambda: chseg.slabs.hierarchy(source, args.slab, "area", store=store),
        store,
    )
    results["closure_bytes"] = h.closure_bytes
    results["store_bytes_per_voxel"] = du(store) / n
    cut_store = os.path.join(args.work, "cuts.zarr")
    cut_out = zarr.create_array(store=cut_store, shape=shape, chunks=(args.slab,) + shape[1:], dtype=np.uint32)
    thresholds = [50, 500, 5000]

    def cuts():
        labels = {}
        for t in thresholds:
            h.cut(t, out=cut_out)
            labels[t] = int(np.asarray(cut_out[-1:]).max())  # a read-back of the last layer, as a user would check
        return labels

    step("3 cuts to zarr", cuts, cut_store)
    names = ("area", "volume", "height", "dynamics")
    if args.nodes:
        before = du(store)
        step("node_attributes (4)", lambda: h.node_attributes(names), store)
        results["steps"]["node_attributes (4)"]["store_bytes"] -= before  # the attributes' own bytes

    def nodes_equal(expected):
        """Each slab's node attributes against arrays over the whole hierarchy's nodes (`expected`: name -> array)."""
        edges = host(ws.edges).astype(np.int64)
        order = np.argsort(edges)
        equal = True
        for s in range(h.num_slabs):
            part = h.part(s)
            rank = order[np.searchsorted(edges[order], part["edge"])]
            equal &= all(bool(np.array_equal(part[k], expected[k][n + rank])) for k in names)
        return equal

    import dask.array as da

    dask_store = os.path.join(args.work, "hierarchy-dask")
    if not args.no_dask:
        step(
            "dask.hierarchy area (threads)",
            lambda: chseg.dask.hierarchy(da.from_zarr(source), "area", store=dask_store),
            dask_store,
        )
    if args.cluster_gpus:
        import distributed
        from dask_bench import spread_cluster

        cluster_store = os.path.join(args.work, "hierarchy-cluster")
        with spread_cluster(args.cluster_gpus, args.cluster_gpus) as cluster, distributed.Client(cluster):
            step(
                f"dask.hierarchy area ({args.cluster_gpus} GPUs)",
                lambda: chseg.dask.hierarchy(da.from_zarr(source), "area", store=cluster_store),
                cluster_store,
            )
        cluster_h = chseg.slabs.SlabHierarchy.open(cluster_store)
        results["cluster_equal"] = all(
            np.array_equal(cluster_h.part(s)[k], h.part(s)[k])
            for s in range(h.num_slabs)
            for k in ("edge", "weight", "altitude")
        )
    whole = None
    host = chseg._arrays.host
    if not args.no_whole:
        whole = source[:]
        ws = step("watershed_hierarchy (whole)", lambda: chseg.watershed_hierarchy(whole, "area"))
        gathered = step("gather", lambda: h.gather())
        results["gather_equal"] = all(
            np.array_equal(host(getattr(gathered, k)), host(getattr(ws, k)))
            for k in ("parents", "weights", "edges", "u", "v")
        )
        results["cuts_equal"] = True
        for t in thresholds:
            h.cut(t, out=cut_out)
            results["cuts_equal"] &= bool(np.array_equal(cut_out[:], host(ws.cut(t))))
        if args.nodes:
            results["nodes_equal"] = nodes_equal({k: ws.attribute(k) for k in names})
        if args.dynamics:
            dyn_store = os.path.join(args.work, "hierarchy-dynamics")
            hd = step(
                "slabs.hierarchy dynamics",
                lambda: chseg.slabs.hierarchy(source, args.slab, "dynamics", store=dyn_store),
                dyn_store,
            )
            wd = step("watershed_hierarchy dynamics (whole)", lambda: chseg.watershed_hierarchy(whole, "dynamics"))
            gd = hd.gather()
            results["dynamics_gather_equal"] = all(
                np.array_equal(host(getattr(gd, k)), host(getattr(wd, k))) for k in ("parents", "weights", "edges")
            )
    if not args.no_higra:
        import higra as hg

        # Higra's graph with the module's edge order (voxel, then the slot's offset: x, y, z), so that ties break alike
        index = np.arange(n, dtype=np.int64).reshape(shape)
        lo, hi, key = [], [], []
        for slot, axis in enumerate((2, 1, 0)):
            a = [slice(None)] * 3
            b = [slice(None)] * 3
            a[axis], b[axis] = slice(0, -1), slice(1, None)
            p = index[tuple(a)].ravel()
            lo.append(p)
            hi.append(index[tuple(b)].ravel())
            key.append(p * 3 + slot)
        order = np.argsort(np.concatenate(key))
        lo, hi = np.concatenate(lo)[order], np.concatenate(hi)[order]
        graph = hg.UndirectedGraph(n)
        graph.add_edges(lo, hi)
        flat = whole.ravel().astype(np.float64)
        weights = np.abs(flat[lo] - flat[hi])
        tree, alt = step(
            "higra watershed_by_area",
            lambda: hg.watershed_hierarchy_by_area(graph, weights, canonize_tree=False),
        )
        results["higra_equal"] = bool(
            np.array_equal(host(ws.parents), tree.parents()) and np.array_equal(host(ws.weights), alt[n:])
        )
        if args.nodes:
            theirs = step(
                "higra attributes (4)",
                lambda: {k: getattr(hg, f"attribute_{k}")(tree, *([alt] if k != "area" else [])) for k in names},
            )
            results["higra_nodes_equal"] = nodes_equal(theirs)  # Higra's tree has the whole hierarchy's node ids
        if args.dynamics:
            tree, alt = step(
                "higra watershed_by_dynamics",
                lambda: hg.watershed_hierarchy_by_dynamics(graph, weights, canonize_tree=False),
            )
            results["higra_dynamics_equal"] = bool(
                np.array_equal(host(wd.parents), tree.parents()) and np.array_equal(host(wd.weights), alt[n:])
            )
            results["steps"]["slabs.hierarchy dynamics"]["vs_higra"] = (
                results["steps"]["higra watershed_by_dynamics"]["seconds"]
                / results["steps"]["slabs.hierarchy dynamics"]["seconds"]
            )
    for name in (
        "slabs.hierarchy area",
        "dask.hierarchy area (threads)",
        f"dask.hierarchy area ({args.cluster_gpus} GPUs)",
    ):
        if "higra watershed_by_area" in results["steps"] and name in results["steps"]:
            results["steps"][name]["vs_higra"] = (
                results["steps"]["higra watershed_by_area"]["seconds"] / results["steps"][name]["seconds"]
            )
    with open(args.out, "w") as f:
        json.dump(results, f, indent=1)
    print(json.dumps({k: v for k, v in results.items() if k != "steps"}))


if __name__ == "__main__":
    main()

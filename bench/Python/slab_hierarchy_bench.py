#!/usr/bin/env python3
"""The watershed hierarchy by area of a CT-like volume computed slab by slab from a Zarr store (chseg.slabs.hierarchy,
out of core on one device; chseg.dask.hierarchy on the threaded scheduler), with cuts at three thresholds written to
Zarr, after a warm-up on a small volume (CuPy compiling its kernels on a fresh machine), against
chseg.watershed_hierarchy of the whole volume in memory and Higra's watershed_hierarchy_by_area on the same graph, in
one process.

    slab_hierarchy_bench.py OUT.json --shape Z Y X --slab S [--work DIR] [--no-higra] [--cluster-gpus N] [--dynamics]
                            [--no-whole] [--no-dask] [--nodes] [--thresholds T ...] [--reuse] [--profile]
                            [--single-linkage [ALPHA ...]] [--no-area]

With --reuse, what an earlier call left in DIR is taken instead of made again (the volume, the hierarchies by area
and dynamics where their stores are complete, the node attributes where the store holds them; such steps are
recorded as reused): a volume too large for one call's time limit runs over several calls on one machine.

With --profile, the hierarchy by area runs once more (into a store of its own, after the timed steps) with the device
synchronised around each step of the passes and of a tree (python/chseg/_slab_passes.py, _slab_hierarchy.py): each
step's calls and inclusive seconds (a step inside another counts in both), where the time of a slab goes.

With --single-linkage, also the single-linkage hierarchy (attribute None) over slabs and its cuts at the alphas
given (the alpha-tree's alpha-cuts) to Zarr; with --no-area, only those (no hierarchy by area, no check).

With --nodes, also the area, volume, height and dynamics of every node of the hierarchy by area
(SlabHierarchy.node_attributes, into its store), checked node by node against Dendrogram.attribute of the whole
volume's hierarchy and against Higra's attribute_area / _volume / _height / _dynamics of its own hierarchy (timed).

With --cluster-gpus N, also chseg.dask.hierarchy on a local cluster of N worker processes, process i seeing only
GPU i (bench/Python/dask_bench.py's spread_cluster).

The volume: grains (balls of random grey levels 80..200, radii 3..9, one per 6,000 voxels) in a matrix of 40, with
noise of +-6 on every voxel (uint8), written to DIR/volume.zarr in chunks of one slab by a process a core (the
grains drawn alike in each, each slab's noise from its own generator: a process holds one slab). Recorded per step: wall
seconds, the process's peak resident memory after it (ru_maxrss: the steps run in the order listed, so a step's
figure includes the ones before), the step's own peak resident memory by kind (anonymous, file-backed, shared; from
/proc/self/status every 50 ms), the device's peak used memory sampled by nvidia-smi every 50 ms during it, and the
bytes of the stores it wrote. Checks: the
gathered slab hierarchy equals chseg.watershed_hierarchy of the whole volume array by array, every cut equals that
dendrogram's cut, and Higra's hierarchy (canonize_tree=False, edges in the module's order) has its parents and
altitudes.
"""

import argparse
import functools
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


@functools.lru_cache(maxsize=2)
def _grains(shape, seed):
    """volume_of's grains: centres, radii and grey levels, drawn once (each process of write_volume draws them)."""
    rng = np.random.default_rng(seed)
    count = max(4, int(np.prod(shape) / 6000))
    return rng.random((count, 3)) * np.array(shape), rng.uniform(3, 9, count), rng.integers(80, 200, count)


def _write_slab(path, shape, slab, seed, a):
    """The slab of write_volume's volume that starts at layer a, written into the Zarr array at `path`."""
    import zarr

    centres, radii, levels = _grains(tuple(shape), seed)
    b = min(shape[0], a + slab)
    block = np.full((b - a,) + tuple(shape[1:]), 40, np.int16)
    near = np.flatnonzero((centres[:, 0] + radii >= a) & (centres[:, 0] - radii < b))
    for (cz, cy, cx), r, v in zip(centres[near], radii[near], levels[near]):
        lo = [max(a, int(cz - r)), max(0, int(cy - r)), max(0, int(cx - r))]
        hi = [min(b, int(cz + r) + 1), min(shape[1], int(cy + r) + 1), min(shape[2], int(cx + r) + 1)]
        if lo[0] >= hi[0]:
            continue
        gz, gy, gx = np.ogrid[lo[0] : hi[0], lo[1] : hi[1], lo[2] : hi[2]]
        inside = (gz - cz) ** 2 + (gy - cy) ** 2 + (gx - cx) ** 2 <= r * r
        block[lo[0] - a : hi[0] - a, lo[1] : hi[1], lo[2] : hi[2]][inside] = v
    block += np.random.default_rng([seed, a]).integers(-6, 7, block.shape, dtype=np.int8)
    zarr.open_array(path, mode="r+")[a:b] = np.clip(block, 0, 255).astype(np.uint8)


def write_volume(path, shape, slab, seed=65, processes=None):
    """volume_of's kind of volume written slab by slab into a new Zarr array at `path` (a directory; its attribute
    'complete' set last): the same grains as volume_of(shape, seed), each slab's noise from a generator of its own;
    slabs made by `processes` processes (default: one a core; 0: in this one), each writing its own chunks (drawing
    the grains is Python's work: threads took 329 s for 2048^3 on the H200 machine's 16 cores)."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    import zarr

    shape = tuple(int(x) for x in shape)
    array = zarr.create_array(
        store=path, shape=shape, chunks=(slab,) + tuple(shape[1:]), dtype=np.uint8, overwrite=True
    )
    starts = range(0, shape[0], slab)
    processes = min(len(starts), os.cpu_count() or 1) if processes is None else processes
    if processes:
        context = multiprocessing.get_context("spawn")  # no fork of a process that may hold a CUDA context
        with ProcessPoolExecutor(processes, mp_context=context) as pool:
            list(pool.map(_write_slab, *zip(*[(path, shape, slab, seed, a) for a in starts])))
    else:
        for a in starts:
            _write_slab(path, shape, slab, seed, a)
    array.attrs["complete"] = True
    return array


class _Sampled:
    """A context in which a thread calls self.sample() every 50 ms, and once more at its end."""

    def __enter__(self):
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self.poll, daemon=True)
        self.thread.start()
        return self

    def poll(self):
        while not self.stop.is_set():
            self.sample()
            self.stop.wait(0.05)

    def __exit__(self, *exc):
        self.stop.set()
        self.thread.join()
        self.sample()


class DevicePeak(_Sampled):
    """The largest used memory (MiB) of the most loaded device while it runs, from nvidia-smi (None without it)."""

    def __init__(self):
        self.peak, self.smi = None, shutil.which("nvidia-smi")

    def sample(self):
        if not self.smi:
            return
        out = subprocess.run(
            [self.smi, "--query-gpu=memory.used", "--format=csv,noheader,nounits"], capture_output=True, text=True
        ).stdout.strip()
        if out:
            self.peak = max([self.peak or 0] + [int(line) for line in out.splitlines()])


class HostPeak(_Sampled):
    """The largest resident memory of this process while it runs, in MiB, split as /proc/self/status splits it
    (anonymous, file-backed, shared memory; empty where /proc is not there): ru_maxrss gives the total peak only."""

    FIELDS = {"VmRSS": "rss", "RssAnon": "anon", "RssFile": "file", "RssShmem": "shmem"}

    def __init__(self):
        self.peak = {}

    def sample(self):
        try:
            with open("/proc/self/status") as f:
                lines = f.read().splitlines()
        except OSError:
            return
        for line in lines:
            key, _, value = line.partition(":")
            if key in self.FIELDS:
                name = self.FIELDS[key]
                self.peak[name] = max(self.peak.get(name, 0), int(value.split()[0]) // 1024)


def du(path):
    return sum(os.path.getsize(os.path.join(d, f)) for d, _, files in os.walk(path) for f in files)


def profiled(run):
    """run() with the device synchronised around each step of the slab passes and of a tree, and each step's calls
    and inclusive seconds: {name: {"calls": c, "seconds": t}}."""
    import chseg._slab_hierarchy as sh
    import chseg._slab_passes as sp

    try:
        import cupy

        def sync():
            cupy.cuda.Device().synchronize()
    except ImportError:

        def sync():
            pass

    totals = {}

    def timed(fn, name):
        host = name.endswith((".fetch", ".write"))  # on the reader's and the writer's threads: not synchronised

        def run_timed(*args, **kwargs):
            if not host:
                sync()
            start = time.perf_counter()
            value = fn(*args, **kwargs)
            if not host:
                sync()
            entry = totals.setdefault(name, {"calls": 0, "seconds": 0.0})
            entry["calls"] += 1
            entry["seconds"] += time.perf_counter() - start
            return value

        return run_timed

    patches = [(sp, k) for k in ("_border_step", "_right_step", "_left_step", "_owned", "_emit")]
    patches += [(sh, k) for k in ("_slab_tree", "_euler_preorder", "_range_max", "_engine", "_children", "_merged")]
    patches += [
        (sh._Tree, k)
        for k in ("__init__", "_build", "closure", "_plateau_max", "_subtree_sums", "new_weights", "_runs", "sides")
    ]
    patches += [(sh._Spec, k) for k in ("read", "emit", "fetch")]
    patches += [(sh._store, k) for k in ("encode", "write")]
    saved = [(owner, k, getattr(owner, k)) for owner, k in patches]
    try:
        for owner, k, fn in saved:
            setattr(owner, k, timed(fn, f"{getattr(owner, '__name__', '')}.{k}"))
        run()
    finally:
        for owner, k, fn in saved:
            setattr(owner, k, fn)
    return totals


def single_linkage_steps(args, source, results, step, n):
    """The single-linkage hierarchy over slabs into a store of its own, and its cuts at the alphas (each the
    alpha-tree's alpha-cut: the regions joined by edges of weight at most alpha) into one Zarr array in turn."""
    import chseg.slabs
    import zarr

    store = os.path.join(args.work, "hierarchy-single-linkage")
    shutil.rmtree(store, ignore_errors=True)
    h = step(
        "slabs.hierarchy single linkage",
        lambda: chseg.slabs.hierarchy(source, args.slab, None, store=store),
        store,
    )
    results["single_linkage_store_bytes_per_voxel"] = du(store) / n
    results["single_linkage_closure_bytes"] = h.closure_bytes
    if not args.single_linkage:
        return
    cut_store = os.path.join(args.work, "alpha-cuts.zarr")
    out = zarr.create_array(
        store=cut_store,
        shape=source.shape,
        chunks=(args.slab,) + tuple(source.shape[1:]),
        dtype=np.uint32,
        overwrite=True,
    )

    def cuts():
        labels = {}
        for alpha in args.single_linkage:
            h.cut(alpha, out=out)
            labels[alpha] = int(np.asarray(out[-1:]).max())  # a read-back of the last layer
        return labels

    name = f"{len(args.single_linkage)} alpha cuts to zarr"
    results["alpha_cut_labels_last_layer"] = step(name, cuts, cut_store)
    if not args.no_whole:  # each alpha-cut against the whole volume's single-linkage dendrogram's cut
        whole = chseg.single_linkage(source[:])
        results["alpha_cuts_equal"] = True
        for alpha in args.single_linkage:
            h.cut(alpha, out=out)
            results["alpha_cuts_equal"] &= bool(np.array_equal(out[:], chseg._arrays.host(whole.cut(alpha))))


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
    ap.add_argument("--thresholds", type=float, nargs="*", default=[50, 500, 5000], help="the cuts' (none: no cut)")
    ap.add_argument("--reuse", action="store_true", help="take what an earlier call left in --work")
    ap.add_argument("--profile", action="store_true", help="the hierarchy by area again, its steps timed")
    ap.add_argument(
        "--single-linkage",
        type=float,
        nargs="*",
        default=None,
        help="also the single-linkage hierarchy (attribute None) and its cuts at these alphas (alpha-cuts) to Zarr",
    )
    ap.add_argument("--no-area", action="store_true", help="only the single-linkage steps (no hierarchy by area)")
    args = ap.parse_args()
    if args.no_whole and not args.no_higra:
        ap.error("--no-whole needs --no-higra (Higra's hierarchies are checked against the whole volume's)")
    if args.no_area and not (args.no_whole and args.no_dask and args.single_linkage is not None):
        ap.error("--no-area needs --single-linkage, --no-whole, --no-higra and --no-dask")

    import chseg
    import chseg.dask
    import chseg.slabs
    import zarr

    shape = tuple(args.shape)
    if not args.reuse:
        shutil.rmtree(args.work, ignore_errors=True)
    os.makedirs(args.work, exist_ok=True)
    n = int(np.prod(shape))
    results = {"shape": list(shape), "slab": args.slab, "voxels": n, "steps": {}}
    volume_path = os.path.join(args.work, "volume.zarr")

    def reusable_volume():
        try:
            old = zarr.open_array(volume_path, mode="r")
        except Exception:  # noqa: BLE001 - none, or not an array: made again
            return False
        return old.shape == shape and old.chunks[0] == args.slab and bool(old.attrs.get("complete"))

    if args.reuse and reusable_volume():
        results["volume"] = "reused"
    else:
        start = time.perf_counter()
        write_volume(volume_path, shape, args.slab)
        results["volume_seconds"] = time.perf_counter() - start
    source = zarr.open_array(volume_path, mode="r")

    def reused(store, attribute):
        """The complete hierarchy by `attribute` an earlier call left in `store` (with --reuse), else None."""
        if not args.reuse:
            return None
        try:
            old = chseg.slabs.SlabHierarchy.open(store)
        except ValueError:
            return None
        same = old.shape == shape and old.attribute == attribute and old.bounds[0] == (0, min(args.slab, shape[0]))
        return old if same else None

    def step(name, fn, store=None):
        with DevicePeak() as dev, HostPeak() as host_peak:
            t = time.perf_counter()
            value = fn()
            seconds = time.perf_counter() - t
        results["steps"][name] = {
            "seconds": seconds,
            "voxels_per_second": n / seconds,
            "peak_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
            "host_peak_mib": host_peak.peak,  # this step's own peaks, by kind of memory
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

    def hierarchy_step(attribute, store):
        """chseg.slabs.hierarchy by `attribute` into `store`, timed, or what an earlier call left there (--reuse)."""
        name = f"slabs.hierarchy {attribute}"
        old = reused(store, attribute)
        if old is not None:
            results["steps"][name] = "reused"
            return old
        return step(name, lambda: chseg.slabs.hierarchy(source, args.slab, attribute, store=store), store)

    step("warm-up (16 x 64 x 64)", warm_up)
    if args.single_linkage is not None:
        single_linkage_steps(args, source, results, step, n)
        if args.no_area:
            print(json.dumps({k: v for k, v in results.items() if k != "steps"}))
            return
    store = os.path.join(args.work, "hierarchy")
    h = hierarchy_step("area", store)
    if isinstance(results["steps"]["slabs.hierarchy area"], dict):
        results["closure_bytes"] = h.closure_bytes
        results["store_bytes_per_voxel"] = du(store) / n
    if args.profile:
        profile_store = os.path.join(args.work, "hierarchy-profiled")
        shutil.rmtree(profile_store, ignore_errors=True)
        results["profile"] = profiled(lambda: chseg.slabs.hierarchy(source, args.slab, "area", store=profile_store))
        shutil.rmtree(profile_store, ignore_errors=True)
        for name, entry in sorted(results["profile"].items(), key=lambda item: -item[1]["seconds"]):
            print(f"  {name:32s} {entry['calls']:6d} calls {entry['seconds']:9.2f} s", flush=True)
    cut_store = os.path.join(args.work, "cuts.zarr")
    cut_out = zarr.create_array(
        store=cut_store, shape=shape, chunks=(args.slab,) + shape[1:], dtype=np.uint32, overwrite=True
    )
    thresholds = args.thresholds

    def cuts():
        labels = {}
        for t in thresholds:
            h.cut(t, out=cut_out)
            labels[t] = int(np.asarray(cut_out[-1:]).max())  # a read-back of the last layer, as a user would check
        return labels

    if thresholds:
        results["cut_labels_last_layer"] = step(f"{len(thresholds)} cuts to zarr", cuts, cut_store)
    names = ("area", "volume", "height", "dynamics")
    if args.nodes and set(h.node_names) >= set(names):
        results["steps"]["node_attributes (4)"] = "reused"
    elif args.nodes:
        before = du(store)
        step("node_attributes (4)", lambda: h.node_attributes(names), store)
        results["steps"]["node_attributes (4)"]["store_bytes"] -= before  # the attributes' own bytes
    hd = hierarchy_step("dynamics", os.path.join(args.work, "hierarchy-dynamics")) if args.dynamics else None

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
        for t in thresholds or [500]:
            h.cut(t, out=cut_out)
            results["cuts_equal"] &= bool(np.array_equal(cut_out[:], host(ws.cut(t))))
        if args.nodes:
            results["nodes_equal"] = nodes_equal({k: ws.attribute(k) for k in names})
        if hd is not None:
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
    for name, peer in (
        ("slabs.hierarchy area", "higra watershed_by_area"),
        ("dask.hierarchy area (threads)", "higra watershed_by_area"),
        (f"dask.hierarchy area ({args.cluster_gpus} GPUs)", "higra watershed_by_area"),
        ("slabs.hierarchy dynamics", "higra watershed_by_dynamics"),
    ):
        ours, theirs = results["steps"].get(name), results["steps"].get(peer)
        if isinstance(ours, dict) and isinstance(theirs, dict):  # both measured in this call (not reused)
            ours["vs_higra"] = theirs["seconds"] / ours["seconds"]
    with open(args.out, "w") as f:
        json.dump(results, f, indent=1)
    print(json.dumps({k: v for k, v in results.items() if k != "steps"}))


if __name__ == "__main__":
    main()

"""Benchmark of the chseg package on the GPU machine, peers in the same run (issue 32):

- chseg.label on CuPy arrays (512^3 and 4096^2 binary blobs, face connectivity) against cupyx.scipy.ndimage.label and
  cuCIM's skimage.measure.label, and the same chseg.label on the NumPy copy of the array (host round trip);
- chseg.alpha_tree on a NumPy 4096^2 8-bit image (4-connected) against Higra's quasi_flat_zone_hierarchy.

Times: medians of --reps runs after one warm-up, host clock around a call that returns when its outputs are ready
(device synchronised for CuPy). Every result is checked against the peers' (same partition, same node count).
Writes a JSON file and prints a Markdown table. Usage: python chseg_bench.py OUT.json [--reps 7] [--quick]"""

import argparse
import json
import platform
import statistics
import time

import chseg
import numpy as np
from chseg import _chseg


def timed(function, reps, sync=lambda: None):
    function()
    sync()
    times = []
    for _ in range(reps):
        start = time.perf_counter()
        result = function()
        sync()
        times.append((time.perf_counter() - start) * 1e3)
    return statistics.median(times), times, result


def blobs(cupy, shape, sigma, seed):
    from cupyx.scipy import ndimage

    noise = cupy.random.default_rng(seed).random(shape, dtype=cupy.float32)
    smooth = ndimage.gaussian_filter(noise, sigma)
    return smooth > float(cupy.median(smooth))


def same_partition_gpu(cupy, a, b):
    """Same count of labels and as many distinct (a, b) pairs: the two label arrays group the voxels alike."""
    a = a.ravel().astype(cupy.uint64)
    b = b.ravel().astype(cupy.uint64)
    na, nb = int(cupy.unique(a).size), int(cupy.unique(b).size)
    pairs = int(cupy.unique(a * (int(b.max()) + 1) + b).size)
    return na == nb == pairs


def bench_label(cupy, rows, reps, shape, sigma):
    from cupyx.scipy import ndimage as cndi

    image = blobs(cupy, shape, sigma, 1)
    host = cupy.asnumpy(image)
    sync = cupy.cuda.get_current_stream().synchronize
    name = "x".join(map(str, shape))
    before = _chseg.host_transfer_bytes()
    ms, times, ours = timed(lambda: chseg.label(image), reps, sync)
    host_bytes = _chseg.host_transfer_bytes() - before
    count = int(ours.max())
    rows.append(
        {
            "case": f"label {name}",
            "implementation": "chseg.label, CuPy in and out",
            "ms": ms,
            "times": times,
            "objects": count,
            "host_link_bytes": host_bytes,
        }
    )
    ms, times, host_labels = timed(lambda: chseg.label(host), reps)
    rows.append(
        {
            "case": f"label {name}",
            "implementation": "chseg.label, NumPy in and out (host round trip)",
            "ms": ms,
            "times": times,
            "objects": int(host_labels.max()),
            "same_as_cupy_path": bool(np.array_equal(host_labels, cupy.asnumpy(ours))),
        }
    )
    ms, times, (peer, n) = timed(lambda: cndi.label(image), reps, sync)
    rows.append(
        {
            "case": f"label {name}",
            "implementation": "cupyx.scipy.ndimage.label",
            "ms": ms,
            "times": times,
            "objects": int(n),
            "same_partition": bool(n == count and same_partition_gpu(cupy, ours, peer)),
        }
    )
    try:
        from cucim.skimage.measure import label as cucim_label

        ms, times, peer = timed(lambda: cucim_label(image, connectivity=1), reps, sync)
        rows.append(
            {
                "case": f"label {name}",
                "implementation": "cucim.skimage.measure.label",
                "ms": ms,
                "times": times,
                "objects": int(peer.max()),
                "same_partition": bool(int(peer.max()) == count and same_partition_gpu(cupy, ours, peer)),
            }
        )
    except ImportError as error:
        rows.append({"case": f"label {name}", "implementation": "cucim.skimage.measure.label", "missing": str(error)})


def bench_alpha_tree(rows, reps, side, higra_reps):
    import higra as hg
    from scipy import ndimage

    rng = np.random.default_rng(2)
    smooth = ndimage.gaussian_filter(rng.random((side, side)), 8)
    image = np.clip((smooth - smooth.min()) / np.ptp(smooth) * 200 + rng.normal(0, 6, smooth.shape), 0, 255)
    image = image.astype(np.uint8)
    ms, times, tree = timed(lambda: chseg.alpha_tree(image), reps)
    rows.append(
        {
            "case": f"alpha-tree {side}^2 uint8",
            "implementation": "chseg.alpha_tree, NumPy in and out",
            "ms": ms,
            "times": times,
            "nodes": tree.num_nodes,
        }
    )
    ms, times, tree_cpu = timed(lambda: chseg.alpha_tree(image, backend="cpu"), 1)
    rows.append(
        {
            "case": f"alpha-tree {side}^2 uint8",
            "implementation": "chseg.alpha_tree, CPU reference",
            "ms": ms,
            "times": times,
            "nodes": tree_cpu.num_nodes,
            "identical_to_cuda": bool(
                np.array_equal(tree.parents, tree_cpu.parents) and np.array_equal(tree.levels, tree_cpu.levels)
            ),
        }
    )

    def higra():
        graph = hg.get_4_adjacency_graph(image.shape)
        weights = hg.weight_graph(graph, image.astype(np.float64), hg.WeightFunction.L1)
        return hg.quasi_flat_zone_hierarchy(graph, weights)

    ms, times, (peer, _) = timed(higra, higra_reps)
    rows.append(
        {
            "case": f"alpha-tree {side}^2 uint8",
            "implementation": "Higra quasi_flat_zone_hierarchy (graph, weights and tree)",
            "ms": ms,
            "times": times,
            "nodes": int(peer.num_vertices()),
            "same_node_count": bool(peer.num_vertices() == tree.num_nodes),
        }
    )


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("out")
    parser.add_argument("--reps", type=int, default=7)
    parser.add_argument("--quick", action="store_true", help="small inputs, to check the script")
    args = parser.parse_args()
    import cupy

    rows = []
    volume, plane, side = ((64, 64, 64), (512, 512), 512) if args.quick else ((512, 512, 512), (4096, 4096), 4096)
    bench_label(cupy, rows, args.reps, volume, 4)
    bench_label(cupy, rows, args.reps, plane, 8)
    bench_alpha_tree(rows, args.reps, side, 1 if not args.quick else 2)
    info = {
        "device": _chseg.device_name(0),
        "python": platform.python_version(),
        "numpy": np.__version__,
        "cupy": cupy.__version__,
        "chseg": chseg.__version__,
        "reps": args.reps,
        "rows": rows,
    }
    for module in ("cucim", "higra"):
        try:
            info[module] = __import__(module).__version__
        except (ImportError, AttributeError):
            info[module] = "unknown"
    with open(args.out, "w") as f:
        json.dump(info, f, indent=1)
    print(
        f"{info['device']}, Python {info['python']}, CuPy {info['cupy']}, cuCIM {info['cucim']}, "
        f"median of {args.reps} (Higra and the CPU reference: 1)\n"
    )
    print("| case | implementation | ms | result | check |")
    print("|---|---|---:|---|---|")
    for r in rows:
        if "missing" in r:
            print(f"| {r['case']} | {r['implementation']} | - | not installed | |")
            continue
        result = f"{r.get('objects', r.get('nodes'))} {'objects' if 'objects' in r else 'nodes'}"
        checks = [
            f"{k} {v}"
            for k, v in r.items()
            if k in ("same_partition", "same_as_cupy_path", "identical_to_cuda", "same_node_count", "host_link_bytes")
        ]
        print(f"| {r['case']} | {r['implementation']} | {r['ms']:.2f} | {result} | {', '.join(checks)} |")


if __name__ == "__main__":
    main()

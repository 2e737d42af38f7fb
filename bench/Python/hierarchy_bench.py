"""Benchmark of the hierarchies by attribute (issue 36) on the GPU machine, Higra in the same run:

- chseg.watershed_hierarchy(image, "area" | "volume" | "dynamics") end to end (the image's dendrogram, then the
  hierarchy) on NumPy and on CuPy arrays, the hierarchy step alone (Dendrogram.watershed_hierarchy), and the CPU
  reference once, against Higra's watershed_hierarchy_by_area / _volume / _dynamics (canonize_tree=False) on the same
  graph (built once, outside the timing);
- Dendrogram.filter_regions(t) (area) against Higra's filter_small_nodes_from_tree on the same tree, and
  AlphaTree.filter_regions(t) against the same Higra function on Higra's quasi-flat zone hierarchy (smallest side).

Input: a smooth random relief with noise (uint8, many minima and plateaux), 4-connected, edges weighted |a - b|.
Times: medians of --reps runs after one warm-up (Higra and the CPU reference: one run, no warm-up), host clock around
a call that returns when its outputs are ready (device synchronised for CuPy). Every result is compared with Higra's
array by array (parents and weights) and with the CPU reference's. Writes a JSON file and prints a Markdown table.
Usage: python hierarchy_bench.py OUT.json [--reps 5] [--sides 2048 4096] [--quick]"""

import argparse
import json
import platform
import statistics
import time

import chseg
import numpy as np
from chseg import _chseg


def timed(function, reps, sync=lambda: None, warm=True):
    if warm:
        function()
        sync()
    times = []
    result = None
    for _ in range(reps):
        start = time.perf_counter()
        result = function()
        sync()
        times.append((time.perf_counter() - start) * 1e3)
    return statistics.median(times), times, result


def relief(side, seed=2):
    from scipy import ndimage

    rng = np.random.default_rng(seed)
    smooth = ndimage.gaussian_filter(rng.random((side, side)), 8)
    image = np.clip((smooth - smooth.min()) / np.ptp(smooth) * 200 + rng.normal(0, 6, smooth.shape), 0, 255)
    return image.astype(np.uint8)


def higra_graph(image, compute=np.float64):
    """Higra's graph of the image with its edges in the module's order (pixel, then right before down), so that ties
    break alike, and the weights |a - b|."""
    import higra as hg

    ny, nx = image.shape
    index = np.arange(image.size, dtype=np.int64).reshape(ny, nx)
    right_p, right_q = index[:, :-1].ravel(), index[:, 1:].ravel()
    down_p, down_q = index[:-1, :].ravel(), index[1:, :].ravel()
    p = np.concatenate([right_p, down_p])
    q = np.concatenate([right_q, down_q])
    slot = np.concatenate([np.zeros(right_p.size, np.int64), np.ones(down_p.size, np.int64)])
    order = np.argsort(p * 2 + slot, kind="stable")
    p, q = p[order], q[order]
    graph = hg.UndirectedGraph(image.size)
    graph.add_edges(p, q)
    flat = image.ravel().astype(compute)  # float32 images: |a - b| in float32, as the module computes it
    return graph, np.abs(flat[p] - flat[q]).astype(np.float64)


def bench(rows, side, reps, cupy, float_volume):
    import higra as hg

    image = relief(side)
    name = f"{side}^2 uint8 4-conn"
    sync = cupy.cuda.get_current_stream().synchronize if cupy else None
    device_image = cupy.asarray(image) if cupy else None
    start = time.perf_counter()
    graph, weights = higra_graph(image)
    rows.append(
        {
            "case": name,
            "implementation": "Higra graph and weights (NumPy, not in Higra's rows)",
            "ms": (time.perf_counter() - start) * 1e3,
        }
    )
    ms, times, dendrogram = timed(lambda: chseg.single_linkage(image), reps)
    rows.append(
        {
            "case": name,
            "implementation": "chseg.single_linkage (the input of the hierarchies), NumPy",
            "ms": ms,
            "times": times,
        }
    )
    ms, times, (tree, altitudes) = timed(lambda: hg.bpt_canonical(graph, weights), 1, warm=False)
    rows.append(
        {
            "case": name,
            "implementation": "Higra bpt_canonical",
            "ms": ms,
            "times": times,
            "identical": bool(
                np.array_equal(dendrogram.parents, tree.parents())
                and np.array_equal(dendrogram.weights, altitudes[image.size :])
            ),
        }
    )
    peers = {
        "area": hg.watershed_hierarchy_by_area,
        "volume": hg.watershed_hierarchy_by_volume,
        "dynamics": hg.watershed_hierarchy_by_dynamics,
    }
    for attribute, peer in peers.items():
        case = f"watershed by {attribute}, {name}"
        ms, times, ours = timed(lambda: chseg.watershed_hierarchy(image, attribute), reps)
        rows.append(
            {"case": case, "implementation": "chseg.watershed_hierarchy, NumPy in and out", "ms": ms, "times": times}
        )
        if cupy is None:
            rows.append(
                {"case": case, "implementation": "chseg.watershed_hierarchy, CuPy in and out", "missing": "CuPy"}
            )
        else:
            ms, times, on_device = timed(lambda: chseg.watershed_hierarchy(device_image, attribute), reps, sync)
            rows.append(
                {
                    "case": case,
                    "implementation": "chseg.watershed_hierarchy, CuPy in and out",
                    "ms": ms,
                    "times": times,
                    "identical_to_numpy_path": bool(
                        np.array_equal(on_device.parents.get(), ours.parents)
                        and np.array_equal(on_device.weights.get(), ours.weights)
                    ),
                }
            )
        ms, times, step = timed(lambda: dendrogram.watershed_hierarchy(attribute), reps)
        rows.append(
            {
                "case": case,
                "implementation": "Dendrogram.watershed_hierarchy (the step alone), NumPy",
                "ms": ms,
                "times": times,
            }
        )
        ms, times, cpu = timed(lambda: chseg.watershed_hierarchy(image, attribute, backend="cpu"), 1, warm=False)
        rows.append(
            {
                "case": case,
                "implementation": "chseg.watershed_hierarchy, CPU reference",
                "ms": ms,
                "times": times,
                "identical_to_cuda": bool(
                    np.array_equal(cpu.parents, ours.parents) and np.array_equal(cpu.weights, ours.weights)
                ),
            }
        )
        ms, times, (peer_tree, peer_altitudes) = timed(lambda: peer(graph, weights, canonize_tree=False), 1, warm=False)
        rows.append(
            {
                "case": case,
                "implementation": f"Higra {peer.__name__} (canonize_tree=False)",
                "ms": ms,
                "times": times,
                "identical": bool(
                    np.array_equal(ours.parents, peer_tree.parents())
                    and np.array_equal(ours.weights, peer_altitudes[image.size :])
                ),
            }
        )
    if float_volume:
        # Weights that are not whole numbers: each volume summed exactly in fixed point and rounded once.
        relief_f = image.astype(np.float32) / np.float32(3)
        graph_f, weights_f = higra_graph(relief_f, np.float32)
        case = f"watershed by volume, {side}^2 float32 4-conn"
        ms, times, ours_f = timed(lambda: chseg.watershed_hierarchy(relief_f, "volume"), reps)
        rows.append(
            {
                "case": case,
                "implementation": "chseg.watershed_hierarchy, NumPy in and out (exact volumes rounded once)",
                "ms": ms,
                "times": times,
            }
        )
        dendrogram_f = chseg.single_linkage(relief_f)
        ms, times, _ = timed(lambda: dendrogram_f.watershed_hierarchy("volume"), reps)
        rows.append(
            {
                "case": case,
                "implementation": "Dendrogram.watershed_hierarchy (the step alone), NumPy",
                "ms": ms,
                "times": times,
            }
        )
        ms, times, cpu = timed(lambda: chseg.watershed_hierarchy(relief_f, "volume", backend="cpu"), 1, warm=False)
        rows.append(
            {
                "case": case,
                "implementation": "chseg.watershed_hierarchy, CPU reference",
                "ms": ms,
                "times": times,
                "identical_to_cuda": bool(
                    np.array_equal(cpu.parents, ours_f.parents) and np.array_equal(cpu.weights, ours_f.weights)
                ),
            }
        )
        ms, times, (peer_tree, peer_altitudes) = timed(
            lambda: hg.watershed_hierarchy_by_volume(graph_f, weights_f, canonize_tree=False), 1, warm=False
        )
        same_parents = bool(np.array_equal(ours_f.parents, peer_tree.parents()))
        peer_weights = peer_altitudes[image.size :]
        row = {
            "case": case,
            "implementation": "Higra watershed_hierarchy_by_volume (canonize_tree=False; volumes summed in double)",
            "ms": ms,
            "times": times,
            "identical": bool(same_parents and np.array_equal(ours_f.weights, peer_weights)),
            "same_parents": same_parents,
        }
        if same_parents:
            scale = np.maximum(np.abs(ours_f.weights), np.finfo(np.float64).tiny)
            row["max_relative_weight_difference"] = float(np.max(np.abs(ours_f.weights - peer_weights) / scale))
        rows.append(row)
    if float_volume:
        # The alpha-tree's area filter: Higra filters a tree that is not binary through the binary partition tree of
        # the graph weighted by the tree's saliency; AlphaTree.filter_regions does the same on the GPU.
        case = f"alpha-tree area filter at 100, {name}"
        alpha = chseg.alpha_tree(image)
        ms, times, ours_a = timed(lambda: alpha.filter_regions(100), reps)
        rows.append(
            {
                "case": case,
                "implementation": "AlphaTree.filter_regions (saliency, dendrogram, filter), NumPy",
                "ms": ms,
                "times": times,
            }
        )
        qfz, qfz_altitudes = hg.quasi_flat_zone_hierarchy(graph, weights)
        ms, times, (peer_tree, peer_altitudes) = timed(
            lambda: hg.filter_small_nodes_from_tree(qfz, qfz_altitudes.copy(), 100, graph, canonize_tree=False),
            1,
            warm=False,
        )
        rows.append(
            {
                "case": case,
                "implementation": "Higra filter_small_nodes_from_tree on its quasi-flat zone "
                "hierarchy (canonize_tree=False)",
                "ms": ms,
                "times": times,
                "identical": bool(
                    np.array_equal(ours_a.parents, peer_tree.parents())
                    and np.array_equal(ours_a.weights, peer_altitudes[image.size :])
                ),
            }
        )
    threshold = 100
    case = f"area filter at {threshold}, {name}"
    ms, times, ours = timed(lambda: dendrogram.filter_regions(threshold), reps)
    rows.append({"case": case, "implementation": "Dendrogram.filter_regions, NumPy", "ms": ms, "times": times})
    ms, times, (peer_tree, peer_altitudes) = timed(
        lambda: hg.filter_small_nodes_from_tree(tree, altitudes.copy(), threshold, graph, canonize_tree=False),
        1,
        warm=False,
    )
    rows.append(
        {
            "case": case,
            "implementation": "Higra filter_small_nodes_from_tree (canonize_tree=False)",
            "ms": ms,
            "times": times,
            "identical": bool(
                np.array_equal(ours.parents, peer_tree.parents())
                and np.array_equal(ours.weights, peer_altitudes[image.size :])
            ),
        }
    )


def _version(package):
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(package)
    except PackageNotFoundError:
        return "unknown"


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("out")
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--sides", type=int, nargs="+", default=[2048, 4096])
    parser.add_argument("--quick", action="store_true", help="a small input, to check the script")
    args = parser.parse_args()
    try:
        import cupy
    except ImportError:  # the script's check on a machine without CuPy: the CuPy rows say so
        cupy = None

    rows = []
    sides = [256] if args.quick else args.sides
    for side in sides:
        bench(rows, side, args.reps, cupy, side == min(sides))
    info = {
        "device": _chseg.device_name(0) if chseg.device_count() else "no CUDA device (CPU backend)",
        "python": platform.python_version(),
        "numpy": np.__version__,
        "cupy": cupy.__version__ if cupy else "missing",
        "higra": _version("higra"),
        "reps": args.reps,
        "rows": rows,
    }
    with open(args.out, "w") as f:
        json.dump(info, f, indent=1)
    print(
        f"{info['device']}, Python {info['python']}, CuPy {info['cupy']}, Higra {info['higra']}, median of "
        f"{args.reps} after a warm-up (Higra and the CPU reference: one run)\n"
    )
    print("| case | implementation | ms | check |")
    print("|---|---|---:|---|")
    for r in rows:
        if "missing" in r:
            print(f"| {r['case']} | {r['implementation']} | - | {r['missing']} missing |")
            continue
        checks = [
            f"{k} {v}"
            for k, v in r.items()
            if k
            in (
                "identical",
                "identical_to_cuda",
                "identical_to_numpy_path",
                "same_parents",
                "max_relative_weight_difference",
            )
        ]
        print(f"| {r['case']} | {r['implementation']} | {r['ms']:.2f} | {', '.join(checks)} |")


if __name__ == "__main__":
    main()

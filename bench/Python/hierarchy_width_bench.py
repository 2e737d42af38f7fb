"""The hierarchies by attribute on the GPU with 32- and 64-bit node ids (issue 31), and the same runs of another build
(before / after a change: run this script once per installed wheel, in alternation, and compare the JSON files).

For each side: the dendrogram of a smooth random relief with noise (uint8, 4-connected, the input of
bench/Python/hierarchy_bench.py) is built once on the device (CuPy arrays, 32-bit ids, and with wide_node_ids=True
64-bit ids), then each hierarchy runs from it on device arrays (no host transfer): watershed by area, volume and
dynamics, the area filter at 100 and the height filter at 20. Times: medians of --reps runs after one warm-up, the
run's kernel milliseconds (info["kernel_ms"]: the attributes, the sort, PANDORA) and the host clock around the call and
a stream synchronisation. Every result's parents and weights are hashed (SHA-1), so that builds can be compared, and
the 64-bit run is compared with the 32-bit run array by array. A build whose hierarchies refuse 64-bit ids records the
refusal. Usage: python hierarchy_width_bench.py OUT.json [--reps 7] [--sides 2048 4096] [--label NAME]"""

import argparse
import hashlib
import json
import os
import statistics
import sys
import time

import chseg
import cupy
import numpy as np
from chseg import _chseg

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from hierarchy_bench import relief  # noqa: E402

OPERATIONS = [
    ("watershed", "area", 0.0),
    ("watershed", "volume", 0.0),
    ("watershed", "dynamics", 0.0),
    ("filter", "area", 100.0),
    ("filter", "height", 20.0),
]


def run(tree, operation, attribute, threshold):
    """One hierarchy of `tree` (CuPy arrays) into new CuPy arrays of its width: (info, out arrays)."""
    n = (int(tree.parents.shape[0]) + 1) // 2
    ids = tree.parents.dtype
    out = (
        cupy.empty((2 * n - 1,), ids),
        cupy.empty((n - 1,), np.float64),
        cupy.empty((n - 1,), np.uint64),
        cupy.empty((n - 1,), ids),
        cupy.empty((n - 1,), ids),
    )
    stream = cupy.cuda.get_current_stream()
    info = _chseg.attribute_hierarchy(
        tree.parents,
        tree.weights,
        tree.edges,
        tree.u,
        tree.v,
        getattr(_chseg.RegionAttribute, attribute.upper()),
        operation == "filter",
        threshold,
        *out,
        _chseg.ExecutionContext(_chseg.Backend.CUDA, 0, stream.ptr),
    )
    stream.synchronize()
    return info, out


def digest(out):
    h = hashlib.sha1()
    h.update(cupy.asnumpy(out[0]).astype(np.uint64).tobytes())
    h.update(cupy.asnumpy(out[1]).tobytes())
    return h.hexdigest()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("out")
    parser.add_argument("--reps", type=int, default=7)
    parser.add_argument("--sides", type=int, nargs="+", default=[2048, 4096])
    parser.add_argument("--label", default="")
    args = parser.parse_args()
    rows = []
    for side in args.sides:
        image = cupy.asarray(relief(side))
        trees = {"32-bit": chseg.single_linkage(image), "64-bit": chseg.single_linkage(image, wide_node_ids=True)}
        for operation, attribute, threshold in OPERATIONS:
            case = f"{operation} by {attribute}" + (f" at {threshold:g}" if operation == "filter" else "")
            results = {}
            for width, tree in trees.items():
                row = {"side": side, "case": case, "ids": width, "label": args.label}
                try:
                    run(tree, operation, attribute, threshold)  # warm-up
                except ValueError as error:
                    row["refused"] = str(error)
                    rows.append(row)
                    print(json.dumps(row), flush=True)
                    continue
                kernel, wall = [], []
                for _ in range(args.reps):
                    start = time.perf_counter()
                    info, out = run(tree, operation, attribute, threshold)
                    wall.append((time.perf_counter() - start) * 1e3)
                    kernel.append(info["kernel_ms"])
                results[width] = out
                row.update(
                    {
                        "kernel_ms": statistics.median(kernel),
                        "wall_ms": statistics.median(wall),
                        "kernel_times": kernel,
                        "wall_times": wall,
                        "peak_device_bytes": info["peak_device_bytes"],
                        "sha1": digest(out),
                    }
                )
                if width == "64-bit" and "32-bit" in results:
                    row["identical_to_32_bit"] = all(
                        bool(cupy.array_equal(a.astype(cupy.uint64), b.astype(cupy.uint64)))
                        if a.dtype.kind == "u"
                        else bool(cupy.array_equal(a, b))
                        for a, b in zip(out, results["32-bit"])
                    )
                rows.append(row)
                print(json.dumps({k: v for k, v in row.items() if not k.endswith("_times")}), flush=True)
    meta = {
        "chseg": getattr(chseg, "__file__", ""),
        "device": cupy.cuda.runtime.getDeviceProperties(0)["name"].decode(),
        "reps": args.reps,
        "label": args.label,
    }
    with open(args.out, "w") as f:
        json.dump({"meta": meta, "rows": rows}, f, indent=1)


if __name__ == "__main__":
    main()

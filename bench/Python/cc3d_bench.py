"""chseg.cc3d against cc3d (connected-components-3d) in one run on the GPU machine, NumPy in and NumPy out (issue 63):
connected_components, dust, largest_k and statistics on binary and multilabel volumes.

Volumes: "binary", smoothed noise thresholded at its median (large blobs); "multilabel", the same noise quantised
to 4 levels and masked by the binary blobs, which gives millions of components. cc3d runs single-threaded as it
ships (it has no parallel mode). Times: medians of --reps runs after one warm-up (cc3d: --peer-reps runs, no
warm-up), host clock around the call; every chseg result is checked equal to cc3d's (labels, counts, dtype,
statistics).
Usage: python cc3d_bench.py OUT.json [--sizes 512 1024] [--reps 5] [--peer-reps 1] [--operations cc dust largest_k
statistics] [--volumes binary multilabel]"""

import argparse
import json
import platform
import statistics as stats
import time

import cc3d
import chseg
import numpy as np
from chseg import cc3d as ours


def timed(function, reps, warm_up=True):
    result = function() if warm_up else None
    times = []
    for _ in range(reps):
        start = time.perf_counter()
        result = function()
        times.append((time.perf_counter() - start) * 1e3)
    return stats.median(times), result


def volumes(n, seed=1):
    """(binary, multilabel) volumes of n^3 voxels, made on the GPU with CuPy when it is there (quick), else NumPy."""
    try:
        import cupy
        from cupyx.scipy import ndimage

        noise = cupy.random.default_rng(seed).random((n, n, n), dtype=cupy.float32)
        smooth = ndimage.gaussian_filter(noise, 2.0)
        median = float(cupy.median(smooth))
        binary = smooth > median
        spread = float(smooth.max()) - median
        levels = cupy.clip(((smooth - median) / spread * 16).astype(cupy.uint8), 0, 3) + 1
        multilabel = cupy.where(binary, levels, 0).astype(cupy.uint8)
        return cupy.asnumpy(binary), cupy.asnumpy(multilabel)
    except ImportError:
        from scipy import ndimage

        noise = np.random.default_rng(seed).random((n, n, n), dtype=np.float32)
        smooth = ndimage.gaussian_filter(noise, 2.0)
        median = float(np.median(smooth))
        binary = smooth > median
        levels = np.clip(((smooth - median) / (smooth.max() - median) * 16).astype(np.uint8), 0, 3) + 1
        return binary, np.where(binary, levels, 0).astype(np.uint8)


def same(a, b):
    if isinstance(a, tuple):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, np.ndarray):
        return a.dtype == b.dtype and a.shape == b.shape and np.array_equal(a, b, equal_nan=a.dtype.kind == "f")
    return a == b


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("out")
    parser.add_argument("--sizes", type=int, nargs="+", default=[512])
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--peer-reps", type=int, default=1)
    parser.add_argument("--operations", nargs="+", default=["cc", "dust", "largest_k", "statistics"])
    parser.add_argument("--volumes", nargs="+", default=["binary", "multilabel"])
    args = parser.parse_args()
    rows = []
    for n in args.sizes:
        binary, multilabel = volumes(n)
        for kind, image in (("binary", binary), ("multilabel", multilabel)):
            if kind not in args.volumes:
                continue
            # statistics' input: cc3d's 26-connected labels (made only when statistics are measured).
            labels26 = cc3d.connected_components(image, connectivity=26) if "statistics" in args.operations else None
            calls = {
                "cc": lambda f, c: f.connected_components(image, connectivity=c, return_N=True),
                "dust": lambda f, c: f.dust(image, 100, connectivity=c),
                "largest_k": lambda f, c: f.largest_k(image, 10, connectivity=c),
                "statistics": lambda f, c: f.statistics(labels26, no_slice_conversion=True),
            }
            for op in args.operations:
                for connectivity in (6, 26) if op != "statistics" else (26,):
                    theirs_ms, theirs = timed(lambda: calls[op](cc3d, connectivity), args.peer_reps, warm_up=False)
                    ours_ms, mine = timed(lambda: calls[op](ours, connectivity), args.reps)
                    ok = same(mine, theirs)
                    count = theirs[1] if op == "cc" else int(labels26.max()) if op == "statistics" else None
                    row = dict(
                        size=f"{n}^3",
                        volume=kind,
                        operation=op,
                        connectivity=connectivity,
                        chseg_ms=round(ours_ms, 2),
                        cc3d_ms=round(theirs_ms, 2),
                        speedup=round(theirs_ms / ours_ms, 1),
                        equal=bool(ok),
                        components=count,
                    )
                    rows.append(row)
                    print(json.dumps(row), flush=True)
    info = dict(
        gpu=chseg.device_count()
        and __import__("subprocess")
        .run(["nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader"], capture_output=True, text=True)
        .stdout.strip(),
        python=platform.python_version(),
        numpy=np.__version__,
        cc3d=getattr(cc3d, "__version__", "4.1.1"),
        reps=args.reps,
        peer_reps=args.peer_reps,
    )
    with open(args.out, "w") as f:
        json.dump(dict(info=info, rows=rows), f, indent=1)
    print("| size | volume | operation | conn. | chseg.cc3d ms | cc3d ms | speed-up | equal |")
    print("|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(
            f"| {r['size']} | {r['volume']} | {r['operation']} | {r['connectivity']} | {r['chseg_ms']} | "
            f"{r['cc3d_ms']} | {r['speedup']}x | {r['equal']} |"
        )


if __name__ == "__main__":
    main()

"""Connected-components benchmark, Python side: makes the inputs and times the Python peers on them.

Inputs are binary blobs (Gaussian-smoothed normal noise, thresholded at 0: half the voxels) made with CuPy on the
GPU and written as raw uint8 files, which CudaConnectedComponentBenchmark then reads, so that the module, ITK,
CuPy and OpenCV label the same voxels in the same run.

    python3 bench/ConnectedComponents/peers.py OUTDIR [CASE ...]
        writes OUTDIR/<case>.raw, OUTDIR/cases.txt and OUTDIR/ccl_peers.json
"""

import json
import os
import subprocess
import sys
import time

import cupy as cp
import cupyx.scipy.ndimage as cnd
import numpy as np
import scipy.ndimage as nd

try:
    import cv2
except ImportError:  # OpenCV is optional: its rows are then missing from the table
    cv2 = None

CASES = [  # name, shape (z, y, x order for NumPy), sigma, run ITK on it
    ("blobs2d", (4096, 4096), 3.0, True),
    ("blobs3d", (512, 512, 512), 2.0, True),
    ("huge3d", (1100, 2048, 2048), 2.0, False),  # 4.6e9 voxels: more than 2^32
]


def blobs(shape, sigma, seed):
    rng = cp.random.default_rng(seed)
    out = cp.empty(shape, dtype=cp.uint8)
    # Smooth in slabs along the first axis (with a margin) to keep the float32 working set small.
    slab = max(1, min(shape[0], int(2e9 // (4 * int(np.prod(shape[1:]))))))
    margin = int(4 * sigma + 1) if len(shape) == 3 else 0
    if len(shape) == 2:
        noise = rng.standard_normal(shape, dtype=cp.float32)
        return (cnd.gaussian_filter(noise, sigma) > 0).astype(cp.uint8)
    for z0 in range(0, shape[0], slab):
        z1 = min(shape[0], z0 + slab)
        a0, a1 = max(0, z0 - margin), min(shape[0], z1 + margin)
        # Noise is regenerated per slab from a per-slice seed so that overlapping margins agree.
        noise = cp.stack(
            [
                cp.random.default_rng(seed * 100003 + z).standard_normal(shape[1:], dtype=cp.float32)
                for z in range(a0, a1)
            ]
        )
        sm = cnd.gaussian_filter(noise, sigma, mode="reflect" if (a0 == 0 or a1 == shape[0]) else "nearest")
        out[z0:z1] = (sm[z0 - a0 : z0 - a0 + (z1 - z0)] > 0).astype(cp.uint8)
        del noise, sm
    return out


def gpu_median_ms(f, reps=20, warm=3):
    for _ in range(warm):
        f()
    cp.cuda.Device().synchronize()
    start, stop = cp.cuda.Event(), cp.cuda.Event()
    times = []
    for _ in range(reps):
        start.record()
        f()
        stop.record()
        stop.synchronize()
        times.append(cp.cuda.get_elapsed_time(start, stop))
    return float(np.median(times))


def cpu_median_ms(f, reps=7, warm=2):
    for _ in range(warm):
        f()
    times = []
    for _ in range(reps):
        t = time.perf_counter()
        f()
        times.append((time.perf_counter() - t) * 1e3)
    return float(np.median(times))


def time_cupy(d, conn, rec):
    st = cp.asarray(nd.generate_binary_structure(d.ndim, 1 if conn == "face" else d.ndim))
    try:
        _, n = cnd.label(d, structure=st)
        rec["cupy_objects"] = int(n)
        rec["cupy_ms"] = gpu_median_ms(lambda: cnd.label(d, structure=st))
    except Exception as e:  # CuPy labels with int32 indices: large volumes fail
        rec["cupy_error"] = "%s: %s" % (type(e).__name__, str(e)[:300])


def cupy_in_child(path, shape, conn, rec, limit_s=150):
    """Large volumes: CuPy runs in a child process, so that a crash or a hang cannot take the benchmark down."""
    try:
        out = subprocess.run(
            [sys.executable, __file__, "--cupy-child", path, ",".join(map(str, shape)), conn],
            capture_output=True,
            text=True,
            timeout=limit_s,
        )
        lines = [line for line in out.stdout.splitlines() if line.startswith("{")]
        if lines:
            rec.update(json.loads(lines[-1]))
        else:
            rec["cupy_error"] = "exit %d: %s" % (out.returncode, (out.stderr or out.stdout)[-300:])
    except subprocess.TimeoutExpired:
        rec["cupy_error"] = "no result within %d s" % limit_s


def main(outdir, only=()):
    os.makedirs(outdir, exist_ok=True)
    records, cases = [], []
    for name, shape, sigma, run_itk in CASES:
        if only and name not in only:
            continue
        d = blobs(shape, sigma, seed=len(cases) + 1)
        path = os.path.join(outdir, name + ".raw")
        d.get().tofile(path)
        cases.append(
            "%s:%s:%s%s" % (name, path, "x".join(str(s) for s in reversed(shape)), "" if run_itk else ":noitk")
        )
        with open(os.path.join(outdir, "cases.txt"), "w") as f:
            f.write("\n".join(cases) + "\n")
        nd_ = len(shape)
        big = d.size >= 2**31
        if big:  # the child process needs the GPU memory
            d = None
            cp.get_default_memory_pool().free_all_blocks()
        for conn in ("face", "full"):
            rec = dict(case=name, shape="x".join(str(s) for s in reversed(shape)), connectivity=conn)
            if big:
                cupy_in_child(path, shape, conn, rec)
            else:
                time_cupy(d, conn, rec)
            if nd_ == 2 and cv2 is not None:
                c = 4 if conn == "face" else 8
                cv2.setNumThreads(os.cpu_count())
                h = d.get()
                n3, _ = cv2.connectedComponentsWithAlgorithm(h, c, cv2.CV_32S, cv2.CCL_SPAGHETTI)
                rec["opencv_objects"] = int(n3 - 1)
                rec["opencv_threads"] = os.cpu_count()
                rec["opencv_ms"] = cpu_median_ms(
                    lambda: cv2.connectedComponentsWithAlgorithm(h, c, cv2.CV_32S, cv2.CCL_SPAGHETTI)
                )
            print(json.dumps(rec), flush=True)
            records.append(rec)
        d = None
        cp.get_default_memory_pool().free_all_blocks()
    with open(os.path.join(outdir, "ccl_peers.json"), "w") as f:
        json.dump(
            dict(
                device=cp.cuda.runtime.getDeviceProperties(0)["name"].decode(),
                cupy=cp.__version__,
                opencv=(cv2.__version__ if cv2 else None),
                records=records,
            ),
            f,
            indent=1,
        )


if __name__ == "__main__":
    if sys.argv[1] == "--cupy-child":
        shape = tuple(int(s) for s in sys.argv[3].split(","))
        rec = {}
        time_cupy(cp.asarray(np.fromfile(sys.argv[2], dtype=np.uint8).reshape(shape)), sys.argv[4], rec)
        print(json.dumps(rec), flush=True)
    else:
        main(sys.argv[1], sys.argv[2:])

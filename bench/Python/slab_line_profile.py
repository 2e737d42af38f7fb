#!/usr/bin/env python3
"""Where chseg.slabs.hierarchy spends its time, line by line, with the device synchronised after every line of the
slab code (python/chseg/_slab_*.py), so that a CuPy step is charged to the line that launched it and not to the
next line that waits for it (cProfile charges the waits).

    slab_line_profile.py OUT.txt --shape Z Y X --slab S [--work DIR]

The volume is slab_hierarchy_bench.py's (written to DIR/volume.zarr); the hierarchy by area runs twice untraced
(CuPy compiles its kernels on first use), then once traced into a store in DIR. Each line of the
passes' main thread gets the seconds from its start to the next line's start in the slab code (a line that calls
another function of it keeps the time until that function's first line, and gets back the rest after it returns);
what the reader's and writer's threads do is not traced. OUT.txt: seconds, count, file:line, function, slowest
first. The synchronisation and the tracing slow the run (about 1.1x at 128 x 2048 x 2048 in slabs of 16).
"""

import argparse
import collections
import os
import shutil
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


def _synchronise():
    try:
        import cupy
    except ImportError:
        return lambda: None
    return lambda: cupy.cuda.Device().synchronize()


def _slab_code(filename):
    return "chseg" in filename and os.path.basename(filename).startswith("_slab")


def traced(run):
    """run() with every line of the slab code timed: {(file, line, function): [seconds, count]}."""
    sync = _synchronise()
    main_thread = threading.get_ident()
    totals = collections.defaultdict(lambda: [0.0, 0])
    state = {"key": None, "start": 0.0}

    def charge(key):
        sync()
        now = time.perf_counter()
        if state["key"] is not None:
            entry = totals[state["key"]]
            entry[0] += now - state["start"]
            entry[1] += 1
        state["key"], state["start"] = key, time.perf_counter()

    def local(frame, event, arg):
        if event == "line":
            charge((os.path.basename(frame.f_code.co_filename), frame.f_lineno, frame.f_code.co_name))
        elif event == "return":
            caller = frame.f_back  # the rest of the calling line is its own again
            inside = caller is not None and _slab_code(caller.f_code.co_filename)
            code = caller.f_code if inside else None
            charge((os.path.basename(code.co_filename), caller.f_lineno, code.co_name) if inside else None)
        return local

    def tracer(frame, event, arg):
        if threading.get_ident() != main_thread or not _slab_code(frame.f_code.co_filename):
            return None
        return local

    sys.settrace(tracer)
    try:
        run()
    finally:
        sys.settrace(None)
        charge(None)
    return totals


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--shape", type=int, nargs=3, default=[64, 512, 512])
    ap.add_argument("--slab", type=int, default=16)
    ap.add_argument("--work", default="/tmp/slab-line-profile")
    args = ap.parse_args()

    import chseg.slabs
    from slab_hierarchy_bench import write_volume

    shutil.rmtree(args.work, ignore_errors=True)
    os.makedirs(args.work)
    volume = write_volume(os.path.join(args.work, "volume.zarr"), tuple(args.shape), args.slab)
    store = os.path.join(args.work, "hierarchy")

    def run():
        chseg.slabs.hierarchy(volume, args.slab, "area", store=store)
        shutil.rmtree(store, ignore_errors=True)

    for _ in range(2):
        start = time.perf_counter()
        run()
        print(f"untraced: {time.perf_counter() - start:.2f} s", flush=True)
    start = time.perf_counter()
    totals = traced(run)
    print(f"traced: {time.perf_counter() - start:.2f} s, lines: {sum(t[0] for t in totals.values()):.2f} s")
    rows = sorted(totals.items(), key=lambda item: -item[1][0])
    with open(args.out, "w") as f:
        for (name, line, function), (seconds, count) in rows:
            f.write(f"{seconds:9.4f} {count:7d} {name}:{line} {function}\n")
    for (name, line, function), (seconds, count) in rows[:40]:
        print(f"{seconds:9.4f} {count:7d} {name}:{line} {function}")


if __name__ == "__main__":
    main()

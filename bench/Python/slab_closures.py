#!/usr/bin/env python3
"""The closures a hierarchy over slabs carries between slabs, step by step: for each step of both passes (B(s), R(s),
C(s)), the closure's edges, pseudo-vertices and bytes, on the CT-like volume of slab_hierarchy_bench.py (grains in a
noisy matrix, uint8), and the largest (SlabHierarchy.closure_bytes) with the run's seconds. The backend is chseg's
default (the GPU where there is one).

    slab_closures.py OUT.json --shape Z Y X --slab S [--attribute area|volume|dynamics|none]
"""

import argparse
import json
import time

import numpy as np
from slab_hierarchy_bench import volume_of


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--shape", type=int, nargs=3, default=[64, 128, 128])
    ap.add_argument("--slab", type=int, default=8)
    ap.add_argument("--attribute", default="area")
    args = ap.parse_args()

    import chseg
    import chseg.slabs
    from chseg import _slab_passes as sp

    attribute = None if args.attribute == "none" else args.attribute
    volume = volume_of(tuple(args.shape))
    steps = []

    def recorded(step, name):
        def run(spec, s, *rest):
            closure = step(spec, s, *rest)
            steps.append(
                {
                    "step": f"{name}({s})",
                    "edges": int(closure.edges[0].size),
                    "pseudo_vertices": int(closure.pid.size),
                    "bytes": closure.nbytes(),
                }
            )
            return closure

        return run

    # the steps as the passes call them (python/chseg/_slab_passes.py)
    sp._border_step = recorded(sp._border_step, "B")
    sp._right_step = recorded(sp._right_step, "R")
    sp._left_step = recorded(sp._left_step, "C")
    start = time.perf_counter()
    h = chseg.slabs.hierarchy(volume, args.slab, attribute)
    seconds = time.perf_counter() - start
    plane = int(np.prod(args.shape[1:]))
    result = {
        "shape": args.shape,
        "slab": args.slab,
        "attribute": args.attribute,
        "seconds": seconds,
        "closure_bytes": h.closure_bytes,
        "closure_bytes_per_layer_voxel": h.closure_bytes / plane,
        "steps": steps,
    }
    with open(args.out, "w") as f:
        json.dump(result, f, indent=1)
    for s in steps:
        print(
            f"{s['step']:8s} edges {s['edges']:10d} pseudo-vertices {s['pseudo_vertices']:10d} bytes {s['bytes']:12d}"
        )
    print(f"{seconds:.2f} s, largest closure {h.closure_bytes} bytes ({h.closure_bytes / plane:.1f} a layer voxel)")


if __name__ == "__main__":
    main()

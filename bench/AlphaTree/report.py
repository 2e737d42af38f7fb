#!/usr/bin/env python3
"""Markdown table of an alpha-tree benchmark run: the module's JSON files (CudaAlphaTreeBenchmark, at_module*.json)
and Higra's (peers.py, at_higra*.json) from one folder, with the throughputs, the ratios and the issue's goals.

    bench/AlphaTree/report.py FOLDER
"""

import glob
import json
import sys


def main():
    folder = sys.argv[1]
    module = [r for f in sorted(glob.glob(f"{folder}/at_module*.json")) for r in json.load(open(f))["results"]]
    higra = {
        (r["name"], r["connectivity"]): r
        for f in sorted(glob.glob(f"{folder}/at_higra*.json"))
        for r in json.load(open(f))["results"]
    }
    print(
        "| image | pixels | conn. | algorithm | kernels ms | MP/s (kernels) | end-to-end ms | CPU reference ms "
        "| Higra ms | Higra / end-to-end | nodes | same nodes as Higra | same tree as CPU |"
    )
    print("|---|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---|---|")
    for r in module:
        h = higra.get((r["name"], r["connectivity"]))
        mp = r["pixels"] / r["kernel_ms"] / 1e3
        cpu = f"{r['cpu_ms']:.0f}" if r["cpu_ms"] >= 0 else "-"
        hms = f"{h['higra_ms']:.0f}" if h else "-"
        ratio = f"{h['higra_ms'] / r['end_to_end_ms']:.0f}x" if h else "-"
        same = ("yes" if h["nodes"] == r["nodes"] else "NO") if h else "-"
        ident = {True: "yes", False: "NO", None: "-"}[r["identical_to_cpu"]]
        print(
            f"| {r['name']} ({r['type']}) | {r['pixels']} | {r['connectivity']} | {r['algorithm']} "
            f"| {r['kernel_ms']:.2f} | {mp:.0f} | {r['end_to_end_ms']:.1f} | {cpu} | {hms} | {ratio} "
            f"| {r['nodes']} | {same} | {ident} |"
        )
    print()
    goals = [
        ("8-bit 4-connected", lambda r: r["type"] == "uint8" and r["connectivity"] == 4, 4000),
        ("8-bit 8-connected", lambda r: r["type"] == "uint8" and r["connectivity"] == 8, 2000),
        ("16-bit", lambda r: r["type"] == "uint16", 1000),
        ("3D 6-connected 8-bit", lambda r: r["type"] == "uint8" and r["connectivity"] == 6, 1500),
    ]
    for label, match, goal in goals:
        best = {}
        for r in module:
            if match(r):
                key = (r["name"], r["connectivity"])
                best[key] = max(best.get(key, 0), r["pixels"] / r["kernel_ms"] / 1e3)
        for key, mp in best.items():
            print(
                f"- {label} {key[0]} ({key[1]}-conn), best algorithm: {mp:.0f} MP/s, goal {goal}: "
                f"{'met' if mp >= goal else 'NOT met'}"
            )
    # End to end with the default algorithm (Auto: level-synchronous for 8-bit scalar images, else spanning tree).
    for r in module:
        auto = "level-synchronous" if r["type"] == "uint8" else "spanning-tree"
        h = higra.get((r["name"], r["connectivity"]))
        if r["algorithm"] == auto and h:
            ratio = h["higra_ms"] / r["end_to_end_ms"]
            print(
                f"- End to end, default algorithm ({auto}), {r['name']} ({r['connectivity']}-conn): "
                f"{ratio:.0f}x Higra, goal 50x: {'met' if ratio >= 50 else 'NOT met'}"
            )


if __name__ == "__main__":
    main()

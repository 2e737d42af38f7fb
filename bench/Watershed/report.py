#!/usr/bin/env python3
"""The watershed benchmark's table (Markdown) from ws_module*.json and ws_peers.json in a result folder.

bench/Watershed/report.py RESULT_DIR
"""

import glob
import json
import os
import sys


def main():
    folder = sys.argv[1]
    module = [
        r for f in sorted(glob.glob(os.path.join(folder, "ws_module*.json"))) for r in json.load(open(f))["results"]
    ]
    peers_file = os.path.join(folder, "ws_peers.json")
    peers = json.load(open(peers_file))["results"] if os.path.exists(peers_file) else []
    gpu = (
        open(os.path.join(folder, "gpu.txt")).read().strip() if os.path.exists(os.path.join(folder, "gpu.txt")) else "?"
    )
    print(f"GPU: {gpu}\n")
    print(
        "| input | conn | algorithm | plateaus | kernel ms | Mvoxel/s | end-to-end ms | basins | ITK ms (basins) "
        "| end to end vs ITK | CPU reference ms | identical to CPU |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for r in module:
        if r["kind"] != "watershed":
            continue
        itk = f"{r['itk_ms']:.0f} ({r['itk_basins']})" if r["itk_ms"] else "not run"
        ratio = f"{r['itk_ms'] / r['end_to_end_ms']:.0f}x" if r["itk_ms"] else ""
        cpu = f"{r['cpu_reference_ms']:.0f}" if r["cpu_checked"] else "not run"
        same = ("yes" if r["identical_to_cpu"] else "NO") if r["cpu_checked"] else ""
        print(
            f"| {r['name']} | {r['connectivity']} | {r['algorithm']} | {r['resolution']} | {r['kernel_ms']:.2f} | "
            f"{r['voxels'] / r['kernel_ms'] / 1e3:.0f} | {r['end_to_end_ms']:.2f} | {r['basins']} | {itk} | {ratio} "
            f"| {cpu} | {same} |"
        )
    print(
        "\n| input | conn | waterfall kernel ms (watershed + levels) | end-to-end ms | regions per level "
        "| CPU reference ms | identical to CPU |"
    )
    print("|---|---|---|---|---|---|---|")
    for r in module:
        if r["kind"] != "waterfall":
            continue
        same = ("yes" if r["identical_to_cpu"] else "NO") if r["cpu_checked"] else ""
        print(
            f"| {r['name']} | {r['connectivity']} | {r['watershed_ms'] + r['levels_ms']:.2f} "
            f"({r['watershed_ms']:.2f} + {r['levels_ms']:.2f}) | {r['end_to_end_ms']:.2f} | {r['regions']} | "
            f"{r['cpu_reference_ms']:.0f} | {same} |"
        )
    if peers:
        print("\n| peer | input | conn | ms | basins | vs module end to end (PRUF balanced) |")
        print("|---|---|---|---|---|---|")
        for p in peers:
            ours = [
                r
                for r in module
                if r["kind"] == "watershed"
                and r["voxels"] == p["pixels"]
                and r["connectivity"] == p["connectivity"]
                and r["algorithm"] == "PRUF"
                and r["resolution"] == "balanced"
            ]
            ratio = f"{p['ms'] / ours[0]['end_to_end_ms']:.0f}x" if ours else ""
            print(f"| {p['peer']} | {p['name']} | {p['connectivity']} | {p['ms']:.0f} | {p['basins']} | {ratio} |")


if __name__ == "__main__":
    main()

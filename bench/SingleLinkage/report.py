#!/usr/bin/env python3
"""Markdown table of a single-linkage benchmark run.

bench/SingleLinkage/report.py OUTDIR (reads sl_module.json and sl_peers.json)."""

import json
import sys

out = sys.argv[1]
module = json.load(open(f"{out}/sl_module.json"))
peers = json.load(open(f"{out}/sl_peers.json"))
print(f"Device: {module['device']}\n")
print(
    "| input | edges | kernel ms (MST + dendrogram) | Medges/s (kernel) | end-to-end ms | sequential ms | "
    "kernel vs sequential | end to end vs sequential | SciPy ms | levels | identical |"
)
print("|---|---|---|---|---|---|---|---|---|---|---|")
for c in module["cases"]:
    e = c["tree_edges"]
    scipy = peers.get(c["name"], {}).get("scipy_linkage_ms")
    seq = c["sequential_ms"]  # 0 when the run had --no-cpu: nothing to compare with
    vs = (
        f"{seq:.0f} | {seq / c['gpu_kernel_ms']:.0f}x | {seq / c['gpu_end_to_end_ms']:.1f}x"
        if seq > 0
        else "not run | - | -"
    )
    same = ("yes" if c["identical"] else "NO") if seq > 0 else "not compared"
    print(
        f"| {c['name']} | {e} | {c['gpu_kernel_ms']:.2f} ({c['gpu_mst_ms']:.2f} + {c['gpu_dendrogram_ms']:.2f}) | "
        f"{e / c['gpu_kernel_ms'] / 1e3:.0f} | {c['gpu_end_to_end_ms']:.1f} | {vs} | "
        f"{'%.0f' % scipy if scipy else 'n/a'} | {c['contraction_levels']} | {same} |"
    )
p = peers["points-10k"]
print(
    f"\npoints-10k vs SciPy linkage(pdist, 'single'): children equal {p.get('linkage_children_equal')}, "
    f"distances equal {p.get('linkage_distances_equal')}, sizes equal {p.get('linkage_sizes_equal')}."
)

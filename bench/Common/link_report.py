#!/usr/bin/env python3
"""End-to-end times against the host link: for every result of the module's benchmarks that says how many bytes it
moves (bytes_up: input to the device; bytes_down: outputs to the host), the floor is the time to move them at the
pinned and at the pageable rates that CudaHostLinkBenchmark measured in the same run, and the ratio is the end-to-end
time over the pinned floor (1.0 would be a filter that costs nothing but its transfers).

    link_report.py LINK_JSON MODULE_JSON [MODULE_JSON ...]   (at_module.json, sl_module.json, ws_module.json)
"""

import json
import sys


def rows(path):
    data = json.load(open(path))
    for r in data.get("results", data.get("cases", [])):
        if "bytes_up" not in r or "bytes_down" not in r:
            continue
        e2e = r.get("end_to_end_ms", r.get("gpu_end_to_end_ms"))
        first = r.get("first_update_ms", r.get("gpu_first_update_ms"))
        kernel = r.get("kernel_ms", r.get("gpu_kernel_ms"))
        if kernel is None and "watershed_ms" in r:
            kernel = r["watershed_ms"] + r["levels_ms"]
        label = " ".join(str(r[k]) for k in ("kind", "name", "type", "algorithm", "resolution") if k in r)
        conn = r.get("connectivity")
        if conn:
            label += f" {conn}-conn"
        yield label, kernel, e2e, first, r["bytes_up"], r["bytes_down"]


def main():
    link = json.load(open(sys.argv[1]))
    up, down = link["pinned_up_gbps"], link["pinned_down_gbps"]
    pup, pdown = link["pageable_up_gbps"], link["pageable_down_gbps"]
    print(
        f"Host link ({link['device']}): pinned {up:.1f} GB/s up, {down:.1f} GB/s down; pageable {pup:.1f} up, "
        f"{pdown:.1f} down; first write to fresh memory {link['fresh_page_mapping_gbps']:.1f} GB/s.\n"
    )
    print(
        "| result | MB up | MB down | kernels ms | end-to-end ms | first update ms | pinned floor ms "
        "| pageable floor ms | end-to-end / pinned floor | kernels + pinned floor ms |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for path in sys.argv[2:]:
        for label, kernel, e2e, first, bu, bd in rows(path):
            floor = bu / 1e6 / up + bd / 1e6 / down
            pfloor = bu / 1e6 / pup + bd / 1e6 / pdown
            kf = f"{kernel + floor:.2f}" if kernel is not None else "-"
            ks = f"{kernel:.2f}" if kernel is not None else "-"
            fs = f"{first:.2f}" if first is not None else "-"
            print(
                f"| {label} | {bu / 1e6:.1f} | {bd / 1e6:.1f} | {ks} | {e2e:.2f} | {fs} | {floor:.2f} | "
                f"{pfloor:.2f} | {e2e / floor:.2f} | {kf} |"
            )


if __name__ == "__main__":
    main()

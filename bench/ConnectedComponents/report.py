"""Merges the module's and the peers' connected-components results into one table with the ratios.

python3 bench/ConnectedComponents/report.py FOLDER
    reads ccl_module*.json and ccl_peers.json, prints Markdown, writes ccl_results.json
"""

import glob
import json
import os
import sys

# Device-to-device copy bandwidth (bytes read plus written) measured on the lent machines.
BANDWIDTH = {"H200": 4.3e12, "H100": 3.0e12}


def fmt(v, spec):
    return (spec % v) if v is not None else "n/a"


def main(folder):
    module = []
    device = "?"
    for f in sorted(glob.glob(os.path.join(folder, "ccl_module*.json"))):
        d = json.load(open(f))
        device = d["device"]
        module += d["records"]
    peers = {
        (r["case"], r["connectivity"]): r for r in json.load(open(os.path.join(folder, "ccl_peers.json")))["records"]
    }
    bw = next((v for k, v in BANDWIDTH.items() if k in device), None)
    rows = []
    print("Device: %s; bandwidth floor = (input + label bytes) / %s TB/s\n" % (device, bw / 1e12 if bw else "?"))
    print(
        "| case | conn | objects | kernel ms | Update() ms | CuPy ms | kernel vs CuPy | floor ms | kernel / floor "
        "| ITK ms | Update() vs ITK | OpenCV ms | peak MiB | same as ITK |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for m in module:
        p = peers.get((m["case"], m["connectivity"]), {})
        floor = (m["input_bytes"] + m["label_bytes"]) / bw * 1e3 if bw else None
        r = dict(m)
        r.update({k: v for k, v in p.items() if k not in ("case", "connectivity", "shape")})
        r["floor_ms"] = floor
        r["kernel_over_floor"] = m["kernel_ms"] / floor if floor else None
        r["speedup_kernel_vs_cupy"] = p["cupy_ms"] / m["kernel_ms"] if "cupy_ms" in p else None
        r["speedup_update_vs_itk"] = m["itk_ms"] / m["update_ms"] if m["itk_ms"] > 0 else None
        r["objects_agree_with_cupy"] = p.get("cupy_objects") == m["objects"] if "cupy_objects" in p else None
        rows.append(r)
        cupy = fmt(p.get("cupy_ms"), "%.3f") if "cupy_ms" in p else "failed"
        print(
            "| %s %s | %s | %d%s | %.3f | %.1f | %s | %s | %s | %s | %s | %s | %s | %.0f | %s |"
            % (
                m["case"],
                m["shape"],
                m["connectivity"],
                m["objects"],
                "" if r["objects_agree_with_cupy"] in (None, True) else " (CuPy: %s)" % p.get("cupy_objects"),
                m["kernel_ms"],
                m["update_ms"],
                cupy,
                fmt(r["speedup_kernel_vs_cupy"], "%.1fx"),
                fmt(floor, "%.3f"),
                fmt(r["kernel_over_floor"], "%.1fx"),
                fmt(m["itk_ms"] if m["itk_ms"] > 0 else None, "%.0f"),
                fmt(r["speedup_update_vs_itk"], "%.0fx"),
                fmt(p.get("opencv_ms"), "%.2f"),
                m["peak_device_bytes"] / 2**20,
                {True: "yes", False: "NO", None: "not run"}[m["identical_to_itk"]],
            )
        )
    errors = [(k, v["cupy_error"]) for k, v in peers.items() if "cupy_error" in v]
    for k, e in errors:
        print("\nCuPy on %s %s: %s" % (k[0], k[1], e))
    json.dump(
        dict(device=device, bandwidth_bytes_per_s=bw, rows=rows),
        open(os.path.join(folder, "ccl_results.json"), "w"),
        indent=1,
    )


if __name__ == "__main__":
    main(sys.argv[1])

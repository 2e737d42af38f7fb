"""Merges the waterpixel benchmark's JSON files (module and sequential IFTs; scikit-image) into a Markdown table.

Radix-heap IFT: the sequential IFT peer, timed on the border image and seeds alone. CPU reference: the module's
sequential waterpixels (border image and binary-heap IFT). identical: the GPU labels equal both.

    python3 bench/Waterpixels/report.py DIR      reads DIR/wp_module.json and DIR/wp_peers.json
"""

import json
import os
import sys

# cudaIFT on a V100 at 4096^2 (the paper's Fig. 5, read off the plot and its text: about 20 ms at sigma 5, below
# 0.5 s at sigma 30); only the two ends are stated in the text.
PAPER_V100_MS = {5: 20.0, 30: 500.0}


def main():
    d = sys.argv[1]
    module = json.load(open(os.path.join(d, "wp_module.json")))
    peers = {(r["case"], r["sigma"]): r for r in json.load(open(os.path.join(d, "wp_peers.json")))}
    print(f"Device: {module['device']}\n")
    print(
        "| input | sigma | superpixels | rounds | kernel ms | end-to-end ms | radix-heap IFT ms | kernel vs radix "
        "heap | end to end vs radix heap | CPU reference ms | scikit-image watershed ms | compact watershed ms | "
        "paper V100 ms | identical |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for r in module["records"]:
        p = peers.get((r["case"], r["sigma"]), {})
        sk = p.get("skimage_watershed_ms")
        skc = p.get("skimage_compact_watershed_ms")
        paper = PAPER_V100_MS.get(r["sigma"]) if r["shape"] == "4096x4096" else None
        print(
            f"| {r['shape']} | {r['sigma']} | {r['superpixels']} | {r['rounds_min']:.0f}-{r['rounds_max']:.0f} "
            f"| {r['kernel_ms']:.3f} | {r['update_ms']:.2f} | {r['radix_heap_ift_ms']:.0f} "
            f"| {r['radix_heap_ift_ms'] / r['kernel_ms']:.0f}x | {r['radix_heap_ift_ms'] / r['update_ms']:.0f}x "
            f"| {r['sequential_ms']:.0f} | {f'{sk:.0f}' if sk else 'n/a'} | {f'{skc:.0f}' if skc else 'n/a'} "
            f"| {f'~{paper:.0f}' if paper else 'n/a'} "
            f"| {'yes' if r['identical_to_sequential'] and r['radix_heap_identical'] else 'NO'} |"
        )


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Prints a Google Benchmark JSON result as a table with ratios to a reference benchmark."""
import json
import sys


def main(path, reference):
    with open(path, encoding="utf-8") as f:
        data = json.load(f)
    rows = [b for b in data["benchmarks"] if b.get("run_type", "iteration") == "iteration"
            or b.get("aggregate_name") == "median"]
    scale = {"ns": 1.0, "us": 1e3, "ms": 1e6, "s": 1e9}
    ref = next((b for b in rows if b["name"].split("/")[0] == reference
                or b["name"] == reference + "_median"), None)
    ref_ns = ref["real_time"] * scale[ref["time_unit"]] if ref else None
    print(f"{'benchmark':34} {'ns/op':>12} {'x reference':>12} {'items/s':>14}")
    for b in rows:
        ns = b["real_time"] * scale[b["time_unit"]]
        ratio = f"{ns / ref_ns:12.1f}" if ref_ns else f"{'-':>12}"
        items = b.get("items_per_second")
        items_s = f"{items:14.0f}" if items else f"{'':>14}"
        print(f"{b['name']:34} {ns:12.1f} {ratio} {items_s}")
    ctx = data.get("context", {})
    print(f"\nreference: {reference}; {ctx.get('num_cpus', '?')} CPUs, "
          f"load {ctx.get('load_avg', '?')}, build {ctx.get('library_build_type', '?')}")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else "BM_ModelRead32")

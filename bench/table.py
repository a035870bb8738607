#!/usr/bin/env python3
"""Prints a Google Benchmark JSON result as a table: time per operation, its ratio to a
reference benchmark of the same run (when one is named), items/s, and the benchmark's own
counters (slots, lower_bound, peak_MB, x_sort, ...)."""
import json
import sys

STANDARD = {"name", "family_index", "per_family_instance_index", "run_name", "run_type",
            "repetitions", "repetition_index", "threads", "iterations", "real_time",
            "cpu_time", "time_unit", "items_per_second", "bytes_per_second", "aggregate_name",
            "aggregate_unit", "label", "error_occurred", "error_message"}
# Counters printed first, in this order, when a program has them (the phases of a change, as
# fabric_bench reports them); the others follow in the JSON's order.
FIRST = ["compute_ms", "verify_ms", "write_ms", "commit_ms", "total_ms"]


def counters(b):
    out = []
    keys = [k for k in FIRST if k in b] + [k for k in b if k not in FIRST]
    for key in keys:
        value = b[key]
        if key in STANDARD or not isinstance(value, (int, float)):
            continue
        out.append(f"{key}={value:.4g}" if isinstance(value, float) else f"{key}={value}")
    return " ".join(out)


def main(path, reference):
    with open(path, encoding="utf-8") as f:
        data = json.load(f)
    rows = [b for b in data["benchmarks"] if b.get("run_type", "iteration") == "iteration"
            or b.get("aggregate_name") == "median"]
    scale = {"ns": 1.0, "us": 1e3, "ms": 1e6, "s": 1e9}
    ref = next((b for b in rows if reference and (b["name"].split("/")[0] == reference
                or b["name"] == reference + "_median")), None)
    ref_ns = ref["real_time"] * scale[ref["time_unit"]] if ref else None
    width = max([34] + [len(b["name"]) for b in rows])
    print(f"{'benchmark':{width}} {'ns/op':>14} {'x reference':>12} {'items/s':>14}  counters")
    for b in rows:
        ns = b["real_time"] * scale[b["time_unit"]]
        ratio = f"{ns / ref_ns:12.1f}" if ref_ns else f"{'-':>12}"
        items = b.get("items_per_second")
        items_s = f"{items:14.0f}" if items else f"{'':>14}"
        print(f"{b['name']:{width}} {ns:14.1f} {ratio} {items_s}  {counters(b)}")
    ctx = data.get("context", {})
    print(f"\nreference: {reference or '(per-case counters)'}; {ctx.get('num_cpus', '?')} CPUs, "
          f"load {ctx.get('load_avg', '?')}, build {ctx.get('library_build_type', '?')}")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else "")

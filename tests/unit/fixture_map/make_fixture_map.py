#!/usr/bin/env python3
"""Writes a variant of asn_regmap.yaml that uses what the real map does not use yet: block
versions (route and stripe one version past the real map's, each still driving the version
before), items `since` the new version, a ring from the board (in stripe), and a profile
that pins the older versions. Tests build it with the real
generator (as fixture_register_map()) and open emulated boards and Devices on it.

    make_fixture_map.py asn_regmap.yaml fixture.yaml
"""

import sys

import yaml


def main(source: str, target: str) -> int:
    with open(source, encoding="utf-8") as f:
        doc = yaml.safe_load(f)
    blocks = {b["name"]: b for b in doc["blocks"]}

    # A new interrupt cause for the ring, after the real map's causes.
    irq = next(r for r in blocks["id"]["registers"] if r["name"] == "irq_status")
    mask = next(r for r in blocks["id"]["registers"] if r["name"] == "irq_mask")
    bit = max(int(str(f["bits"]).split(":")[0]) for f in irq["fields"]) + 1
    irq["fields"].append({"name": "stripe_completion", "bits": str(bit), "reset": 0})
    mask["fields"].append({"name": "stripe_completion", "bits": str(bit), "reset": 0})

    # route one version on: one more register.
    route = blocks["route"]
    current = route["version"]
    route["version"], route["min_version"] = current + 1, current
    last = max(r["offset"] for r in route["registers"])
    route["registers"].append({
        "name": "hop_limit", "offset": last + 4, "access": "RW", "since": current + 1,
        "description": "Hops a packet may take before it is dropped.",
        "fields": [{"name": "hops", "bits": "7:0", "reset": 8}]})

    # stripe one version on: a completion ring the board fills, with its indices, after
    # the block's last register and its last window.
    stripe = blocks["stripe"]
    sv = stripe["version"]
    stripe["version"], stripe["min_version"] = sv + 1, sv
    last = max(r["offset"] + (8 if r.get("width") == 64 else 4) for r in stripe["registers"])
    stripe["registers"] += [
        {"name": "completion_producer", "offset": last, "access": "RO", "since": sv + 1,
         "fields": [{"name": "index", "bits": "15:0", "reset": 0}]},
        {"name": "completion_consumer", "offset": last + 4, "access": "RW", "since": sv + 1,
         "fields": [{"name": "index", "bits": "15:0", "reset": 0}]},
    ]
    end = max(t["offset"] + t["entry_bytes"] * t["max_entries"] for t in stripe.get("tables", []))
    ring_bytes = 16 * 1024
    offset = (end + ring_bytes - 1) // ring_bytes * ring_bytes
    while offset + ring_bytes > stripe["size"]:
        stripe["size"] *= 2
    stripe["rings"] = stripe.get("rings", []) + [{
        "name": "completion", "direction": "from_board", "offset": offset, "entry_bytes": 16,
        "max_entries": 1024, "entries_from": "stripe_ring_entries", "since": sv + 1,
        "producer": "completion_producer.index", "consumer": "completion_consumer.index",
        "irq": "stripe_completion", "description": "Stripe units the engine reports.",
        "fields": [{"name": "request", "word": 0, "bits": "31:0"},
                   {"name": "status", "word": 1, "bits": "3:0"},
                   {"name": "token_lo", "word": 2, "bits": "31:0"},
                   {"name": "token_hi", "word": 3, "bits": "31:0"}]}]
    doc["capabilities"].append({"name": "stripe_ring_entries", "bits": 16, "default": 256,
                                "description": "Entries of the stripe completion ring."})

    # The same board with the older firmware.
    old = dict(next(b for b in doc["boards"] if b["name"] == "netfpga-1g"))
    old["name"] = "netfpga-1g-v1"
    old["block_versions"] = {"route": current, "stripe": sv}
    doc["boards"].append(old)

    with open(target, "w", encoding="utf-8") as f:
        yaml.safe_dump(doc, f, sort_keys=False)
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))

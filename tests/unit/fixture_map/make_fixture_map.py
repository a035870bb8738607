#!/usr/bin/env python3
"""Writes a variant of asn_regmap.yaml that uses what the real map does not use yet: block
versions (route one version past the real map's, lock at version 2, each still driving the
version before), items `since` the new version, a ring from the board, and a profile that
pins the older versions. Tests build it with the real
generator (as fixture_register_map()) and open emulated boards and Devices on it.

    make_fixture_map.py asn_regmap.yaml fixture.yaml
"""

import sys

import yaml


def main(source: str, target: str) -> int:
    with open(source, encoding="utf-8") as f:
        doc = yaml.safe_load(f)
    blocks = {b["name"]: b for b in doc["blocks"]}

    # A new interrupt cause for the ring.
    irq = next(r for r in blocks["id"]["registers"] if r["name"] == "irq_status")
    irq["fields"].append({"name": "lock_completion", "bits": "5", "reset": 0})
    mask = next(r for r in blocks["id"]["registers"] if r["name"] == "irq_mask")
    mask["fields"].append({"name": "lock_completion", "bits": "5", "reset": 0})

    # route one version on: one more register.
    route = blocks["route"]
    current = route["version"]
    route["version"], route["min_version"] = current + 1, current
    last = max(r["offset"] for r in route["registers"])
    route["registers"].append({
        "name": "hop_limit", "offset": last + 4, "access": "RW", "since": current + 1,
        "description": "Hops a packet may take before it is dropped.",
        "fields": [{"name": "hops", "bits": "7:0", "reset": 8}]})

    # lock v2: a completion ring the board fills, with its indices.
    lock = blocks["lock"]
    lock["version"], lock["min_version"] = 2, 1
    lock["registers"] += [
        {"name": "completion_producer", "offset": 0x38, "access": "RO", "since": 2,
         "fields": [{"name": "index", "bits": "15:0", "reset": 0}]},
        {"name": "completion_consumer", "offset": 0x3c, "access": "RW", "since": 2,
         "fields": [{"name": "index", "bits": "15:0", "reset": 0}]},
    ]
    lock["rings"] = [{
        "name": "completion", "direction": "from_board", "offset": 0xc0000, "entry_bytes": 16,
        "max_entries": 1024, "entries_from": "lock_ring_entries", "since": 2,
        "producer": "completion_producer.index", "consumer": "completion_consumer.index",
        "irq": "lock_completion", "description": "Lock grants the engine reports.",
        "fields": [{"name": "request", "word": 0, "bits": "31:0"},
                   {"name": "status", "word": 1, "bits": "3:0"},
                   {"name": "token_lo", "word": 2, "bits": "31:0"},
                   {"name": "token_hi", "word": 3, "bits": "31:0"}]}]
    doc["capabilities"].append({"name": "lock_ring_entries", "bits": 16, "default": 256,
                                "description": "Entries of each lock ring."})

    # The same board with the older firmware.
    old = dict(next(b for b in doc["boards"] if b["name"] == "netfpga-1g"))
    old["name"] = "netfpga-1g-v1"
    old["block_versions"] = {"route": current, "lock": 1}
    doc["boards"].append(old)

    with open(target, "w", encoding="utf-8") as f:
        yaml.safe_dump(doc, f, sort_keys=False)
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))

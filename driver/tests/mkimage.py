#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Write a board memory image for the QEMU kernel test: the register space of a board
profile as the board presents it at reset (block list, id block, port blocks), laid out
the way the register map says (every block at an offset aligned to its size, in the
order of the YAML, `instances: ports` once per port). The image backs QEMU's
ivshmem-plain BAR 2, so its size is a power of two.

  mkimage.py asn_regmap.yaml out.img [--profile netfpga-1g] [--bad magic|version]
  mkimage.py asn_regmap.yaml out.img --layout   # prints "name offset" per block
"""
import argparse
import struct
import sys

import yaml


def layout(regmap, ports):
    blocks, offset = [], 0
    for block in regmap["blocks"]:
        count = ports if block.get("instances") == "ports" else 1
        for i in range(count):
            size = block["size"]
            offset = (offset + size - 1) // size * size
            blocks.append((block, i, offset))
            offset += size
    return blocks, offset


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("yaml")
    parser.add_argument("out")
    parser.add_argument("--profile", default="netfpga-1g")
    parser.add_argument("--bad", choices=["magic", "version"])
    parser.add_argument("--layout", action="store_true")
    args = parser.parse_args()
    with open(args.yaml, encoding="utf-8") as f:
        regmap = yaml.safe_load(f)
    board = next(b for b in regmap["boards"] if b["name"] == args.profile)
    ports = board["ports"]
    port_list = ports if isinstance(ports, list) else [
        {"media": ports["media"], "speed_mbps": ports["speed_mbps"]}] * ports["count"]
    blocks, end = layout(regmap, len(port_list))
    if args.layout:
        for block, i, offset in blocks:
            print(f"{block['name']} {i} 0x{offset:x}")
        return 0
    size = 1
    while size < end:
        size *= 2
    mem = bytearray(size)

    def put(off, value):
        struct.pack_into("<I", mem, off, value & 0xFFFFFFFF)

    for n, (block, i, offset) in enumerate(blocks):
        nxt = blocks[n + 1][2] if n + 1 < len(blocks) else 0
        put(offset + 0x0, block["type"])
        version = block["version"]
        if args.bad == "version" and block["name"] == "route":
            version += 1
        put(offset + 0x4, version)
        put(offset + 0x8, nxt)
        if block["name"] == "id":
            put(offset + 0x0C, regmap["regmap"]["magic"] ^ (1 if args.bad == "magic" else 0))
            put(offset + 0x10, regmap["regmap"]["version"]["major"] << 16 |
                regmap["regmap"]["version"]["minor"])
            put(offset + 0x14, regmap["board_kinds"][board["kind"]])
            caps = regmap["capabilities"]
            put(offset + 0x18, len(caps))
            put(offset + 0x34, 1)  # generation: first power-on
            for k, cap in enumerate(caps):
                if cap.get("value") == "port_count":
                    value = len(port_list)
                else:
                    value = board.get(cap["name"], cap.get("default", 0))
                put(offset + block["capabilities_offset"] + 4 * k, value)
        elif block["name"] == "port":
            media = regmap["port_media"][port_list[i]["media"]]
            put(offset + 0x0C, i | media << 8)
            put(offset + 0x10, port_list[i]["speed_mbps"])
    with open(args.out, "wb") as f:
        f.write(mem)
    return 0


if __name__ == "__main__":
    sys.exit(main())

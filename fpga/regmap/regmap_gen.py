#!/usr/bin/env python3
"""Generate every copy of the asn register map from fpga/regmap/asn_regmap.yaml.

Outputs (all deterministic: the same YAML always gives byte-identical files):
  --c-header   asn_regs.h         C header for the kernel driver and C/C++ user space
  --cpp-header asn/regmap/regs.hpp  typed C++ references (RegRef, FieldRef, TableRef)
  --cpp-desc   asn_regmap_desc.cc C++ descriptor table for the emulated board and asnd
  --docs       registers.md       the operator/developer reference

The YAML is validated first; an error names the block, register or field and exits 1.
"""

import argparse
import hashlib
import os
import re
import sys

import yaml

HEADER_REGISTERS = [
    ("block_type", 0x00, "Block type (identifies the block).", "block_type"),
    ("block_version", 0x04, "Block version; software refuses versions it does not know.",
     "block_version"),
    ("block_next", 0x08, "Offset of the next block from the start of the register space; 0 = last.",
     "block_next"),
]

ACCESS = ("RO", "RW", "WO", "W1C")

# reset_from / entries_from names -> BoardValue enumerators.
BOARD_VALUES = {
    "magic": "kMagic",
    "regmap_major": "kRegmapMajor",
    "regmap_minor": "kRegmapMinor",
    "block_type": "kBlockType",
    "block_version": "kBlockVersion",
    "block_next": "kBlockNext",
    "kind": "kKind",
    "port_count": "kPortCount",
    "vcs_per_port": "kVcsPerPort",
    "queue_depth": "kQueueDepth",
    "tdm_slots": "kTdmSlots",
    "route_entries": "kRouteEntries",
    "stripe_groups": "kStripeGroups",
    "lock_entries": "kLockEntries",
    "clock_hz": "kClockHz",
    "port_index": "kPortIndex",
    "port_media": "kPortMedia",
    "port_speed_mbps": "kPortSpeedMbps",
    "generation": "kGeneration",
}


class MapError(Exception):
    pass


def fail(where, msg):
    raise MapError(f"{where}: {msg}")


def parse_bits(where, bits):
    text = str(bits)
    m = re.fullmatch(r"(\d+)(?::(\d+))?", text)
    if not m:
        fail(where, f"bits '{text}' is not 'msb:lsb' or 'bit'")
    msb = int(m.group(1))
    lsb = int(m.group(2)) if m.group(2) is not None else msb
    if msb < lsb or msb > 31:
        fail(where, f"bits '{text}' out of order or past bit 31")
    return lsb, msb - lsb + 1


def mask_of(lsb, width):
    return 0xFFFFFFFF if width >= 32 else ((1 << width) - 1) << lsb


def require(where, obj, key, kind=None):
    if key not in obj:
        fail(where, f"missing '{key}'")
    value = obj[key]
    if kind is not None and not isinstance(value, kind):
        fail(where, f"'{key}' must be {kind.__name__}")
    return value


def check_keys(where, obj, allowed):
    for key in obj:
        if key not in allowed:
            fail(where, f"unknown key '{key}'")


def camel(name):
    return "".join(part.capitalize() for part in name.split("_"))


def load(path):
    with open(path, encoding="utf-8") as f:
        raw = f.read()
    doc = yaml.safe_load(raw)
    digest = int.from_bytes(hashlib.sha256(raw.encode()).digest()[:8], "little")
    return normalise(doc, digest)


def normalise(doc, digest):
    check_keys("top level", doc, {"regmap", "board_kinds", "port_media", "boards", "blocks"})
    rm = require("top level", doc, "regmap", dict)
    version = require("regmap", rm, "version", dict)
    m = {
        "name": require("regmap", rm, "name", str),
        "major": int(require("regmap.version", version, "major", int)),
        "minor": int(require("regmap.version", version, "minor", int)),
        "magic": int(require("regmap", rm, "magic", int)),
        "digest": digest,
        "board_kinds": dict(require("top level", doc, "board_kinds", dict)),
        "port_media": dict(require("top level", doc, "port_media", dict)),
    }
    m["boards"] = [normalise_board(m, b) for b in require("top level", doc, "boards", list)]
    m["blocks"] = []
    types = set()
    for b in require("top level", doc, "blocks", list):
        block = normalise_block(m, b)
        if block["type"] in types:
            fail(f"block {block['name']}", f"type 0x{block['type']:04x} used twice")
        types.add(block["type"])
        m["blocks"].append(block)
    if not m["blocks"] or m["blocks"][0]["name"] != "id":
        fail("blocks", "the first block must be 'id' (it holds the magic at offset 0x0c)")
    return m


def normalise_board(m, b):
    where = f"board {b.get('name', '?')}"
    check_keys(where, b, {"name", "kind", "description", "clock_hz", "ports", "vcs_per_port",
                          "queue_depth", "tdm_slots", "route_entries", "stripe_groups",
                          "lock_entries"})
    kind_name = require(where, b, "kind", str)
    if kind_name not in m["board_kinds"]:
        fail(where, f"kind '{kind_name}' is not in board_kinds")
    ports_spec = require(where, b, "ports")
    if isinstance(ports_spec, dict):
        ports = [{"media": ports_spec["media"], "speed_mbps": ports_spec["speed_mbps"]}
                 for _ in range(int(ports_spec["count"]))]
    else:
        ports = list(ports_spec)
    for i, p in enumerate(ports):
        if p["media"] not in m["port_media"]:
            fail(f"{where} port {i}", f"media '{p['media']}' is not in port_media")
    if not 1 <= len(ports) <= 64:
        fail(where, "a board has 1 to 64 ports")
    board = {
        "name": require(where, b, "name", str),
        "kind_name": kind_name,
        "kind": int(m["board_kinds"][kind_name]),
        "description": " ".join(str(b.get("description", "")).split()),
        "clock_hz": int(require(where, b, "clock_hz", int)),
        "ports": ports,
    }
    for key in ("vcs_per_port", "queue_depth", "tdm_slots", "route_entries", "stripe_groups",
                "lock_entries"):
        board[key] = int(require(where, b, key, int))
    if not 1 <= board["vcs_per_port"] <= 8:
        fail(where, "vcs_per_port must be 1..8 (port.vc_occupancy has 8 elements)")
    return board


def board_value(m, board, source):
    """Value of a reset_from / entries_from name for a board (None if per instance)."""
    if source == "port_count":
        return len(board["ports"])
    if source in ("vcs_per_port", "queue_depth", "tdm_slots", "route_entries", "stripe_groups",
                  "lock_entries", "clock_hz", "kind"):
        return board[source]
    if source == "magic":
        return m["magic"]
    if source == "regmap_major":
        return m["major"]
    if source == "regmap_minor":
        return m["minor"]
    if source == "port_media":
        return max(m["port_media"].values())
    if source == "port_speed_mbps":
        return max(p["speed_mbps"] for p in board["ports"])
    if source == "port_index":
        return len(board["ports"]) - 1
    return None


def normalise_block(m, b):
    name = b.get("name", "?")
    where = f"block {name}"
    check_keys(where, b, {"name", "type", "version", "size", "instances", "description",
                          "registers", "tables"})
    size = int(require(where, b, "size", int))
    if size < 0x100 or size & (size - 1):
        fail(where, f"size 0x{size:x} must be a power of two of at least 0x100")
    instances = require(where, b, "instances", str)
    if instances not in ("one", "ports"):
        fail(where, "instances must be 'one' or 'ports'")
    block = {
        "name": name,
        "type": int(require(where, b, "type", int)),
        "version": int(require(where, b, "version", int)),
        "size": size,
        "instances": instances,
        "description": " ".join(str(b.get("description", "")).split()),
        "registers": [],
        "tables": [],
    }
    if not 0 < block["type"] <= 0xFFFF:
        fail(where, "type must be 1..0xffff")
    for reg_name, offset, desc, source in HEADER_REGISTERS:
        block["registers"].append({
            "name": reg_name, "offset": offset, "width": 32, "count": 1, "access": "RO",
            "description": desc, "header": True,
            "fields": [{"name": "value", "lsb": 0, "width": 32 if reg_name == "block_next" else 16,
                        "access": "RO", "reset": 0, "reset_from": source, "description": ""}],
        })
    for r in b.get("registers", []):
        block["registers"].append(normalise_register(m, block, r))
    for t in b.get("tables", []):
        block["tables"].append(normalise_table(m, block, t))
    check_layout(m, block)
    return block


def normalise_register(m, block, r):
    where = f"block {block['name']} register {r.get('name', '?')}"
    check_keys(where, r, {"name", "offset", "width", "count", "access", "description", "fields"})
    width = int(r.get("width", 32))
    if width not in (32, 64):
        fail(where, "width must be 32 or 64")
    access = require(where, r, "access", str)
    if access not in ACCESS:
        fail(where, f"access '{access}' is not one of {', '.join(ACCESS)}")
    reg = {
        "name": require(where, r, "name", str),
        "offset": int(require(where, r, "offset", int)),
        "width": width,
        "count": int(r.get("count", 1)),
        "access": access,
        "description": " ".join(str(r.get("description", "")).split()),
        "header": False,
        "fields": [],
    }
    if reg["offset"] % 4:
        fail(where, f"offset 0x{reg['offset']:x} is not 32-bit aligned")
    if width == 64:
        if "fields" in r:
            fail(where, "a 64-bit register is one value and has no fields")
        if reg["offset"] % 8:
            fail(where, "a 64-bit register must be 64-bit aligned")
        if access != "RO":
            fail(where, "64-bit registers are read-only counters")
        return reg
    fields = r.get("fields")
    if not fields:
        fail(where, "a 32-bit register needs fields")
    used = 0
    names = set()
    for f in fields:
        fwhere = f"{where} field {f.get('name', '?')}"
        check_keys(fwhere, f, {"name", "bits", "reset", "reset_from", "access", "description"})
        lsb, fwidth = parse_bits(fwhere, require(fwhere, f, "bits"))
        fmask = mask_of(lsb, fwidth)
        if used & fmask:
            fail(fwhere, "overlaps another field")
        used |= fmask
        fname = require(fwhere, f, "name", str)
        if fname in names:
            fail(fwhere, "name used twice")
        names.add(fname)
        faccess = f.get("access", access)
        if faccess not in ACCESS:
            fail(fwhere, f"access '{faccess}' is not one of {', '.join(ACCESS)}")
        reset = int(f.get("reset", 0))
        reset_from = f.get("reset_from")
        if reset_from is not None:
            if reset_from not in BOARD_VALUES:
                fail(fwhere, f"reset_from '{reset_from}' is not a board value")
            for board in m["boards"]:
                v = board_value(m, board, reset_from)
                if v is not None and v > (mask_of(0, fwidth)):
                    fail(fwhere, f"board {board['name']}'s {reset_from} = {v} does not fit "
                                 f"{fwidth} bits")
        elif reset > mask_of(0, fwidth):
            fail(fwhere, f"reset value {reset} does not fit {fwidth} bits")
        if faccess in ("WO", "W1C") and reset:
            fail(fwhere, f"a {faccess} field resets to 0")
        reg["fields"].append({
            "name": fname, "lsb": lsb, "width": fwidth, "access": faccess, "reset": reset,
            "reset_from": reset_from or "constant",
            "description": " ".join(str(f.get("description", "")).split()),
        })
    return reg


def normalise_table(m, block, t):
    where = f"block {block['name']} table {t.get('name', '?')}"
    check_keys(where, t, {"name", "offset", "active_offset", "entry_bytes", "max_entries",
                          "entries_from", "access", "swap", "description", "fields"})
    access = require(where, t, "access", str)
    if access not in ("RO", "RW"):
        fail(where, "a table window is RO or RW")
    table = {
        "name": require(where, t, "name", str),
        "offset": int(require(where, t, "offset", int)),
        "active_offset": int(t.get("active_offset", 0)),
        "entry_bytes": int(require(where, t, "entry_bytes", int)),
        "max_entries": int(require(where, t, "max_entries", int)),
        "entries_from": require(where, t, "entries_from", str),
        "access": access,
        "swap": t.get("swap", ""),
        "description": " ".join(str(t.get("description", "")).split()),
        "fields": [],
    }
    if table["entry_bytes"] % 4 or table["entry_bytes"] == 0:
        fail(where, "entry_bytes must be a non-zero multiple of 4")
    if table["offset"] % 4 or table["active_offset"] % 4:
        fail(where, "window offsets must be 32-bit aligned")
    if table["entries_from"] not in BOARD_VALUES:
        fail(where, f"entries_from '{table['entries_from']}' is not a board value")
    for board in m["boards"]:
        n = board_value(m, board, table["entries_from"])
        if n is None or n > table["max_entries"]:
            fail(where, f"board {board['name']} needs {n} entries; the window holds "
                        f"{table['max_entries']}")
    if bool(table["active_offset"]) != bool(table["swap"]):
        fail(where, "a double-buffered table needs both active_offset and swap")
    if table["swap"]:
        reg_name, _, field_name = table["swap"].partition(".")
        regs = {r["name"]: r for r in block["registers"]}
        reg = regs.get(reg_name)
        if reg is None or field_name not in {f["name"] for f in reg["fields"]}:
            fail(where, f"swap '{table['swap']}' names no register field of the block")
        field = next(f for f in reg["fields"] if f["name"] == field_name)
        if field["access"] != "WO":
            fail(where, f"swap field '{table['swap']}' must be WO")
        table["swap_register"], table["swap_field"] = reg_name, field_name
        if access != "RW":
            fail(where, "the shadow bank of a double-buffered table is RW")
    else:
        table["swap_register"] = table["swap_field"] = ""
    words = table["entry_bytes"] // 4
    used = [0] * words
    for f in t.get("fields", []):
        fwhere = f"{where} field {f.get('name', '?')}"
        check_keys(fwhere, f, {"name", "word", "bits", "array", "bits_each", "description"})
        desc = " ".join(str(f.get("description", "")).split())
        if "array" in f:
            each = int(require(fwhere, f, "bits_each", int))
            if each not in (1, 2, 4, 8, 16, 32):
                fail(fwhere, "bits_each must divide 32")
            items = []
            for i in range(int(f["array"])):
                bit = i * each
                items.append((f"{f['name']}{i}", bit // 32, bit % 32, each))
        else:
            lsb, width = parse_bits(fwhere, require(fwhere, f, "bits"))
            items = [(require(fwhere, f, "name", str), int(require(fwhere, f, "word", int)), lsb,
                      width)]
        for name, word, lsb, width in items:
            if word >= words:
                fail(fwhere, f"word {word} is past the {table['entry_bytes']}-byte entry")
            fmask = mask_of(lsb, width)
            if used[word] & fmask:
                fail(fwhere, f"{name} overlaps another field")
            used[word] |= fmask
            table["fields"].append({"name": name, "word": word, "lsb": lsb, "width": width,
                                    "description": desc})
    return table


def check_layout(m, block):
    where = f"block {block['name']}"
    spans = []
    for r in block["registers"]:
        spans.append((r["offset"], r["offset"] + r["count"] * r["width"] // 8, f"register {r['name']}"))
    for t in block["tables"]:
        size = t["entry_bytes"] * t["max_entries"]
        spans.append((t["offset"], t["offset"] + size, f"table {t['name']}"))
        if t["active_offset"]:
            spans.append((t["active_offset"], t["active_offset"] + size, f"table {t['name']}_active"))
    spans.sort()
    for (s0, e0, n0), (s1, e1, n1) in zip(spans, spans[1:]):
        if s1 < e0:
            fail(where, f"{n1} at 0x{s1:x} overlaps {n0} (0x{s0:x}-0x{e0 - 1:x})")
    if spans[-1][1] > block["size"]:
        fail(where, f"{spans[-1][2]} ends at 0x{spans[-1][1]:x}, past the block size 0x{block['size']:x}")
    names = [r["name"] for r in block["registers"]] + [t["name"] for t in block["tables"]]
    names += [t["name"] + "_active" for t in block["tables"] if t["active_offset"]]
    dup = {n for n in names if names.count(n) > 1}
    if dup:
        fail(where, f"names used twice: {', '.join(sorted(dup))}")
    if any(t["active_offset"] for t in block["tables"]):
        status = next((r for r in block["registers"] if r["name"] == "status"), None)
        bank = status and next((f for f in status["fields"] if f["name"] == "active_bank"), None)
        if not bank or bank["access"] != "RO" or bank["width"] != 1:
            fail(where, "a block with double-buffered tables needs an RO 1-bit status.active_bank")
    if block["tables"]:
        first_table = min(t["offset"] for t in block["tables"])
        last_reg = max(r["offset"] + r["count"] * r["width"] // 8 for r in block["registers"])
        if last_reg > first_table:
            fail(where, "registers must come before the first table window")


def register_reset(reg):
    return sum(f["reset"] << f["lsb"] for f in reg["fields"] if f["reset_from"] == "constant")


def writable_mask(reg):
    return sum(mask_of(f["lsb"], f["width"]) for f in reg["fields"] if f["access"] != "RO")


# --------------------------------------------------------------------------------------------
# C header

def c_ident(*parts):
    return "_".join(p.upper().replace("-", "_") for p in parts)


def gen_c_header(m):
    out = []
    w = out.append
    w("/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */")
    w("/* Generated by fpga/regmap/regmap_gen.py from asn_regmap.yaml. Do not edit. */")
    w("#ifndef ASN_REGS_H")
    w("#define ASN_REGS_H")
    w("")
    w("#ifdef __KERNEL__")
    w("#include <linux/types.h>")
    w("#else")
    w("#include <stdint.h>")
    w("#endif")
    w("")
    w(f"#define ASN_REGMAP_MAGIC 0x{m['magic']:08x}U")
    w(f"#define ASN_REGMAP_VERSION_MAJOR {m['major']}U")
    w(f"#define ASN_REGMAP_VERSION_MINOR {m['minor']}U")
    w(f"#define ASN_REGMAP_DIGEST 0x{m['digest']:016x}ULL")
    w("")
    w("/* Extract or place a field: ASN_FIELD_GET(ASN_ID_CAP_PORTS_PORTS, value). */")
    w("#define ASN_FIELD_GET(field, reg) (((uint32_t)(reg) & field##_MASK) >> field##_SHIFT)")
    w("#define ASN_FIELD_PREP(field, val) (((uint32_t)(val) << field##_SHIFT) & field##_MASK)")
    w("")
    w("/* Every block starts with these three registers. */")
    w("#define ASN_BLOCK_TYPE 0x00U")
    w("#define ASN_BLOCK_VERSION 0x04U")
    w("#define ASN_BLOCK_NEXT 0x08U")
    w("")
    w("/* Board kinds (id.board_kind). */")
    for name, value in sorted(m["board_kinds"].items(), key=lambda kv: kv[1]):
        w(f"#define {c_ident('ASN_BOARD_KIND', name)} 0x{int(value):04x}U")
    w("")
    w("/* Port media (port.port_info.media). */")
    for name, value in sorted(m["port_media"].items(), key=lambda kv: kv[1]):
        w(f"#define {c_ident('ASN_PORT_MEDIA', name)} {int(value)}U")
    for block in m["blocks"]:
        b = c_ident("ASN", block["name"])
        w("")
        w(f"/* Block {block['name']}: {block['description']} */")
        w(f"#define {b}_TYPE 0x{block['type']:04x}U")
        w(f"#define {b}_VERSION {block['version']}U")
        w(f"#define {b}_SIZE 0x{block['size']:x}U")
        for reg in block["registers"]:
            if reg["header"]:
                continue
            r = c_ident(b, reg["name"])
            if reg["count"] > 1:
                w(f"#define {r}(i) (0x{reg['offset']:x}U + {reg['width'] // 8}U * (i))")
                w(f"#define {r}_COUNT {reg['count']}U")
            else:
                w(f"#define {r} 0x{reg['offset']:x}U")
            if reg["width"] == 64:
                w(f"#define {r}_HI 0x{reg['offset'] + 4:x}U")
            for f in reg["fields"]:
                if len(reg["fields"]) == 1 and f["lsb"] == 0 and f["width"] == 32:
                    continue
                fi = c_ident(r, f["name"])
                w(f"#define {fi}_SHIFT {f['lsb']}U")
                w(f"#define {fi}_MASK 0x{mask_of(f['lsb'], f['width']):08x}U")
        for t in block["tables"]:
            tb = c_ident(b, t["name"])
            w(f"#define {tb} 0x{t['offset']:x}U")
            if t["active_offset"]:
                w(f"#define {tb}_ACTIVE 0x{t['active_offset']:x}U")
            w(f"#define {tb}_ENTRY_BYTES {t['entry_bytes']}U")
            w(f"#define {tb}_MAX_ENTRIES {t['max_entries']}U")
            for f in t["fields"]:
                fi = c_ident(tb, f["name"])
                w(f"#define {fi}_WORD {f['word']}U")
                w(f"#define {fi}_SHIFT {f['lsb']}U")
                w(f"#define {fi}_MASK 0x{mask_of(f['lsb'], f['width']):08x}U")
    w("")
    w("#endif /* ASN_REGS_H */")
    return "\n".join(out) + "\n"


# --------------------------------------------------------------------------------------------
# C++ typed references

def gen_cpp_header(m):
    out = []
    w = out.append
    w("// Generated by fpga/regmap/regmap_gen.py from asn_regmap.yaml. Do not edit.")
    w("#pragma once")
    w("")
    w('#include "asn/regmap/types.hpp"')
    w("")
    w("namespace asn::regs {")
    w("")
    w("using regmap::FieldRef;")
    w("using regmap::RegRef;")
    w("using regmap::TableFieldRef;")
    w("using regmap::TableRef;")
    w("")
    w(f"inline constexpr uint32_t kMagic = 0x{m['magic']:08x}u;")
    w(f"inline constexpr uint16_t kVersionMajor = {m['major']};")
    w(f"inline constexpr uint16_t kVersionMinor = {m['minor']};")
    w("")
    w("enum class BoardKind : uint16_t {")
    for name, value in sorted(m["board_kinds"].items(), key=lambda kv: kv[1]):
        w(f"  k{camel(name.replace('-', '_'))} = 0x{int(value):04x},")
    w("};")
    for block in m["blocks"]:
        w("")
        w(f"namespace {block['name']} {{")
        w(f"inline constexpr uint16_t kType = 0x{block['type']:04x};")
        w(f"inline constexpr uint16_t kVersion = {block['version']};")
        w(f"inline constexpr uint32_t kSize = 0x{block['size']:x};")
        for reg in block["registers"]:
            rn = "k" + camel(reg["name"])
            w(f"inline constexpr RegRef {rn}{{kType, 0x{reg['offset']:x}, {reg['width']}, {reg['count']}}};")
            for f in reg["fields"]:
                if reg["header"]:
                    continue
                fn = rn + camel(f["name"])
                w(f"inline constexpr FieldRef {fn}{{{rn}, {f['lsb']}, {f['width']}}};")
        for t in block["tables"]:
            tn = "k" + camel(t["name"])
            w(f"inline constexpr TableRef {tn}{{kType, 0x{t['offset']:x}, 0x{t['active_offset']:x}, "
              f"{t['entry_bytes']}, {t['max_entries']}}};")
            for f in t["fields"]:
                w(f"inline constexpr TableFieldRef {tn}{camel(f['name'])}{{{tn}, {f['word']}, "
                  f"{f['lsb']}, {f['width']}}};")
        w(f"}}  // namespace {block['name']}")
    w("")
    w("}  // namespace asn::regs")
    return "\n".join(out) + "\n"


# --------------------------------------------------------------------------------------------
# C++ descriptors

def cstr(text):
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def gen_cpp_desc(m):
    out = []
    w = out.append
    w("// Generated by fpga/regmap/regmap_gen.py from asn_regmap.yaml. Do not edit.")
    w('#include "asn/regmap/types.hpp"')
    w("")
    w("namespace asn::regmap {")
    w("namespace {")
    w("")
    for block in m["blocks"]:
        bn = block["name"]
        for reg in block["registers"]:
            if not reg["fields"]:
                continue
            w(f"constexpr FieldDesc k_{bn}_{reg['name']}_fields[] = {{")
            for f in reg["fields"]:
                w(f"    {{{cstr(f['name'])}, {f['lsb']}, {f['width']}, Access::k{f['access']}, "
                  f"0x{f['reset']:x}u, BoardValue::{BOARD_VALUES.get(f['reset_from'], 'kConstant')}, "
                  f"{cstr(f['description'])}}},")
            w("};")
        w(f"constexpr RegisterDesc k_{bn}_registers[] = {{")
        for reg in block["registers"]:
            fields = f"k_{bn}_{reg['name']}_fields" if reg["fields"] else "{}"
            w(f"    {{{cstr(reg['name'])}, 0x{reg['offset']:x}, {reg['width']}, {reg['count']}, "
              f"Access::k{reg['access']}, {fields}, {cstr(reg['description'])}}},")
        w("};")
        for t in block["tables"]:
            w(f"constexpr TableFieldDesc k_{bn}_{t['name']}_fields[] = {{")
            for f in t["fields"]:
                w(f"    {{{cstr(f['name'])}, {f['word']}, {f['lsb']}, {f['width']}, "
                  f"{cstr(f['description'])}}},")
            w("};")
        if block["tables"]:
            w(f"constexpr TableDesc k_{bn}_tables[] = {{")
            for t in block["tables"]:
                w(f"    {{{cstr(t['name'])}, 0x{t['offset']:x}, 0x{t['active_offset']:x}, "
                  f"{t['entry_bytes']}, {t['max_entries']}, BoardValue::{BOARD_VALUES[t['entries_from']]}, "
                  f"Access::k{t['access']}, {cstr(t['swap_register'])}, {cstr(t['swap_field'])}, "
                  f"k_{bn}_{t['name']}_fields, {cstr(t['description'])}}},")
            w("};")
        w("")
    w("constexpr BlockDesc kBlocks[] = {")
    for block in m["blocks"]:
        bn = block["name"]
        tables = f"k_{bn}_tables" if block["tables"] else "{}"
        inst = "kOne" if block["instances"] == "one" else "kPorts"
        w(f"    {{{cstr(bn)}, 0x{block['type']:04x}, {block['version']}, 0x{block['size']:x}, "
          f"Instances::{inst}, k_{bn}_registers, {tables}, {cstr(block['description'])}}},")
    w("};")
    w("")
    for board in m["boards"]:
        ident = board["name"].replace("-", "_")
        w(f"constexpr PortProfile k_{ident}_ports[] = {{")
        for p in board["ports"]:
            w(f"    {{{int(m['port_media'][p['media']])}, {int(p['speed_mbps'])}}},")
        w("};")
    w("constexpr BoardProfile kBoards[] = {")
    for board in m["boards"]:
        ident = board["name"].replace("-", "_")
        w(f"    {{{cstr(board['name'])}, {cstr(board['kind_name'])}, 0x{board['kind']:04x}, "
          f"{cstr(board['description'])}, {board['clock_hz']}u, k_{ident}_ports, "
          f"{board['vcs_per_port']}, {board['queue_depth']}, {board['tdm_slots']}, "
          f"{board['route_entries']}, {board['stripe_groups']}, {board['lock_entries']}}},")
    w("};")
    w("")
    w("constexpr NamedValue kBoardKinds[] = {")
    for name, value in sorted(m["board_kinds"].items(), key=lambda kv: kv[1]):
        w(f"    {{{cstr(name)}, 0x{int(value):x}}},")
    w("};")
    w("constexpr NamedValue kPortMedia[] = {")
    for name, value in sorted(m["port_media"].items(), key=lambda kv: kv[1]):
        w(f"    {{{cstr(name)}, {int(value)}}},")
    w("};")
    w("")
    w(f"constexpr RegisterMap kMap{{{cstr(m['name'])}, {m['major']}, {m['minor']}, "
      f"0x{m['magic']:08x}u, kBlocks, kBoards, kBoardKinds, kPortMedia, 0x{m['digest']:016x}ull}};")
    w("")
    w("}  // namespace")
    w("")
    w("const RegisterMap& register_map() { return kMap; }")
    w("")
    w("}  // namespace asn::regmap")
    return "\n".join(out) + "\n"


# --------------------------------------------------------------------------------------------
# Markdown

def md_escape(text):
    return text.replace("|", "\\|")


def gen_docs(m):
    out = []
    w = out.append
    w("# asn register map")
    w("")
    w("<!-- Generated by fpga/regmap/regmap_gen.py from fpga/regmap/asn_regmap.yaml. Do not edit:")
    w("     change the YAML and run `cmake --build build --target regmap-docs`. -->")
    w("")
    w(f"Register map version {m['major']}.{m['minor']}, magic `0x{m['magic']:08x}` "
      f"(\"{m['magic'].to_bytes(4, 'big').decode('ascii', 'replace')}\") at `id.magic` "
      "(offset `0x0c` of the block at offset 0).")
    w("")
    w("Conventions: offsets are bytes from the start of a block. Access types: **RO** read-only "
      "(a write is ignored and counted in `id.ro_write_count`), **RW** read-write, **WO** "
      "write-only (reads as zero; a write of 1 triggers the action), **W1C** write 1 to clear. "
      "Bits no field covers are reserved: they read as zero and ignore writes. An access to an "
      "offset that no register or table entry covers, or that is not 32-bit aligned, is a bus "
      "error (counted in `id.bus_error_count`, reads return 0xffffffff). Every block starts "
      "with `block_type`, `block_version` and `block_next` (absolute offset of the next block, "
      "0 for the last); blocks follow each other in the order below, each aligned to its "
      "size, `port` once per port. 64-bit counters keep the low word at the offset and the "
      "high word at offset + 4.")
    w("")
    w("Double-buffered tables have a shadow window that software writes and an `_active` "
      "window that reads the bank the data path uses; the named swap field exchanges them.")
    w("")
    w("## Board profiles")
    w("")
    w("| profile | kind | ports | VCs/port | queue depth | TDM slots | route entries | stripe groups | lock entries | clock |")
    w("|---|---|---|---|---|---|---|---|---|---|")
    for b in m["boards"]:
        media = {}
        for p in b["ports"]:
            key = f"{p['media']} {p['speed_mbps']} Mb/s"
            media[key] = media.get(key, 0) + 1
        ports = ", ".join(f"{n}x {k}" for k, n in media.items())
        w(f"| `{b['name']}` | {b['kind_name']} (0x{b['kind']:x}) | {ports} | {b['vcs_per_port']} | "
          f"{b['queue_depth']} | {b['tdm_slots']} | {b['route_entries']} | {b['stripe_groups']} | "
          f"{b['lock_entries']} | {b['clock_hz'] // 1000000} MHz |")
    w("")
    for b in m["boards"]:
        w(f"- `{b['name']}`: {b['description']}")
    w("")
    w("Board kinds: " + ", ".join(f"`{n}` = 0x{int(v):x}" for n, v in
                                  sorted(m["board_kinds"].items(), key=lambda kv: kv[1])) + ".")
    w("Port media: " + ", ".join(f"`{n}` = {int(v)}" for n, v in
                                 sorted(m["port_media"].items(), key=lambda kv: kv[1])) + ".")
    w("")
    w("## Blocks")
    w("")
    w("| block | type | version | size | instances |")
    w("|---|---|---|---|---|")
    for block in m["blocks"]:
        inst = "1" if block["instances"] == "one" else "one per port"
        w(f"| [`{block['name']}`](#block-{block['name']}) | 0x{block['type']:04x} | {block['version']} | "
          f"0x{block['size']:x} | {inst} |")
    for block in m["blocks"]:
        w("")
        w(f"## Block {block['name']}")
        w("")
        w(block["description"])
        w("")
        w("| offset | register | access | reset | fields | description |")
        w("|---|---|---|---|---|---|")
        for reg in block["registers"]:
            off = f"0x{reg['offset']:03x}"
            name = reg["name"]
            if reg["count"] > 1:
                last = reg["offset"] + (reg["count"] - 1) * reg["width"] // 8
                off += f"-0x{last:03x}"
                name += f"[{reg['count']}]"
            if reg["width"] == 64:
                name += " (64-bit)"
            if reg["fields"] and any(f["reset_from"] != "constant" for f in reg["fields"]):
                reset = "board"
            else:
                reset = f"0x{register_reset(reg):x}"
            fields = "<br>".join(
                (f"`{f['lsb'] + f['width'] - 1}:{f['lsb']}`" if f["width"] > 1 else f"`{f['lsb']}`")
                + f" {f['name']}"
                + (f" ({f['access']})" if f["access"] != reg["access"] else "")
                + (f": reset from {f['reset_from']}" if f["reset_from"] != "constant" else
                   (f" = {f['reset']}" if f["reset"] else ""))
                + (f" — {md_escape(f['description'])}" if f["description"] else "")
                for f in reg["fields"]) if not reg["header"] else ""
            w(f"| {off} | {name} | {reg['access']} | {reset} | {fields} | {md_escape(reg['description'])} |")
        for t in block["tables"]:
            w("")
            w(f"### Table {block['name']}.{t['name']}")
            w("")
            windows = f"shadow window 0x{t['offset']:x}"
            if t["active_offset"]:
                windows += (f", active window (`{t['name']}_active`, RO) 0x{t['active_offset']:x}, "
                            f"banks swapped by `{t['swap']}`")
            else:
                windows = f"window 0x{t['offset']:x} ({t['access']})"
            w(f"{t['description']} {t['entry_bytes']}-byte entries, up to {t['max_entries']} "
              f"(the board's {t['entries_from']}); {windows}.")
            w("")
            w("| word | bits | field | description |")
            w("|---|---|---|---|")
            for f in t["fields"]:
                bits = f"{f['lsb'] + f['width'] - 1}:{f['lsb']}" if f["width"] > 1 else f"{f['lsb']}"
                w(f"| {f['word']} | {bits} | {f['name']} | {md_escape(f['description'])} |")
    return "\n".join(out) + "\n"


def write_if_changed(path, text):
    if os.path.exists(path):
        with open(path, encoding="utf-8") as f:
            if f.read() == text:
                return
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(text)
    os.replace(tmp, path)


def main(argv):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("yaml")
    p.add_argument("--c-header")
    p.add_argument("--cpp-header")
    p.add_argument("--cpp-desc")
    p.add_argument("--docs")
    args = p.parse_args(argv)
    try:
        m = load(args.yaml)
    except MapError as e:
        print(f"{args.yaml}: {e}", file=sys.stderr)
        return 1
    except (OSError, yaml.YAMLError) as e:
        print(f"{args.yaml}: {e}", file=sys.stderr)
        return 1
    outputs = [(args.c_header, gen_c_header), (args.cpp_header, gen_cpp_header),
               (args.cpp_desc, gen_cpp_desc), (args.docs, gen_docs)]
    for path, gen in outputs:
        if path:
            write_if_changed(path, gen(m))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

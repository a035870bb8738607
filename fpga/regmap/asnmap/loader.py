"""Loads the register map from the YAML and validates it into model.py's typed objects.

Every check that can fail names the place (block, register, field, table, ring, board) and
what would be accepted.
"""

from __future__ import annotations

import hashlib
import re
from typing import Optional

import yaml

from .model import (
    ACCESS,
    INTRINSICS,
    PER_PORT_INTRINSICS,
    HEADER_REGISTERS,
    MAX_PORTS,
    MAX_CAPABILITIES,
    fail,
    mask_of,
    prose,
    Source,
    Capability,
    Port,
    BoardProfile,
    Field,
    Register,
    FieldRefName,
    TableField,
    Table,
    Ring,
    Block,
    RegisterMap,
)


class _Node:
    """One YAML mapping with the place it stands for, for messages."""

    def __init__(self, where: str, obj, allowed: set[str]):
        if not isinstance(obj, dict):
            fail(where, "expected a mapping of keys")
        for key in obj:
            if key not in allowed:
                fail(where, f"unknown key '{key}'")
        self.where = where
        self.obj = obj

    def has(self, key: str) -> bool:
        return key in self.obj

    def get(self, key: str, kind=None, default=None):
        """The value of `key` (checked against `kind`), or `default` when it is absent."""
        if key not in self.obj:
            return default
        value = self.obj[key]
        wrong_type = kind is not None and not isinstance(value, kind)
        if wrong_type or (kind is int and isinstance(value, bool)):
            names = kind.__name__ if isinstance(kind, type) else "/".join(k.__name__ for k in kind)
            fail(self.where, f"'{key}' must be {names}")
        return value

    def req(self, key: str, kind):
        if key not in self.obj:
            fail(self.where, f"missing '{key}'")
        return self.get(key, kind)


def parse_bits(where: str, bits) -> tuple[int, int]:
    text = str(bits)
    m = re.fullmatch(r"(\d+)(?::(\d+))?", text)
    if not m:
        fail(where, f"bits '{text}' is not 'msb:lsb' or 'bit'")
    msb = int(m.group(1))
    lsb = int(m.group(2)) if m.group(2) is not None else msb
    if msb < lsb or msb > 31:
        fail(where, f"bits '{text}' out of order or past bit 31")
    return lsb, msb - lsb + 1


def parse_field_name(where: str, text: str, what: str) -> FieldRefName:
    reg, dot, fld = str(text).partition(".")
    if not dot or not reg or not fld:
        fail(where, f"{what} '{text}' is not register.field")
    return FieldRefName(reg, fld)


def load(path: str) -> RegisterMap:
    with open(path, encoding="utf-8") as f:
        raw = f.read()
    doc = yaml.safe_load(raw)
    digest = int.from_bytes(hashlib.sha256(raw.encode()).digest()[:8], "little")
    return build(doc, digest)


def build(doc, digest: int) -> RegisterMap:
    top = _Node("top level", doc, {"regmap", "capabilities", "board_kinds", "port_media",
                                   "boards", "blocks"})
    rm = _Node("regmap", top.req("regmap", dict), {"name", "version", "magic"})
    version = _Node("regmap.version", rm.req("version", dict), {"major", "minor"})
    m = RegisterMap(
        name=rm.req("name", str),
        major=version.req("major", int),
        minor=version.req("minor", int),
        magic=rm.req("magic", int),
        digest=digest,
        board_kinds={str(k): int(v) for k, v in top.req("board_kinds", dict).items()},
        port_media={str(k): int(v) for k, v in top.req("port_media", dict).items()},
        capabilities=[],
        boards=[],
        blocks=[],
    )
    for i, c in enumerate(top.req("capabilities", list)):
        m.capabilities.append(build_capability(m, i, c))
    if len(m.capabilities) > MAX_CAPABILITIES:
        fail("capabilities", f"at most {MAX_CAPABILITIES}")
    m.boards = [build_board(m, b) for b in top.req("boards", list)]
    types = set()
    for b in top.req("blocks", list):
        block = build_block(m, b)
        if block.type in types:
            fail(f"block {block.name}", f"type 0x{block.type:04x} used twice")
        types.add(block.type)
        m.blocks.append(block)
    if not m.blocks or m.blocks[0].name != "id":
        fail("blocks", "the first block must be 'id' (it holds the magic at offset 0x0c)")
    if not m.blocks[0].capabilities_offset:
        fail("block id", "missing 'capabilities_offset' (where the id.cap_<name> registers go)")
    for board in m.boards:
        for name, pinned in board.block_versions.items():
            block = next((b for b in m.blocks if b.name == name), None)
            if block is None:
                fail(f"board {board.name}", f"block_versions names no block '{name}'")
            if not block.min_version <= pinned <= block.version:
                fail(f"board {board.name}", f"block {name} version {pinned} is outside "
                                            f"{block.min_version}..{block.version}")
    return m


def build_capability(m: RegisterMap, index: int, c) -> Capability:
    node = _Node(f"capability {c.get('name', '?') if isinstance(c, dict) else '?'}", c,
                 {"name", "bits", "max", "default", "value", "description"})
    name = node.req("name", str)
    if not re.fullmatch(r"[a-z][a-z0-9_]*", name):
        fail(node.where, "name must be lower_snake_case")
    if m.capability(name):
        fail(node.where, "name used twice")
    bits = node.req("bits", int)
    if not 1 <= bits <= 32:
        fail(node.where, "bits must be 1..32")
    cap_max = node.get("max", int, (1 << bits) - 1)
    if cap_max > (1 << bits) - 1:
        fail(node.where, f"max {cap_max} does not fit {bits} bits")
    value_from = node.get("value", str)
    if value_from not in (None, "port_count"):
        fail(node.where, f"value '{value_from}' is not a derived value (port_count)")
    return Capability(name, index, bits, cap_max, node.get("default", int), value_from,
                      prose(node.get("description")))


def build_board(m: RegisterMap, b) -> BoardProfile:
    name = b.get("name", "?") if isinstance(b, dict) else "?"
    allowed = {"name", "kind", "description", "ports", "block_versions"}
    allowed |= {c.name for c in m.capabilities if c.value_from is None}
    node = _Node(f"board {name}", b, allowed)
    kind_name = node.req("kind", str)
    if kind_name not in m.board_kinds:
        fail(node.where, f"kind '{kind_name}' is not in board_kinds")
    spec = node.req("ports", (dict, list))
    if isinstance(spec, dict):
        pn = _Node(f"{node.where} ports", spec, {"count", "media", "speed_mbps"})
        raw = [{"media": pn.req("media", str), "speed_mbps": pn.req("speed_mbps", int)}
               for _ in range(pn.req("count", int))]
    else:
        raw = spec
    ports = []
    for i, p in enumerate(raw):
        pn = _Node(f"{node.where} port {i}", p, {"media", "speed_mbps"})
        media = pn.req("media", str)
        if media not in m.port_media:
            fail(pn.where, f"media '{media}' is not in port_media")
        ports.append(Port(media, m.port_media[media], pn.req("speed_mbps", int)))
    if not 1 <= len(ports) <= MAX_PORTS:
        fail(node.where, f"a board has 1 to {MAX_PORTS} ports")
    values = []
    for cap in m.capabilities:
        if cap.value_from == "port_count":
            value = len(ports)
        elif node.has(cap.name):
            value = node.get(cap.name, int)
        elif cap.default is not None:
            value = cap.default
        else:
            fail(node.where, f"missing '{cap.name}' (capability without a default)")
        if not 0 <= value <= cap.max:
            fail(node.where, f"{cap.name} = {value} is outside 0..{cap.max}")
        values.append(value)
    pins = node.get("block_versions", dict, {})
    return BoardProfile(node.req("name", str), kind_name, m.board_kinds[kind_name],
                        prose(node.get("description")), ports, values,
                        {str(k): int(v) for k, v in pins.items()})


def build_block(m: RegisterMap, b) -> Block:
    name = b.get("name", "?") if isinstance(b, dict) else "?"
    node = _Node(f"block {name}", b, {"name", "type", "version", "min_version", "size",
                                      "instances", "description", "registers", "tables",
                                      "rings", "capabilities_offset"})
    size = node.req("size", int)
    if size < 0x100 or size & (size - 1):
        fail(node.where, f"size 0x{size:x} must be a power of two of at least 0x100")
    instances = node.req("instances", str)
    if instances not in ("one", "ports"):
        fail(node.where, "instances must be 'one' or 'ports'")
    version = node.req("version", int)
    min_version = node.get("min_version", int, version)
    if not 1 <= min_version <= version:
        fail(node.where, f"min_version {min_version} must be 1..version ({version})")
    block = Block(name=name, type=node.req("type", int), version=version,
                  min_version=min_version, size=size, instances=instances,
                  description=prose(node.get("description")),
                  capabilities_offset=node.get("capabilities_offset", int, 0))
    if not 0 < block.type <= 0xFFFF:
        fail(node.where, "type must be 1..0xffff")
    for reg_name, offset, width, desc in HEADER_REGISTERS:
        src = Source("intrinsic", reg_name, INTRINSICS.index(reg_name))
        block.registers.append(Register(
            reg_name, offset, 32, 1, "RO", desc,
            [Field("value", 0, width, "RO", 0, src, "", 1)], 1, header=True))
    for r in node.get("registers", list, []):
        block.registers.append(build_register(m, block, r))
    if block.capabilities_offset:
        add_capability_registers(m, block)
    for t in node.get("tables", list, []):
        block.tables.append(build_table(m, block, t))
    for r in node.get("rings", list, []):
        block.rings.append(build_ring(m, block, r))
    check_layout(block)
    return block


def check_since(where: str, block: Block, since: int, outer: int = 1) -> int:
    if not 1 <= since <= block.version:
        fail(where, f"since {since} is past the block's version {block.version}")
    if since < outer:
        fail(where, f"since {since} is older than what contains it (since {outer})")
    return since


def build_source(m: RegisterMap, where: str, name: str, width: int, block: Block) -> Source:
    if name in INTRINSICS:
        if name in PER_PORT_INTRINSICS and block.instances != "ports":
            fail(where, f"reset_from '{name}' only exists in per-port blocks")
        return Source("intrinsic", name, INTRINSICS.index(name))
    cap = m.capability(name)
    if cap is None:
        fail(where, f"reset_from '{name}' is neither a capability nor one of "
                    f"{', '.join(INTRINSICS)}")
    if cap.max > mask_of(0, width):
        fail(where, f"capability {name} (up to {cap.max}) does not fit {width} bits")
    return Source("capability", name, cap.index)


def build_register(m: RegisterMap, block: Block, r) -> Register:
    where = f"block {block.name} register {r.get('name', '?') if isinstance(r, dict) else '?'}"
    node = _Node(where, r, {"name", "offset", "width", "count", "access", "description",
                            "fields", "since"})
    width = node.get("width", int, 32)
    if width not in (32, 64):
        fail(where, "width must be 32 or 64")
    access = node.req("access", str)
    if access not in ACCESS:
        fail(where, f"access '{access}' is not one of {', '.join(ACCESS)}")
    reg = Register(name=node.req("name", str), offset=node.req("offset", int), width=width,
                   count=node.get("count", int, 1), access=access,
                   description=prose(node.get("description")), fields=[],
                   since=check_since(where, block, node.get("since", int, 1)))
    if reg.offset % 4:
        fail(where, f"offset 0x{reg.offset:x} is not 32-bit aligned")
    if reg.count < 1:
        fail(where, "count must be at least 1")
    if width == 64:
        if node.has("fields"):
            fail(where, "a 64-bit register is one value and has no fields")
        if reg.offset % 8:
            fail(where, "a 64-bit register must be 64-bit aligned")
        if access != "RO":
            fail(where, "64-bit registers are read-only counters")
        return reg
    fields = node.get("fields", list, [])
    if not fields:
        fail(where, "a 32-bit register needs fields")
    used = 0
    for f in fields:
        fwhere = f"{where} field {f.get('name', '?') if isinstance(f, dict) else '?'}"
        fnode = _Node(fwhere, f, {"name", "bits", "reset", "reset_from", "access",
                                  "description", "since"})
        lsb, fwidth = parse_bits(fwhere, fnode.req("bits", (str, int)))
        if used & mask_of(lsb, fwidth):
            fail(fwhere, "overlaps another field")
        used |= mask_of(lsb, fwidth)
        fname = fnode.req("name", str)
        if any(x.name == fname for x in reg.fields):
            fail(fwhere, "name used twice")
        faccess = fnode.get("access", str, access)
        if faccess not in ACCESS:
            fail(fwhere, f"access '{faccess}' is not one of {', '.join(ACCESS)}")
        reset = fnode.get("reset", int, 0)
        source = None
        if fnode.has("reset_from"):
            source = build_source(m, fwhere, fnode.req("reset_from", str), fwidth, block)
        elif reset > mask_of(0, fwidth):
            fail(fwhere, f"reset value {reset} does not fit {fwidth} bits")
        if faccess in ("WO", "W1C") and (reset or source):
            fail(fwhere, f"a {faccess} field resets to 0")
        reg.fields.append(Field(fname, lsb, fwidth, faccess, reset, source,
                                prose(fnode.get("description")),
                                check_since(fwhere, block, fnode.get("since", int, reg.since),
                                            reg.since)))
    return reg


def add_capability_registers(m: RegisterMap, block: Block):
    """id.cap_<name>: one RO word per capability, in list order (the hardware contract)."""
    for cap in m.capabilities:
        src = Source("capability", cap.name, cap.index)
        block.registers.append(Register(
            f"cap_{cap.name}", block.capabilities_offset + 4 * cap.index, 32, 1, "RO",
            cap.description, [Field("value", 0, cap.bits, "RO", 0, src, "", 1)], 1,
            capability=cap))
    end = block.capabilities_offset + 4 * MAX_CAPABILITIES
    for reg in block.registers:
        if reg.capability is None and block.capabilities_offset <= reg.offset < end:
            fail(f"block {block.name}", f"register {reg.name} is inside the capability "
                                        f"words (0x{block.capabilities_offset:x}-0x{end - 1:x})")


def build_values(where: str, node, width: int, count: int) -> dict[str, int]:
    """A field's named values: {name: value}, names lower_snake_case, values distinct and
    within the field."""
    if node and count > 1:
        fail(where, "an array field cannot have named values")
    out: dict[str, int] = {}
    for name, value in node.items():
        if not isinstance(name, str) or not re.fullmatch(r"[a-z][a-z0-9_]*", name):
            fail(where, f"value name '{name}' is not lower_snake_case")
        if not isinstance(value, int) or isinstance(value, bool) or value < 0:
            fail(where, f"value {name}: {value!r} is not a non-negative integer")
        if name in ("word", "shift", "mask", "count"):
            fail(where, f"value name '{name}' would clash with the field's own C macros")
        if value > mask_of(0, width):
            fail(where, f"value {name} = {value} does not fit {width} bits")
        if value in out.values():
            fail(where, f"value {name} = {value} is used twice")
        out[name] = value
    return dict(sorted(out.items(), key=lambda kv: kv[1]))


def build_entry_fields(where: str, node_fields, entry_bytes: int) -> list[TableField]:
    words = entry_bytes // 4
    used = [0] * words
    out = []
    for f in node_fields:
        fwhere = f"{where} field {f.get('name', '?') if isinstance(f, dict) else '?'}"
        fnode = _Node(fwhere, f, {"name", "word", "bits", "array", "bits_each", "description",
                                  "values"})
        name = fnode.req("name", str)
        if any(x.name == name for x in out):
            fail(fwhere, "name used twice")
        if fnode.has("array"):
            each = fnode.req("bits_each", int)
            if each not in (1, 2, 4, 8, 16, 32):
                fail(fwhere, "bits_each must divide 32")
            count = fnode.req("array", int)
            word = fnode.get("word", int, 0)
            items = [(word + (i * each) // 32, (i * each) % 32, each) for i in range(count)]
            tf = TableField(name, word, 0, each, count, prose(fnode.get("description")))
        else:
            lsb, width = parse_bits(fwhere, fnode.req("bits", (str, int)))
            word = fnode.req("word", int)
            items = [(word, lsb, width)]
            tf = TableField(name, word, lsb, width, 1, prose(fnode.get("description")))
        tf.values = build_values(fwhere, fnode.get("values", dict, {}), tf.width, tf.count)
        for word, lsb, width in items:
            if word >= words:
                fail(fwhere, f"word {word} is past the {entry_bytes}-byte entry")
            if used[word] & mask_of(lsb, width):
                fail(fwhere, "overlaps another field")
            used[word] |= mask_of(lsb, width)
        out.append(tf)
    return out


def resolve_field(where: str, block: Block, ref: FieldRefName, what: str, access: str,
                  width: Optional[int] = None):
    reg = block.register(ref.register)
    fld = reg and next((f for f in reg.fields if f.name == ref.field), None)
    if fld is None:
        fail(where, f"{what} '{ref}' names no register field of the block")
    if fld.access != access:
        fail(where, f"{what} field '{ref}' must be {access}")
    if width is not None and fld.width != width:
        fail(where, f"{what} field '{ref}' must be {width} bit{'s' if width > 1 else ''} wide")
    return fld


def entry_window(where: str, m: RegisterMap, block: Block, node: _Node, fixed_ok: bool = False):
    """entry_bytes, max_entries, and where the count comes from: a capability, or (tables
    only) a fixed `entries: N`."""
    entry_bytes = node.req("entry_bytes", int)
    if entry_bytes % 4 or entry_bytes == 0:
        fail(where, "entry_bytes must be a non-zero multiple of 4")
    max_entries = node.req("max_entries", int)
    if fixed_ok and node.has("entries"):
        if node.has("entries_from"):
            fail(where, "give entries_from (a capability) or entries (a number), not both")
        fixed = node.req("entries", int)
        if not 1 <= fixed <= max_entries:
            fail(where, f"entries {fixed} must be 1..max_entries ({max_entries})")
        return entry_bytes, max_entries, None, fixed
    cap_name = node.req("entries_from", str)
    cap = m.capability(cap_name)
    if cap is None:
        fail(where, f"entries_from '{cap_name}' is not a capability")
    for board in m.boards:
        n = board.capabilities[cap.index]
        if n > max_entries:
            fail(where, f"board {board.name} needs {n} entries; the window holds {max_entries}")
    return entry_bytes, max_entries, cap, 0


def build_table(m: RegisterMap, block: Block, t) -> Table:
    where = f"block {block.name} table {t.get('name', '?') if isinstance(t, dict) else '?'}"
    node = _Node(where, t, {"name", "offset", "active_offset", "entry_bytes", "max_entries",
                            "entries_from", "entries", "access", "swap", "bank", "description",
                            "fields", "since", "sensitive"})
    access = node.req("access", str)
    if access not in ("RO", "RW"):
        fail(where, "a table window is RO or RW")
    entry_bytes, max_entries, cap, fixed = entry_window(where, m, block, node, fixed_ok=True)
    table = Table(
        name=node.req("name", str), offset=node.req("offset", int),
        active_offset=node.get("active_offset", int, 0), entry_bytes=entry_bytes,
        max_entries=max_entries, entries_from=cap, fixed_entries=fixed, access=access,
        swap=FieldRefName("", ""), bank=FieldRefName("", ""),
        description=prose(node.get("description")),
        fields=build_entry_fields(where, node.get("fields", list, []), entry_bytes),
        since=check_since(where, block, node.get("since", int, 1)),
        sensitive=node.get("sensitive", bool, False))
    if table.offset % 4 or table.active_offset % 4:
        fail(where, "window offsets must be 32-bit aligned")
    buffered = (table.active_offset != 0, node.has("swap"), node.has("bank"))
    if any(buffered) and not all(buffered):
        fail(where, "a double-buffered table needs active_offset, swap and bank")
    if table.double_buffered:
        if access != "RW":
            fail(where, "the shadow bank of a double-buffered table is RW")
        table.swap = parse_field_name(where, node.req("swap", str), "swap")
        table.bank = parse_field_name(where, node.req("bank", str), "bank")
        resolve_field(where, block, table.swap, "swap", "WO")
        resolve_field(where, block, table.bank, "bank", "RO", width=1)
    return table


def check_irq_cause(where: str, m: RegisterMap, cause: str):
    irq = m.blocks[0].register("irq_status") if m.blocks else None
    if irq is None or not any(f.name == cause for f in irq.fields):
        fail(where, f"irq '{cause}' is not a field of id.irq_status")


def build_ring(m: RegisterMap, block: Block, r) -> Ring:
    where = f"block {block.name} ring {r.get('name', '?') if isinstance(r, dict) else '?'}"
    node = _Node(where, r, {"name", "direction", "offset", "entry_bytes", "max_entries",
                            "entries_from", "producer", "consumer", "doorbell", "irq",
                            "description", "fields", "since", "sensitive"})
    direction = node.req("direction", str)
    if direction not in ("to_board", "from_board"):
        fail(where, "direction must be to_board or from_board")
    entry_bytes, max_entries, cap, _ = entry_window(where, m, block, node)
    if max_entries & (max_entries - 1):
        fail(where, "max_entries must be a power of two (indices wrap)")
    ring = Ring(
        name=node.req("name", str), direction=direction, offset=node.req("offset", int),
        entry_bytes=entry_bytes, max_entries=max_entries, entries_from=cap,
        producer=parse_field_name(where, node.req("producer", str), "producer"),
        consumer=parse_field_name(where, node.req("consumer", str), "consumer"),
        doorbell=FieldRefName("", ""), irq=node.get("irq", str, ""),
        description=prose(node.get("description")),
        fields=build_entry_fields(where, node.get("fields", list, []), entry_bytes),
        since=check_since(where, block, node.get("since", int, 1)),
        sensitive=node.get("sensitive", bool, False))
    if ring.offset % 4:
        fail(where, "the ring window must be 32-bit aligned")
    # Whoever produces entries owns the producer index; the other side owns the consumer.
    software, board = ("RW", "RO") if direction == "to_board" else ("RO", "RW")
    resolve_field(where, block, ring.producer, "producer", software)
    resolve_field(where, block, ring.consumer, "consumer", board)
    if direction == "to_board":
        if ring.irq:
            fail(where, "a to_board ring rings a doorbell, not an irq")
        ring.doorbell = parse_field_name(where, node.req("doorbell", str), "doorbell")
        resolve_field(where, block, ring.doorbell, "doorbell", "WO")
    else:
        if node.has("doorbell"):
            fail(where, "a from_board ring raises an irq, it has no doorbell")
        if not ring.irq:
            fail(where, "missing 'irq' (the id.irq_status cause raised when entries arrive)")
        check_irq_cause(where, m, ring.irq)
    return ring


def check_layout(block: Block):
    where = f"block {block.name}"
    spans = [(r.offset, r.end, f"register {r.name}") for r in block.registers]
    for t in block.tables:
        spans.append((t.offset, t.offset + t.window_bytes, f"table {t.name}"))
        if t.double_buffered:
            spans.append((t.active_offset, t.active_offset + t.window_bytes,
                          f"table {t.name}_active"))
    for r in block.rings:
        spans.append((r.offset, r.offset + r.window_bytes, f"ring {r.name}"))
    spans.sort()
    for (s0, e0, n0), (s1, e1, n1) in zip(spans, spans[1:]):
        if s1 < e0:
            fail(where, f"{n1} at 0x{s1:x} overlaps {n0} (0x{s0:x}-0x{e0 - 1:x})")
    if spans[-1][1] > block.size:
        fail(where, f"{spans[-1][2]} ends at 0x{spans[-1][1]:x}, past the block size "
                    f"0x{block.size:x}")
    names = [r.name for r in block.registers] + [t.name for t in block.tables]
    names += [t.name + "_active" for t in block.tables if t.double_buffered]
    names += [r.name for r in block.rings]
    dup = {n for n in names if names.count(n) > 1}
    if dup:
        fail(where, f"names used twice: {', '.join(sorted(dup))}")
    windows = [t.offset for t in block.tables] + [r.offset for r in block.rings]
    if windows:
        last_reg = max(r.end for r in block.registers)
        if last_reg > min(windows):
            fail(where, "registers must come before the first table or ring window")

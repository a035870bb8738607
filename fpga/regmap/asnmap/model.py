"""The register map as typed objects (loader.py builds and validates them from the YAML).

The emitters only read these objects: they never see the YAML.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

ACCESS = ("RO", "RW", "WO", "W1C")

# Values a reset value can come from that are not capabilities: the map's identity, the
# block's place in the list, the port a per-port block stands for, the generation counter.
INTRINSICS = (
    "magic",
    "regmap_major",
    "regmap_minor",
    "block_type",
    "block_version",
    "block_next",
    "kind",
    "port_index",
    "port_media",
    "port_speed_mbps",
    "generation",
    "capability_count",
)
PER_PORT_INTRINSICS = ("port_index", "port_media", "port_speed_mbps")

HEADER_REGISTERS = (
    ("block_type", 0x00, 16, "Block type (identifies the block)."),
    ("block_version", 0x04, 16, "Block version; software refuses versions it does not know."),
    ("block_next", 0x08, 32,
     "Offset of the next block from the start of the register space; 0 = last."),
)

MAX_PORTS = 255  # port numbers are 8-bit fields throughout the map
MAX_CAPABILITIES = 64


class MapError(Exception):
    pass


def fail(where: str, msg: str):
    raise MapError(f"{where}: {msg}")


def mask_of(lsb: int, width: int) -> int:
    return 0xFFFFFFFF if width >= 32 else ((1 << width) - 1) << lsb


def camel(name: str) -> str:
    return "".join(part.capitalize() for part in name.replace("-", "_").split("_"))


def prose(text) -> str:
    return " ".join(str(text or "").split())


# --------------------------------------------------------------------------------------------
# The model

@dataclass(frozen=True)
class Source:
    """Where a reset value comes from when it is not a constant."""
    kind: str  # "capability" or "intrinsic"
    name: str
    index: int  # capability index, or index into INTRINSICS


@dataclass
class Capability:
    name: str
    index: int
    bits: int
    max: int
    default: Optional[int]
    value_from: Optional[str]  # "port_count": derived from the profile's port list
    description: str


@dataclass
class Port:
    media: str
    media_value: int
    speed_mbps: int


@dataclass
class BoardProfile:
    name: str
    kind_name: str
    kind: int
    description: str
    ports: list[Port]
    capabilities: list[int]  # value of every capability, by index
    block_versions: dict[str, int]  # pinned older versions, by block name

    def cap(self, name: str, caps: list[Capability]) -> int:
        return self.capabilities[next(c.index for c in caps if c.name == name)]


@dataclass
class Field:
    name: str
    lsb: int
    width: int
    access: str
    reset: int
    reset_from: Optional[Source]
    description: str
    since: int

    @property
    def mask(self) -> int:
        return mask_of(self.lsb, self.width)


@dataclass
class Register:
    name: str
    offset: int
    width: int
    count: int
    access: str
    description: str
    fields: list[Field]
    since: int
    header: bool = False      # block_type, block_version, block_next
    capability: Optional[Capability] = None  # an id.cap_<name> register

    @property
    def end(self) -> int:
        return self.offset + self.count * self.width // 8


@dataclass
class FieldRefName:
    """A register.field named by a table or ring (swap, bank, producer, ...)."""
    register: str
    field: str

    def __str__(self) -> str:
        return f"{self.register}.{self.field}" if self.register else ""


@dataclass
class TableField:
    name: str
    word: int
    lsb: int
    width: int
    count: int  # 1, or the elements of an array field (element i at bit lsb + i * width)
    description: str
    # Named values (an operation code, a record kind), in value order: the generator emits
    # them for the C header, the C++ references and the docs, so no side writes them out.
    values: dict[str, int] = field(default_factory=dict)


@dataclass
class Table:
    name: str
    offset: int
    active_offset: int
    entry_bytes: int
    max_entries: int
    entries_from: Optional[Capability]  # the capability that counts the entries, or
    fixed_entries: int                  # a fixed count (entries: N)
    access: str
    swap: FieldRefName
    bank: FieldRefName
    description: str
    fields: list[TableField]
    since: int
    # Holds clients' data (file ids, ranges): asn.ko lets only the board's owner read it.
    sensitive: bool = False

    @property
    def double_buffered(self) -> bool:
        return self.active_offset != 0

    @property
    def window_bytes(self) -> int:
        return self.entry_bytes * self.max_entries


@dataclass
class Ring:
    name: str
    direction: str  # "to_board" (software produces) or "from_board" (the board produces)
    offset: int
    entry_bytes: int
    max_entries: int
    entries_from: Capability
    producer: FieldRefName
    consumer: FieldRefName
    doorbell: FieldRefName  # to_board rings: the WO field that tells the board to look
    irq: str  # from_board rings: the id.irq_status cause raised when entries arrive
    description: str
    fields: list[TableField]
    since: int
    sensitive: bool = False  # as Table.sensitive

    @property
    def window_bytes(self) -> int:
        return self.entry_bytes * self.max_entries


@dataclass
class Block:
    name: str
    type: int
    version: int
    min_version: int
    size: int
    instances: str  # "one" or "ports"
    description: str
    registers: list[Register] = field(default_factory=list)
    tables: list[Table] = field(default_factory=list)
    rings: list[Ring] = field(default_factory=list)
    capabilities_offset: int = 0

    def register(self, name: str) -> Optional[Register]:
        return next((r for r in self.registers if r.name == name), None)


@dataclass
class RegisterMap:
    name: str
    major: int
    minor: int
    magic: int
    digest: int
    board_kinds: dict[str, int]
    port_media: dict[str, int]
    capabilities: list[Capability]
    boards: list[BoardProfile]
    blocks: list[Block]

    def capability(self, name: str) -> Optional[Capability]:
        return next((c for c in self.capabilities if c.name == name), None)


# --------------------------------------------------------------------------------------------
# Loading and validation

def register_reset(reg: Register) -> int:
    return sum(f.reset << f.lsb for f in reg.fields if f.reset_from is None)

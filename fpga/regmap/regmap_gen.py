#!/usr/bin/env python3
"""Generate every copy of the asn register map from fpga/regmap/asn_regmap.yaml.

Outputs (all deterministic: the same YAML always gives byte-identical files):
  --c-header   asn_regs.h           C header for the kernel driver and C/C++ user space
  --cpp-header asn/regmap/regs.hpp  typed C++ references and the capability enumeration
  --cpp-desc   asn_regmap_desc.cc   C++ descriptors for the emulated board and asnd
  --docs       registers.md         the operator/developer reference

The YAML is loaded into a typed model (asnmap/model.py, by asnmap/loader.py) and validated first; an error names
the block, register, field, table, ring or board and exits 1, writing nothing. Each output
has its own emitter (asnmap/emit_*.py).
"""

import argparse
import os
import sys

import yaml

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from asnmap import emit_c, emit_cpp_desc, emit_cpp_refs, emit_docs  # noqa: E402
from asnmap.loader import load  # noqa: E402
from asnmap.model import MapError  # noqa: E402


def write_if_changed(path: str, text: str):
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
    p.add_argument("--map-function", default="register_map",
                   help="name of the generated accessor (tests build maps of their own)")
    args = p.parse_args(argv)
    try:
        m = load(args.yaml)
    except (MapError, OSError, yaml.YAMLError) as e:
        print(f"{args.yaml}: {e}", file=sys.stderr)
        return 1
    outputs = [
        (args.c_header, lambda: emit_c.emit(m)),
        (args.cpp_header, lambda: emit_cpp_refs.emit(m)),
        (args.cpp_desc, lambda: emit_cpp_desc.emit(m, args.map_function)),
        (args.docs, lambda: emit_docs.emit(m)),
    ]
    for path, emit in outputs:
        if path:
            write_if_changed(path, emit())
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

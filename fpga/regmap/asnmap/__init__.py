"""The asn register map: a typed model of fpga/regmap/asn_regmap.yaml (model.py,
loaded and validated by loader.py) and one
emitter per generated output (emit_*.py)."""

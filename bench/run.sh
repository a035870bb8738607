#!/usr/bin/env bash
# Runs every benchmark and prints one table: time per operation and its ratio to the
# reference benchmark of the same run (BM_ModelRead32, a bare read of the emulated board), so
# figures taken on a busy, shared machine still compare. Builds first if needed.
#   bench/run.sh [extra Google Benchmark flags, e.g. --benchmark_repetitions=5]
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build -j"$(nproc)" --target regs_bench >/dev/null
out=$(mktemp)
trap 'rm -f "$out"' EXIT
build/bench/regs_bench --benchmark_format=json --benchmark_out="$out" \
  --benchmark_out_format=json "$@" >/dev/null
/usr/bin/python3 bench/table.py "$out" BM_ModelRead32

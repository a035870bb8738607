#!/usr/bin/env bash
# Runs every benchmark program and prints one table per program: time per operation and its
# ratio to the program's reference benchmark of the same run, so figures taken on a busy,
# shared machine still compare (schedule_bench reports its ratios per case, as counters).
# Builds first if needed.
#   bench/run.sh [PROGRAM...] [-- extra Google Benchmark flags, e.g. --benchmark_repetitions=5]
#   PROGRAM: regs, topology, schedule, fabric (default: all)
set -euo pipefail
cd "$(dirname "$0")/.."

# program -> its reference benchmark
declare -A reference=([regs]=BM_ModelRead32 [topology]=BM_RouterDigits [schedule]=""
                      [fabric]=BM_GetTopology)
programs=()
while [ $# -gt 0 ] && [ "$1" != "--" ]; do
  [ -n "${reference[$1]+set}" ] || { echo "bench/run.sh: unknown program '$1' (regs, topology, schedule, fabric)" >&2; exit 2; }
  programs+=("$1")
  shift
done
[ "${1:-}" = "--" ] && shift
[ ${#programs[@]} -gt 0 ] || programs=(regs topology schedule fabric)

scripts/install-deps.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
targets=()
for p in "${programs[@]}"; do targets+=("${p}_bench"); done
cmake --build build -j"$(nproc)" --target "${targets[@]}" >/dev/null
out=$(mktemp)
trap 'rm -f "$out"' EXIT
for p in "${programs[@]}"; do
  echo "== ${p}_bench =="
  "build/bench/${p}_bench" --benchmark_format=json --benchmark_out="$out" \
    --benchmark_out_format=json "$@" >/dev/null
  /usr/bin/python3 bench/table.py "$out" "${reference[$p]}"
  echo
done

#!/usr/bin/env bash
# The deadlock prover's time on the largest fabrics an emulated-255port board runs (4096
# routers: k = 8 in 4 dimensions, k = 16 and k = 32 in 3), per channel kind and mode, in CPU
# seconds (user + sys) of `asnsim prove`, with the proof's first words. Target: under 10 s each.
# Reference in the same run: the 16-router seed fabric (N = 64, k = 4), which takes almost
# nothing, so the column that matters is the absolute time; the machine's load shows in it.
#   bench/prove_bench.sh [--modes aldfb,ugal,minimal]
set -euo pipefail
cd "$(dirname "$0")/.."

modes=aldfb,ugal,minimal
while [ $# -gt 0 ]; do
  case "$1" in
    --modes) modes=$2; shift 2 ;;
    *) echo "usage: bench/prove_bench.sh [--modes aldfb,ugal,minimal]" >&2; exit 2 ;;
  esac
done

source bench/build_once.sh
asnsim=$build/tools/asnsim/asnsim
build_once "$asnsim"

printf '%-22s %-8s %-8s %10s  %s\n' fabric channels mode "cpu s" result
status=0
for fabric in "64 4" "32768 8" "65536 16" "131072 32"; do
  read -r n k <<<"$fabric"
  for channels in dilated double; do
    for mode in ${modes//,/ }; do
      out=$(mktemp)
      TIMEFORMAT='%U %S'
      cpu=$({ time "$asnsim" prove --terminals "$n" --k "$k" --channels "$channels" \
        --mode "$mode" >"$out"; } 2>&1) || status=1
      verdict=$(sed -n 2p "$out" | sed 's/^ *//' | cut -d: -f1)
      rm -f "$out"
      printf '%-22s %-8s %-8s %10.2f  %s\n' "N=$n k=$k" "$channels" "$mode" \
        "$(awk -v t="$cpu" 'BEGIN { split(t, a, " "); print a[1] + a[2] }')" "$verdict"
    done
  done
done
exit $status

#!/usr/bin/env bash
# Hot spots and combining (001 L487-569; docs/asnsim.md "Hot spots and combining"): asnsim with
# --traffic hotspot on the default fabric (N = 64, 4-ary 2-D 2DFB, ALDFB) and on N = 16, for
# h in {0.02, 0.05, 0.1, 0.2}, combining off and on, offered load 0.5 and 1.0. Each run's output
# goes to OUT_DIR/n<N>-h<h>-<off|on>/; then one table: per (N, h) the seed's bound
# 1/(1 + h(N-1)), the accepted rate per terminal off and on at each load, and the mean latency
# (request to reply) of the requests not for the hot address, off and on, at load 0.5 (tree
# saturation). Exit status 1 if any point ended in a state other than ok or saturated
# (deadlock, starvation, not-converged, no-serial-order).
#   bench/hotspot.sh [OUT_DIR] [-- extra asnsim flags, e.g. --wait-buffer 64]
#   (default hotspot/; --deadlock-cycles 20000 as bench/deadlock_matrix.sh: heads wait long,
#   fairly, behind a saturated tree). About 2 minutes on 2 cores.
# Uses the asnsim of $BENCH_BUILD_DIR (default build/), building it if missing.
set -euo pipefail
cd "$(dirname "$0")/.."

out=hotspot
if [ $# -gt 0 ] && [ "$1" != "--" ]; then
  out=$1
  shift
fi
[ "${1:-}" = "--" ] && shift
extra=("$@")

source bench/build_once.sh
asnsim=$build/tools/asnsim/asnsim
build_once "$asnsim"

for n in 16 64; do
  for h in 0.02 0.05 0.1 0.2; do
    for c in off on; do
      "$asnsim" --terminals "$n" --k 4 --traffic hotspot --hot-fraction "$h" --combining "$c" \
        --load 0.5,1.0 --deadlock-cycles 20000 --out "$out/n$n-h$h-$c" "${extra[@]}" \
        >/dev/null 2>&1 || true
    done
  done
done

# results.csv columns: 2 load, 4 accepted, 12 state, 15 hot_bound, 17 cold_latency_mean.
bad=0
printf '%4s %5s %7s | %-13s | %-13s | %-15s\n' N h bound "off 0.5/1.0" "on 0.5/1.0" \
  "cold lat off/on"
for n in 16 64; do
  for h in 0.02 0.05 0.1 0.2; do
    off=$out/n$n-h$h-off/results.csv
    on=$out/n$n-h$h-on/results.csv
    if [ ! -f "$off" ] || [ ! -f "$on" ]; then
      echo "N=$n h=$h: no results (see asnsim's output in $out)"
      bad=1
      continue
    fi
    read -r bound a_off b_off lat_off < <(awk -F, 'NR==2{b=$15; a=$4; l=$17} NR==3{c=$4}
      END{print b, a, c, l}' "$off")
    read -r a_on b_on lat_on < <(awk -F, 'NR==2{a=$4; l=$17} NR==3{c=$4} END{print a, c, l}' "$on")
    printf '%4s %5s %7s | %6s %6s | %6s %6s | %7s %7s\n' "$n" "$h" "$bound" "$a_off" "$b_off" \
      "$a_on" "$b_on" "$lat_off" "$lat_on"
    if awk -F, 'FNR>1 && $12!="ok" && $12!="saturated"{found=1} END{exit !found}' "$off" "$on"; then
      echo "  a point ended neither ok nor saturated: $off $on"
      bad=1
    fi
  done
done
exit $bad

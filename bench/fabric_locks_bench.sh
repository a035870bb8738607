#!/usr/bin/env bash
# Issue 25's lock figure across switches: lock+unlock pairs of 16 client threads through
# libasnclient's FabricSession (BM_FabricLockUnlock of locks_bench: each thread its own 8
# files, each file at the switch that owns its slot), on
#  - a fabric of 4 real asnd processes (a private 3-member etcd on loopback; the lock map
#    gives each switch 1024 of the 4096 slots), and
#  - the reference: one asnd outside any fabric, the same benchmark on its one endpoint.
# Every process shares this machine's cores, so the fabric cannot be 4 switches' worth
# faster here; the figure that says what a switch of a fabric can serve is asnd CPU per pair
# (the sum over the 4 asnd, from /proc/<pid>/stat), against the single switch's: the
# per-switch efficiency, target >= 90% (single CPU per pair / fabric CPU per pair). Pairs/s
# of both are printed beside it. Exits 1 when the efficiency misses 90%.
#   bench/fabric_locks_bench.sh [--repetitions N] [--switches N]
#   (default 3 repetitions, the median reported; 4 switches: 1 measures the fabric code path
#   alone, on one process as the reference)
# Uses the asnd and locks_bench of $BENCH_BUILD_DIR (default build/), building them if
# missing; etcd from Debian's etcd-server.
set -euo pipefail
cd "$(dirname "$0")/.."

repetitions=3
count=4
while [ $# -gt 0 ]; do
  case "$1" in
    --repetitions) repetitions=$2; shift 2 ;;
    --switches) count=$2; shift 2 ;;
    *) echo "fabric_locks_bench.sh: unknown argument '$1' (--repetitions N, --switches N)" >&2; exit 2 ;;
  esac
done

source bench/build_once.sh
asnd=$build/daemon/asnd
asnctl=$build/cli/asnctl
bench=$build/bench/locks_bench
build_once "$asnd" "$asnctl" "$bench"

run=$(mktemp -d /tmp/asn-fabriclocks-XXXXXX)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$run"
}
trap cleanup EXIT

calc() { python3 -c "print($1)"; }
ticks() { local t=0 p; for p in "$@"; do t=$((t + $(awk '{ print $14 + $15 }' /proc/"$p"/stat))); done; echo "$t"; }

# start_asnd NAME CONFIG: an asnd on its own emulated board; sets `pid` and `sock`.
start_asnd() {
  local d=$run/$1
  mkdir -p "$d"
  printf '%s' "$2" >"$d/asnd.yaml"
  "$asnd" --config "$d/asnd.yaml" --socket "$d/sock" --board "fl$$-$1" --shm-dir "$run/shm" \
    --state-dir "$d/state" --profile emulated-64port --reset-board --log-level warn >"$d/log" 2>&1 &
  pid=$!
  pids+=("$pid")
  sock=$d/sock
  for _ in $(seq 300); do [ -S "$sock" ] && return 0; sleep 0.1; done
  echo "fabric_locks_bench.sh: asnd $1 did not start:" >&2
  cat "$d/log" >&2
  exit 1
}

# measure NAME ENDPOINTS PIDS...: BM_FabricLockUnlock against ENDPOINTS; prints
# "pairs_per_s asnd_cpu_us_per_pair".
measure() {
  local name=$1 endpoints_list=$2
  shift 2
  local t0 pairs
  t0=$(ticks "$@")
  ASN_BENCH_FABRIC=$endpoints_list "$bench" --benchmark_filter='BM_FabricLockUnlock' \
    --benchmark_repetitions="$repetitions" --benchmark_format=json \
    --benchmark_out="$run/$name.json" --benchmark_out_format=json >/dev/null
  local used=$(($(ticks "$@") - t0))
  python3 - "$run/$name.json" "$used" "$(getconf CLK_TCK)" <<'PY'
import json, statistics, sys
runs = [b for b in json.load(open(sys.argv[1]))["benchmarks"] if b.get("run_type") == "iteration"]
for b in runs:
    if b.get("error_occurred"):
        sys.exit("BM_FabricLockUnlock failed: " + b.get("error_message", ""))
pairs = statistics.median(b["items_per_second"] for b in runs)
total = sum(b["iterations"] for b in runs)
cpu_us = int(sys.argv[2]) / int(sys.argv[3]) * 1e6 / total
print(f"{pairs:.0f} {cpu_us:.2f}")
PY
}

# The reference: one asnd, no fabric.
start_asnd single ""
read -r single_pairs single_cpu < <(measure single "unix:$sock" "$pid")

# The fabric: --switches of them (default 4), the slots split evenly.
source bench/etcd_cluster.sh
start_etcd_cluster "$run"
fabric_pids=()
fabric_endpoints=""
file=$run/fabric.yaml
{
  echo "fabric: lb"
  echo "topology: {terminals: 64, k: 4, channels: dilated}"
  echo "switches:"
} >"$file"
owners=""
slots=$((4096 / count))
for ((r = 0; r < count; r++)); do
  start_asnd "s$r" "$(printf 'fabric: {name: lb, switch: s%d, status_ttl: 3s, etcd: {endpoints: "%s"}}\nlocks: {max_ttl: 5s}\n' "$r" "$endpoints")"
  fabric_pids+=("$pid")
  fabric_endpoints+="${fabric_endpoints:+,}unix:$sock"
  echo "  - {name: s$r, router: $r, profile: emulated-64port, endpoint: 'unix:$sock'}" >>"$file"
  last=$(( r == count - 1 ? 4095 : (r + 1) * slots - 1 ))
  owners+="${owners:+, }{switch: s$r, slots: $((r * slots))-$last}"
done
echo "locks: {owners: [$owners]}" >>"$file"
rev=$("$asnctl" fabric apply "$file" --etcd "$endpoints" -o json | python3 -c 'import json,sys; print(json.load(sys.stdin)["revision"])')
"$asnctl" fabric status lb --etcd "$endpoints" --wait "$rev" --wait-timeout 60 >/dev/null
# The first map is a takeover on every switch: status lease + max_ttl + 1 s (9 s) before it
# grants. Sessions of 5 s (max_ttl), which libasnclient keeps alive.
sleep 10
read -r fabric_pairs fabric_cpu < <(measure fabric "$fabric_endpoints" "${fabric_pids[@]}")

efficiency=$(calc "round($single_cpu / $fabric_cpu, 3)")
printf '%-44s %12s %14s\n' "16 FabricSession threads" "pairs/s" "asnd us/pair"
printf '%-44s %12s %14s\n' "one asnd, no fabric (reference)" "$single_pairs" "$single_cpu"
printf '%-44s %12s %14s\n' "fabric of $count switches (sum of the asnd)" "$fabric_pairs" "$fabric_cpu"
printf 'pairs/s ratio fabric/single: %s; per-switch efficiency (CPU per pair): %s, target >= 0.9\n' \
  "$(calc "round($fabric_pairs / $single_pairs, 3)")" "$efficiency"
[ "$(calc "int($efficiency >= 0.9)")" = 1 ] || { echo "fabric_locks_bench.sh: per-switch efficiency $efficiency < 0.9" >&2; exit 1; }

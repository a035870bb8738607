#!/usr/bin/env bash
# Issue 25's fabric figures: a private 3-member etcd cluster on loopback and N real asnd
# processes on emulated-64port boards, each the agent of one switch of a 64-terminal (16
# routers) or 256-terminal (64 routers) 2DFB with k = 4 / k = 4. For each size:
#  - apply to in force: `asnctl fabric apply` of the whole fabric, then of a change of every
#    switch's routing mode, each until `asnctl fabric status --wait` sees every switch in
#    force (target: under 2 s for 64 switches);
#  - etcd writes: keys the apply's one Txn wrote, and the revisions the whole change took
#    (the Txn plus the switches' status reports), per switch (target O(switches): no write
#    per table entry);
#  - the reference: one `asnctl fabric status` (a read of the fabric and every switch's
#    status), and the ratio of each figure to it.
#   bench/fabric_apply_bench.sh [--sizes "16 64"]
# Uses the asnd and asnctl of $BENCH_BUILD_DIR (default build/), building them if missing;
# etcd from Debian's etcd-server.
set -euo pipefail
cd "$(dirname "$0")/.."

sizes="16 64"
while [ $# -gt 0 ]; do
  case "$1" in
    --sizes) sizes=$2; shift 2 ;;
    *) echo "fabric_apply_bench.sh: unknown argument '$1' (--sizes \"16 64\")" >&2; exit 2 ;;
  esac
done

source bench/build_once.sh
asnd=$build/daemon/asnd
asnctl=$build/cli/asnctl
build_once "$asnd" "$asnctl"

run=$(mktemp -d /tmp/asn-fabricbench-XXXXXX)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$run"
}
trap cleanup EXIT

now() { date +%s.%N; }
calc() { python3 -c "print($1)"; }

source bench/etcd_cluster.sh
start_etcd_cluster "$run"
export ASN_FABRIC=$endpoints
revision() { etcdctl --endpoints "$endpoints" get /bench/ready -w json | python3 -c 'import json,sys; print(json.load(sys.stdin)["header"]["revision"])'; }

printf '%-9s %-28s %12s %10s %s\n' switches measure value ratio target
missed=0
for n in $sizes; do
  terminals=$((n * 4))
  name=b$n
  file=$run/$name.yaml
  {
    echo "fabric: $name"
    echo "topology: {terminals: $terminals, k: 4, channels: dilated}"
    echo "routing: {mode: aldfb, enable: true}"
    echo "switches:"
    for ((r = 0; r < n; r++)); do
      echo "  - {name: s$r, router: $r, profile: emulated-64port, endpoint: 'unix:$run/$name-s$r/sock'}"
    done
  } >"$file"
  for ((r = 0; r < n; r++)); do
    d=$run/$name-s$r
    mkdir -p "$d"
    printf 'fabric: {name: %s, switch: s%d, status_ttl: 10s, etcd: {endpoints: "%s"}}\n' "$name" "$r" "$endpoints" >"$d/asnd.yaml"
    "$asnd" --config "$d/asnd.yaml" --socket "$d/sock" --board "fb$$-$name-$r" --shm-dir "$run/shm" \
      --state-dir "$d/state" --profile emulated-64port >"$d/log" 2>&1 &
    pids+=($!)
  done
  for ((r = 0; r < n; r++)); do
    for _ in $(seq 300); do grep -q 'serving on' "$run/$name-s$r/log" && break; sleep 0.1; done
  done
  # Every agent has reported (not-in-fabric) before the clock starts.
  for _ in $(seq 300); do
    [ "$(etcdctl --endpoints "$endpoints" get --prefix "/asn/fabrics/$name/switches/" --keys-only | grep -c '/status$')" -ge "$n" ] && break
    sleep 0.1
  done

  start=$(now); base=$(revision)
  out=$("$asnctl" fabric apply "$file" -o json)
  written=$(echo "$out" | python3 -c 'import json,sys; d=json.load(sys.stdin); print(len(d["added"])+len(d["changed"])+len(d["removed"]))')
  rev=$(echo "$out" | python3 -c 'import json,sys; print(json.load(sys.stdin)["revision"])')
  "$asnctl" fabric status "$name" --wait "$rev" --wait-timeout 120 >/dev/null
  first=$(calc "$(now) - $start"); first_revs=$(( $(revision) - base ))

  sed -i 's/mode: aldfb/mode: minimal/' "$file"
  start=$(now); base=$(revision)
  rev=$("$asnctl" fabric apply "$file" -o json | python3 -c 'import json,sys; print(json.load(sys.stdin)["revision"])')
  "$asnctl" fabric status "$name" --wait "$rev" --wait-timeout 120 >/dev/null
  change=$(calc "$(now) - $start"); change_revs=$(( $(revision) - base ))

  start=$(now)
  for _ in 1 2 3 4 5; do "$asnctl" fabric status "$name" >/dev/null; done
  reference=$(calc "($(now) - $start) / 5")

  printf '%-9s %-28s %10.3f s %10.1f %s\n' "$n" "apply to in force (new)" "$first" "$(calc "$first / $reference")" "$([ "$n" -ge 64 ] && echo '< 2 s')"
  printf '%-9s %-28s %10.3f s %10.1f %s\n' "$n" "apply to in force (change)" "$change" "$(calc "$change / $reference")" "$([ "$n" -ge 64 ] && echo '< 2 s')"
  printf '%-9s %-28s %12s %10s %s\n' "$n" "keys written by the Txn" "$written" "" "O(switches): $((n + 1))"
  printf '%-9s %-28s %12s %10s %s\n' "$n" "revisions, new fabric" "$first_revs" "" "O(switches)"
  printf '%-9s %-28s %12s %10s %s\n' "$n" "revisions, change" "$change_revs" "" "O(switches)"
  printf '%-9s %-28s %10.3f s %10s %s\n' "$n" "reference: fabric status" "$reference" "1.0" ""
  if [ "$n" -ge 64 ] && [ "$(calc "int($first >= 2 or $change >= 2)")" = 1 ]; then missed=1; fi
done
[ "$missed" = 0 ] || { echo "fabric_apply_bench.sh: apply to in force missed 2 s at 64 switches" >&2; exit 1; }

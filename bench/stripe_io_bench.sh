#!/usr/bin/env bash
# Issue 10's file target: a file of SIZE (default 1 GiB) written into a stripe group with
# `asnctl stripe write` and read back with `asnctl stripe read`, through asnd's gRPC streams
# into the emulated board's parity path and its storage servers (files under the state
# directory), against a running asnd. Reports MB/s (10^6 bytes of the file per second, the
# wall clock around the asnctl process) for a RAID 5 group (3 data + 1 parity, 64 KiB units)
# and a RAID 6 group (4 + 2), the read byte-checked with cmp, and the references measured in
# the same run on the same file: `cat FILE > /dev/null` (reading it from the page cache:
# the ceiling of anything that reads the file) and `cp FILE COPY` (a plain copy on the same
# disk, which writes each byte once where the parity path writes (d+p)/d of them), with the
# ratios stripe / reference. Then `asnctl stripe check` of each group (issue 27 item 4, a
# scrub: every member's units read and the parity verified) in MB/s of member data (data and
# parity, 10^6 bytes) per second of wall clock and per second of asnd's CPU time (user +
# system, from /proc: the members' reads from the page cache are asnd's system time), against
# the target of 1 GB/s.
#   bench/stripe_io_bench.sh [--size 1G] [--unit 64K]
# Uses the asnd and asnctl of $BENCH_BUILD_DIR (default build/), building them if missing.
set -euo pipefail
cd "$(dirname "$0")/.."

size=1G
unit=64K
while [ $# -gt 0 ]; do
  case "$1" in
    --size) size=$2; shift 2 ;;
    --unit) unit=$2; shift 2 ;;
    *) echo "stripe_io_bench.sh: unknown argument '$1' (--size N, --unit N)" >&2; exit 2 ;;
  esac
done

source bench/build_once.sh
asnd=$build/daemon/asnd
asnctl=$build/cli/asnctl
build_once "$asnd" "$asnctl"

run=$(mktemp -d "${BENCH_TMPDIR:-/var/tmp}/asn-stripeio-XXXXXX")
pid=
cleanup() {
  [ -n "$pid" ] && { kill -TERM "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; }
  rm -rf "$run"
}
trap cleanup EXIT

: >"$run/asnd.yaml"
"$asnd" --config "$run/asnd.yaml" --socket "$run/asnd.sock" --board "sio$$" \
  --profile emulated-64port --shm-dir "$run/shm" --state-dir "$run/state" --reset-board \
  --log-level warn >"$run/asnd.log" 2>&1 &
pid=$!
for _ in $(seq 200); do [ -S "$run/asnd.sock" ] && break; sleep 0.05; done
ctl() { "$asnctl" --socket "$run/asnd.sock" "$@"; }

echo "making a file of $size of random bytes ..." >&2
head -c "$size" /dev/urandom >"$run/file"
bytes=$(stat -c %s "$run/file")

# seconds COMMAND...: the wall clock around it.
seconds() {
  local start end
  start=$(date +%s.%N)
  "$@" >/dev/null
  end=$(date +%s.%N)
  echo "$end - $start" | bc -l
}
mbs() { echo "$bytes / $1 / 1000000" | bc -l; }

cat "$run/file" >/dev/null  # in the page cache for everyone alike
t_cat=$(seconds cat "$run/file")
t_cp=$(seconds cp "$run/file" "$run/copy")
rm -f "$run/copy"

ctl stripe create 1 --raid 5 --data 0,1,2 --parity 3 --unit "$unit" >/dev/null
ctl stripe create 2 --raid 6 --data 4,5,6,7 --parity 8,9 --unit "$unit" >/dev/null
declare -A t_write t_read
for g in 1 2; do
  t_write[$g]=$(seconds ctl stripe write "$g" "$run/file")
  t_read[$g]=$(seconds ctl stripe read "$g" --out "$run/back")
  cmp "$run/file" "$run/back" || { echo "stripe_io_bench.sh: group $g read back differs" >&2; exit 1; }
  rm -f "$run/back"
done

# cpu_seconds: asnd's user + system CPU time so far.
cpu_seconds() { awk -v hz="$(getconf CLK_TCK)" '{ print ($14 + $15) / hz }' "/proc/$pid/stat"; }
declare -A t_check c_check
for g in 1 2; do
  c0=$(cpu_seconds)
  t_check[$g]=$(seconds ctl stripe check "$g")
  c_check[$g]=$(echo "$(cpu_seconds) - $c0" | bc -l)
done

printf '%-42s %10s %10s %12s %12s\n' "case ($bytes bytes)" "seconds" "MB/s" "/ cat" "/ cp"
row() {
  printf '%-42s %10.3f %10.1f %12.3f %12.3f\n' "$1" "$2" "$(mbs "$2")" \
    "$(echo "$t_cat / $2" | bc -l)" "$(echo "$t_cp / $2" | bc -l)"
}
row "cat FILE > /dev/null (reference)" "$t_cat"
row "cp FILE COPY (reference)" "$t_cp"
row "stripe write, RAID 5 3+1, unit $unit" "${t_write[1]}"
row "stripe read,  RAID 5 3+1, unit $unit" "${t_read[1]}"
row "stripe write, RAID 6 4+2, unit $unit" "${t_write[2]}"
row "stripe read,  RAID 6 4+2, unit $unit" "${t_read[2]}"
echo "(ratios: the reference's time / the case's, so 1.0 is as fast as the reference)"
echo
printf '%-42s %14s %10s %14s %12s\n' "scrub (stripe check)" "member bytes" "seconds" "MB/s (wall)" "MB/s (CPU)"
check_row() {
  printf '%-42s %14d %10.3f %14.1f %12.1f\n' "$1" "$2" "$3" "$(echo "$2 / $3 / 1000000" | bc -l)" \
    "$(echo "$2 / $4 / 1000000" | bc -l)"
}
check_row "stripe check, RAID 5 3+1, unit $unit" $((bytes * 4 / 3)) "${t_check[1]}" "${c_check[1]}"
check_row "stripe check, RAID 6 4+2, unit $unit" $((bytes * 6 / 4)) "${t_check[2]}" "${c_check[2]}"
echo "(CPU: asnd's user + system seconds during the check; target 1000 MB/s of member data)"

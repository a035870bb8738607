#!/usr/bin/env bash
# The seed's figure (004 L1000-1025) in one command: asnsim on the seed's fabric, N = 64
# terminals, 4-ary 2-D 2DFB, links at twice the terminal rate (--channels dilated: two lanes of
# terminal rate per router pair), output-queued as the seed's switch (--internal_speedup 2,
# 004 L672-690), modes minimal, UGAL and ALDFB, offered load 0.1 to 1.0 in steps of 0.1, once
# per traffic pattern (benign, uniform, adversarial). Each traffic's full output (results.csv,
# settings.yaml, plots) goes to OUT_DIR/<traffic>/; then a table: per traffic and mode, the
# accepted throughput at load 1.0, the mean latency at loads 0.5 and 1.0, and the loads whose
# point did not end ok or saturated (deadlock, not-converged, or any state asnsim adds), and
# the loads whose accepted rate fell below half of what a lower load accepted ("collapse"): a
# point runs warmup + 3 to 30 windows, about 5,000 to 32,000 cycles, and the deadlock detector
# needs a head stuck for --deadlock_cycles (20,000), so a deadlock of part of the fabric that
# forms late in a point, or in a short point, shows only as that collapse.
#   bench/seed_fig.sh [OUT_DIR] [-- extra asnsim flags, e.g. --num_vcs 4]   (default seed-fig/)
# Extra flags are passed to every run after the ones below (asnsim's last flag wins); to change
# the figure's settings for good, edit `flags`. Uses the asnsim of $BENCH_BUILD_DIR (default
# build/), building it if missing. asnsim runs its points on every core (--threads 0).
set -euo pipefail
cd "$(dirname "$0")/.."

out=seed-fig
if [ $# -gt 0 ] && [ "$1" != "--" ]; then
  out=$1
  shift
fi
[ "${1:-}" = "--" ] && shift
extra=("$@")

source bench/build_once.sh
asnsim=$build/tools/asnsim/asnsim
build_once "$asnsim"

# The seed's setup; one flag per line, so that a new flag is one more line.
flags=(
  --terminals 64 --k 4
  --channels dilated
  --internal_speedup 2
  --mode 'minimal,ugal,aldfb'
  --load 0.1:1.0:0.1
  --deadlock_cycles 20000
)

for traffic in benign uniform adversarial; do
  echo "== $traffic ==" >&2
  mkdir -p "$out/$traffic"
  rc=0
  "$asnsim" "${flags[@]}" --traffic "$traffic" --out "$out/$traffic" "${extra[@]}" \
    >"$out/$traffic/table.txt" || rc=$?
  # 3: a deadlocked point (named in the CSV); anything else is a failed run.
  if [ "$rc" -ne 0 ] && [ "$rc" -ne 3 ]; then
    echo "seed_fig.sh: asnsim failed on $traffic traffic (exit $rc)" >&2
    exit "$rc"
  fi
done

/usr/bin/python3 - "$out" <<'EOF'
import csv
import sys

out = sys.argv[1]


def at(rows, load):
    return next((r for r in rows if abs(float(r["load"]) - load) < 1e-9), None)


def fmt(row, key, digits):
    if row is None:
        return "-"
    if row["state"] == "deadlock":
        return "deadlock"
    return f"{float(row[key]):.{digits}f}"


print(f"{'traffic':<12} {'mode':<8} {'accepted@1.0':>12} {'lat@0.5':>9} {'lat@1.0':>9}  problems")
for traffic in ("benign", "uniform", "adversarial"):
    with open(f"{out}/{traffic}/results.csv") as f:
        rows = list(csv.DictReader(f))
    for mode in ("minimal", "ugal", "aldfb"):
        points = sorted((r for r in rows if r["mode"] == mode), key=lambda r: float(r["load"]))
        problems = {}
        best = 0.0  # the highest accepted rate at a lower load
        for r in points:
            load = f"{float(r['load']):.1f}"
            if r["state"] not in ("ok", "saturated"):
                problems.setdefault(r["state"], []).append(load)
            elif float(r["accepted"]) < 0.5 * best:
                problems.setdefault(f"collapse (from {best:.3f})", []).append(load)
            if r["state"] != "deadlock":
                best = max(best, float(r["accepted"]))
        note = "; ".join(f"{state} at {','.join(loads)}" for state, loads in problems.items())
        print(f"{traffic:<12} {mode:<8} {fmt(at(points, 1.0), 'accepted', 3):>12} "
              f"{fmt(at(points, 0.5), 'latency_mean', 1):>9} "
              f"{fmt(at(points, 1.0), 'latency_mean', 1):>9}  {note or '-'}")
print(f"(accepted: fraction of capacity; latency: cycles; full results in {out}/<traffic>/)")
EOF

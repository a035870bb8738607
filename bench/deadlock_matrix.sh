#!/usr/bin/env bash
# The deadlock and starvation validation matrix of the escape-VC rule: asnsim with modes
# ALDFB, UGAL and minimal, offered load 0.1 to 1.0 in steps of 0.1 and --deadlock_cycles 20000,
# (by default) over seeds 1..N x traffic {uniform, randperm, adversarial (in-row shift), routershift,
# bitcomp} x VC buffers {2, 8} flits x {IQ (internal_speedup 1), OQ (internal_speedup 2, output
# queues)}, on the default fabric (N = 64, 4-ary 2-D 2DFB, dilated channels, 2 VCs, 1-flit
# packets) with the default warm-up and sample settings. Each run's output goes to
# OUT_DIR/<traffic>-b<buffers>-<iq|oq>-s<seed>/; then one table: per (traffic, buffers, IQ/OQ)
# the points run, the deadlocked and starved points, and ALDFB's accepted throughput at load
# 1.0 (the minimum over the seeds), and under it every deadlocked or starved point with its
# report. Exit status 1 if any point deadlocked or starved, 0 otherwise.
#   bench/deadlock_matrix.sh [OUT_DIR] [--seeds N] [--deadlock_cycles N] [-- asnsim flags]
#   (defaults: deadlock-matrix/, 5 seeds, 20000 cycles). The extra flags go to every run and
#   may not repeat one the script sets (asnsim takes each flag once): e.g. `-- --warmup 500
#   --sample 500 --max_samples 3` for a quick look.
# A point that deadlocks or starves stops there (asnsim exits 3 or 4) and the matrix goes on.
# asnsim runs each sweep's 30 points on every core (--threads $(nproc)); the runs go one after
# the other. Uses the asnsim of $BENCH_BUILD_DIR (default build/), building it if missing.
set -euo pipefail
cd "$(dirname "$0")/.."

out=deadlock-matrix
seeds=5
deadlock_cycles=20000
extra=()
while [ $# -gt 0 ]; do
  case $1 in
    --seeds)
      seeds=$2
      shift 2
      ;;
    --deadlock_cycles)
      deadlock_cycles=$2
      shift 2
      ;;
    --)
      shift
      extra=("$@")
      break
      ;;
    -*)
      echo "usage: bench/deadlock_matrix.sh [OUT_DIR] [--seeds N] [--deadlock_cycles N]" \
        "[-- asnsim flags]" >&2
      exit 2
      ;;
    *)
      out=$1
      shift
      ;;
  esac
done

source bench/build_once.sh
asnsim=$build/tools/asnsim/asnsim
build_once "$asnsim"

# The matrix's fixed settings; one flag per line, so that a new flag is one more line.
flags=(
  --terminals 64 --k 4
  --mode 'aldfb,ugal,minimal'
  --load 0.1:1.0:0.1
  --deadlock_cycles "$deadlock_cycles"
  --threads "$(nproc)"
)

start=$SECONDS
for traffic in uniform randperm adversarial routershift bitcomp; do
  for buffers in 2 8; do
    for queues in iq oq; do
      speedup=1
      [ "$queues" = oq ] && speedup=2
      for seed in $(seq 1 "$seeds"); do
        dir=$out/$traffic-b$buffers-$queues-s$seed
        mkdir -p "$dir"
        echo "== $traffic, $buffers-flit VCs, ${queues^^}, seed $seed ($((SECONDS - start)) s)" >&2
        rc=0
        "$asnsim" "${flags[@]}" --traffic "$traffic" --vc_buf_size "$buffers" \
          --internal_speedup "$speedup" --seed "$seed" --out "$dir" "${extra[@]}" \
          >"$dir/table.txt" 2>"$dir/stderr.txt" || rc=$?
        # 3: a deadlocked point, 4: a starved one (both in the CSV); anything else failed.
        if [ "$rc" -ne 0 ] && [ "$rc" -ne 3 ] && [ "$rc" -ne 4 ]; then
          echo "deadlock_matrix.sh: asnsim failed on $dir (exit $rc):" >&2
          cat "$dir/stderr.txt" >&2
          exit "$rc"
        fi
      done
    done
  done
done
echo "matrix: $((SECONDS - start)) s wall" >&2

/usr/bin/python3 - "$out" "$seeds" <<'EOF'
import csv
import sys

out, seeds = sys.argv[1], int(sys.argv[2])
failed = []
print(f"{'traffic':<12} {'buffers':>7} {'queues':>6} {'points':>6} {'deadlock':>8} "
      f"{'starved':>7} {'ALDFB@1.0 (min)':>15}")
for traffic in ("uniform", "randperm", "adversarial", "routershift", "bitcomp"):
    for buffers in (2, 8):
        for queues in ("iq", "oq"):
            points = deadlocks = starved = 0
            aldfb = []
            for seed in range(1, seeds + 1):
                run = f"{out}/{traffic}-b{buffers}-{queues}-s{seed}"
                with open(f"{run}/results.csv") as f:
                    rows = list(csv.DictReader(f))
                points += len(rows)
                for r in rows:
                    if r["state"] in ("deadlock", "starvation"):
                        deadlocks += r["state"] == "deadlock"
                        starved += r["state"] == "starvation"
                        failed.append(f"{traffic} b{buffers} {queues.upper()} seed {seed} "
                                      f"{r['mode']} load {float(r['load']):.1f}: {r['state']} "
                                      f"(see {run}/table.txt)")
                    elif r["mode"] == "aldfb" and abs(float(r["load"]) - 1.0) < 1e-9:
                        aldfb.append(float(r["accepted"]))
            # A stuck ALDFB point at 1.0 measured nothing: shown as "-".
            best = f"{min(aldfb):.3f}" if len(aldfb) == seeds else "-"
            print(f"{traffic:<12} {buffers:>7} {queues.upper():>6} {points:>6} {deadlocks:>8} "
                  f"{starved:>7} {best:>15}")
print(f"(modes aldfb, ugal, minimal; loads 0.1-1.0; {seeds} seeds; accepted: fraction of "
      f"capacity; full results in {out}/)")
for line in failed:
    print("  " + line)
sys.exit(1 if failed else 0)
EOF

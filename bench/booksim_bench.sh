#!/usr/bin/env bash
# Issue 23's speed comparison: asnsim against BookSim2 on the same fabric and load, CPU time
# (user + sys) of each process, in the same run (the two alternate, case by case, so a busy
# machine slows both alike). Target: asnsim >= 10x faster at load 0.1 and near saturation.
#
# The fabric: N = 64 terminals, 4-ary 2-D flattened butterfly (16 routers of 4 terminals, one
# channel of terminal rate per router pair: asnsim --channels plain, BookSim topology flatfly
# with k 4, n 2, c 4, x 4, y 4, xr 2, yr 2, use_noc_latency 0, i.e. 1-cycle channels). Same
# router parameters on both sides: 2 VCs of 8 flits, 1-flit packets, iSLIP switch allocator
# with 1 iteration, no internal speedup (input-queued), uniform traffic, Bernoulli injection
# of `load` flits per cycle and terminal; minimal routing (BookSim ran_min) and UGAL (BookSim
# ugal). Each run simulates a fixed number of cycles (--cycles, default 100,000): 7 warm-up
# periods of cycles/10 and 3 measured ones (BookSim: warmup_periods 7, sample_period
# cycles/10, max_samples 10, no convergence test (stopping thresholds -1), no latency abort
# (latency_thres -1), then its drain of the measured packets, a few cycles, which it counts;
# asnsim: --warmup, --sample, --min_samples 3 --max_samples 3, one thread). The table divides
# each process's CPU time by the cycles it simulated (BookSim's "Time taken is N cycles"), so
# building the network and reading the configuration count in both.
#
# Where the two models still differ (docs/asnsim.md "Settings and BookSim2"):
#  - minimal routing: BookSim's ran_min is dimension-order (X then Y), any VC; asnsim's
#    minimal is the board's minimal adaptive routing (the least-occupied productive port,
#    compared with T_h), the VC chosen by the engine's forward/reverse rule.
#  - UGAL: BookSim decides at the source by hops x used credits of the minimal and of the
#    non-minimal first port (threshold 2), toward a random intermediate terminal that differs
#    only in the dimensions to correct, with one VC half per phase; asnsim's UGAL is the board's:
#    minimal while a productive port is under T_h, else via a random router, VC by the engine's
#    rule.
#  - pipeline: BookSim's router has separate VC and switch allocation stages (routing_delay 0,
#    vc_alloc_delay 1, sw_alloc_delay 1, st_final_delay 1) and 1-cycle injection and ejection
#    channels; asnsim allocates the VC in the routing engine, its hop is routing_delay (1) +
#    channel_latency (1) cycles, and its injection channel takes no time. Zero-load latency is
#    therefore higher in BookSim.
#  - flow control: BookSim is wormhole, asnsim virtual cut-through (the same for 1-flit
#    packets); BookSim's source queues are unbounded, asnsim's hold 64 packets.
#
#   BOOKSIM=/path/to/booksim bench/booksim_bench.sh [--reps N] [--cycles N]
#     --reps N    runs per case and simulator; the median is reported (default 3)
#     --cycles N  simulated cycles per run, a multiple of 10 (default 100000)
# Exits 2 when BOOKSIM is not set or not executable, 1 when a case misses the 10x target or a
# run fails. Uses the asnsim of $BENCH_BUILD_DIR (default build/), building it if missing.
set -euo pipefail
cd "$(dirname "$0")/.."

reps=3
cycles=100000
while [ $# -gt 0 ]; do
  case "$1" in
    --reps) reps=$2; shift 2 ;;
    --cycles) cycles=$2; shift 2 ;;
    *) echo "booksim_bench.sh: unknown argument '$1' (--reps N, --cycles N)" >&2; exit 2 ;;
  esac
done
if ! [[ $reps =~ ^[1-9][0-9]*$ ]] || ! [[ $cycles =~ ^[1-9][0-9]*0$ ]]; then
  echo "booksim_bench.sh: --reps must be a positive integer, --cycles a multiple of 10" >&2
  exit 2
fi

if [ -z "${BOOKSIM:-}" ] || [ ! -x "$BOOKSIM" ]; then
  cat >&2 <<'EOF'
booksim_bench.sh: set BOOKSIM to the path of a BookSim2 binary, built outside this repository:
  apt-get install -y flex bison
  git clone https://github.com/booksim/booksim2 /tmp/booksim2
  make -C /tmp/booksim2/src -j2
  BOOKSIM=/tmp/booksim2/src/booksim bench/booksim_bench.sh
EOF
  exit 2
fi

source bench/build_once.sh
asnsim=$build/tools/asnsim/asnsim
build_once "$asnsim"

# case name, asnsim mode, BookSim routing_function, load. Near saturation: just below the
# load where either simulator stops accepting what is offered (uniform traffic, this fabric).
cases=(
  "minimal-0.1 minimal ran_min 0.1"
  "minimal-sat minimal ran_min 0.55"
  "ugal-0.1 ugal ugal 0.1"
  "ugal-sat ugal ugal 0.3"
)

period=$((cycles / 10))
run=$(mktemp -d /tmp/asn-booksimbench-XXXXXX)
trap 'rm -rf "$run"' EXIT

# The BookSim configuration shared by every case; routing_function and injection_rate are
# given on the command line.
cat >"$run/flatfly.cfg" <<EOF
topology = flatfly;
k = 4;
n = 2;
c = 4;
x = 4;
y = 4;
xr = 2;
yr = 2;
use_noc_latency = 0;
router = iq;
num_vcs = 2;
vc_buf_size = 8;
wait_for_tail_credit = 0;
vc_allocator = islip;
sw_allocator = islip;
alloc_iters = 1;
routing_delay = 0;
vc_alloc_delay = 1;
sw_alloc_delay = 1;
st_final_delay = 1;
credit_delay = 0;
input_speedup = 1;
output_speedup = 1;
internal_speedup = 1.0;
traffic = uniform;
injection_process = bernoulli;
injection_rate_uses_flits = 1;
packet_size = 1;
use_read_write = 0;
sim_type = latency;
warmup_periods = 7;
sample_period = $period;
max_samples = 10;
stopping_thres = -1.0;
acc_stopping_thres = -1.0;
latency_thres = -1.0;
sim_count = 1;
seed = 1;
EOF

# Runs a command with its output to $1, prints its CPU time (user + sys, seconds) and returns
# its exit status.
cpu_time() {
  local log=$1 rc=0 t
  shift
  if [ -x /usr/bin/time ]; then
    /usr/bin/time -f '%U %S' -o "$log.time" "$@" >"$log" 2>&1 || rc=$?
    # (a failed command's time file starts with "Command exited with non-zero status N")
    tail -n 1 "$log.time" | awk '{ print $1 + $2 }'
  else  # bash's `times` in a subshell: its second line is the subshell's children's times
    t=$( ("$@" >"$log" 2>&1; echo $? >"$log.rc"; times) | tail -n 1)
    rc=$(cat "$log.rc")
    awk -v t="$t" 'BEGIN { split(t, a, /[ ms]+/); print a[1] * 60 + a[2] + a[3] * 60 + a[4] }'
  fi
  return "$rc"
}

: >"$run/results"
for rep in $(seq "$reps"); do
  for c in "${cases[@]}"; do
    read -r name mode routing load <<<"$c"
    echo "booksim_bench.sh: rep $rep/$reps, $name" >&2
    log=$run/$name.$rep
    # BookSim exits 255 (main returns -1) when its simulation succeeded, 0 when it did not.
    rc=0
    cpu=$(cpu_time "$log.booksim" "$BOOKSIM" "$run/flatfly.cfg" routing_function="$routing" \
      injection_rate="$load") || rc=$?
    simulated=$(sed -n 's/^Time taken is \([0-9]*\) cycles$/\1/p' "$log.booksim")
    if [ "$rc" -ne 255 ] || [ -z "$simulated" ]; then
      echo "booksim_bench.sh: BookSim failed on $name (exit $rc):" >&2
      tail -n 20 "$log.booksim" >&2
      exit 1
    fi
    accepted=$(sed -n 's/^Accepted flit rate average = \([0-9.e+-]*\).*/\1/p' "$log.booksim" | tail -n 1)
    latency=$(sed -n 's/^Packet latency average = \([0-9.e+-]*\).*/\1/p' "$log.booksim" | tail -n 1)
    echo "$name booksim $cpu $simulated ${accepted:-nan} ${latency:-nan} ok" >>"$run/results"

    rc=0
    cpu=$(cpu_time "$log.asnsim" "$asnsim" --terminals 64 --k 4 --channels plain --mode "$mode" \
      --traffic uniform --load "$load" --num_vcs 2 --vc_buf_size 8 --packet_size 1 \
      --alloc_iters 1 --internal_speedup 1 --routing_delay 1 --channel_latency 1 --seed 1 \
      --warmup "$((7 * period))" --sample "$period" --min_samples 3 --max_samples 3 \
      --threads 1) || rc=$?
    # 3: the point deadlocked (its row says so); it ran fewer cycles and is not counted.
    if [ "$rc" -ne 0 ] && [ "$rc" -ne 3 ]; then
      echo "booksim_bench.sh: asnsim failed on $name (exit $rc):" >&2
      tail -n 20 "$log.asnsim" >&2
      exit 1
    fi
    # The summary row: mode load accepted lat.mean p50 p99 hops nonmin state
    read -r _ _ accepted latency _ _ _ _ state _ < <(grep "^$mode " "$log.asnsim")
    echo "$name asnsim ${cpu:-nan} $cycles $accepted $latency $state" >>"$run/results"
  done
done

/usr/bin/python3 - "$run/results" "$cycles" "${cases[@]}" <<'EOF'
import statistics
import sys

path, cycles, cases = sys.argv[1], int(sys.argv[2]), [c.split() for c in sys.argv[3:]]
runs = {}
with open(path) as f:
    for line in f:
        name, sim, cpu, simulated, accepted, latency, state = line.split()
        runs.setdefault((name, sim), []).append(
            (float(cpu), int(simulated), float(accepted), float(latency), state))


def per_10k(rows):
    return statistics.median(cpu / simulated * 1e4 for cpu, simulated, *_ in rows)


missed = []
print(f"N=64 4-ary 2-D flattened butterfly, uniform traffic, {cycles} cycles per run, "
      f"median of {len(runs[(cases[0][0], 'booksim')])}")
print(f"{'case':<12} {'load':>5} {'BookSim s/10k cyc':>18} {'asnsim s/10k cyc':>17} "
      f"{'ratio':>7} {'target >= 10x':>14}   accepted B/a, latency B/a")
for name, mode, routing, load in cases:
    booksim, asnsim = runs[(name, "booksim")], runs[(name, "asnsim")]
    # A deadlocked run stopped early and is not counted; any other state (ok, saturated,
    # not-converged: the accepted rate still moved in the last window) ran every cycle.
    bad = sorted({r[4] for r in asnsim if r[4] == "deadlock"})
    counted = [r for r in asnsim if r[4] != "deadlock"]
    b = per_10k(booksim)
    if counted:
        a = per_10k(counted)
        ratio = b / a
        verdict = "met" if ratio >= 10 else "MISSED"
        a_text, r_text = f"{a:.4f}", f"{ratio:.1f}x"
    else:
        a_text, r_text, verdict = "-", "-", "no run"
    if verdict != "met":
        missed.append(name)
    acc_b = statistics.median(r[2] for r in booksim)
    lat_b = statistics.median(r[3] for r in booksim)
    acc_a = statistics.median(r[2] for r in counted) if counted else float("nan")
    lat_a = statistics.median(r[3] for r in counted) if counted else float("nan")
    note = f"  asnsim: {', '.join(bad)}" if bad else ""
    print(f"{name:<12} {float(load):>5.2f} {b:>18.4f} {a_text:>17} {r_text:>7} {verdict:>14}   "
          f"{acc_b:.3f}/{acc_a:.3f}, {lat_b:.1f}/{lat_a:.1f}{note}")
if missed:
    print("missed the 10x target: " + ", ".join(missed), file=sys.stderr)
    sys.exit(1)
EOF

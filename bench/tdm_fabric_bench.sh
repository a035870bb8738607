#!/usr/bin/env bash
# Issue 8's fabric target: a fabric-wide TDM activation across 8 asnd processes, each on its
# own emulated board, loaded by the real asnctl (`load-schedule --fabric FABRIC.yaml PLAN -o
# json`: every switch stages its part, then all are armed for one future frame). Reports,
# over RUNS loads alternating the plan's two phases (so that every load changes every board):
#  - command to armed: asnctl's own figure (command_to_armed_ms of its JSON), from the start
#    of the fabric load to the moment the last switch was armed (stage everywhere, choose the
#    frame, arm everywhere); not the wait for the frame, which the arm margin sets;
#  - the whole command: the wall clock around the asnctl process (its start, reading the
#    plan, the load, the arm margin and the swap);
#  - the spread of the swap instants across the boards (swap_time, the board's time base at
#    its swap): it must be 0 cycles, since every switch swaps at the start of the same frame
#    and emulated boards of one host share its monotonic clock as their time base;
#  - the reference, measured in the same run, interleaved with the fabric loads: the same
#    switch's part as a single-switch plan, loaded with `asnctl load-schedule` on a ninth asnd
#    (its whole command, and its command to armed: the whole command less the server's wait
#    for the swap), and the ratios fabric / single-switch; and, to tell the size of the
#    fabric plan from the 8 processes sharing the cores, the whole fabric plan loaded on that
#    one asnd as switch s0 (`--switch s0`).
# The fabric file gives no arm margin (how far ahead of the latest time a switch reported the
# common frame is chosen): asnctl's default applies, 100 ms, raised to twice the slowest
# StagePlan round trip. With a fixed 20 ms, on a busy 2-core machine with 8 asnd an
# ArmAtFrame call reached its switch up to 40 ms after the frame was chosen and the load
# failed with "frame ... has begun already" (try --arm-margin '20 ms'). The margin is not part
# of the command-to-armed time; it is of the whole command.
# Every part is explicit slots, as a fabric compiler writes them: SLOTS slots (default 64) of
# 64 connections (a shift of the 64 ports, other for every switch, slot and phase). Every
# asnd reads the whole fabric plan (8 parts) and checks and writes its own part; the 8 do it
# at once, on whatever cores the machine has.
#   bench/tdm_fabric_bench.sh [--runs N] [--slots N] [--switches N] [--profile P]
#                             [--arm-margin '200 ms' | DEFAULT]   (default: DEFAULT)
# Uses the asnd and asnctl of $BENCH_BUILD_DIR (default build/), building them if missing.
set -euo pipefail
cd "$(dirname "$0")/.."

runs=10
slots=64
switches=8
profile=emulated-64port
arm_margin=DEFAULT
while [ $# -gt 0 ]; do
  case "$1" in
    --runs) runs=$2; shift 2 ;;
    --slots) slots=$2; shift 2 ;;
    --switches) switches=$2; shift 2 ;;
    --profile) profile=$2; shift 2 ;;
    --arm-margin) arm_margin=$2; shift 2 ;;
    *) echo "tdm_fabric_bench.sh: unknown argument '$1' (--runs N, --slots N, --switches N, --profile P, --arm-margin M)" >&2; exit 2 ;;
  esac
done

source bench/build_once.sh
asnd=$build/daemon/asnd
asnctl=$build/cli/asnctl
build_once "$asnd" "$asnctl"
if ! "$asnctl" load-schedule --help 2>&1 | grep -q -- --fabric; then
  echo "tdm_fabric_bench.sh: $asnctl has no 'load-schedule --fabric' (build it again)" >&2
  exit 1
fi

run=$(mktemp -d /tmp/asn-tdmfab-XXXXXX)
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  rm -rf "$run"
}
trap cleanup EXIT

# asnd NAME: starts one on its own board, socket, board memory and state directory
# ($run/NAME), with the default configuration and a freshly reset board.
: >"$run/asnd.yaml"
start_asnd() {
  local dir="$run/$1"
  mkdir -p "$dir"
  "$asnd" --config "$run/asnd.yaml" --socket "$dir/asnd.sock" --board "tfb$$-$1" \
    --profile "$profile" --shm-dir "$dir/shm" --state-dir "$dir/state" --reset-board \
    --log-level warn >"$dir/asnd.log" 2>&1 &
  pids+=($!)
}
wait_asnd() {
  local dir="$run/$1" pid=$2
  for _ in $(seq 200); do
    "$asnctl" --socket "$dir/asnd.sock" schedule show >/dev/null 2>&1 && return 0
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.05
  done
  echo "tdm_fabric_bench.sh: asnd $1 did not start; its log:" >&2
  cat "$dir/asnd.log" >&2
  exit 1
}
names=()
for i in $(seq 0 $((switches - 1))); do names+=("s$i"); done
for name in "${names[@]}" ref; do start_asnd "$name"; done
i=0
for name in "${names[@]}" ref; do wait_asnd "$name" "${pids[$i]}"; i=$((i + 1)); done

# The fabric plan, the fabric file, and the reference: switch s0's part alone.
/usr/bin/python3 - "$run" "$slots" "$arm_margin" "${names[@]}" <<'EOF'
import sys

run, slots, margin, names = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4:]
PORTS = 64
head = "defaults: {policy: fixed, slot_length: 1 us, guard_band: 48 ns}\nphases:\n"


def part(switch, phase, indent):
    out = ""
    for s in range(slots):
        by = (s + 5 * switch + 31 * phase) % (PORTS - 1) + 1
        pairs = ", ".join(f'"{i} -> {(i + by) % PORTS}"' for i in range(PORTS))
        out += f"{indent}- [{pairs}]\n"
    return out


fabric = f"plan: bench-fabric\nswitches: [{', '.join(names)}]\n" + head
single = "plan: bench-single\n" + head
for phase, name in enumerate(["a", "b"]):
    fabric += f"  - name: {name}\n    switches:\n"
    for k, switch in enumerate(names):
        fabric += f"      {switch}:\n        slots:\n" + part(k, phase, "          ")
    single += f"  - name: {name}\n    slots:\n" + part(0, phase, "      ")
with open(f"{run}/fabric-plan.yaml", "w") as f:
    f.write(fabric)
with open(f"{run}/single-plan.yaml", "w") as f:
    f.write(single)
with open(f"{run}/fabric.yaml", "w") as f:
    f.write("fabric: bench\n")
    if margin != "DEFAULT":
        f.write(f"arm_margin: {margin}\n")
    f.write("switches:\n")
    for switch in names:
        f.write(f'  - {{name: {switch}, endpoint: "unix:{run}/{switch}/asnd.sock"}}\n')
EOF

now_ns() { date +%s%N; }
# load KIND RUN PHASE: one asnctl load-schedule, its JSON in $run/KIND-RUN.json and its wall
# clock (ns) appended to $run/KIND.walls.
load() {
  local kind=$1 n=$2 phase=$3 start end
  local args=(-o json load-schedule --phase "$phase")
  if [ "$kind" = fabric ]; then
    args+=(--fabric "$run/fabric.yaml" "$run/fabric-plan.yaml")
  elif [ "$kind" = part ]; then
    args+=(--socket "$run/ref/asnd.sock" --switch s0 "$run/fabric-plan.yaml")
  else
    args+=(--socket "$run/ref/asnd.sock" "$run/single-plan.yaml")
  fi
  start=$(now_ns)
  if ! "$asnctl" "${args[@]}" >"$run/$kind-$n.json" 2>"$run/$kind-$n.err"; then
    echo "tdm_fabric_bench.sh: $kind load $n (phase $phase) failed:" >&2
    cat "$run/$kind-$n.err" >&2
    exit 1
  fi
  end=$(now_ns)
  [ "$n" = 0 ] || echo $((end - start)) >>"$run/$kind.walls"
}

# Run 0 (not counted): phase b everywhere, which starts the sequencers; then a, b, a, ...
for n in $(seq 0 "$runs"); do
  phase=$([ $((n % 2)) = 1 ] && echo a || echo b)
  load fabric "$n" "$phase"
  load single "$n" "$phase"
  load part "$n" "$phase"
done

/usr/bin/python3 - "$run" "$runs" "$slots" "$profile" "${#names[@]}" <<'EOF'
import json
import statistics
import sys

run, runs, slots, profile, switches = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), \
    sys.argv[4], int(sys.argv[5])


def walls(kind):
    with open(f"{run}/{kind}.walls") as f:
        return [int(line) / 1e6 for line in f if line.strip()]


fabric = [json.load(open(f"{run}/fabric-{n}.json")) for n in range(1, runs + 1)]
single = [json.load(open(f"{run}/single-{n}.json")) for n in range(1, runs + 1)]
to_armed = [float(r["command_to_armed_ms"]) for r in fabric]
cycles, spread_ns, same_frame = [], [], True
for r in fabric:
    times = [int(s["swap_time"]) for s in r["switches"]]
    frames = {s["swap_frame"] for s in r["switches"]}
    same_frame = same_frame and len(frames) == 1 and r["ok"] and all(
        s["swapped"] for s in r["switches"]) and len(times) == switches
    cycles.append(max(times) - min(times))
    spread_ns.append(float(r["swap_spread_ns"]))
fabric_wall = walls("fabric")
single_wall = walls("single")
single_wait = [int(r["times"]["wait_us"]) / 1e3 for r in single]
single_to_armed = [w - x for w, x in zip(single_wall, single_wait)]
single_total = [int(r["times"]["total_us"]) / 1e3 for r in single]
part = [json.load(open(f"{run}/part-{n}.json")) for n in range(1, runs + 1)]
part_wall = walls("part")
part_to_armed = [w - int(r["times"]["wait_us"]) / 1e3 for w, r in zip(part_wall, part)]
part_parse = [int(r["times"]["parse_us"]) / 1e3 for r in part]
single_parse = [int(r["times"]["parse_us"]) / 1e3 for r in single]

med = statistics.median
rows = [
    ("fabric: command to armed (ms)", to_armed, "asnctl's command_to_armed_ms"),
    ("fabric: whole command (ms)", fabric_wall, "wall clock of asnctl, incl. arm margin + swap"),
    ("fabric: swap spread (cycles)", cycles, "max - min swap_time; target 0"),
    ("fabric: swap spread (ns)", spread_ns, "asnctl's swap_spread_ns"),
    ("single: whole command (ms)", single_wall, "reference: wall clock of asnctl"),
    ("single: command to armed (ms)", single_to_armed, "reference: wall - server wait_us"),
    ("single: server total (ms)", single_total, "reference: LoadTimes total_us"),
    ("single: server parse (ms)", single_parse, "reference: LoadTimes parse_us"),
    ("s0 alone, fabric plan: to armed", part_to_armed,
     "the whole fabric plan, --switch s0, one asnd (ms)"),
    ("s0 alone, fabric plan: parse", part_parse, "its LoadTimes parse_us (ms)"),
]
print(f"{switches} asnd on {profile} boards, fabric plan of {switches} parts x 2 phases x "
      f"{slots} slots x 64 connections; {runs} loads alternating the phases")
print(f"{'measure':32} {'runs':>5} {'median':>10} {'max':>10}  note")
for name, values, note in rows:
    print(f"{name:32} {len(values):5} {med(values):10.2f} {max(values):10.2f}  {note}")
print(f"{'ratio fabric / single: to armed':32} {'':5} "
      f"{med(to_armed) / med(single_to_armed):10.2f} {'':10}  medians")
print(f"{'ratio fabric / single: command':32} {'':5} "
      f"{med(fabric_wall) / med(single_wall):10.2f} {'':10}  medians")
ok = same_frame and max(cycles) == 0
print(f"every switch swapped at the same frame in every run: {'yes' if same_frame else 'NO'}; "
      f"spread 0 cycles in every run: {'yes (target met)' if max(cycles) == 0 else 'NO (target missed)'}")
sys.exit(0 if ok else 1)
EOF

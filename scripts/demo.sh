#!/usr/bin/env bash
# Builds asnd and asnctl, starts asnd on an emulated NetFPGA-1G board named "demo", and
# shows what an operator sees, one capability after the other. Installs missing Debian
# packages first (root or sudo).
#   scripts/demo.sh          run the tour, then stop asnd
#   scripts/demo.sh --keep   leave asnd running afterwards (the script says how to stop it)
set -euo pipefail
cd "$(dirname "$0")/.."

keep=0
[ "${1:-}" = "--keep" ] && keep=1

scripts/install-deps.sh demo  # only what the demo builds with: no kernel, QEMU or etcd server
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build -j"$(nproc)" --target asnd asnctl asn_lock_example asnsim

run=$(mktemp -d /tmp/asn-demo-XXXXXX)
socket="$run/asnd.sock"
asnd=build/daemon/asnd
asnctl() { echo "\$ asnctl $*"; build/cli/asnctl --socket "$socket" "$@" || true; echo; }

# The demo board's memory lives in /dev/shm/asn-board-demo, like a real board's memory it
# outlives asnd: run the demo twice and the scratch value written below is still there.
"$asnd" --config deploy/asnd.yaml --socket "$socket" --board demo --state-dir "$run/state" \
  --log-level info 2>"$run/asnd.log" &
pid=$!
stop() { kill -TERM "$pid" 2>/dev/null && wait "$pid" 2>/dev/null || true; }
[ "$keep" = 1 ] || trap stop EXIT

for _ in $(seq 100); do
  [ -S "$socket" ] && break
  kill -0 "$pid" 2>/dev/null || { cat "$run/asnd.log" >&2; exit 1; }
  sleep 0.1
done

section() { echo "== $* =="; echo; }

echo "asnd is running (pid $pid), serving $socket; its log: $run/asnd.log"
echo
section "The switch at a glance"
asnctl status

section "Desired state: a port taken down stays down, even across a board reset"
asnctl port set 3 down
asnctl board reset --yes
asnctl port show
asnctl info -o json | grep -A4 '"state"'

section "Routing: the switch as router 3 of a 2DFB of 8 terminals (2 per router, 4 routers, radix 6)"
asnctl topology --terminals 1024 --k 32 --compare
asnctl fabric set --terminals 1024 --k 32 --router 0
asnctl fabric set --terminals 8 --k 2 --router 3
asnctl routes
asnctl routing set --threshold 12 --dry-run
asnctl routing set --threshold 20 --port 4
asnctl board reset --yes
asnctl routing show
asnctl queues

section "TDM schedules: check a plan, load it hitlessly, switch phases, keep plans"
asnctl schedule compile examples/schedules/netfpga-explicit.yaml
asnctl load-schedule examples/schedules/netfpga-explicit.yaml --dry-run
asnctl load-schedule examples/schedules/netfpga-explicit.yaml --phase write-round
asnctl schedule show
asnctl schedule diff examples/schedules/netfpga-explicit.yaml --phase write-round-compiled
asnctl schedule activate storage-rounds --phase write-round-compiled
asnctl schedule list
bad="$run/bad-plan.yaml"
printf 'plan: bad\ndefaults: {slot_length: 1 us, guard_band: 48 ns}\nphases:\n  - name: p\n    slots:\n      - ["0 -> 4", "1 -> 4"]\n' >"$bad"
asnctl load-schedule "$bad"
asnctl schedule show --slots 4
asnctl board reset --yes
asnctl schedule show --slots 0

section "File locks: sessions with leases, byte ranges, fencing tokens, FIFO waits"
echo "\$ asnctl lock acquire /data/run-7/out.h5 0:1M 2M:1M --hold 3 &"
build/cli/asnctl --socket "$socket" lock acquire /data/run-7/out.h5 0:1M 2M:1M --hold 3 &
holder=$!
sleep 0.5
echo
asnctl lock list
asnctl lock acquire /data/run-7/out.h5 512K:4K --try
asnctl lock acquire /data/run-7/out.h5 1M:1M --shared --hold 0
asnctl lock acquire /data/run-7/out.h5 0:4K --wait 10 --hold 0
wait "$holder" || true
echo
asnctl lock acquire /data/run-7/out.h5 0:0 --try
asnctl -o json lock acquire /data/matrix 0:64 128:64 --hold 0
asnctl lock stats
echo "\$ build/examples/locks/asn_lock_example unix:$socket   # libasnclient (examples/locks)"
build/examples/locks/asn_lock_example "unix:$socket" || true
echo

section "Striping with parity: the switch splits a file over storage servers and adds the parity"
head -c 3000000 /dev/urandom >"$run/results.dat"
asnctl stripe create 1 --raid 5 --data 2,0,1 --parity 3 --unit 64K
asnctl stripe create 2 --raid 5 --data 0,1 --parity 1 --unit 3000
asnctl stripe write 1 "$run/results.dat"
asnctl stripe list
asnctl stripe fail-member 1 2
asnctl stripe fail-member 1 0
asnctl stripe read 1 --out "$run/degraded.dat"
echo "\$ cmp results.dat degraded.dat   # read with port 2's storage server gone"
cmp "$run/results.dat" "$run/degraded.dat" && echo "identical"
echo
asnctl stripe rebuild-member 1 2
asnctl stripe stats 1
asnctl board reset --yes
asnctl stripe read 1 --out "$run/back.dat"
echo "\$ cmp results.dat back.dat   # after the rebuild and a board reset"
cmp "$run/results.dat" "$run/back.dat" && echo "identical"
echo
asnctl stripe list

section "Registers, for bring-up"
asnctl regs read id.scratch
asnctl regs write id.scratch=0xc0ffee port[0].aldfb_threshold.packets=12
asnctl regs read id.scratch port[0].aldfb_threshold.packets
asnctl regs write id.magic=0
asnctl regs dump --block id

section "The fabric simulator: the switch's routing engine in each router of a 64-terminal 2DFB"
echo "Adversarial traffic (router i sends to router i+1), inter-router links at twice the"
echo "terminal rate, output-queued routers; one curve per mode (docs/asnsim.md)."
echo "\$ asnsim --terminals 64 --k 4 --mode aldfb,ugal,minimal --traffic adversarial \\"
echo "    --load 0.2:1.0:0.2 --internal_speedup 2 --out build/asnsim-demo"
build/tools/asnsim/asnsim --terminals 64 --k 4 --mode aldfb,ugal,minimal --traffic adversarial \
  --load 0.2:1.0:0.2 --internal_speedup 2 --out build/asnsim-demo 2>/dev/null || true
echo "A deadlock in the table is a finding, not a crash: the engine's VC rule (the seed's)"
echo "lets waits close a cycle in a lossless fabric (docs/architecture.md, \"Routing\")."
echo "The CSV, the settings (to repeat the run) and the plots stay in build/asnsim-demo/:"
ls build/asnsim-demo
echo

if [ "$keep" = 1 ]; then
  echo "asnd keeps running: build/cli/asnctl --socket $socket status"
  echo "stop it with: kill $pid"
else
  echo "== asnd log =="
  stop
  cat "$run/asnd.log"
  rm -rf "$run"
fi

#!/usr/bin/env bash
# Runs every benchmark program and prints one table per program: time per operation and its
# ratio to the program's reference benchmark of the same run, so figures taken on a busy,
# shared machine still compare (schedule_bench reports its ratios per case, as counters).
# tdm_fabric is a script, not a Google Benchmark program (8 asnd processes and asnctl,
# bench/tdm_fabric_bench.sh): it prints its own table, with its reference and ratios; so is
# stripe_io (a 1 GiB file through asnctl stripe write/read, bench/stripe_io_bench.sh); so is
# locks_asnd (locks_bench against a real asnd process, per lock domain,
# bench/locks_asnd_bench.sh); so is fabric_apply (bench/fabric_apply_bench.sh: a 3-member
# etcd and 16 and 64 asnd, apply to in force and etcd writes per apply); so is fabric_locks
# (bench/fabric_locks_bench.sh: FabricSession on 4 switches against one); and locks_recover (bench/locks_recover_bench.cc: withdrawing
# 100,000 waits, the lock start after kill -9) prints its figures next to their targets.
# Two scripts are not in the list: bench/booksim_bench.sh (asnsim against BookSim2, issue 23;
# it needs a BookSim2 binary built outside the repository, BOOKSIM=/path/to/booksim) and
# bench/seed_fig.sh (asnsim's runs of the seed's figure, 004 L1000-1025: a reproduction, not a
# benchmark).
# Builds first if needed, in $BENCH_BUILD_DIR (default build/) as $BENCH_BUILD_TYPE (default
# RelWithDebInfo).
#   bench/run.sh [PROGRAM...] [-- extra Google Benchmark flags, e.g. --benchmark_repetitions=5]
#   PROGRAM: regs, topology, schedule, fabric, tdm, tdm_fabric, locks, locks_asnd,
#   locks_recover, fabric_apply, fabric_locks, stripe, stripe_io, fabric_schedule, sim
#   (default: all)
set -euo pipefail
cd "$(dirname "$0")/.."

# program -> its reference benchmark
declare -A reference=([regs]=BM_ModelRead32 [topology]=BM_RouterDigits [schedule]=""
                      [fabric]=BM_GetTopology [tdm]=BM_GetSchedule [tdm_fabric]=""
                      [locks]=BM_GetLockStats [locks_asnd]="" [locks_recover]="" [fabric_apply]="" [fabric_locks]=""
                      [stripe]=BM_Memcpy [stripe_io]=""
                      [fabric_schedule]=BM_GreedyTorus1600 [sim]=BM_RouterDigits)
programs=()
while [ $# -gt 0 ] && [ "$1" != "--" ]; do
  [ -n "${reference[$1]+set}" ] || { echo "bench/run.sh: unknown program '$1' (regs, topology, schedule, fabric, tdm, tdm_fabric, locks, locks_asnd, locks_recover, fabric_apply, fabric_locks, stripe, stripe_io, fabric_schedule, sim)" >&2; exit 2; }
  programs+=("$1")
  shift
done
[ "${1:-}" = "--" ] && shift
[ ${#programs[@]} -gt 0 ] || programs=(regs topology schedule fabric tdm tdm_fabric locks locks_asnd locks_recover fabric_apply fabric_locks stripe stripe_io fabric_schedule sim)

export BENCH_BUILD_DIR=${BENCH_BUILD_DIR:-build}
build=$BENCH_BUILD_DIR
scripts/install-deps.sh
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE="${BENCH_BUILD_TYPE:-RelWithDebInfo}" >/dev/null
targets=()
for p in "${programs[@]}"; do
  case "$p" in
    tdm_fabric | stripe_io | fabric_apply) targets+=(asnd asnctl) ;;
    locks_asnd) targets+=(asnd locks_bench) ;;
    fabric_locks) targets+=(asnd asnctl locks_bench) ;;
    *) targets+=("${p}_bench") ;;
  esac
done
cmake --build "$build" -j"$(nproc)" --target "${targets[@]}" >/dev/null
out=$(mktemp)
trap 'rm -f "$out"' EXIT
failed=()
for p in "${programs[@]}"; do
  echo "== ${p}_bench =="
  if [ "$p" = tdm_fabric ]; then
    bench/tdm_fabric_bench.sh || failed+=("$p")
  elif [ "$p" = stripe_io ]; then
    bench/stripe_io_bench.sh || failed+=("$p")
  elif [ "$p" = locks_asnd ]; then
    bench/locks_asnd_bench.sh || failed+=("$p")
  elif [ "$p" = fabric_apply ]; then
    bench/fabric_apply_bench.sh || failed+=("$p")
  elif [ "$p" = fabric_locks ]; then
    bench/fabric_locks_bench.sh || failed+=("$p")
  elif [ "$p" = locks_recover ]; then
    "$build/bench/locks_recover_bench" || failed+=("$p")
  else
    "$build/bench/${p}_bench" --benchmark_format=json --benchmark_out="$out" \
      --benchmark_out_format=json "$@" >/dev/null
    /usr/bin/python3 bench/table.py "$out" "${reference[$p]}"
  fi
  echo
done
if [ ${#failed[@]} -gt 0 ]; then
  echo "bench/run.sh: failed or missed a target: ${failed[*]}" >&2
  exit 1
fi

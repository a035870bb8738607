#!/usr/bin/env bash
# Builds the libFuzzer targets with clang (build-fuzz/, ASan + UBSan) and runs each for a
# bounded time from the committed corpus (fuzz/corpus/<target>/). New inputs go to a scratch
# directory; a crash fails the script, naming the input it saved in build-fuzz/crashes/.
#   scripts/fuzz.sh [SECONDS_PER_TARGET]      default 20
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-20}
targets=(config register_name plan)

scripts/install-deps.sh
# A unity build, as scripts/test.sh's (issue 30).
cmake -S . -B build-fuzz -G Ninja -DCMAKE_BUILD_TYPE=Debug -DCMAKE_C_COMPILER=clang \
  -DCMAKE_CXX_COMPILER=clang++ -DASN_FUZZ=ON -DASN_BUILD_TESTS=OFF -DASN_BUILD_BENCH=OFF \
  -DCMAKE_UNITY_BUILD=ON \
  >/dev/null
built=()
for t in "${targets[@]}"; do built+=("${t}_fuzzer"); done
cmake --build build-fuzz -j"$(nproc)" --target "${built[@]}"

mkdir -p build-fuzz/crashes
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
# fuzz TARGET: runs one target for $seconds; its output goes to $scratch/TARGET.log.
fuzz() {
  local t=$1
  mkdir -p "$scratch/$t"
  # -rss_limit_mb: a parser must not need more than this for any input; -timeout: nor this
  # long (seconds) for one.
  ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    "build-fuzz/fuzz/${t}_fuzzer" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
    -max_len=65536 -artifact_prefix="build-fuzz/crashes/${t}-" -print_final_stats=1 \
    "$scratch/$t" "fuzz/corpus/$t" 2>"$scratch/$t.log"
}
# A fuzzer is one thread: as many run at once as there are CPUs, each still for $seconds.
declare -A running=()
failed=()
finish_one() {
  local pid rc=0
  wait -n -p pid || rc=$?
  [ "$rc" -eq 0 ] || failed+=("${running[$pid]}")
  unset "running[$pid]"
}
for t in "${targets[@]}"; do
  [ "${#running[@]}" -lt "$(nproc)" ] || finish_one
  echo "== fuzz $t for ${seconds}s =="
  fuzz "$t" &
  running[$!]=$t
done
while [ "${#running[@]}" -gt 0 ]; do finish_one; done
for t in "${targets[@]}"; do
  grep -E "stat::number_of_executed_units|stat::new_units_added|stat::peak_rss_mb" \
    "$scratch/$t.log" | sed "s/^/$t: /" || true
done
for t in "${failed[@]}"; do
  tail -40 "$scratch/$t.log" >&2
  echo "fuzz: $t failed; the input is in build-fuzz/crashes/ (add it to fuzz/corpus/$t once fixed)" >&2
done
[ "${#failed[@]}" -eq 0 ]
